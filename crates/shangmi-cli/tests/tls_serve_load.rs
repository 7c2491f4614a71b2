//! `shangmi tls serve` under load and faults: hundreds of connections on loopback, some
//! stalling mid-handshake, some sending garbage, some resetting, while well-behaved clients
//! keep completing handshakes within a bound and the server's threads and memory stay bounded
//! (and fall back once the stalled connections time out).

mod tls_peers;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tls_peers::*;

/// Threads and resident memory (KiB) of a process, from /proc.
fn usage(pid: u32) -> (usize, usize) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("Threads:"), field("VmRSS:"))
}

fn client_config(dir: &std::path::Path) -> Arc<rustls::ClientConfig> {
    let provider = Arc::new(shangmi_rustls::provider());
    let roots = shangmi_rustls::load_roots(&std::fs::read(dir.join("ca.pem")).unwrap()).unwrap();
    let verifier =
        shangmi_rustls::Sm2ServerVerifier::new(Arc::new(roots), provider.clone()).unwrap();
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    config.resumption = rustls::client::Resumption::disabled();
    Arc::new(config)
}

/// A full handshake and one echoed message; how long it took.
fn try_client(config: &Arc<rustls::ClientConfig>, port: u16) -> std::io::Result<Duration> {
    let t = Instant::now();
    let sock = TcpStream::connect(("127.0.0.1", port))?;
    sock.set_read_timeout(Some(Duration::from_secs(20)))?;
    let conn = rustls::ClientConnection::new(config.clone(), "localhost".try_into().unwrap())
        .map_err(std::io::Error::other)?;
    let mut tls = rustls::StreamOwned::new(conn, sock);
    tls.write_all(b"ping\n")?;
    let mut got = [0u8; 5];
    tls.read_exact(&mut got)?;
    assert_eq!(&got, b"ping\n");
    tls.conn.send_close_notify();
    let _ = tls.flush();
    Ok(t.elapsed())
}

fn good_client(config: &Arc<rustls::ClientConfig>, port: u16) -> Duration {
    try_client(config, port).unwrap()
}

/// The first flight of a real client, for the resetting connections.
fn client_hello(config: &Arc<rustls::ClientConfig>) -> Vec<u8> {
    let mut c =
        rustls::ClientConnection::new(config.clone(), "localhost".try_into().unwrap()).unwrap();
    let mut hello = Vec::new();
    c.write_tls(&mut hello).unwrap();
    hello
}

#[test]
fn the_server_keeps_serving_through_stalls_garbage_and_resets() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    shangmi_pki(d);
    let server = shangmi_server(
        d,
        &[
            "--cert",
            "server.pem",
            "--key",
            "server.key",
            "--echo",
            "--max-connections",
            "400",
            "--handshake-timeout",
            "3",
            "--idle-timeout",
            "5",
        ],
    );
    let (port, pid) = (server.port, server.child.id());
    let config = client_config(d);
    let hello = client_hello(&config);
    let (idle_threads, idle_rss) = usage(pid);

    // 150 connections that send half a ClientHello and stall.
    let stalled: Vec<TcpStream> = (0..150)
        .map(|_| {
            let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            s.write_all(&hello[..hello.len() / 2]).unwrap();
            s
        })
        .collect();
    // 100 that send garbage, and 100 that send a real hello and reset before the answer.
    let faults = std::thread::spawn({
        let hello = hello.clone();
        move || {
            for i in 0..100u32 {
                if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) {
                    let junk: Vec<u8> = (0..997u32).map(|j| (j * 31 + i * 7) as u8).collect();
                    let _ = s.write_all(&junk);
                }
                if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) {
                    let _ = s.write_all(&hello);
                    // Closed with the server's answer still to come: the kernel resets.
                }
            }
        }
    });
    // Meanwhile well-behaved clients complete, each within a bound.
    let mut slowest = Duration::ZERO;
    for _ in 0..20 {
        slowest = slowest.max(good_client(&config, port));
    }
    faults.join().unwrap();
    let (peak_threads, peak_rss) = usage(pid);
    eprintln!(
        "idle: {idle_threads} threads, {idle_rss} KiB; under load: {peak_threads} threads, \
         {peak_rss} KiB; slowest good handshake {slowest:?}"
    );
    assert!(
        slowest < Duration::from_secs(2),
        "a well-behaved handshake took {slowest:?} under load"
    );
    assert!(
        peak_threads <= idle_threads + 400 + 8,
        "threads: {idle_threads} idle, {peak_threads} under load"
    );
    assert!(
        peak_rss < idle_rss + 256 * 1024,
        "memory: {idle_rss} KiB idle, {peak_rss} KiB under load"
    );
    // The stalled connections are dropped at the handshake deadline, and their threads end.
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let (threads, _) = usage(pid);
        if threads <= idle_threads + 2 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{threads} threads still running after the handshake timeout ({idle_threads} idle)"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let mut closed = 0;
    for mut s in stalled {
        s.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
        let mut b = [0u8; 64];
        if matches!(s.read(&mut b), Ok(0) | Err(_)) {
            closed += 1;
        }
    }
    assert_eq!(
        closed, 150,
        "every stalled connection was closed by the server"
    );
    // And it still serves.
    assert!(good_client(&config, port) < Duration::from_secs(2));
}

