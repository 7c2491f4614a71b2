//! shangmi-gateway as its users run it: the binary on a configuration file, an HTTP back end
//! behind it, and TLCP, RFC 8998 and international TLS clients on one port.

mod common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::*;
use shangmi_tlcp::Suite;

/// A configuration with one listener on a free port and one site serving all three protocols
/// to `upstream`; `site_extra` goes into the site's table.
fn config(dir: &Path, upstream: &str, site_extra: &str) -> PathBuf {
    let text = format!(
        r#"[admin]
listen = "127.0.0.1:0"
token_file = "admin.token"

[limits]
handshake_timeout = 3
idle_timeout = 5
connect_timeout = 1

[log]
access = "stderr"

[[listener]]
listen = "127.0.0.1:0"

[[listener.site]]
server_names = ["localhost"]
upstream = [{upstream}]
tlcp = {{ sign_cert = "ss.pem", sign_key = "ss.key", enc_cert = "se.pem", enc_key = "se.key" }}
sm2 = {{ cert = "sm2.pem", key = "sm2.key" }}
international = [ {{ cert = "ecdsa.pem", key = "ecdsa.key" }}, {{ cert = "rsa.pem", key = "rsa.key" }} ]
{site_extra}
"#
    );
    let path = dir.join("gateway.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn http(port: u16) -> String {
    format!("\"http://127.0.0.1:{port}\"")
}

fn tlcp_get(dir: &Path, port: u16, suite: Suite, certs: bool) -> String {
    let c = tlcp_client(dir, &[suite], certs);
    let s = shangmi_tlcp::Stream::client(c, "localhost", tcp(port)).unwrap();
    get(s, "X-SM-Protocol: forged\r\nX-Forwarded-For: 10.9.9.9\r\n")
}

#[test]
fn one_port_answers_tlcp_rfc8998_and_international_tls() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    let backend = Backend::start("backend-a");
    let gw = Gateway::start(&config(d, &http(backend.port), ""), 1, true);
    let port = gw.port();

    for suite in [Suite::ECC_SM4_GCM_SM3, Suite::ECC_SM4_CBC_SM3] {
        let r = tlcp_get(d, port, suite, false);
        assert!(r.starts_with("HTTP/1.1 200"), "{r}");
        assert!(
            r.contains(&format!("x-sm-protocol: TLCP {}", suite.name())),
            "{r}"
        );
        assert!(r.contains("x-forwarded-for: 127.0.0.1\r\n"), "{r}");
        assert!(r.contains("x-forwarded-proto: https"), "{r}");
        assert!(
            !r.contains("forged") && !r.contains("10.9.9.9"),
            "client headers passed: {r}"
        );
        assert!(r.contains("GET /hello?x=1 HTTP/1.1"), "{r}");
    }

    for (suite, name) in [
        (shangmi_rustls::TLS13_SM4_GCM_SM3, "TLS_SM4_GCM_SM3"),
        (shangmi_rustls::TLS13_SM4_CCM_SM3, "TLS_SM4_CCM_SM3"),
    ] {
        let r = get(rustls_stream(sm_client_with(d, false, &[suite]), port), "");
        assert!(r.contains(&format!("x-sm-protocol: TLSv1.3 {name}")), "{r}");
    }
    // A hello whose only group is the post-quantum hybrid is RFC 8998 too, and gets it.
    let hybrid = sm_client_groups(
        d,
        false,
        shangmi_rustls::ALL_CIPHER_SUITES,
        &[shangmi_rustls::CURVE_SM2_MLKEM768_GROUP],
    );
    let r = get(rustls_stream(hybrid, port), "");
    assert!(r.contains("x-sm-protocol: TLSv1.3 TLS_SM4_GCM_SM3"), "{r}");

    for (version, want) in [
        (&rustls::version::TLS13, "x-sm-protocol: TLSv1.3 TLS_AES_"),
        (
            &rustls::version::TLS12,
            "x-sm-protocol: TLSv1.2 TLS_ECDHE_ECDSA_WITH_",
        ),
    ] {
        let r = get(rustls_stream(intl_client(d, version), port), "");
        assert!(r.contains(want), "{r}");
    }

    let (status, metrics) = gw.admin("GET", "/metrics");
    assert_eq!(status, 200);
    for want in [
        r#"shangmi_gateway_handshakes_total{protocol="TLCP",suite="ECC_SM4_GCM_SM3",kind="full",outcome="ok"} 1"#,
        r#"shangmi_gateway_handshakes_total{protocol="TLSv1.3",suite="TLS_SM4_CCM_SM3",kind="full",outcome="ok"} 1"#,
        r#"shangmi_gateway_handshakes_total{protocol="TLSv1.2","#,
        r#"shangmi_gateway_requests_total{protocol="TLCP",status="200"} 2"#,
        "shangmi_gateway_handshake_seconds_count 7",
    ] {
        assert!(metrics.contains(want), "{want} not in\n{metrics}");
    }
    assert_eq!(gw.admin("GET", "/healthz"), (200, "ok\n".into()));
    assert!(gw.wait_log(r#""status":200"#, Duration::from_secs(2)));
    assert!(gw.wait_log(r#""group":"curveSM2MLKEM768""#, Duration::from_secs(2)));
}

#[test]
fn the_configuration_check_names_the_line_and_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    let path = config(d, &http(8080), "");
    let check = |path: &Path| {
        let o = gateway_command()
            .arg("--config")
            .arg(path)
            .arg("--check")
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr),
        )
    };
    let (code, out) = check(&path);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains(": ok (1 listeners, 1 sites)"), "{out}");
    let good = std::fs::read_to_string(&path).unwrap();
    for (from, to, line, what) in [
        (
            "upstream = [",
            "upstreams = [",
            18,
            "unknown field `upstreams`",
        ),
        (
            "\"http://127.0.0.1:8080\"",
            "\"ftp://x:1\"",
            18,
            "http, h2c or tcp",
        ),
        (
            "sign_key = \"ss.key\"",
            "sign_key = \"se.key\"",
            19,
            "ss.pem with se.key",
        ),
        (
            "key = \"sm2.key\"",
            "key = \"missing.key\"",
            20,
            "missing.key",
        ),
        (
            "key = \"ecdsa.key\"",
            "key = \"rsa.key\"",
            21,
            "not the one the certificate names",
        ),
        (
            "listen = \"127.0.0.1:0\"\ntoken_file",
            "listen = \"nowhere\"\ntoken_file",
            2,
            "not ADDR:PORT",
        ),
        (
            "idle_timeout = 5",
            "idle_timeout = \"5\"",
            7,
            "invalid type",
        ),
        (
            "server_names = [\"localhost\"]",
            "server_names = [\"a b\"]",
            17,
            "not a host name",
        ),
    ] {
        assert!(good.contains(from), "{from}");
        let bad = d.join("bad.toml");
        std::fs::write(&bad, good.replacen(from, to, 1)).unwrap();
        let (code, out) = check(&bad);
        assert_eq!(code, Some(1), "{to}: {out}");
        assert!(
            out.contains(&format!("bad.toml:{line}: ")),
            "{to}: want line {line}: {out}"
        );
        assert!(out.contains(what), "{to}: want {what}: {out}");
    }
}

