//! The limits a public server needs (SECURITY-CHECKLIST section 7), each tried as an attacker
//! would: HTTP/2 clients that never read, open-and-reset loops, more requests than a site's
//! upstreams take, one address opening everything, a full gateway, connections made before a
//! reload or long ago, and TLS 1.2 tickets.

mod common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use shangmi_tlcp::Suite;

/// One listener with one site serving all three protocols to `upstream`; `limits` and
/// `head` go into their tables.
fn config(dir: &Path, upstream: &str, limits: &str, head: &str) -> PathBuf {
    let text = format!(
        r#"[admin]
listen = "127.0.0.1:0"
token_file = "admin.token"

[limits]
handshake_timeout = 3
{limits}

[log]
access = "off"

{head}

[[listener]]
listen = "127.0.0.1:0"

[[listener.site]]
server_names = ["localhost"]
upstream = [{upstream}]
tlcp = {{ sign_cert = "ss.pem", sign_key = "ss.key", enc_cert = "se.pem", enc_key = "se.key" }}
sm2 = {{ cert = "sm2.pem", key = "sm2.key" }}
international = [ {{ cert = "ecdsa.pem", key = "ecdsa.key" }} ]
"#
    );
    let path = dir.join("gateway.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn http(port: u16) -> String {
    format!("\"http://127.0.0.1:{port}\"")
}

/// An HTTP/2 frame.
fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    f.extend([kind, flags]);
    f.extend(stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// A GET of `/` for localhost, as HPACK writes it with the static table.
fn get_headers(stream: u32) -> Vec<u8> {
    let mut block = vec![0x82, 0x87, 0x84, 0x01, 9];
    block.extend_from_slice(b"localhost");
    frame(1, 0x5, stream, &block)
}

/// The connection preface and settings of a client that takes everything: the largest
/// windows HTTP/2 allows.
fn greedy_preface() -> Vec<u8> {
    let mut out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    let mut settings = vec![0, 4];
    settings.extend(0x7fff_ffffu32.to_be_bytes());
    out.extend(frame(4, 0, 0, &settings));
    out.extend(frame(8, 0, 0, &(0x7fff_ffffu32 - 65_535).to_be_bytes()));
    out
}

/// An RFC 8998 connection that negotiated h2.
fn h2_tls(
    d: &Path,
    port: u16,
) -> rustls::StreamOwned<rustls::ClientConnection, std::net::TcpStream> {
    let mut c = (*sm_client(d, false)).clone();
    c.alpn_protocols = vec![b"h2".to_vec()];
    let mut s = rustls_stream(Arc::new(c), port);
    while s.conn.is_handshaking() {
        s.conn.complete_io(&mut s.sock).unwrap();
    }
    assert_eq!(s.conn.alpn_protocol(), Some(&b"h2"[..]));
    s
}

#[test]
fn http2_clients_that_never_read_cannot_take_the_memory() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    let backend = BigBackend::start(1 << 20, Duration::ZERO);
    let gw = Gateway::start(
        &config(d, &http(backend.port), "idle_timeout = 10", ""),
        1,
        true,
    );
    let port = gw.port();
    assert!(get(rustls_stream(sm_client(d, false), port), "").starts_with("HTTP/1.1 200"));
    let before = gw.rss_kib();
    // 20 connections, each opening 128 streams for a 1 MiB response, with windows of 2 GiB,
    // then reading nothing.
    let held: Vec<_> = (0..20)
        .map(|_| {
            let mut s = h2_tls(d, port);
            let mut flight = greedy_preface();
            for i in 0..128 {
                flight.extend(get_headers(2 * i + 1));
            }
            s.write_all(&flight).unwrap();
            s.flush().unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_secs(5));
    let grown = gw.rss_kib().saturating_sub(before) / 1024;
    eprintln!(
        "resident memory grew by {grown} MiB; the upstream was asked {} times; {} bytes held",
        backend.requests.load(std::sync::atomic::Ordering::SeqCst),
        gw.metric("shangmi_gateway_response_bytes_held"),
    );
    // Each connection may hold its response buffer (1 MiB) and what its streams' upstream
    // reads have in hand: a few MiB each, where unbounded buffering took 120 MiB each.
    assert!(grown < 160, "resident memory grew by {grown} MiB");
    drop(held);
}

#[test]
fn requests_per_connection_resets_and_upstream_requests_are_capped() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    let slow = BigBackend::start(100, Duration::from_millis(1500));
    let limits = "max_requests_per_connection = 100000\nmax_upstream_requests = 600";
    let gw = Gateway::start(&config(d, &http(slow.port), limits, ""), 1, true);
    let port = gw.port();

    // A client that opens streams and resets each once the gateway has passed it on: after
    // its share of resets the connection is sent GOAWAY and closed, long before 300.
    let mut s = h2_tls(d, port);
    s.write_all(&greedy_preface()).unwrap();
    let mut sent = 0;
    for batch in 0..30u32 {
        let ids: Vec<u32> = (0..10).map(|i| 2 * (batch * 10 + i) + 1).collect();
        let heads: Vec<u8> = ids.iter().flat_map(|&id| get_headers(id)).collect();
        let resets: Vec<u8> = ids
            .iter()
            .flat_map(|&id| frame(3, 0, id, &8u32.to_be_bytes()))
            .collect();
        let ok = s.write_all(&heads).and_then(|()| s.flush()).is_ok() && {
            std::thread::sleep(Duration::from_millis(30));
            s.write_all(&resets).and_then(|()| s.flush()).is_ok()
        };
        if !ok {
            break;
        }
        sent += 10;
        std::thread::sleep(Duration::from_millis(10));
    }
    s.sock
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut sink = Vec::new();
    let end = s.read_to_end(&mut sink);
    assert!(sent < 300, "all {sent} streams were taken ({end:?})");
    let asked = slow.requests.load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        asked < 200,
        "the upstream was sent {asked} requests the client reset"
    );
    let retired = gw.metric("shangmi_gateway_connections_retired_total{reason=\"resets\"}");
    assert_eq!(retired, 1, "sent {sent}, asked {asked}");

    // Requests per connection: the 31st on one connection is not served on it.
    let fast = Backend::start("backend-a");
    let path = config(d, &http(fast.port), "max_requests_per_connection = 30", "");
    let gw = Gateway::start(&path, 1, true);
    let c = tlcp_client(d, &[Suite::ECC_SM4_GCM_SM3], false);
    let mut s = shangmi_tlcp::Stream::client(c, "localhost", tcp(gw.port())).unwrap();
    let mut served = 0;
    for _ in 0..40 {
        let ok = write!(s, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n").is_ok()
            && read_response(&mut s).is_some_and(|r| r.starts_with("HTTP/1.1 200"));
        if !ok {
            break;
        }
        served += 1;
    }
    assert_eq!(served, 30);

    // More requests in flight than the site allows are answered 503 at once.
    let path = config(d, &http(slow.port), "max_upstream_requests = 3", "");
    let gw = Gateway::start(&path, 1, true);
    let port = gw.port();
    let answers: Vec<String> = (0..8)
        .map(|_| {
            let owned = d.to_path_buf();
            std::thread::spawn(move || {
                let r = get(rustls_stream(sm_client(&owned, false), port), "");
                r.lines().next().unwrap_or("").to_string()
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    let busy = answers.iter().filter(|a| a.contains(" 503 ")).count();
    assert!(busy >= 5, "{answers:?}");
    assert_eq!(
        gw.metric("shangmi_gateway_upstream_errors_total{kind=\"busy\"}"),
        busy as u64
    );
}

/// One HTTP/1.1 response with a Content-Length, read from `s`.
fn read_response<S: Read>(s: &mut S) -> Option<String> {
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if s.read(&mut b).ok()? == 0 {
            return None;
        }
        head.push(b[0]);
    }
    let text = String::from_utf8_lossy(&head).into_owned();
    let len: usize = text
        .to_ascii_lowercase()
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).ok()?;
    Some(text + &String::from_utf8_lossy(&body))
}

/// Whether the gateway closes `s` within `limit` (a read sees its end).
fn closed_within(s: &mut std::net::TcpStream, limit: Duration) -> bool {
    s.set_read_timeout(Some(limit)).unwrap();
    let mut b = [0u8; 64];
    loop {
        match s.read(&mut b) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) => {
                return e.kind() != std::io::ErrorKind::WouldBlock
                    && e.kind() != std::io::ErrorKind::TimedOut;
            }
        }
    }
}

#[test]
fn one_address_and_a_full_gateway_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    let backend = Backend::start("backend-a");
    let up = http(backend.port);
    let gw = Gateway::start(
        &config(d, &up, "max_connections_per_address = 5", ""),
        1,
        true,
    );
    let held: Vec<_> = (0..5).map(|_| tcp(gw.port())).collect();
    std::thread::sleep(Duration::from_millis(100));
    let mut sixth = tcp(gw.port());
    assert!(
        closed_within(&mut sixth, Duration::from_secs(1)),
        "a sixth connection was held"
    );
    assert_eq!(
        gw.metric("shangmi_gateway_connections_refused_total{reason=\"address full\"}"),
        1
    );
    drop(held);
    std::thread::sleep(Duration::from_millis(100));
    assert!(tlcp_get(d, gw.port()).contains("backend-a"));

    // Handshakes per second per address.
    let limits = "handshakes_per_second = 0.5\nhandshake_burst = 3";
    let gw = Gateway::start(&config(d, &up, limits, ""), 1, true);
    let served = (0..6)
        .filter(|_| tlcp_get(d, gw.port()).contains("backend-a"))
        .count();
    assert_eq!(served, 3);
    assert_eq!(
        gw.metric("shangmi_gateway_connections_refused_total{reason=\"handshake rate\"}"),
        3
    );

    // Full of connections that never finish a handshake: a real client still gets in, an
    // idle one making room.
    let limits = "max_connections = 10\nmax_connections_per_address = 0";
    let gw = Gateway::start(&config(d, &up, limits, ""), 1, true);
    let idle: Vec<_> = (0..10).map(|_| tcp(gw.port())).collect();
    std::thread::sleep(Duration::from_millis(200));
    let t = Instant::now();
    assert!(tlcp_get(d, gw.port()).contains("backend-a"));
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    assert_eq!(
        gw.metric("shangmi_gateway_connection_failures_total{reason=\"shed\"}"),
        1
    );
    drop(idle);
}

