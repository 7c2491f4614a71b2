//! RFC 8998 against OpenSSL 4.0 and Tongsuo 8.5 (an OpenSSL fork with its own SM work) on
//! loopback, both directions: `shangmi tls connect` to their `s_server`, their `s_client` to
//! `shangmi tls serve`; both suites, client certificates, resumption, HelloRetryRequest,
//! the curveSM2MLKEM768 hybrid, certificates made by either tool, failures.

mod tls_peers;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use tls_peers::*;

const LIMIT: Duration = Duration::from_secs(30);
const SM_ARGS: [&str; 6] = [
    "-ciphersuites",
    "TLS_SM4_GCM_SM3:TLS_SM4_CCM_SM3",
    "-sigalgs",
    "sm2sig_sm3",
    "-groups",
    "curveSM2",
];

/// The peer's s_server answering GET with its status page (which names the suite, and
/// whether the session was reused).
fn openssl_server(dir: &Path, tool: &Path, extra: &[&str]) -> Server {
    peer_server(dir, |port| {
        let mut cmd = Command::new(tool);
        cmd.args(["s_server", "-accept", &format!("127.0.0.1:{port}")])
            .args(["-cert", "server.pem", "-key", "server.key", "-www"])
            .args(SM_ARGS)
            .args(extra);
        cmd
    })
}

fn connect(dir: &Path, port: u16, extra: &[&str]) -> Ran {
    let addr = format!("127.0.0.1:{port}");
    let mut cmd = shangmi();
    cmd.args(["tls", "connect", &addr, "--servername", "localhost"])
        .args(extra);
    run_with(dir, &mut cmd, b"GET / HTTP/1.0\r\n\r\n", LIMIT)
}

fn openssl_client(dir: &Path, tool: &Path, port: u16, extra: &[&str]) -> Ran {
    let mut cmd = Command::new(tool);
    cmd.args(["s_client", "-connect", &format!("127.0.0.1:{port}")])
        .args([
            "-servername",
            "localhost",
            "-CAfile",
            "ca.pem",
            "-verify_return_error",
        ])
        .args(["-ign_eof"])
        .args(extra);
    run_with(dir, &mut cmd, b"", LIMIT)
}

/// `shangmi tls serve` answering every connection with `hello from shangmi`.
fn responding_server(d: &Path) -> Server {
    shangmi_server(
        d,
        &[
            "--cert",
            "server.pem",
            "--key",
            "server.key",
            "--response",
            "hello from shangmi",
        ],
    )
}