#[test]
fn client_certificates_are_required_and_their_subject_reaches_the_upstream() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    let backend = Backend::start("backend-a");
    let gw = Gateway::start(
        &config(d, &http(backend.port), "client_ca = \"ca.pem\""),
        1,
        false,
    );
    let port = gw.port();
    for suite in Suite::ALL {
        let r = tlcp_get(d, port, suite, true);
        assert!(
            r.contains(&format!("x-sm-protocol: TLCP {}", suite.name())),
            "{r}"
        );
        assert!(
            r.contains("x-sm-client-subject: CN=tlcp client,O=shangmi test"),
            "{r}"
        );
    }
    let r = get(
        rustls_stream(sm_client(d, true), port),
        "X-SM-Client-Subject: forged\r\n",
    );
    assert!(
        r.contains("x-sm-client-subject: CN=sm2 client,O=shangmi test"),
        "{r}"
    );
    assert!(!r.contains("forged"), "{r}");

    // Without a certificate: no handshake, no request reaches the back end.
    let c = tlcp_client(d, &[Suite::ECC_SM4_GCM_SM3], false);
    let mut s = shangmi_tlcp::Stream::client(c, "localhost", tcp(port)).unwrap();
    assert!(s.handshake().is_err());
    let r = get(rustls_stream(sm_client(d, false), port), "");
    assert!(!r.contains("backend-a"), "{r}");
    assert!(gw.wait_log("\"reason\":\"handshake\"", Duration::from_secs(2)));
}

