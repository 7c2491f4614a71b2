//! `shangmi tlcp` against itself over TCP: echo (the default mode), forward to a TCP service
//! (the answer arrives after the client's close), resumption, and the exit codes.

mod tls_peers;

use std::io::{Read, Write};
use std::time::Duration;

use tls_peers::*;

const LIMIT: Duration = Duration::from_secs(30);

fn connect(dir: &std::path::Path, port: u16, extra: &[&str], input: &[u8]) -> Ran {
    let mut c = shangmi();
    c.args([
        "tlcp",
        "connect",
        &format!("127.0.0.1:{port}"),
        "--ca",
        "ca.pem",
    ])
    .args(["--servername", "localhost"])
    .args(extra);
    run_with(dir, &mut c, input, LIMIT)
}

#[test]
fn echo_by_default_every_suite_and_resumption() {
    let dir = tempfile::tempdir().unwrap();
    tlcp_pki(dir.path());
    let mut args = vec![
        "tlcp",
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--client-ca",
        "ca.pem",
    ];
    args.extend(TLCP_SERVER_PAIR);
    let server = shangmi_listening(dir.path(), &args);
    for suite in [
        "ecc-sm4-cbc-sm3",
        "ecc-sm4-gcm-sm3",
        "ecdhe-sm4-cbc-sm3",
        "ecdhe-sm4-gcm-sm3",
    ] {
        let mut extra = vec!["--suite", suite];
        extra.extend(TLCP_CLIENT_PAIR);
        let r = connect(dir.path(), server.port, &extra, b"ping\n");
        assert_eq!(r.code, Some(0), "{suite}: {}", r.stderr);
        assert_eq!(r.stdout, "ping\n", "{suite}");
    }
    let mut extra = vec!["--resume"];
    extra.extend(TLCP_CLIENT_PAIR);
    let r = connect(dir.path(), server.port, &extra, b"again\n");
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stderr.contains("(resumed)"), "{}", r.stderr);
    assert_eq!(r.stdout, "again\n");
}

#[test]
fn forward_mode_relays_to_a_tcp_service() {
    let dir = tempfile::tempdir().unwrap();
    tlcp_pki(dir.path());
    // The back end: reads the whole request (to its EOF), answers, closes.
    let backend = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let backend_addr = backend.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for conn in backend.incoming() {
            let mut conn = conn.unwrap();
            let mut req = Vec::new();
            conn.read_to_end(&mut req).unwrap();
            conn.write_all(format!("got {} bytes", req.len()).as_bytes())
                .unwrap();
        }
    });
    let mut args = vec![
        "tlcp",
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--forward",
        &backend_addr,
    ];
    args.extend(TLCP_SERVER_PAIR);
    let server = shangmi_listening(dir.path(), &args);
    let r = connect(dir.path(), server.port, &[], &[7u8; 100_000]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout, "got 100000 bytes");
}

#[test]
fn exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    tlcp_pki(dir.path());
    // Usage: two of the four pair options.
    let r = connect(
        dir.path(),
        1,
        &["--sign-cert", "cs.pem", "--sign-key", "cs.key"],
        b"",
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    // Nothing listens: a connection failure, 1.
    let r = connect(dir.path(), free_port(), &[], b"");
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    // A server whose name is not the one asked for: 1, with the reason.
    let mut args = vec!["tlcp", "serve", "--listen", "127.0.0.1:0"];
    args.extend(TLCP_SERVER_PAIR);
    let server = shangmi_listening(dir.path(), &args);
    let mut c = shangmi();
    c.args([
        "tlcp",
        "connect",
        &format!("127.0.0.1:{}", server.port),
        "--ca",
        "ca.pem",
    ])
    .args(["--servername", "example.com"]);
    let r = run_with(dir.path(), &mut c, b"x", LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("not for example.com"), "{}", r.stderr);
}

/// A client that completes its handshake, then sends without ever reading: the echo server's
/// writes stall on it. Each write is bounded (`--write-timeout`), so the one connection slot
/// comes back and the next client is served while the stalled one still holds its socket.
#[test]
fn a_client_that_never_reads_cannot_hold_a_slot() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    tlcp_pki(d);
    let mut args = vec![
        "tlcp",
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--max-connections",
        "1",
        "--write-timeout",
        "1",
    ];
    args.extend(TLCP_SERVER_PAIR);
    let server = shangmi_listening(d, &args);
    let ca = shangmi_pki::certificates(&std::fs::read(d.join("ca.pem")).unwrap()).unwrap();
    let config = std::sync::Arc::new(shangmi_tlcp::ClientConfig::new(ca));
    let sock = std::net::TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    sock.set_write_timeout(Some(Duration::from_secs(3)))
        .unwrap();
    let mut stalled = shangmi_tlcp::Stream::client(config, "localhost", sock).unwrap();
    stalled.handshake().unwrap();
    let chunk = vec![0x42u8; 64 << 10];
    let started = std::time::Instant::now();
    // Until the server gives up on it (its writes stall, so it stops reading, so ours do).
    while started.elapsed() < Duration::from_secs(20) && stalled.write_all(&chunk).is_ok() {}
    std::thread::sleep(Duration::from_millis(500));
    let r = connect(d, server.port, &[], b"next\n");
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout, "next\n");
    drop(stalled);
}