fn tlcp_get(d: &Path, port: u16) -> String {
    let c = tlcp_client(d, &[Suite::ECC_SM4_GCM_SM3], false);
    match shangmi_tlcp::Stream::client(c, "localhost", tcp(port)) {
        Ok(s) => get(s, ""),
        Err(e) => e.to_string(),
    }
}

#[test]
fn connections_made_before_a_reload_or_long_ago_are_closed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    let backend = Backend::start("backend-a");
    let up = http(backend.port);
    let limits = "reload_grace = 1\nidle_timeout = 30";
    let path = config(d, &up, limits, "");
    let gw = Gateway::start(&path, 1, true);
    let keep_alive = || {
        let c = tlcp_client(d, &[Suite::ECC_SM4_GCM_SM3], false);
        let mut s = shangmi_tlcp::Stream::client(c, "localhost", tcp(gw.port())).unwrap();
        write!(s, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
        assert!(read_response(&mut s).unwrap().starts_with("HTTP/1.1 200"));
        s
    };
    let mut s = keep_alive();
    assert_eq!(gw.admin("POST", "/reload").0, 200);
    let t = Instant::now();
    let mut sink = Vec::new();
    let _ = s.read_to_end(&mut sink);
    let took = t.elapsed();
    assert!(
        took >= Duration::from_millis(800) && took < Duration::from_secs(4),
        "{took:?}"
    );
    assert_eq!(
        gw.metric("shangmi_gateway_connections_retired_total{reason=\"reload\"}"),
        1
    );
    // A connection made after the reload is not touched by it.
    let mut s = keep_alive();
    std::thread::sleep(Duration::from_millis(1500));
    write!(s, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    assert!(read_response(&mut s).is_some_and(|r| r.starts_with("HTTP/1.1 200")));

    // max_connection_age, with no reload.
    let limits = "max_connection_age = 1\nidle_timeout = 30\nreload_grace = 1";
    let gw = Gateway::start(&config(d, &up, limits, ""), 1, true);
    let c = tlcp_client(d, &[Suite::ECC_SM4_GCM_SM3], false);
    let mut s = shangmi_tlcp::Stream::client(c, "localhost", tcp(gw.port())).unwrap();
    write!(s, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    assert!(read_response(&mut s).is_some());
    let t = Instant::now();
    let _ = s.read_to_end(&mut sink);
    assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
    assert_eq!(
        gw.metric("shangmi_gateway_connections_retired_total{reason=\"age\"}"),
        1
    );
}

#[test]
fn tls12_tickets_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    let backend = Backend::start("backend-a");
    std::fs::write(d.join("tickets.key"), format!("{}\n", "cd".repeat(32))).unwrap();
    for (tls12, want) in [("", false), ("tls12 = true", true)] {
        let head = format!("[tickets]\nkey_file = \"tickets.key\"\n{tls12}\n");
        let path = config(d, &http(backend.port), "", &head);
        let gw = Gateway::start(&path, 1, true);
        let sess = d.join("tls12.sess");
        let _ = std::fs::remove_file(&sess);
        let (code, out, err) = run(
            d,
            std::process::Command::new("openssl").args([
                "s_client",
                "-connect",
                &format!("127.0.0.1:{}", gw.port()),
                "-servername",
                "localhost",
                "-tls1_2",
                "-CAfile",
                "ecdsa-ca.pem",
                "-sess_out",
                "tls12.sess",
            ]),
            b"",
            Duration::from_secs(10),
        );
        assert!(sess.exists(), "{code:?} {out} {err}");
        let o = std::process::Command::new("openssl")
            .args(["sess_id", "-in", "tls12.sess", "-noout", "-text"])
            .current_dir(d)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.contains("Protocol  : TLSv1.2"), "{text}");
        assert_eq!(
            text.contains("TLS session ticket:"),
            want,
            "{tls12:?}: {text}"
        );
    }
}