/// Runs a TLCP client handshake over `tcp` with its first record's version rewritten to TLS
/// 1.0's, as browsers that offer TLCP suites inside a TLS hello send it.
fn tlcp_in_a_tls_record(d: &Path, port: u16) -> String {
    let c = tlcp_client(d, &[Suite::ECC_SM4_GCM_SM3], false);
    let mut conn = shangmi_tlcp::Connection::client(c, "localhost").unwrap();
    let mut s = tcp(port);
    let mut hello = conn.take_tls();
    assert_eq!(&hello[..3], &[22, 1, 1]);
    hello[1..3].copy_from_slice(&[3, 1]);
    s.write_all(&hello).unwrap();
    // Driven through a reader and a writer, as a rustls connection is.
    while conn.is_handshaking() {
        assert!(
            conn.read_tls(&mut s).unwrap() > 0,
            "closed during the handshake"
        );
        while conn.wants_write() {
            conn.write_tls(&mut s).unwrap();
        }
    }
    conn.send(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .unwrap();
    while conn.wants_write() {
        conn.write_tls(&mut s).unwrap();
    }
    let mut out = Vec::new();
    while !conn.peer_closed() && conn.read_tls(&mut s).unwrap() > 0 {
        out.extend(conn.take_plaintext());
    }
    out.extend(conn.take_plaintext());
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn a_tls_hello_offering_tlcp_suites_is_answered_with_tlcp() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    let backend = Backend::start("backend-a");
    let gw = Gateway::start(&config(d, &http(backend.port), ""), 1, false);
    let r = tlcp_in_a_tls_record(d, gw.port());
    assert!(r.contains("x-sm-protocol: TLCP ECC_SM4_GCM_SM3"), "{r}");
}

#[test]
fn a_tcp_upstream_gets_the_bytes_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    let echo = echo_backend();
    let gw = Gateway::start(
        &config(d, &format!("\"tcp://127.0.0.1:{echo}\""), ""),
        1,
        false,
    );
    let c = tlcp_client(d, &[Suite::ECC_SM4_GCM_SM3], false);
    let mut s = shangmi_tlcp::Stream::client(c, "localhost", tcp(gw.port())).unwrap();
    let big: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    s.write_all(&big).unwrap();
    let mut back = vec![0u8; big.len()];
    s.read_exact(&mut back).unwrap();
    assert!(back == big);
    let mut t = rustls_stream(intl_client(d, &rustls::version::TLS13), gw.port());
    t.write_all(b"over international TLS").unwrap();
    let mut back = [0u8; 22];
    t.read_exact(&mut back).unwrap();
    assert_eq!(&back, b"over international TLS");
}

/// A client that sends and never reads: the echo upstream's answers pile up until the
/// gateway's writes to the client wait, and the write timeout (1 s here, the idle timeout
/// 5 s) cuts it; a client that reads goes on being served meanwhile.
#[test]
fn a_client_that_never_reads_is_cut_at_the_write_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    let echo = echo_backend();
    let path = config(d, &format!("\"tcp://127.0.0.1:{echo}\""), "");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace("idle_timeout = 5", "idle_timeout = 5\nwrite_timeout = 1"),
    )
    .unwrap();
    let gw = Gateway::start(&path, 1, true);
    let mut stalled = rustls_stream(sm_client(d, false), gw.port());
    stalled
        .sock
        .set_write_timeout(Some(Duration::from_secs(4)))
        .unwrap();
    let chunk = vec![0x5au8; 64 << 10];
    let t = Instant::now();
    let mut sent = 0usize;
    while t.elapsed() < Duration::from_secs(20) && stalled.write_all(&chunk).is_ok() {
        sent += chunk.len();
    }
    let cut = t.elapsed();
    assert!(
        sent > 0 && cut < Duration::from_secs(8),
        "{sent} bytes, {cut:?}"
    );
    let mut ok = rustls_stream(sm_client(d, false), gw.port());
    ok.write_all(b"still served").unwrap();
    let mut back = [0u8; 12];
    ok.read_exact(&mut back).unwrap();
    assert_eq!(&back, b"still served");
    drop(ok);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (_, m) = gw.admin("GET", "/metrics");
        if m.contains(r#"shangmi_gateway_connection_failures_total{reason="unread"} 1"#)
            && m.contains("shangmi_gateway_active_connections 0")
        {
            break;
        }
        assert!(Instant::now() < deadline, "{m}");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(gw.wait_log("the client read nothing", Duration::from_secs(1)));
}

