//! RFC 8998 against BouncyCastle's bctls 1.84 on loopback, both directions: both suites,
//! client certificates required and missing.

mod tls_peers;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tls_peers::*;

const LIMIT: Duration = Duration::from_secs(60);

/// BC's server, returning once it prints "ready".
fn bc_server(dir: &Path, cp: &str, extra: &[&str]) -> Server {
    let port = free_port();
    let mut child = bctls_peer(cp)
        .args(["server", "--port", &port.to_string()])
        .args(extra)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ready");
    Server { child, port }
}

#[test]
fn shangmi_client_to_bctls_server() {
    let Some(cp) = bctls() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    shangmi_pki(d);
    let server = bc_server(
        d,
        &cp,
        &[
            "--cert",
            "server.pem",
            "--key",
            "server.key",
            "--client-ca",
            "ca.pem",
        ],
    );
    let addr = format!("127.0.0.1:{}", server.port);
    for (suite, name) in [
        ("sm4-gcm", "TLS_SM4_GCM_SM3"),
        ("sm4-ccm", "TLS_SM4_CCM_SM3"),
    ] {
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
                "client.pem",
                "--key",
                "client.key",
                "--suite",
                suite,
            ]),
            b"hello bc\n",
            LIMIT,
        );
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        assert_eq!(r.stdout, format!("bctls: hello bc {name}\n"));
        assert!(r.stderr.contains("signature sm2sig_sm3"), "{}", r.stderr);
    }
    // The server requires a certificate: without one the handshake fails.
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
        b"hello bc\n",
        LIMIT,
    );
    assert_eq!(r.code, Some(1), "{}", r.stderr);
}

#[test]
fn bctls_client_to_shangmi_server() {
    let Some(cp) = bctls() else { return };
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
            "--client-ca",
            "ca.pem",
            "--echo",
        ],
    );
    let port = server.port.to_string();
    for suite in ["gcm", "ccm"] {
        let r = run_with(
            d,
            bctls_peer(&cp).args([
                "client",
                "--port",
                &port,
                "--ca",
                "ca.pem",
                "--cert",
                "client.pem",
                "--key",
                "client.key",
                "--suite",
                suite,
                "--message",
                "hello shangmi",
            ]),
            b"",
            LIMIT,
        );
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        assert_eq!(r.stdout.trim(), "hello shangmi");
    }
    let r = run_with(
        d,
        bctls_peer(&cp).args(["client", "--port", &port, "--ca", "ca.pem"]),
        b"",
        LIMIT,
    );
    assert_eq!(r.code, Some(1), "{}", r.stdout);
}