#[test]
fn connections_over_the_limit_are_refused_and_the_rest_served() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    shangmi_pki(d);
    let server = shangmi_server(
        d,
        &[
            "--cert",
            "server.pem",
            "--key",
            "server.key",
            "--echo",
            "--max-connections",
            "8",
            "--handshake-timeout",
            "2",
        ],
    );
    let config = client_config(d);
    let hold: Vec<TcpStream> = (0..8)
        .map(|_| TcpStream::connect(("127.0.0.1", server.port)).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    // The ninth is closed at once (the server logs why).
    let mut extra = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    extra
        .set_read_timeout(Some(Duration::from_secs(1)))
        .unwrap();
    let mut b = [0u8; 8];
    assert!(matches!(extra.read(&mut b), Ok(0) | Err(_)));
    drop(hold);
    // Once the held ones are gone, service resumes.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if try_client(&config, server.port).is_ok() {
            break;
        }
        assert!(Instant::now() < deadline, "the server did not recover");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn forward_mode_puts_tls_in_front_of_a_tcp_service() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    shangmi_pki(d);
    // A plain TCP service: answers each line in upper case, then closes after end-of-file.
    let backend = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let backend_addr = backend.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for sock in backend.incoming().flatten() {
            std::thread::spawn(move || {
                let mut out = sock.try_clone().unwrap();
                for line in BufReader::new(sock).lines().map_while(Result::ok) {
                    let _ = writeln!(out, "{}", line.to_uppercase());
                }
            });
        }
    });
    let server = shangmi_server(
        d,
        &[
            "--cert",
            "server.pem",
            "--key",
            "server.key",
            "--forward",
            &backend_addr,
        ],
    );
    let addr = format!("127.0.0.1:{}", server.port);
    let r = run_with(
        d,
        shangmi().args([
            "tls",
            "connect",
            &addr,
            "--ca",
            "ca.pem",
            "--servername",
            "localhost",
        ]),
        b"hello\nrfc 8998\n",
        Duration::from_secs(20),
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout, "HELLO\nRFC 8998\n");
}

/// The client's Finished, its data and its close_notify in one segment: the server's
/// handshake reads them all at once, and must still deliver (here: echo) the data.
#[test]
fn data_arriving_with_the_clients_finished_is_served() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    shangmi_pki(d);
    let server = shangmi_server(
        d,
        &["--cert", "server.pem", "--key", "server.key", "--echo"],
    );
    let config = client_config(d);
    let mut sock = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut c = rustls::ClientConnection::new(config, "localhost".try_into().unwrap()).unwrap();
    // ClientHello, then the server's flight, until the client has its Finished to send.
    while c.is_handshaking() {
        while c.wants_write() {
            c.write_tls(&mut sock).unwrap();
        }
        if c.is_handshaking() {
            c.read_tls(&mut sock).unwrap();
            c.process_new_packets().unwrap();
        }
    }
    c.writer().write_all(b"all at once\n").unwrap();
    c.send_close_notify();
    let mut segment = Vec::new();
    while c.wants_write() {
        c.write_tls(&mut segment).unwrap();
    }
    sock.write_all(&segment).unwrap();
    let mut got = Vec::new();
    loop {
        match c.read_tls(&mut sock) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let state = c.process_new_packets().unwrap();
                let mut buf = vec![0u8; state.plaintext_bytes_to_read()];
                c.reader().read_exact(&mut buf).unwrap();
                got.extend_from_slice(&buf);
                if state.peer_has_closed() {
                    break;
                }
            }
        }
    }
    assert_eq!(got, b"all at once\n");
}

/// A client flight far over the few KiB rustls takes per call (a certificate chain of about
/// 10 KiB): the server reads it whole, in as many calls as it needs, instead of dropping what
/// one call did not take and waiting for the deadline.
#[test]
fn a_client_flight_over_4_kib_is_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    shangmi_pki(d);
    let mut chain = std::fs::read_to_string(d.join("client.pem")).unwrap();
    let ca = std::fs::read_to_string(d.join("ca.pem")).unwrap();
    for _ in 0..16 {
        chain.push_str(&ca);
    }
    std::fs::write(d.join("big-chain.pem"), chain).unwrap();
    let server = shangmi_server(
        d,
        &[
            "--cert",
            "server.pem",
            "--key",
            "server.key",
            "--client-ca",
            "ca.pem",
            "--handshake-timeout",
            "5",
            "--echo",
        ],
    );
    let addr = format!("127.0.0.1:{}", server.port);
    let started = Instant::now();
    let r = run_with(
        d,
        shangmi().args([
            "tls",
            "connect",
            &addr,
            "--ca",
            "ca.pem",
            "--servername",
            "localhost",
            "--cert",
            "big-chain.pem",
            "--key",
            "client.key",
        ]),
        b"whole\n",
        Duration::from_secs(20),
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout, "whole\n");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
}

/// A client that completes its handshake and then sends without reading: the echo stalls on
/// it, the write times out (`--write-timeout`), and the only slot serves the next client.
#[test]
fn a_client_that_never_reads_cannot_hold_a_slot() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    shangmi_pki(d);
    let server = shangmi_server(
        d,
        &[
            "--cert",
            "server.pem",
            "--key",
            "server.key",
            "--echo",
            "--max-connections",
            "1",
            "--write-timeout",
            "1",
        ],
    );
    let config = client_config(d);
    let sock = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    sock.set_write_timeout(Some(Duration::from_secs(3)))
        .unwrap();
    let conn =
        rustls::ClientConnection::new(config.clone(), "localhost".try_into().unwrap()).unwrap();
    let mut stalled = rustls::StreamOwned::new(conn, sock);
    let chunk = vec![0x42u8; 64 << 10];
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(20) && stalled.write_all(&chunk).is_ok() {}
    std::thread::sleep(Duration::from_millis(500));
    good_client(&config, server.port);
    drop(stalled);
}