#[test]
fn an_upstream_that_is_down_answers_502_at_once_and_is_skipped_after() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    let live = Backend::start("backend-live");
    let upstreams = format!("{}, {}", http(dead_port()), http(live.port));
    let gw = Gateway::start(&config(d, &upstreams, ""), 1, true);
    let mut failed = 0;
    for _ in 0..8 {
        let t = Instant::now();
        let r = tlcp_get(d, gw.port(), Suite::ECC_SM4_GCM_SM3, false);
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        if r.starts_with("HTTP/1.1 502") {
            failed += 1;
        } else {
            assert!(r.contains("backend-live"), "{r}");
        }
    }
    assert!(
        failed <= 1,
        "{failed} requests went to the upstream that is down"
    );
    let (_, m) = gw.admin("GET", "/metrics");
    assert!(
        m.contains(r#"shangmi_gateway_upstream_errors_total{kind="connect"}"#) || failed == 0,
        "{m}"
    );

    // Every upstream down: 502 within the connect timeout.
    std::fs::write(
        d.join("gateway.toml"),
        std::fs::read_to_string(d.join("gateway.toml"))
            .unwrap()
            .replace(&upstreams, &http(dead_port())),
    )
    .unwrap();
    assert_eq!(gw.admin("POST", "/reload").0, 200);
    let t = Instant::now();
    let r = tlcp_get(d, gw.port(), Suite::ECC_SM4_GCM_SM3, false);
    assert!(r.starts_with("HTTP/1.1 502"), "{r}");
    assert!(t.elapsed() < Duration::from_secs(2));
}

