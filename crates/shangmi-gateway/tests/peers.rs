//! The gateway against real clients on loopback, each getting its answer from the back end
//! with the right `X-SM-Protocol`: the system's curl (TLS 1.3, TLS 1.2 with ECDSA and RSA,
//! HTTP/2), Python's ssl, Tongsuo's TLCP and RFC 8998 clients, OpenSSL 4.0's RFC 8998 client,
//! tjfoc's gmtls (TLCP) and BouncyCastle's bctls (RFC 8998). A peer that cannot be built fails
//! the test under CI=true.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use common::*;

const LIMIT: Duration = Duration::from_secs(60);

/// Two listeners in front of `upstream`: the first without client authentication, the second
/// requiring client certificates from `ca.pem`; curveSM2 agreements gathered.
fn config(dir: &Path, upstream: &str) -> PathBuf {
    let site = format!(
        r#"upstream = [{upstream}]
tlcp = {{ sign_cert = "ss.pem", sign_key = "ss.key", enc_cert = "se.pem", enc_key = "se.key" }}
sm2 = {{ cert = "sm2.pem", key = "sm2.key" }}
international = [ {{ cert = "ecdsa.pem", key = "ecdsa.key" }}, {{ cert = "rsa.pem", key = "rsa.key" }} ]"#
    );
    // The peers' RFC 8998 handshakes take the gathered agreement path on every CPU (by
    // default it is taken only where IFMA lanes make it pay).
    let text = format!(
        r#"[limits]
key_agreements = "gathered"

[log]
access = "stderr"

[[listener]]
listen = "127.0.0.1:0"
[[listener.site]]
{site}

[[listener]]
listen = "127.0.0.1:0"
[[listener.site]]
{site}
client_ca = "ca.pem"
"#
    );
    let path = dir.join("gateway.toml");
    std::fs::write(&path, text).unwrap();
    path
}

struct Setup {
    _dir: tempfile::TempDir,
    dir: PathBuf,
    _backend: Backend,
    gw: Gateway,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    pki(&d);
    let backend = Backend::start("backend-a");
    let gw = Gateway::start(
        &config(&d, &format!("\"http://127.0.0.1:{}\"", backend.port)),
        2,
        false,
    );
    Setup {
        _dir: dir,
        dir: d,
        _backend: backend,
        gw,
    }
}

fn answered(out: &str, protocol: &str) {
    assert!(
        out.contains("backend-a"),
        "no answer from the back end: {out}"
    );
    assert!(
        out.contains(&format!("x-sm-protocol: {protocol}")),
        "want {protocol}: {out}"
    );
}

fn curl(s: &Setup, extra: &[&str]) -> String {
    let port = s.gw.port();
    let mut c = Command::new("curl");
    c.args(["-sS", "--max-time", "20", "--cacert", "ecdsa-ca.pem"])
        .args(["--resolve", &format!("localhost:{port}:127.0.0.1")])
        .args(extra)
        .arg(format!("https://localhost:{port}/curl"));
    let (code, out, err) = run(&s.dir, &mut c, b"", LIMIT);
    assert_eq!(code, Some(0), "curl {extra:?}: {err}");
    out
}

#[test]
fn curl_over_tls_13_tls_12_rsa_and_http2() {
    if Command::new("curl").arg("--version").output().is_err() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "curl is missing"
        );
        return;
    }
    let s = setup();
    answered(&curl(&s, &["--tlsv1.3", "--http1.1"]), "TLSv1.3 TLS_AES_");
    answered(
        &curl(&s, &["--tlsv1.2", "--tls-max", "1.2", "--http1.1"]),
        "TLSv1.2 TLS_ECDHE_ECDSA_WITH_AES_",
    );
    answered(
        &curl(
            &s,
            &[
                "--tlsv1.2",
                "--tls-max",
                "1.2",
                "--ciphers",
                "ECDHE-RSA-AES128-GCM-SHA256",
            ],
        ),
        "TLSv1.2 TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    );
    let out = curl(&s, &["--http2", "-i"]);
    assert!(out.starts_with("HTTP/2 200"), "{out}");
    answered(&out, "TLSv1.3 TLS_AES_");
    // A request body streamed through HTTP/2 to the HTTP/1.1 back end.
    let body: String = "0123456789".repeat(10_000);
    std::fs::write(s.dir.join("body.txt"), &body).unwrap();
    let out = curl(&s, &["--http2", "--data-binary", "@body.txt"]);
    assert!(out.ends_with(&body), "the body did not arrive whole");
}

