//! TLCP against tjfoc/gmsm's `gmtls` (Go, `interop/gmtls`) on loopback, both directions, with
//! and without client certificates: ECC_SM4_CBC_SM3, the one suite it completes (its ECDHE
//! is not GM/T 0003.3's key exchange). Its client sends only a signing certificate, which a
//! shangmi server takes for the ECC suites.

mod tls_peers;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use tls_peers::*;

const LIMIT: Duration = Duration::from_secs(30);

/// The peer built once per test run (Go fetches tjfoc/gmsm v1.4.1 through its module proxy).
fn gmtls() -> Option<PathBuf> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
            let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gmtls-peer");
            match Command::new("go")
                .args(["build", "-o"])
                .arg(&out)
                .arg(".")
                .current_dir(root.join("interop/gmtls"))
                .output()
            {
                Ok(o) if o.status.success() => Some(out),
                Ok(o) => unavailable(
                    "tjfoc/gmsm gmtls",
                    String::from_utf8_lossy(&o.stderr).trim(),
                ),
                Err(e) => unavailable("tjfoc/gmsm gmtls (go)", &e.to_string()),
            }
        })
        .clone()
}

#[test]
fn shangmi_client_to_gmtls_server() {
    let Some(peer) = gmtls() else { return };
    let dir = tempfile::tempdir().unwrap();
    tlcp_pki(dir.path());
    for certs in [false, true] {
        let server = peer_server(dir.path(), |port| {
            let mut cmd = Command::new(&peer);
            cmd.args([
                "server",
                &format!("127.0.0.1:{port}"),
                "ss.pem",
                "ss.key",
                "se.pem",
                "se.key",
            ]);
            if certs {
                cmd.arg("ca.pem");
            }
            cmd
        });
        let port = server.port;
        let mut c = shangmi();
        c.args([
            "tlcp",
            "connect",
            &format!("127.0.0.1:{port}"),
            "--ca",
            "ca.pem",
        ])
        .args(["--servername", "localhost", "--suite", "ecc-sm4-cbc-sm3"]);
        if certs {
            c.args(TLCP_CLIENT_PAIR);
        }
        // Stdin stays open until the answer is in: the reversed line, then our close.
        let r = run_with(dir.path(), &mut c, b"hello gmtls\n", LIMIT);
        assert_eq!(r.code, Some(0), "certs={certs}: {}", r.stderr);
        assert!(
            r.stdout.contains("sltmg olleh"),
            "certs={certs}: {:?} {}",
            r.stdout,
            r.stderr
        );
        assert!(
            r.stderr.contains("suite: ECC_SM4_CBC_SM3 (full)"),
            "{}",
            r.stderr
        );
    }
}

#[test]
fn gmtls_client_to_shangmi_server() {
    let Some(peer) = gmtls() else { return };
    let dir = tempfile::tempdir().unwrap();
    tlcp_pki(dir.path());
    for certs in [false, true] {
        let mut args = vec!["--echo"];
        if certs {
            args.extend(["--client-ca", "ca.pem"]);
        }
        let mut all = vec!["tlcp", "serve", "--listen", "127.0.0.1:0"];
        all.extend(TLCP_SERVER_PAIR);
        all.extend(args);
        let server = shangmi_listening(dir.path(), &all);
        let port = server.port;
        let mut c = Command::new(&peer);
        c.args(["client", &format!("127.0.0.1:{port}"), "ca.pem"]);
        if certs {
            c.args(["cs.pem", "cs.key", "ce.pem", "ce.key"]);
        }
        let r = run_with(dir.path(), &mut c, b"hello from gmtls\n", LIMIT);
        assert_eq!(r.code, Some(0), "certs={certs}: {}", r.stderr);
        assert_eq!(r.stdout, "hello from gmtls\n");
        assert!(
            r.stderr.contains("suite 0xe013 version 0x0101"),
            "{}",
            r.stderr
        );
        // A client without certificates where they are required is refused.
        if certs {
            let mut c = Command::new(&peer);
            c.args(["client", &format!("127.0.0.1:{port}"), "ca.pem"]);
            let r = run_with(dir.path(), &mut c, b"x\n", LIMIT);
            assert_ne!(r.code, Some(0), "{}", r.stdout);
        }
    }
}