#[test]
fn reload_swaps_the_configuration_refuses_a_broken_one_and_sigterm_drains() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    let a = Backend::start("backend-a");
    let b = Backend::slow("backend-b", Duration::from_millis(500));
    let path = config(d, &http(a.port), "");
    let mut gw = Gateway::start(&path, 1, true);
    let port = gw.port();
    let through = |want: &str| {
        let r = tlcp_get(d, port, Suite::ECC_SM4_GCM_SM3, false);
        assert!(r.contains(want), "want {want}: {r}");
    };
    through("backend-a");

    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace(&http(a.port), &http(b.port))).unwrap();
    gw.signal("HUP");
    assert!(gw.wait_log("reload:", Duration::from_secs(5)));
    through("backend-b");

    // A broken file is refused whole: the running configuration keeps serving.
    std::fs::write(&path, text.replace("sm2.key", "nothing-here.key")).unwrap();
    let (status, body) = gw.admin("POST", "/reload");
    assert_eq!(status, 500, "{body}");
    // The answer names the line; the file's path is only in the log.
    assert!(
        body.contains("line 20") && !body.contains("nothing-here"),
        "{body}"
    );
    assert!(gw.wait_log("nothing-here.key", Duration::from_secs(5)));
    through("backend-b");
    gw.signal("HUP");
    assert!(gw.wait_log("reload refused", Duration::from_secs(5)));
    through("backend-b");
    let (_, m) = gw.admin("GET", "/metrics");
    assert!(
        m.contains(r#"shangmi_gateway_reloads_total{outcome="refused"} 2"#),
        "{m}"
    );

    // SIGTERM: a request in flight (the back end takes 500 ms) completes, then the process
    // exits 0.
    let owned = d.to_path_buf();
    let in_flight = std::thread::spawn(move || {
        let c = tlcp_client(&owned, &[Suite::ECC_SM4_GCM_SM3], false);
        let s = shangmi_tlcp::Stream::client(c, "localhost", tcp(port)).unwrap();
        get(s, "")
    });
    std::thread::sleep(Duration::from_millis(200));
    gw.signal("TERM");
    assert!(gw.wait_log("draining", Duration::from_secs(5)));
    // No new connection is accepted.
    std::thread::sleep(Duration::from_millis(100));
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
    let r = in_flight.join().unwrap();
    assert!(r.contains("backend-b"), "{r}");
    let t = Instant::now();
    let status = loop {
        if let Some(s) = gw.child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "no exit after the drain"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
}

#[test]
fn idle_garbage_and_truncated_clients_cost_nothing_a_real_client_waits_for() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    let backend = Backend::start("backend-a");
    let path = config(d, &http(backend.port), "");
    // Every client here is 127.0.0.1: no per-address limit.
    let text = std::fs::read_to_string(&path).unwrap();
    let text = text.replace("[limits]\n", "[limits]\nmax_connections_per_address = 0\n");
    std::fs::write(&path, text).unwrap();
    let gw = Gateway::start(&path, 1, true);
    let port = gw.port();
    // 1,000 connections that say nothing, and 1,000 that stop halfway through a hello.
    let _ = rlimit::increase_nofile_limit(8192);
    let mut held = Vec::new();
    for i in 0..2000 {
        let mut s = tcp(port);
        if i % 2 == 1 {
            s.write_all(&[22, 3, 1, 0x02, 0x00, 1, 0, 1, 0xfc, 3, 3])
                .unwrap();
        }
        held.push(s);
    }
    for garbage in [
        &b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"[..],
        &[22, 1, 1, 0, 4, 99, 0, 0, 0][..],
        &[22, 3, 3, 0xff, 0xff][..],
        &[0u8; 64][..],
    ] {
        let mut s = tcp(port);
        s.write_all(garbage).unwrap();
        let mut sink = Vec::new();
        let _ = s.read_to_end(&mut sink);
    }
    let t = Instant::now();
    let r = tlcp_get(d, port, Suite::ECC_SM4_GCM_SM3, false);
    assert!(r.contains("backend-a"), "{r}");
    let r = get(rustls_stream(sm_client(d, false), port), "");
    assert!(r.contains("backend-a"), "{r}");
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    // The held ones are cut at the handshake deadline (3 s here).
    std::thread::sleep(Duration::from_secs(5));
    let (_, m) = gw.admin("GET", "/metrics");
    assert!(m.contains("shangmi_gateway_active_connections 0"), "{m}");
    assert!(
        m.contains(r#"shangmi_gateway_connection_failures_total{reason="timeout"} 2000"#),
        "{m}"
    );
    assert!(
        m.contains(r#"shangmi_gateway_connection_failures_total{reason="first flight"} 4"#),
        "{m}"
    );
    drop(held);
}

#[test]
fn two_processes_on_one_port_resume_each_others_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    let backend = Backend::start("backend-a");
    let key = gateway_command().arg("--new-ticket-key").output().unwrap();
    assert!(key.status.success());
    let line = String::from_utf8(key.stdout).unwrap();
    assert_eq!(line.trim().len(), 64, "{line}");
    std::fs::write(d.join("tickets.key"), format!("# current\n{line}")).unwrap();
    let port = dead_port();
    let text = std::fs::read_to_string(config(d, &http(backend.port), ""))
        .unwrap()
        .replace(
            "[admin]\nlisten = \"127.0.0.1:0\"\ntoken_file = \"admin.token\"\n",
            "",
        )
        .replace(
            "[[listener]]\nlisten = \"127.0.0.1:0\"",
            &format!("[tickets]\nkey_file = \"tickets.key\"\n\n[[listener]]\nlisten = \"127.0.0.1:{port}\"\nreuse_port = true"),
        );
    std::fs::write(d.join("gateway.toml"), text).unwrap();
    let one = Gateway::start(&d.join("gateway.toml"), 1, false);
    let two = Gateway::start(&d.join("gateway.toml"), 1, false);
    for (client, n) in [
        (sm_client(d, false), 12),
        (intl_client(d, &rustls::version::TLS13), 12),
    ] {
        for i in 0..n {
            let mut s = rustls_stream(client.clone(), port);
            let r = get(&mut s, "");
            assert!(r.contains("backend-a"), "{r}");
            let kind = s.conn.handshake_kind();
            if i > 0 {
                assert_eq!(kind, Some(rustls::HandshakeKind::Resumed), "connection {i}");
            }
        }
    }
    for gw in [&one, &two] {
        assert!(
            gw.wait_log("\"resumed\":true", Duration::from_secs(2)),
            "a process resumed nothing: the port was not shared"
        );
    }
}

#[test]
fn gathered_key_agreements_serve_many_clients_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    let backend = Backend::start("backend-a");
    let text = std::fs::read_to_string(config(d, &http(backend.port), ""))
        .unwrap()
        .replace("[limits]\n", "[limits]\nkey_agreements = \"gathered\"\n");
    std::fs::write(d.join("gateway.toml"), text).unwrap();
    let gw = Gateway::start(&d.join("gateway.toml"), 1, true);
    let port = gw.port();
    // Idle clients that never send a hello keep a partial batch waiting for their shares:
    // 100 us at most each time, so the real clients still finish well inside the 3 s
    // handshake deadline (an unbounded wait would last until the idle ones time out).
    let idle: Vec<_> = (0..200).map(|_| tcp(port)).collect();
    let (threads, each) = (8, 4);
    let sm = sm_client(d, false);
    let clients: Vec<_> = (0..threads)
        .map(|_| {
            let sm = sm.clone();
            std::thread::spawn(move || {
                for _ in 0..each {
                    let r = get(rustls_stream(sm.clone(), port), "");
                    assert!(r.contains("x-sm-protocol: TLSv1.3 TLS_SM4_GCM_SM3"), "{r}");
                }
            })
        })
        .collect();
    for c in clients {
        c.join().unwrap();
    }
    // A client preferring the hybrid: its ECDH half is gathered too, alone in its batch while
    // the idle clients are still arriving.
    let groups = [
        shangmi_rustls::CURVE_SM2_MLKEM768_GROUP,
        shangmi_rustls::CURVE_SM2_GROUP,
    ];
    let hybrid = sm_client_groups(d, false, shangmi_rustls::ALL_CIPHER_SUITES, &groups);
    let lone = Instant::now();
    let r = get(rustls_stream(hybrid, port), "");
    assert!(r.contains("x-sm-protocol: TLSv1.3"), "{r}");
    // Until the idle clients time out would be over 2 s from here.
    assert!(
        lone.elapsed() < Duration::from_millis(1500),
        "{:?}",
        lone.elapsed()
    );
    drop(idle);
    // Not gathered: international TLS.
    let r = get(
        rustls_stream(intl_client(d, &rustls::version::TLS13), port),
        "",
    );
    assert!(r.contains("x-sm-protocol: TLSv1.3 TLS_AES_"), "{r}");

    let (_, metrics) = gw.admin("GET", "/metrics");
    let value = |name: &str| -> u64 {
        let line = metrics.lines().find(|l| l.starts_with(&format!("{name} ")));
        line.and_then(|l| l.split(' ').nth(1)?.parse().ok())
            .unwrap_or_else(|| panic!("{name} not in\n{metrics}"))
    };
    let n = (threads * each) as u64;
    assert_eq!(value("shangmi_gateway_gathered_agreements_total"), n + 1);
    let batches = value("shangmi_gateway_agreement_batches_total");
    assert!((1..=n + 1).contains(&batches), "{batches}");
    assert_eq!(value("shangmi_gateway_gathered_unused_total"), 0);
    assert!(metrics.contains(&format!(
        "shangmi_gateway_handshake_seconds_count {}",
        n + 2
    )));
    assert!(gw.wait_log(r#""group":"curveSM2MLKEM768""#, Duration::from_secs(2)));
}

#[test]
fn a_reload_under_steady_load_fails_no_request() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    let a = Backend::start("backend-a");
    let b = Backend::start("backend-b");
    let path = config(d, &http(a.port), "");
    let gw = Gateway::start(&path, 1, true);
    let port = gw.port();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let load: Vec<_> = (0..4)
        .map(|i| {
            let (stop, owned) = (stop.clone(), d.to_path_buf());
            std::thread::spawn(move || {
                let (mut ok, mut failed) = (0, Vec::new());
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let r = if i % 2 == 0 {
                        tlcp_get(&owned, port, Suite::ECC_SM4_GCM_SM3, false)
                    } else {
                        get(rustls_stream(sm_client(&owned, false), port), "")
                    };
                    if r.contains("HTTP/1.1 200") {
                        ok += 1;
                    } else {
                        failed.push(r);
                    }
                }
                (ok, failed)
            })
        })
        .collect();
    let text = std::fs::read_to_string(&path).unwrap();
    for i in 0..6 {
        std::thread::sleep(Duration::from_millis(150));
        let to = if i % 2 == 0 { b.port } else { a.port };
        std::fs::write(&path, text.replace(&http(a.port), &http(to))).unwrap();
        assert_eq!(gw.admin("POST", "/reload").0, 200);
    }
    std::thread::sleep(Duration::from_millis(150));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut total = 0;
    for t in load {
        let (ok, failed) = t.join().unwrap();
        assert!(failed.is_empty(), "failed during reloads: {failed:?}");
        total += ok;
    }
    assert!(total > 20, "only {total} requests ran");
}

