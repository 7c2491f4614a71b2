//! `shangmi pkcs12` with SM2 keys, both ways with OpenSSL 4.0 and Tongsuo 8.5: their
//! `pkcs12 -export` (with the SM algorithms and with their defaults) read by `shangmi pkcs12
//! import|show`, and our files read by their `pkcs12`, the key checked to be the same key.
//! Wrong passwords and tampered files: exit 1, nothing written.

mod tls_peers;

use std::path::Path;
use std::process::Command;

use tls_peers::*;

fn run(dir: &Path, cmd: &mut Command) -> (i32, String, String) {
    let o = cmd.current_dir(dir).output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn ours(dir: &Path, args: &[&str]) -> (i32, String, String) {
    run(dir, shangmi().args(args))
}

/// The public key of a PEM private key, as `tool pkey -pubout` prints it.
fn public_of(dir: &Path, tool: &Path, key_file: &str) -> String {
    let (code, out, err) = run(
        dir,
        Command::new(tool).args(["pkey", "-in", key_file, "-pubout"]),
    );
    assert_eq!(code, 0, "{err}");
    out
}

/// The first PEM block labelled `label` in `text`.
fn block(text: &str, label: &str) -> String {
    let begin = format!("-----BEGIN {label}-----");
    let end = format!("-----END {label}-----");
    let a = text
        .find(&begin)
        .unwrap_or_else(|| panic!("no {label} in {text}"));
    let b = text[a..].find(&end).unwrap() + a + end.len();
    format!("{}\n", &text[a..b])
}

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    shangmi_pki(d);
    std::fs::write(d.join("pw"), "correct horse\n").unwrap();
    std::fs::write(d.join("bad"), "wrong horse\n").unwrap();
    dir
}