#[test]
fn python_ssl_client() {
    let s = setup();
    let script = format!(
        "import ssl, urllib.request\n\
         ctx = ssl.create_default_context(cafile='ecdsa-ca.pem')\n\
         r = urllib.request.urlopen('https://localhost:{}/python', context=ctx, timeout=20)\n\
         print(r.read().decode())\n",
        s.gw.port()
    );
    let (code, out, err) = run(
        &s.dir,
        Command::new("python3").args(["-c", &script]),
        b"",
        LIMIT,
    );
    assert_eq!(code, Some(0), "{err}");
    answered(&out, "TLSv1.3 TLS_AES_");
}

const REQUEST: &[u8] = b"GET /peer HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";

fn s_client(s: &Setup, tool: &Path, port: u16, args: &[&str]) -> String {
    let mut c = Command::new(tool);
    c.args(["s_client", "-connect", &format!("127.0.0.1:{port}")])
        .args(["-CAfile", "ca.pem", "-verify_return_error", "-ign_eof"])
        .args(args);
    let (_, out, err) = run(&s.dir, &mut c, REQUEST, LIMIT);
    out + &err
}

#[test]
fn tongsuo_tlcp_and_rfc8998_clients() {
    let Some(tool) = peer_tool("tongsuo") else {
        return;
    };
    let s = setup();
    let (open, auth) = (s.gw.ports[0], s.gw.ports[1]);
    let tlcp = ["-enable_ntls", "-ntls"];
    let pair = [
        "-sign_cert",
        "cs.pem",
        "-sign_key",
        "cs.key",
        "-enc_cert",
        "ce.pem",
        "-enc_key",
        "ce.key",
    ];
    for (suite, name) in [
        ("ECC-SM2-SM4-GCM-SM3", "ECC_SM4_GCM_SM3"),
        ("ECC-SM2-SM4-CBC-SM3", "ECC_SM4_CBC_SM3"),
    ] {
        let out = s_client(&s, &tool, open, &[&tlcp[..], &["-cipher", suite]].concat());
        answered(&out, &format!("TLCP {name}"));
    }
    for (suite, name) in [
        ("ECDHE-SM2-SM4-GCM-SM3", "ECDHE_SM4_GCM_SM3"),
        ("ECDHE-SM2-SM4-CBC-SM3", "ECDHE_SM4_CBC_SM3"),
        ("ECC-SM2-SM4-GCM-SM3", "ECC_SM4_GCM_SM3"),
    ] {
        let out = s_client(
            &s,
            &tool,
            auth,
            &[&tlcp[..], &["-cipher", suite], &pair[..]].concat(),
        );
        answered(&out, &format!("TLCP {name}"));
        assert!(out.contains("x-sm-client-subject: CN=tlcp client"), "{out}");
    }
    let sm = [
        "-servername",
        "localhost",
        "-ciphersuites",
        "TLS_SM4_GCM_SM3",
        "-sigalgs",
        "sm2sig_sm3",
        "-groups",
        "curveSM2",
    ];
    answered(&s_client(&s, &tool, open, &sm), "TLSv1.3 TLS_SM4_GCM_SM3");
}