/// A back end that promises 100,000 bytes, sends 10 and closes.
fn truncating_backend() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for c in listener.incoming() {
            let Ok(mut c) = c else { continue };
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                let _ = c.read(&mut buf);
                let _ = c.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n0123456789");
            });
        }
    });
    port
}

#[test]
fn an_upstream_that_dies_mid_response_ends_the_client_without_close_notify() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    let gw = Gateway::start(&config(d, &http(truncating_backend()), ""), 1, false);
    // TLCP: the read fails (no close_notify), so the client can tell the answer is cut short.
    let c = tlcp_client(d, &[Suite::ECC_SM4_GCM_SM3], false);
    let mut s = shangmi_tlcp::Stream::client(c, "localhost", tcp(gw.port())).unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let mut out = Vec::new();
    let e = s.read_to_end(&mut out).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof, "{e}");
    assert!(
        out.starts_with(b"HTTP/1.1 200") && out.len() < 1000,
        "{out:?}"
    );
    // RFC 8998 likewise.
    let mut t = rustls_stream(sm_client(d, false), gw.port());
    t.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let mut out = Vec::new();
    let e = t.read_to_end(&mut out).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof, "{e}");
    assert!(gw.wait_log("\"complete\":false", Duration::from_secs(2)));
}

#[test]
fn per_address_rate_and_header_size_limits() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    let backend = Backend::start("backend-a");
    let path = config(d, &http(backend.port), "");
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "connect_timeout = 1",
        "connect_timeout = 1\nrequests_per_second = 1\nburst = 3",
    );
    std::fs::write(&path, text).unwrap();
    let gw = Gateway::start(&path, 1, true);
    let statuses: Vec<String> = (0..6)
        .map(|_| {
            let r = tlcp_get(d, gw.port(), Suite::ECC_SM4_GCM_SM3, false);
            r.lines().next().unwrap_or("").to_string()
        })
        .collect();
    let limited = statuses.iter().filter(|s| s.contains(" 429 ")).count();
    assert!((2..=3).contains(&limited), "{statuses:?}");
    assert!(statuses[0].contains(" 200 "), "{statuses:?}");
    let (_, m) = gw.admin("GET", "/metrics");
    assert!(
        m.contains(&format!("shangmi_gateway_rate_limited_total {limited}")),
        "{m}"
    );

    // A request head over max_header_bytes (16 KiB by default) is refused, not buffered.
    std::thread::sleep(Duration::from_secs(3));
    let c = tlcp_client(d, &[Suite::ECC_SM4_GCM_SM3], false);
    let s = shangmi_tlcp::Stream::client(c, "localhost", tcp(gw.port())).unwrap();
    let big = format!("X-Big: {}\r\n", "a".repeat(40_000));
    let r = get(s, &big);
    assert!(
        r.starts_with("HTTP/1.1 431") || r.is_empty() || r.starts_with("send failed"),
        "{r}"
    );
    assert!(!r.contains("backend-a"), "{r}");
}