#[test]
fn export_show_import_round_trip_and_refusals() {
    let dir = setup();
    let d = dir.path();
    for extra in [
        &[][..],
        &["--compat"],
        &["--prf", "sm3"],
        &["--mac", "sha256"],
    ] {
        let mut args = vec![
            "pkcs12",
            "export",
            "--key",
            "server.key",
            "--cert",
            "server.pem",
            "--chain",
            "ca.pem",
            "--name",
            "web",
            "--password-file",
            "pw",
            "-o",
            "s.p12",
        ];
        args.extend_from_slice(extra);
        let (code, _, err) = ours(d, &args);
        assert_eq!(code, 0, "{extra:?}: {err}");
        let (code, shown, err) = ours(d, &["pkcs12", "show", "s.p12", "--password-file", "pw"]);
        assert_eq!(code, 0, "{err}");
        assert!(shown.contains("key: SM2, alias \"web\""), "{shown}");
        assert_eq!(shown.matches("certificate: ").count(), 2, "{shown}");
        let (code, _, err) = ours(
            d,
            &[
                "pkcs12",
                "import",
                "s.p12",
                "--password-file",
                "pw",
                "-o",
                "all.pem",
            ],
        );
        assert_eq!(code, 0, "{err}");
        let all = std::fs::read_to_string(d.join("all.pem")).unwrap();
        let key = std::fs::read_to_string(d.join("server.key")).unwrap();
        assert_eq!(block(&all, "PRIVATE KEY"), block(&key, "PRIVATE KEY"));
        assert_eq!(all.matches("BEGIN CERTIFICATE").count(), 2);
    }
    // A wrong password and a flipped byte: exit 1, the named output never appears.
    let (code, _, err) = ours(
        d,
        &[
            "pkcs12",
            "import",
            "s.p12",
            "--password-file",
            "bad",
            "-o",
            "no.pem",
        ],
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("wrong password"), "{err}");
    assert!(!d.join("no.pem").exists());
    let mut p12 = std::fs::read(d.join("s.p12")).unwrap();
    let at = p12.len() / 2;
    p12[at] ^= 0x40;
    std::fs::write(d.join("t.p12"), &p12).unwrap();
    let (code, _, err) = ours(
        d,
        &[
            "pkcs12",
            "import",
            "t.p12",
            "--password-file",
            "pw",
            "-o",
            "no.pem",
        ],
    );
    assert!(code == 1 || code == 2, "{code}: {err}");
    assert!(!d.join("no.pem").exists());
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_tlcp_pair_travels_in_one_file() {
    let dir = setup();
    let d = dir.path();
    let (code, _, err) = ours(
        d,
        &[
            "pkcs12",
            "export",
            "--key",
            "server.key",
            "--cert",
            "server.pem",
            "--enc-key",
            "client.key",
            "--enc-cert",
            "client.pem",
            "--password-file",
            "pw",
            "-o",
            "pair.p12",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let (code, shown, err) = ours(d, &["pkcs12", "show", "pair.p12", "--password-file", "pw"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        shown.contains("alias \"sign\"") && shown.contains("alias \"enc\""),
        "{shown}"
    );
    assert_eq!(shown.matches("key: SM2").count(), 2, "{shown}");
}

/// The peer's `pkcs12 -export`, SM and default, read by shangmi; ours read by the peer.
fn both_ways(tool: &Path) {
    let dir = setup();
    let d = dir.path();
    for (name, flags) in [
        (
            "sm",
            &[
                "-keypbe", "SM4-CBC", "-certpbe", "SM4-CBC", "-macalg", "SM3",
            ][..],
        ),
        ("default", &[][..]),
    ] {
        let file = format!("peer-{name}.p12");
        let mut cmd = Command::new(tool);
        cmd.args([
            "pkcs12",
            "-export",
            "-inkey",
            "server.key",
            "-in",
            "server.pem",
        ])
        .args([
            "-certfile",
            "ca.pem",
            "-name",
            "peer",
            "-passout",
            "file:pw",
        ])
        .args(flags)
        .args(["-out", &file]);
        let (code, _, err) = run(d, &mut cmd);
        assert_eq!(code, 0, "{name}: {err}");
        let (code, all, err) = ours(d, &["pkcs12", "import", &file, "--password-file", "pw"]);
        assert_eq!(code, 0, "{name}: {err}");
        let key = std::fs::read_to_string(d.join("server.key")).unwrap();
        assert_eq!(
            block(&all, "PRIVATE KEY"),
            block(&key, "PRIVATE KEY"),
            "{name}"
        );
        assert_eq!(all.matches("BEGIN CERTIFICATE").count(), 2, "{name}");
        let (code, shown, _) = ours(d, &["pkcs12", "show", &file, "--password-file", "pw"]);
        assert_eq!(code, 0);
        assert!(shown.contains("alias \"peer\""), "{shown}");
        if name == "sm" {
            assert!(
                shown.contains("MAC: SM3") && shown.contains("SM4-CBC"),
                "{shown}"
            );
        }
        let (code, _, _) = ours(d, &["pkcs12", "show", &file, "--password-file", "bad"]);
        assert_eq!(code, 1);
    }
    for extra in [&[][..], &["--compat"]] {
        let mut args = vec![
            "pkcs12",
            "export",
            "--key",
            "server.key",
            "--cert",
            "server.pem",
            "--chain",
            "ca.pem",
            "--name",
            "ours",
            "--password-file",
            "pw",
            "-o",
            "ours.p12",
        ];
        args.extend_from_slice(extra);
        assert_eq!(ours(d, &args).0, 0);
        let mut cmd = Command::new(tool);
        cmd.args(["pkcs12", "-in", "ours.p12", "-passin", "file:pw", "-nodes"])
            .args(["-out", "theirs.pem"]);
        let (code, _, err) = run(d, &mut cmd);
        assert_eq!(code, 0, "{extra:?}: {err}");
        let theirs = std::fs::read_to_string(d.join("theirs.pem")).unwrap();
        assert!(theirs.contains("friendlyName: ours"), "{theirs}");
        assert_eq!(theirs.matches("BEGIN CERTIFICATE").count(), 2, "{theirs}");
        std::fs::write(d.join("their-key.pem"), block(&theirs, "PRIVATE KEY")).unwrap();
        assert_eq!(
            public_of(d, tool, "their-key.pem"),
            public_of(d, tool, "server.key"),
            "{extra:?}"
        );
        // Their MAC check refuses a wrong password too.
        let mut cmd = Command::new(tool);
        cmd.args(["pkcs12", "-in", "ours.p12", "-passin", "file:bad", "-nodes"]);
        assert_ne!(run(d, &mut cmd).0, 0);
    }
}

/// The legacy encryption (3DES keys, RC2-40 certificates, a SHA-1 MAC) that OpenSSL 1.x wrote
/// by default and OpenSSL 3 writes with `-legacy`: read.
#[test]
fn a_legacy_keystore_is_read() {
    let dir = setup();
    let d = dir.path();
    let mut cmd = Command::new("openssl");
    cmd.args([
        "pkcs12",
        "-export",
        "-legacy",
        "-inkey",
        "server.key",
        "-in",
        "server.pem",
    ])
    .args(["-passout", "file:pw", "-out", "legacy.p12"]);
    let (code, _, err) = run(d, &mut cmd);
    assert_eq!(
        code, 0,
        "the system's openssl with its legacy provider: {err}"
    );
    let (code, shown, err) = ours(
        d,
        &["pkcs12", "show", "legacy.p12", "--password-file", "pw"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(shown.contains("3DES") && shown.contains("RC2"), "{shown}");
    let (code, all, err) = ours(
        d,
        &["pkcs12", "import", "legacy.p12", "--password-file", "pw"],
    );
    assert_eq!(code, 0, "{err}");
    let key = std::fs::read_to_string(d.join("server.key")).unwrap();
    assert_eq!(block(&all, "PRIVATE KEY"), block(&key, "PRIVATE KEY"));
    assert_eq!(
        ours(
            d,
            &["pkcs12", "show", "legacy.p12", "--password-file", "bad"]
        )
        .0,
        1
    );
}

#[test]
fn openssl4_both_ways() {
    if let Some(tool) = peer_tool("openssl4") {
        both_ways(&tool);
        pbmac1(&tool);
    }
}

/// A keystore whose integrity is PBMAC1 (RFC 9579: HMAC keyed by PBKDF2 of the password),
/// as OpenSSL 3.4+ writes it with `-pbmac1_pbkdf2`: read with the right password, refused
/// with a wrong one.
fn pbmac1(tool: &Path) {
    let dir = setup();
    let d = dir.path();
    for md in ["sha256", "sha512"] {
        let file = format!("pbmac1-{md}.p12");
        let mut cmd = Command::new(tool);
        cmd.args([
            "pkcs12",
            "-export",
            "-inkey",
            "server.key",
            "-in",
            "server.pem",
        ])
        .args([
            "-passout",
            "file:pw",
            "-pbmac1_pbkdf2",
            "-pbmac1_pbkdf2_md",
            md,
        ])
        .args(["-keypbe", "SM4-CBC", "-certpbe", "SM4-CBC", "-out", &file]);
        let (code, _, err) = run(d, &mut cmd);
        assert_eq!(code, 0, "{md}: {err}");
        let (code, shown, err) = ours(d, &["pkcs12", "show", &file, "--password-file", "pw"]);
        assert_eq!(code, 0, "{md}: {err}");
        assert!(shown.contains("PBMAC1"), "{shown}");
        let (code, all, err) = ours(d, &["pkcs12", "import", &file, "--password-file", "pw"]);
        assert_eq!(code, 0, "{md}: {err}");
        let key = std::fs::read_to_string(d.join("server.key")).unwrap();
        assert_eq!(
            block(&all, "PRIVATE KEY"),
            block(&key, "PRIVATE KEY"),
            "{md}"
        );
        let (code, out, _) = ours(d, &["pkcs12", "import", &file, "--password-file", "bad"]);
        assert_eq!(code, 1, "{md}: a wrong password");
        assert!(out.is_empty());
    }
    // Ours with PBMAC1 (HMAC-SHA256, the one OpenSSL has for it), verified by OpenSSL.
    let (code, _, err) = ours(
        d,
        &[
            "pkcs12",
            "export",
            "--key",
            "server.key",
            "--cert",
            "server.pem",
            "--pbmac1",
            "--mac",
            "sha256",
            "--password-file",
            "pw",
            "-o",
            "ours-pbmac1.p12",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let mut info = Command::new(tool);
    info.args(["pkcs12", "-info", "-noout", "-in", "ours-pbmac1.p12"])
        .args(["-passin", "file:pw"]);
    let (code, _, err) = run(d, &mut info);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("MAC: PBMAC1"), "{err}");
    let mut wrong = Command::new(tool);
    wrong
        .args(["pkcs12", "-info", "-noout", "-in", "ours-pbmac1.p12"])
        .args(["-passin", "file:bad"]);
    assert_ne!(run(d, &mut wrong).0, 0, "OpenSSL took a wrong password");
    // A key under PBKDF2 with OpenSSL's own hmacWithSM3 number (1.2.156.10197.1.401.3.1).
    let mut pkcs8 = Command::new(tool);
    pkcs8
        .args(["pkcs8", "-topk8", "-in", "server.key", "-v2", "sm4-cbc"])
        .args([
            "-v2prf",
            "hmacWithSM3",
            "-passout",
            "file:pw",
            "-out",
            "sm3prf.key",
        ]);
    let (code, _, err) = run(d, &mut pkcs8);
    assert_eq!(code, 0, "{err}");
    let (code, public, err) = ours(
        d,
        &[
            "sm2",
            "pubkey",
            "--input",
            "sm3prf.key",
            "--password-file",
            "pw",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(public, public_of(d, tool, "server.key"));
}

#[test]
fn tongsuo_both_ways() {
    if let Some(tool) = peer_tool("tongsuo") {
        both_ways(&tool);
    }
}

/// `tls serve --p12` and `tlcp serve --p12` serve from a keystore: an RFC 8998 server from a
/// key with its chain, a TLCP server from a sign/enc pair, each answering `connect`.
#[test]
fn the_servers_take_a_keystore() {
    let dir = setup();
    let d = dir.path();
    shangmi_ok(
        d,
        &[
            "pkcs12",
            "export",
            "--key",
            "server.key",
            "--cert",
            "server.pem",
            "--chain",
            "ca.pem",
            "--password-file",
            "pw",
            "-o",
            "server.p12",
        ],
    );
    let server = shangmi_server(
        d,
        &[
            "--p12",
            "server.p12",
            "--password-file",
            "pw",
            "--response",
            "from a keystore",
        ],
    );
    let addr = format!("127.0.0.1:{}", server.port);
    let mut cmd = shangmi();
    cmd.args([
        "tls",
        "connect",
        &addr,
        "--ca",
        "ca.pem",
        "--servername",
        "localhost",
    ]);
    let r = run_with(d, &mut cmd, b"", std::time::Duration::from_secs(20));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout, "from a keystore");
    drop(server);

    // A client certificate from a keystore: `tls connect --p12` to a server asking for one.
    shangmi_ok(
        d,
        &[
            "pkcs12",
            "export",
            "--key",
            "client.key",
            "--cert",
            "client.pem",
            "--password-file",
            "pw",
            "-o",
            "client.p12",
        ],
    );
    let server = shangmi_server(
        d,
        &[
            "--p12",
            "server.p12",
            "--password-file",
            "pw",
            "--client-ca",
            "ca.pem",
            "--response",
            "client known",
        ],
    );
    let addr = format!("127.0.0.1:{}", server.port);
    let connect = |extra: &[&str]| {
        let mut cmd = shangmi();
        cmd.args([
            "tls",
            "connect",
            &addr,
            "--ca",
            "ca.pem",
            "--servername",
            "localhost",
        ]);
        cmd.args(extra);
        run_with(d, &mut cmd, b"", std::time::Duration::from_secs(20))
    };
    let r = connect(&["--p12", "client.p12", "--password-file", "pw"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout, "client known");
    let r = connect(&[]);
    assert_ne!(r.code, Some(0), "served a client without a certificate");
    assert!(r.stdout.is_empty());
    let r = connect(&["--p12", "client.p12", "--password-file", "bad"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    drop(server);

    tlcp_pki(d);
    shangmi_ok(
        d,
        &[
            "pkcs12",
            "export",
            "--key",
            "ss.key",
            "--cert",
            "ss.pem",
            "--enc-key",
            "se.key",
            "--enc-cert",
            "se.pem",
            "--password-file",
            "pw",
            "-o",
            "pair.p12",
        ],
    );
    let server = shangmi_listening(
        d,
        &[
            "tlcp",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--p12",
            "pair.p12",
            "--password-file",
            "pw",
            "--echo",
        ],
    );
    let addr = format!("127.0.0.1:{}", server.port);
    let mut cmd = shangmi();
    cmd.args([
        "tlcp",
        "connect",
        &addr,
        "--ca",
        "ca.pem",
        "--servername",
        "localhost",
    ]);
    let r = run_with(d, &mut cmd, b"echoed\n", std::time::Duration::from_secs(20));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.stdout, "echoed\n");
}
