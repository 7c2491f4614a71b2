//! TLCP against Tongsuo 8.5's NTLS (built with enable-ntls by scripts/peers/build.sh) on
//! loopback, both directions: `shangmi tlcp connect` to its `s_server -enable_ntls`, its
//! `s_client -enable_ntls -ntls` to `shangmi tlcp serve`; every suite, with and without client
//! certificates (ECDHE always with), resumption each way, and an untrusted server refused.

mod tls_peers;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use tls_peers::*;

const LIMIT: Duration = Duration::from_secs(30);

/// (Tongsuo's name, shangmi's name) of each suite.
const SUITES: [(&str, &str); 4] = [
    ("ECC-SM2-SM4-CBC-SM3", "ecc-sm4-cbc-sm3"),
    ("ECC-SM2-SM4-GCM-SM3", "ecc-sm4-gcm-sm3"),
    ("ECDHE-SM2-SM4-CBC-SM3", "ecdhe-sm4-cbc-sm3"),
    ("ECDHE-SM2-SM4-GCM-SM3", "ecdhe-sm4-gcm-sm3"),
];

fn tongsuo() -> Option<std::path::PathBuf> {
    peer_tool("tongsuo")
}

/// Tongsuo's NTLS server reversing each line; `client_auth` requires client certificates.
fn tongsuo_server(dir: &Path, tool: &Path, suite: &str, client_auth: bool) -> Server {
    peer_server(dir, |port| {
        tongsuo_server_command(tool, port, suite, client_auth)
    })
}

fn tongsuo_server_command(tool: &Path, port: u16, suite: &str, client_auth: bool) -> Command {
    let mut cmd = Command::new(tool);
    cmd.args([
        "s_server",
        "-enable_ntls",
        "-accept",
        &format!("127.0.0.1:{port}"),
        "-rev",
    ])
    .args([
        "-sign_cert",
        "ss.pem",
        "-sign_key",
        "ss.key",
        "-enc_cert",
        "se.pem",
        "-enc_key",
        "se.key",
    ])
    .args(["-cipher", suite]);
    if client_auth {
        cmd.args(["-CAfile", "ca.pem", "-Verify", "1", "-verify_return_error"]);
    }
    cmd
}

fn shangmi_connect(dir: &Path, port: u16, suite: &str, extra: &[&str], input: &[u8]) -> Ran {
    let mut cmd = shangmi();
    cmd.args([
        "tlcp",
        "connect",
        &format!("127.0.0.1:{port}"),
        "--ca",
        "ca.pem",
    ])
    .args(["--servername", "localhost", "--suite", suite])
    .args(extra);
    run_with(dir, &mut cmd, input, LIMIT)
}

/// `shangmi tlcp serve --echo` on a free port; idle connections end after a second (Tongsuo's
/// s_client with -ign_eof waits for the server to close).
fn tlcp_server(dir: &Path, extra: &[&str]) -> Server {
    let mut args = vec![
        "tlcp",
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--echo",
        "--idle-timeout",
        "1",
    ];
    args.extend(TLCP_SERVER_PAIR);
    args.extend(extra);
    shangmi_listening(dir, &args)
}

fn tongsuo_client(
    dir: &Path,
    tool: &Path,
    port: u16,
    suite: &str,
    certs: bool,
    extra: &[&str],
) -> Ran {
    let mut cmd = Command::new(tool);
    cmd.args([
        "s_client",
        "-enable_ntls",
        "-ntls",
        "-connect",
        &format!("127.0.0.1:{port}"),
    ])
    .args([
        "-cipher",
        suite,
        "-CAfile",
        "ca.pem",
        "-verify_return_error",
        "-ign_eof",
    ])
    .args(extra);
    if certs {
        cmd.args([
            "-sign_cert",
            "cs.pem",
            "-sign_key",
            "cs.key",
            "-enc_cert",
            "ce.pem",
            "-enc_key",
            "ce.key",
        ]);
    }
    run_with(dir, &mut cmd, b"hello from tongsuo\n", LIMIT)
}