/// A back end that switches any request to an echo protocol (as a WebSocket server switches).
fn upgrading_backend() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for c in listener.incoming() {
            let Ok(mut c) = c else { continue };
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut b = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && c.read(&mut b).unwrap_or(0) == 1 {
                    head.push(b[0]);
                }
                let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
                if !head.contains("upgrade: echo") || !head.contains("connection: upgrade") {
                    let _ = c.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
                    return;
                }
                let _ = c.write_all(
                    b"HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: echo\r\n\r\n",
                );
                let mut r = c.try_clone().unwrap();
                let _ = std::io::copy(&mut r, &mut c);
            });
        }
    });
    port
}

/// Sends an `Upgrade: echo` request over TLCP: the response head, and the stream.
fn ask_upgrade(d: &Path, port: u16) -> (String, shangmi_tlcp::Stream<std::net::TcpStream>) {
    let c = tlcp_client(d, &[Suite::ECC_SM4_GCM_SM3], false);
    let mut s = shangmi_tlcp::Stream::client(c, "localhost", tcp(port)).unwrap();
    s.write_all(
        b"GET /ws HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n",
    )
    .unwrap();
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        s.read_exact(&mut b).unwrap();
        head.push(b[0]);
    }
    (String::from_utf8_lossy(&head).to_ascii_lowercase(), s)
}

#[test]
fn an_upgrade_is_relayed_both_ways_only_when_configured() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    let path = config(d, &http(upgrading_backend()), "");
    let gw = Gateway::start(&path, 1, true);
    // WebSocket alone is relayed by default: the upstream never sees `Upgrade: echo`.
    let (head, _) = ask_upgrade(d, gw.port());
    assert!(head.starts_with("http/1.1 400"), "{head}");
    let text = std::fs::read_to_string(&path).unwrap();
    let text = text.replace(
        "[log]",
        "[http]\nupgrades = [\"websocket\", \"echo\"]\n\n[log]",
    );
    std::fs::write(&path, text).unwrap();
    assert_eq!(gw.admin("POST", "/reload").0, 200);
    let (head, mut s) = ask_upgrade(d, gw.port());
    assert!(head.starts_with("http/1.1 101"), "{head}");
    assert!(head.contains("upgrade: echo"), "{head}");
    for msg in [&b"ping"[..], &[7u8; 50_000][..]] {
        s.write_all(msg).unwrap();
        let mut back = vec![0u8; msg.len()];
        s.read_exact(&mut back).unwrap();
        assert!(back == msg);
    }
    // The upgraded connection is still counted while it lives.
    let (_, m) = gw.admin("GET", "/metrics");
    assert!(m.contains("shangmi_gateway_active_connections 1"), "{m}");
    drop(s);
}

fn h2c_backend() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    continue;
                };
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(
                        |req: hyper::Request<hyper::body::Incoming>| async move {
                            let body = format!(
                                "h2c-backend {:?} {}",
                                req.version(),
                                req.headers()
                                    .get("x-sm-protocol")
                                    .and_then(|v| v.to_str().ok())
                                    .unwrap_or("-")
                            );
                            Ok::<_, std::convert::Infallible>(hyper::Response::new(
                                http_body_util::Full::new(bytes::Bytes::from(body)),
                            ))
                        },
                    );
                    let _ = hyper::server::conn::http2::Builder::new(
                        hyper_util::rt::TokioExecutor::new(),
                    )
                    .serve_connection(hyper_util::rt::TokioIo::new(tcp), service)
                    .await;
                });
            }
        });
    });
    port
}