fn shangmi_client_to_peer_server(tool: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    shangmi_pki(d);
    let server = openssl_server(d, tool, &[]);
    for (suite, name) in [
        ("sm4-gcm", "TLS_SM4_GCM_SM3"),
        ("sm4-ccm", "TLS_SM4_CCM_SM3"),
    ] {
        let r = connect(d, server.port, &["--ca", "ca.pem", "--suite", suite]);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        assert!(
            r.stdout.contains(&format!("Cipher is {name}")),
            "{}",
            r.stdout
        );
        assert!(
            r.stderr.contains(&format!(
                "suite {name}, group curveSM2, signature sm2sig_sm3, handshake full"
            )),
            "{}",
            r.stderr
        );
    }
    // Resumption: the second connection reuses the first one's ticket.
    let r = connect(d, server.port, &["--ca", "ca.pem", "--resume"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stderr.contains("handshake resumed"), "{}", r.stderr);
    assert!(r.stdout.contains("Reused, TLSv1.3"), "{}", r.stdout);
    // A server outside the trusted roots: refused, exit 1.
    let other = tempfile::tempdir().unwrap();
    shangmi_pki(other.path());
    std::fs::copy(other.path().join("ca.pem"), d.join("other-ca.pem")).unwrap();
    let r = connect(d, server.port, &["--ca", "other-ca.pem"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
}

fn shangmi_client_certificates_to_peer_server(tool: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    shangmi_pki(d);
    let server = openssl_server(d, tool, &["-Verify", "1", "-CAfile", "ca.pem"]);
    let r = connect(
        d,
        server.port,
        &[
            "--ca",
            "ca.pem",
            "--cert",
            "client.pem",
            "--key",
            "client.key",
        ],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("Client certificate"), "{}", r.stdout);
    let r = connect(d, server.port, &["--ca", "ca.pem"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
}

fn peer_client_to_shangmi_server(tool: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    shangmi_pki(d);
    let server = responding_server(d);
    for name in ["TLS_SM4_GCM_SM3", "TLS_SM4_CCM_SM3"] {
        let r = openssl_client(
            d,
            tool,
            server.port,
            &[
                "-ciphersuites",
                name,
                "-sigalgs",
                "sm2sig_sm3",
                "-groups",
                "curveSM2",
            ],
        );
        assert!(
            r.stdout.contains("hello from shangmi"),
            "{}\n{}",
            r.stdout,
            r.stderr
        );
        assert!(
            r.stdout.contains(&format!("Cipher is {name}")),
            "{}",
            r.stdout
        );
        assert!(
            r.stdout.contains("Verify return code: 0 (ok)"),
            "{}",
            r.stdout
        );
    }
    // A client whose first key share is X25519: the server asks again for curveSM2.
    let r = openssl_client(
        d,
        tool,
        server.port,
        &[
            "-ciphersuites",
            "TLS_SM4_GCM_SM3",
            "-groups",
            "X25519:curveSM2",
        ],
    );
    assert!(
        r.stdout.contains("hello from shangmi"),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
    // OpenSSL names the group, Tongsuo the curve.
    assert!(
        r.stdout.contains("Peer Temp Key: curveSM2")
            || r.stdout.contains("Peer Temp Key: ECDH, SM2"),
        "{}",
        r.stdout
    );
    // Resumption with the server's SM4-GCM ticket.
    let sm = ["-ciphersuites", "TLS_SM4_GCM_SM3", "-groups", "curveSM2"];
    let first = openssl_client(
        d,
        tool,
        server.port,
        &[&sm[..], &["-sess_out", "sess.pem"]].concat(),
    );
    assert!(first.stdout.contains("New, TLSv1.3"), "{}", first.stdout);
    let again = openssl_client(
        d,
        tool,
        server.port,
        &[&sm[..], &["-sess_in", "sess.pem"]].concat(),
    );
    assert!(again.stdout.contains("Reused, TLSv1.3"), "{}", again.stdout);
    assert!(
        again.stdout.contains("hello from shangmi"),
        "{}",
        again.stdout
    );
}

fn peer_client_certificates_to_shangmi_server(tool: &Path) {
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
            "--response",
            "hello client",
        ],
    );
    let r = openssl_client(
        d,
        tool,
        server.port,
        &[&SM_ARGS[..], &["-cert", "client.pem", "-key", "client.key"]].concat(),
    );
    assert!(
        r.stdout.contains("hello client"),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
    let r = openssl_client(d, tool, server.port, &SM_ARGS);
    assert!(!r.stdout.contains("hello client"), "{}", r.stdout);
}

/// Certificates and keys made by the peer itself (PKCS#8 keys, its extensions, its default
/// SM2 ID), served and checked by shangmi, and the reverse.
fn certificates_made_by_peer_work_both_ways(tool: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = |args: &[&str]| {
        let out = Command::new(tool)
            .args(args)
            .current_dir(d)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    o(&["genpkey", "-algorithm", "SM2", "-out", "ca.key"]);
    o(&["genpkey", "-algorithm", "SM2", "-out", "server.key"]);
    o(&[
        "req",
        "-new",
        "-x509",
        "-key",
        "ca.key",
        "-subj",
        "/CN=OpenSSL Root",
        "-days",
        "30",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
        "-out",
        "ca.pem",
    ]);
    o(&[
        "req",
        "-new",
        "-key",
        "server.key",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=DNS:localhost",
        "-out",
        "server.csr",
    ]);
    o(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-days",
        "30",
        "-copy_extensions",
        "copy",
        "-out",
        "server.pem",
    ]);
    let ours = shangmi_server(
        d,
        &[
            "--cert",
            "server.pem",
            "--key",
            "server.key",
            "--response",
            "hi",
        ],
    );
    let r = openssl_client(d, tool, ours.port, &SM_ARGS);
    assert!(
        r.stdout.contains("Verify return code: 0 (ok)"),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
    let theirs = openssl_server(d, tool, &[]);
    let r = connect(d, theirs.port, &["--ca", "ca.pem"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stdout.contains("Cipher is TLS_SM4_GCM_SM3"),
        "{}",
        r.stdout
    );
}

/// curveSM2MLKEM768 both ways: the peer's client offering only the hybrid to `shangmi tls
/// serve` (which accepts it by default), `shangmi tls connect --groups curveSM2MLKEM768` to the
/// peer's server; and a client offering the hybrid first to a server without it gets plain
/// curveSM2 from the share it sent beside, with no HelloRetryRequest.
fn hybrid_both_ways(tool: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    shangmi_pki(d);
    let server = responding_server(d);
    let r = openssl_client(
        d,
        tool,
        server.port,
        &[
            "-ciphersuites",
            "TLS_SM4_GCM_SM3",
            "-sigalgs",
            "sm2sig_sm3",
            "-groups",
            "curveSM2MLKEM768",
        ],
    );
    assert!(
        r.stdout.contains("hello from shangmi"),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
    assert!(r.stdout.contains("curveSM2MLKEM768"), "{}", r.stdout);
    drop(server);

    let hybrid_server = |groups: &str| {
        peer_server(d, |port| {
            let mut cmd = Command::new(tool);
            cmd.args(["s_server", "-accept", &format!("127.0.0.1:{port}")])
                .args(["-cert", "server.pem", "-key", "server.key", "-www"])
                .args(["-ciphersuites", "TLS_SM4_GCM_SM3", "-sigalgs", "sm2sig_sm3"])
                .args(["-groups", groups]);
            cmd
        })
    };
    let server = hybrid_server("curveSM2MLKEM768");
    let r = connect(
        d,
        server.port,
        &["--ca", "ca.pem", "--groups", "curveSM2MLKEM768"],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("group curveSM2MLKEM768, signature sm2sig_sm3, handshake full"),
        "{}",
        r.stderr
    );
    assert!(
        r.stdout.contains("Cipher is TLS_SM4_GCM_SM3"),
        "{}",
        r.stdout
    );
    drop(server);

    let server = hybrid_server("curveSM2");
    let r = connect(
        d,
        server.port,
        &["--ca", "ca.pem", "--groups", "curveSM2MLKEM768,curveSM2"],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("group curveSM2, signature sm2sig_sm3, handshake full"),
        "{}",
        r.stderr
    );
}

/// One test per peer and case; a peer that cannot be built skips (fails under CI=true).
macro_rules! against {
    ($peer:literal: $($test:ident => $case:ident),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                if let Some(tool) = peer_tool($peer) {
                    $case(&tool);
                }
            }
        )*
    };
}

against!("openssl4":
    shangmi_client_to_openssl4_server => shangmi_client_to_peer_server,
    shangmi_client_certificates_to_openssl4_server => shangmi_client_certificates_to_peer_server,
    openssl4_client_to_shangmi_server => peer_client_to_shangmi_server,
    openssl4_client_certificates_to_shangmi_server => peer_client_certificates_to_shangmi_server,
    certificates_made_by_openssl4_work_both_ways => certificates_made_by_peer_work_both_ways,
    curve_sm2_mlkem768_with_openssl4_both_ways => hybrid_both_ways,
);

against!("tongsuo":
    shangmi_client_to_tongsuo_server => shangmi_client_to_peer_server,
    shangmi_client_certificates_to_tongsuo_server => shangmi_client_certificates_to_peer_server,
    tongsuo_client_to_shangmi_server => peer_client_to_shangmi_server,
    tongsuo_client_certificates_to_shangmi_server => peer_client_certificates_to_shangmi_server,
    certificates_made_by_tongsuo_work_both_ways => certificates_made_by_peer_work_both_ways,
    curve_sm2_mlkem768_with_tongsuo_both_ways => hybrid_both_ways,
);
