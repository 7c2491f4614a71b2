//! TLCP against GmSSL 3.1.1 (`gmssl tlcp_server`/`tlcp_client`, built from the PyPI sdist
//! easy-gmssl by scripts/peers/build.sh) on loopback, both directions, ECC_SM4_CBC_SM3 (the
//! suite GmSSL has), with certificates and encrypted keys made by GmSSL itself. Two GmSSL
//! traits shape the tests: it sends its close_notify unencrypted (shangmi refuses that record,
//! after the data has crossed), and its client authenticates with its signing certificate alone
//! (which a shangmi server takes for the ECC suites).

mod tls_peers;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use tls_peers::*;

const LIMIT: Duration = Duration::from_secs(30);

/// A CA, a server pair and a client signing certificate, all made by GmSSL (keys encrypted
/// with the password 1234, in pass.txt for shangmi).
fn gmssl_pki(dir: &Path, tool: &Path) {
    let run = |args: &[&str]| {
        let o = Command::new(tool)
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "gmssl {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    std::fs::write(dir.join("pass.txt"), "1234").unwrap();
    run(&["sm2keygen", "-pass", "1234", "-out", "cakey.pem"]);
    run(&[
        "certgen",
        "-C",
        "CN",
        "-O",
        "test",
        "-CN",
        "ROOTCA",
        "-days",
        "30",
        "-key",
        "cakey.pem",
        "-pass",
        "1234",
        "-out",
        "cacert.pem",
        "-key_usage",
        "keyCertSign",
        "-key_usage",
        "cRLSign",
        "-ca",
    ]);
    for (name, usage) in [
        ("sign", "digitalSignature"),
        ("enc", "keyEncipherment"),
        ("client", "digitalSignature"),
    ] {
        let (key, req, cert) = (
            format!("{name}key.pem"),
            format!("{name}req.pem"),
            format!("{name}cert.pem"),
        );
        run(&["sm2keygen", "-pass", "1234", "-out", &key]);
        run(&[
            "reqgen",
            "-C",
            "CN",
            "-O",
            "test",
            "-CN",
            "localhost",
            "-key",
            &key,
            "-pass",
            "1234",
            "-out",
            &req,
        ]);
        run(&[
            "reqsign",
            "-in",
            &req,
            "-days",
            "30",
            "-key_usage",
            usage,
            "-cacert",
            "cacert.pem",
            "-key",
            "cakey.pem",
            "-pass",
            "1234",
            "-out",
            &cert,
        ]);
    }
    let double = [
        std::fs::read(dir.join("signcert.pem")).unwrap(),
        std::fs::read(dir.join("enccert.pem")).unwrap(),
    ]
    .concat();
    std::fs::write(dir.join("double_certs.pem"), double).unwrap();
}

#[test]
fn shangmi_client_to_gmssl_server() {
    let Some(tool) = peer_tool("gmssl") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    gmssl_pki(dir.path(), &tool);
    let port = free_port();
    // GmSSL's server serves one connection and exits, so readiness is read from the kernel's
    // table of listening sockets, not probed with a connection.
    let log = std::fs::File::create(dir.path().join("server.log")).unwrap();
    let child = Command::new(&tool)
        .args([
            "tlcp_server",
            "-port",
            &port.to_string(),
            "-cert",
            "double_certs.pem",
        ])
        .args([
            "-key",
            "signkey.pem",
            "-pass",
            "1234",
            "-ex_key",
            "enckey.pem",
            "-ex_pass",
            "1234",
        ])
        .current_dir(dir.path())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap();
    let _server = Server { child, port };
    let deadline = std::time::Instant::now() + LIMIT;
    let listening = |port: u16| {
        let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
        // local_address is HEXIP:HEXPORT; state 0A is LISTEN.
        table.lines().any(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() > 3 && f[1].ends_with(&format!(":{port:04X}")) && f[3] == "0A"
        })
    };
    while !listening(port) {
        assert!(
            std::time::Instant::now() < deadline,
            "gmssl tlcp_server did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut c = shangmi();
    c.args([
        "tlcp",
        "connect",
        &format!("127.0.0.1:{port}"),
        "--ca",
        "cacert.pem",
    ])
    .args(["--servername", "localhost"]);
    // GmSSL's server echoes; it neither answers close_notify nor closes, so the client ends
    // its wait for an answer after a few seconds, successfully.
    let r = run_with(dir.path(), &mut c, b"hello gmssl\n", LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout, "hello gmssl\n");
    assert!(
        r.stderr.contains("suite: ECC_SM4_CBC_SM3 (full)"),
        "{}",
        r.stderr
    );
}

#[test]
fn gmssl_client_to_shangmi_server() {
    let Some(tool) = peer_tool("gmssl") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    gmssl_pki(dir.path(), &tool);
    for auth in [false, true] {
        let mut args = vec![
            "tlcp",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--echo",
            "--sign-cert",
            "signcert.pem",
            "--sign-key",
            "signkey.pem",
            "--enc-cert",
            "enccert.pem",
            "--enc-key",
            "enckey.pem",
            "--password-file",
            "pass.txt",
        ];
        if auth {
            args.extend(["--client-ca", "cacert.pem"]);
        }
        let server = shangmi_listening(dir.path(), &args);
        // GmSSL's client ends at its stdin's EOF without waiting for the answer: its stdin is
        // held open a second.
        let mut line = format!(
            "(echo 'hello from gmssl'; sleep 1) | '{}' tlcp_client -host 127.0.0.1 -port {} -cacert cacert.pem",
            tool.display(),
            server.port
        );
        if auth {
            line.push_str(" -cert clientcert.pem -key clientkey.pem -pass 1234");
        }
        let mut c = Command::new("sh");
        c.args(["-c", &line]);
        let r = run_with(dir.path(), &mut c, b"", LIMIT);
        assert!(
            r.stdout.contains("hello from gmssl"),
            "auth={auth}: {:?}\n{}",
            r.stdout,
            r.stderr
        );
    }
}