#[test]
fn an_h2c_upstream_is_spoken_to_in_http2() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    let port = h2c_backend();
    let gw = Gateway::start(
        &config(d, &format!("\"h2c://127.0.0.1:{port}\""), ""),
        1,
        false,
    );
    let r = tlcp_get(d, gw.port(), Suite::ECC_SM4_GCM_SM3, false);
    assert!(r.starts_with("HTTP/1.1 200"), "{r}");
    assert!(
        r.contains("h2c-backend HTTP/2.0 TLCP ECC_SM4_GCM_SM3"),
        "{r}"
    );
}

/// A site's SM2 certificate and its TLCP pair from PKCS#12 keystores (`p12`), as CAs deliver
/// them; a pair given both ways at once, or an international key from a keystore, is refused
/// by the check with the line.
#[test]
fn sites_take_their_keys_from_pkcs12_keystores() {
    use shangmi_pki::pkcs12::{self, Pkcs12Entry, Pkcs12Params};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    let key = |f: &str| {
        shangmi::sm2::SigningKey::from_key_file(&std::fs::read(d.join(f)).unwrap(), None).unwrap()
    };
    let cert = |f: &str| shangmi_pki::certificate_ders(&std::fs::read(d.join(f)).unwrap()).unwrap();
    let (sm2, ss, se) = (key("sm2.key"), key("ss.key"), key("se.key"));
    let (sm2_chain, ss_chain, se_chain) = (cert("sm2.pem"), cert("ss.pem"), cert("se.pem"));
    let params = Pkcs12Params {
        iterations: 100,
        mac_iterations: 100,
        ..Pkcs12Params::sm()
    };
    let one = pkcs12::write(
        &[Pkcs12Entry {
            key: &sm2,
            cert: &sm2_chain[0],
            name: Some("server"),
        }],
        &sm2_chain[1..],
        b"keystore pw",
        params,
    )
    .unwrap();
    std::fs::write(d.join("sm2.p12"), one).unwrap();
    let pair = pkcs12::write(
        &[
            Pkcs12Entry {
                key: &ss,
                cert: &ss_chain[0],
                name: Some("sign"),
            },
            Pkcs12Entry {
                key: &se,
                cert: &se_chain[0],
                name: Some("enc"),
            },
        ],
        &ss_chain[1..],
        b"keystore pw",
        params,
    )
    .unwrap();
    std::fs::write(d.join("pair.p12"), pair).unwrap();
    std::fs::write(d.join("p12pw"), "keystore pw\n").unwrap();
    let backend = Backend::start("from-p12");
    let text = format!(
        r#"[[listener]]
listen = "127.0.0.1:0"
[[listener.site]]
upstream = ["http://127.0.0.1:{}"]
tlcp = {{ p12 = "pair.p12", password_file = "p12pw" }}
sm2 = {{ p12 = "sm2.p12", password_file = "p12pw" }}
"#,
        backend.port
    );
    let path = d.join("p12.toml");
    std::fs::write(&path, &text).unwrap();
    let gw = Gateway::start(&path, 1, false);
    let r = tlcp_get(d, gw.port(), Suite::ECC_SM4_GCM_SM3, false);
    assert!(
        r.contains("from-p12") && r.contains("x-sm-protocol: TLCP"),
        "{r}"
    );
    let r = get(rustls_stream(sm_client(d, false), gw.port()), "");
    assert!(
        r.contains("from-p12") && r.contains("x-sm-protocol: TLSv1.3"),
        "{r}"
    );
    drop(gw);
    let check = |text: &str, want: &str| {
        std::fs::write(&path, text).unwrap();
        let o = gateway_command()
            .arg("--config")
            .arg(&path)
            .arg("--check")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{text}: {err}");
        assert!(err.contains(want), "{want}: {err}");
    };
    check(
        &text.replace(r#"sm2 = { p12"#, r#"sm2 = { cert = "sm2.pem", p12"#),
        "give cert and key, or p12",
    );
    check(
        &text.replace(
            r#"sm2 = { p12 = "sm2.p12", password_file = "p12pw" }"#,
            r#"international = [ { p12 = "sm2.p12" } ]"#,
        ),
        "not p12",
    );
    // A wrong keystore password: the MAC does not verify.
    std::fs::write(d.join("p12pw"), "wrong\n").unwrap();
    check(&text, "wrong password");
}