#[test]
fn openssl4_rfc8998_client_both_suites() {
    let Some(tool) = peer_tool("openssl4") else {
        return;
    };
    let s = setup();
    for suite in ["TLS_SM4_GCM_SM3", "TLS_SM4_CCM_SM3"] {
        let out = s_client(
            &s,
            &tool,
            s.gw.port(),
            &[
                "-servername",
                "localhost",
                "-ciphersuites",
                suite,
                "-sigalgs",
                "sm2sig_sm3",
                "-groups",
                "curveSM2",
            ],
        );
        answered(&out, &format!("TLSv1.3 {suite}"));
    }
    // The post-quantum hybrid, asked for alone, and in OpenSSL 4's default group list (whose
    // first key share is X25519MLKEM768: the gateway asks again for curveSM2MLKEM768).
    let sm = [
        "-servername",
        "localhost",
        "-ciphersuites",
        "TLS_SM4_GCM_SM3",
        "-sigalgs",
        "sm2sig_sm3",
    ];
    for groups in [&["-groups", "curveSM2MLKEM768"][..], &[]] {
        let out = s_client(&s, &tool, s.gw.port(), &[&sm[..], groups].concat());
        answered(&out, "TLSv1.3 TLS_SM4_GCM_SM3");
        assert!(out.contains("curveSM2MLKEM768"), "{out}");
    }
}

/// tjfoc/gmsm's gmtls, built once (Go fetches the module through its proxy).
fn gmtls() -> Option<PathBuf> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
            let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gmtls-peer");
            let o = Command::new("go")
                .args(["build", "-o"])
                .arg(&out)
                .arg(".")
                .current_dir(root.join("interop/gmtls"))
                .output();
            match o {
                Ok(o) if o.status.success() => Some(out),
                other => {
                    assert!(
                        std::env::var("CI").as_deref() != Ok("true"),
                        "CI=true and gmtls cannot be built: {other:?}"
                    );
                    None
                }
            }
        })
        .clone()
}

#[test]
fn gmtls_tlcp_client_with_and_without_certificates() {
    let Some(peer) = gmtls() else { return };
    let s = setup();
    for (port, certs) in [(s.gw.ports[0], false), (s.gw.ports[1], true)] {
        let mut c = Command::new(&peer);
        c.args(["get", &format!("127.0.0.1:{port}"), "ca.pem"]);
        if certs {
            c.args(["cs.pem", "cs.key", "ce.pem", "ce.key"]);
        }
        let (code, out, err) = run(&s.dir, &mut c, b"", LIMIT);
        assert_eq!(code, Some(0), "{err}");
        answered(&out, "TLCP ECC_SM4_CBC_SM3");
        assert!(err.contains("suite 0xe013 version 0x0101"), "{err}");
    }
}

#[test]
fn bctls_rfc8998_client() {
    let cp = match shangmi_testkit::maven::peer_classpath("bctls") {
        Ok(cp) => cp,
        Err(e) => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI=true and bctls cannot be built: {e}"
            );
            return;
        }
    };
    let s = setup();
    for (suite, name) in [("gcm", "TLS_SM4_GCM_SM3"), ("ccm", "TLS_SM4_CCM_SM3")] {
        // The peer sends its message and a newline, then prints the first line back: the
        // request's last line is the message's newline, the status line comes back.
        let mut c = Command::new("java");
        c.args(["-cp", &cp, "Peer", "client", "--port"])
            .arg(s.gw.port().to_string())
            .args(["--ca", "ca.pem", "--suite", suite, "--message"])
            .arg("GET /bctls HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r");
        let (code, out, err) = run(&s.dir, &mut c, b"", LIMIT);
        assert_eq!(code, Some(0), "{err}");
        assert!(out.starts_with("HTTP/1.1 200 OK"), "{out}\n{err}");
        assert!(err.contains(&format!("suite {name}")), "{err}");
    }
    assert!(
        s.gw.wait_log("\"path\":\"/bctls\"", Duration::from_secs(5)),
        "no request logged"
    );
}