#[test]
fn shangmi_client_to_tongsuo_server_every_suite() {
    let Some(tool) = tongsuo() else { return };
    let dir = tempfile::tempdir().unwrap();
    tlcp_pki(dir.path());
    for (peer_name, ours) in SUITES {
        let ecdhe = ours.starts_with("ecdhe");
        for certs in [false, true] {
            if ecdhe && !certs {
                continue;
            }
            let server = tongsuo_server(dir.path(), &tool, peer_name, certs);
            let extra: &[&str] = if certs { &TLCP_CLIENT_PAIR } else { &[] };
            let text = format!("hello {ours}\n");
            let r = shangmi_connect(dir.path(), server.port, ours, extra, text.as_bytes());
            let want: String = text.trim_end().chars().rev().collect();
            assert_eq!(r.code, Some(0), "{ours} certs={certs}: {}", r.stderr);
            assert!(
                r.stdout.contains(&want),
                "{ours} certs={certs}: got {:?}",
                r.stdout
            );
            let upper = ours.to_uppercase().replace('-', "_");
            assert!(
                r.stderr.contains(&format!("suite: {upper} (full)")),
                "{}",
                r.stderr
            );
        }
    }
}

#[test]
fn tongsuo_client_to_shangmi_server_every_suite() {
    let Some(tool) = tongsuo() else { return };
    let dir = tempfile::tempdir().unwrap();
    tlcp_pki(dir.path());
    for (peer_name, ours) in SUITES {
        let ecdhe = ours.starts_with("ecdhe");
        for certs in [false, true] {
            if ecdhe && !certs {
                continue;
            }
            let server = if certs {
                tlcp_server(dir.path(), &["--client-ca", "ca.pem"])
            } else {
                tlcp_server(dir.path(), &[])
            };
            let r = tongsuo_client(dir.path(), &tool, server.port, peer_name, certs, &[]);
            assert!(
                r.stdout.contains(&format!("Cipher is {peer_name}")),
                "{peer_name} certs={certs}: {}\n{}",
                r.stdout,
                r.stderr
            );
            // The echo came back through the connection.
            let after = r.stdout.split("Verify return code").last().unwrap_or("");
            assert!(
                after.contains("hello from tongsuo"),
                "{peer_name}: no echo in {:?}",
                r.stdout
            );
        }
    }
}

#[test]
fn resumption_both_ways() {
    let Some(tool) = tongsuo() else { return };
    let dir = tempfile::tempdir().unwrap();
    tlcp_pki(dir.path());
    // shangmi resumes with Tongsuo's server.
    let server = tongsuo_server(dir.path(), &tool, "ECC-SM2-SM4-GCM-SM3", false);
    let r = shangmi_connect(
        dir.path(),
        server.port,
        "ecc-sm4-gcm-sm3",
        &["--resume"],
        b"again\n",
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stderr.contains("suite: ECC_SM4_GCM_SM3 (resumed)"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.contains("niaga"));
    // Tongsuo's client resumes with shangmi's server (-reconnect: five more connections).
    let server = tlcp_server(dir.path(), &[]);
    let r = tongsuo_client(
        dir.path(),
        &tool,
        server.port,
        "ECC-SM2-SM4-CBC-SM3",
        false,
        &["-reconnect"],
    );
    assert!(
        r.stdout.matches("Reused, NTLSv1.1").count() >= 5,
        "{}",
        r.stdout
    );
}

#[test]
fn untrusted_server_and_missing_client_certificates_fail() {
    let Some(tool) = tongsuo() else { return };
    let dir = tempfile::tempdir().unwrap();
    tlcp_pki(dir.path());
    // A client trusting another CA: exit 1, the reason named.
    let other = tempfile::tempdir().unwrap();
    tlcp_pki(other.path());
    std::fs::copy(other.path().join("ca.pem"), dir.path().join("other-ca.pem")).unwrap();
    let server = tongsuo_server(dir.path(), &tool, "ECC-SM2-SM4-CBC-SM3", false);
    let mut cmd = shangmi();
    cmd.args([
        "tlcp",
        "connect",
        &format!("127.0.0.1:{}", server.port),
        "--ca",
        "other-ca.pem",
    ])
    .args(["--servername", "localhost"]);
    let r = run_with(dir.path(), &mut cmd, b"x", LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains("certificate"), "{}", r.stderr);
    // Tongsuo without client certificates to a server that requires them: refused.
    let server = tlcp_server(dir.path(), &["--client-ca", "ca.pem"]);
    let r = tongsuo_client(
        dir.path(),
        &tool,
        server.port,
        "ECC-SM2-SM4-GCM-SM3",
        false,
        &[],
    );
    // The server's fatal alert ends it (s_client still names the suite the hello chose).
    assert!(r.stderr.contains("alert"), "{}", r.stderr);
    let after = r.stdout.split("Verify return code").last().unwrap_or("");
    assert!(!after.contains("hello from tongsuo"), "{}", r.stdout);
}