/// GmSSL's own PKI (it refuses certificates with an empty basicConstraints, which OpenSSL
/// and shangmi write for leaves): a CA, the server's signing and encryption certificates,
/// keys encrypted with the password in pass.txt.
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
    std::fs::write(dir.join("pass.txt"), "1234\n").unwrap();
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
    for (name, usage) in [("sign", "digitalSignature"), ("enc", "keyEncipherment")] {
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
}

#[test]
fn gmssl_tlcp_client() {
    let Some(tool) = peer_tool("gmssl") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    gmssl_pki(d, &tool);
    let backend = Backend::start("backend-a");
    std::fs::write(
        d.join("gateway.toml"),
        format!(
            r#"[log]
access = "stderr"
[[listener]]
listen = "127.0.0.1:0"
[[listener.site]]
upstream = ["http://127.0.0.1:{}"]
tlcp = {{ sign_cert = "signcert.pem", sign_key = "signkey.pem", enc_cert = "enccert.pem", enc_key = "enckey.pem", password_file = "pass.txt" }}
"#,
            backend.port
        ),
    )
    .unwrap();
    let gw = Gateway::start(&d.join("gateway.toml"), 1, false);
    // GmSSL's client blocks on a line of stdin, sends it, then reads at most one record per
    // line if the socket is readable, and ends at EOF without waiting for the answer. It prints
    // nothing of an answer followed at once by close_notify, so the request keeps the
    // connection open. The proxy may write the head and the body as separate records, so
    // empty lines (which HTTP/1.1 skips before a request) follow the request, each one more
    // chance to print a record.
    let line = format!(
        "(for l in 'GET /gmssl HTTP/1.1' 'Host: localhost' '' '' '' '' '' '' '' '' '' '' '' ''; do \
         printf '%s\\r\\n' \"$l\"; sleep 0.4; done; sleep 1) \
         | '{}' tlcp_client -host 127.0.0.1 -port {} -cacert cacert.pem",
        tool.display(),
        gw.port()
    );
    let (_, out, err) = run(d, Command::new("sh").args(["-c", &line]), b"", LIMIT);
    answered(&(out + &err), "TLCP ECC_SM4_");
}

/// Debian's chromium (scripts/peers/chromium.sh installs it where it can).
fn chromium() -> Option<PathBuf> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/peers/chromium.sh");
    let ok = Command::new(script).status().is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true and chromium is not available"
        );
        return None;
    }
    Some(PathBuf::from("chromium"))
}

#[test]
fn headless_chromium_loads_a_page_through_the_gateway() {
    let Some(chromium) = chromium() else { return };
    let s = setup();
    let port = s.gw.port();
    // The test's ECDSA root is not in Chromium's store: its leaf's key is pinned instead.
    let spki = Command::new("sh")
        .args([
            "-c",
            "openssl x509 -in ecdsa.pem -pubkey -noout | openssl pkey -pubin -outform der \
             | openssl dgst -sha256 -binary | base64",
        ])
        .current_dir(&s.dir)
        .output()
        .unwrap();
    let spki = String::from_utf8(spki.stdout).unwrap();
    let profile = s.dir.join("chromium-profile");
    let mut c = Command::new(chromium);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .arg(format!(
        "--ignore-certificate-errors-spki-list={}",
        spki.trim()
    ))
    .arg("--host-resolver-rules=MAP localhost 127.0.0.1")
    .args(["--virtual-time-budget=10000", "--dump-dom"])
    .arg(format!("https://localhost:{port}/chromium"));
    let (_, out, err) = run(&s.dir, &mut c, b"", Duration::from_secs(120));
    assert!(out.contains("backend-a"), "{out}\n{err}");
    assert!(out.contains("x-sm-protocol: TLSv1.3 TLS_AES_"), "{out}");
    assert!(
        s.gw.wait_log("\"http\":\"HTTP/2.0\"", Duration::from_secs(5)),
        "no HTTP/2 request logged"
    );
}
