//! What the TLS test files share: the peers (built once into a cache outside the repository),
//! a PKI made by shangmi, servers started in the background and stopped on drop.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Under CI=true a peer that cannot be built fails the test; elsewhere it is skipped.
pub fn unavailable<T>(what: &str, why: &str) -> Option<T> {
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("CI=true and {what} is not available: {why}");
    }
    eprintln!("{what} is not available ({why}): its interop tests are skipped");
    None
}

/// A peer's command-line tool built by scripts/peers/build.sh (once; about 2-4 min each,
/// cached outside the repository): "openssl4" (OpenSSL 4.0) or "tongsuo" (Tongsuo 8.5).
pub fn peer_tool(name: &'static str) -> Option<PathBuf> {
    type Built = Vec<(&'static str, Option<PathBuf>)>;
    static TOOLS: std::sync::Mutex<Built> = std::sync::Mutex::new(Vec::new());
    let mut tools = TOOLS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, path)) = tools.iter().find(|(n, _)| *n == name) {
        return path.clone();
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/peers/build.sh");
    let path = match Command::new(&script)
        .arg(name)
        .stderr(Stdio::piped())
        .output()
    {
        Ok(o) if o.status.success() => Some(PathBuf::from(
            String::from_utf8_lossy(&o.stdout).trim().to_string(),
        )),
        Ok(o) => unavailable(
            name,
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .last()
                .unwrap_or("build failed"),
        ),
        Err(e) => unavailable(name, &e.to_string()),
    };
    tools.push((name, path.clone()));
    path
}

pub fn shangmi() -> Command {
    Command::new(env!("CARGO_BIN_EXE_shangmi"))
}

/// Runs shangmi in `dir`; panics with its stderr if it fails.
pub fn shangmi_ok(dir: &Path, args: &[&str]) {
    let o = shangmi().args(args).current_dir(dir).output().unwrap();
    assert!(
        o.status.success(),
        "shangmi {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// ca.pem/ca.key, server.pem (DNS:localhost, chain with the CA)/server.key,
/// client.pem/client.key: every file made by shangmi.
pub fn shangmi_pki(dir: &Path) {
    for k in ["ca", "server", "client"] {
        shangmi_ok(dir, &["sm2", "keygen", "-o", &format!("{k}.key")]);
    }
    shangmi_ok(
        dir,
        &[
            "x509",
            "req",
            "--key",
            "ca.key",
            "--subject",
            "/C=CN/O=shangmi test/CN=Test Root",
            "-o",
            "ca.csr",
        ],
    );
    shangmi_ok(
        dir,
        &[
            "x509", "sign", "--csr", "ca.csr", "--self", "--key", "ca.key", "--ca", "--days",
            "3650", "-o", "ca.pem",
        ],
    );
    shangmi_ok(
        dir,
        &[
            "x509",
            "req",
            "--key",
            "server.key",
            "--subject",
            "/CN=localhost",
            "--san",
            "DNS:localhost",
            "-o",
            "server.csr",
        ],
    );
    shangmi_ok(
        dir,
        &[
            "x509",
            "sign",
            "--csr",
            "server.csr",
            "--ca-cert",
            "ca.pem",
            "--ca-key",
            "ca.key",
            "--days",
            "365",
            "-o",
            "server.pem",
        ],
    );
    shangmi_ok(
        dir,
        &[
            "x509",
            "req",
            "--key",
            "client.key",
            "--subject",
            "/CN=client",
            "-o",
            "client.csr",
        ],
    );
    shangmi_ok(
        dir,
        &[
            "x509",
            "sign",
            "--csr",
            "client.csr",
            "--ca-cert",
            "ca.pem",
            "--ca-key",
            "ca.key",
            "--days",
            "365",
            "-o",
            "client.pem",
        ],
    );
}

/// A background process, killed on drop.
pub struct Server {
    pub child: Child,
    pub port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A free loopback port (released again: a peer binds it next).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until something accepts on `port`.
pub fn wait_for(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `shangmi tls serve args...` on a free port; returns once it says it listens.
pub fn shangmi_server(dir: &Path, args: &[&str]) -> Server {
    let mut all = vec!["tls", "serve", "--listen", "127.0.0.1:0"];
    all.extend_from_slice(args);
    shangmi_listening(dir, &all)
}

/// `shangmi args...`, a server that says `listening on 127.0.0.1:PORT` first on stderr;
/// returns once it has; its log goes on to the test's stderr.
pub fn shangmi_listening(dir: &Path, args: &[&str]) -> Server {
    let mut child = shangmi()
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let port = line
        .trim()
        .strip_prefix("listening on 127.0.0.1:")
        .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
        .parse()
        .unwrap();
    // Keep draining the log so the server never blocks on a full pipe.
    std::thread::spawn(move || {
        for l in err.lines().map_while(Result::ok) {
            eprintln!("[server] {l}");
        }
    });
    Server { child, port }
}

/// A TLCP PKI made by shangmi: a CA (ca.pem, ca.key) and two certificate pairs for localhost,
/// the server's (ss, se) and the client's (cs, ce); signing certificates with digitalSignature,
/// encryption ones with keyEncipherment, dataEncipherment and keyAgreement.
pub fn tlcp_pki(dir: &Path) {
    shangmi_ok(dir, &["sm2", "keygen", "-o", "ca.key"]);
    shangmi_ok(
        dir,
        &[
            "x509",
            "req",
            "--key",
            "ca.key",
            "--subject",
            "/CN=TLCP CA",
            "-o",
            "ca.csr",
        ],
    );
    shangmi_ok(
        dir,
        &[
            "x509", "sign", "--csr", "ca.csr", "--self", "--key", "ca.key", "--ca", "--days", "2",
            "-o", "ca.pem",
        ],
    );
    for (name, cn, usage) in [
        ("ss", "server sign", "digitalSignature"),
        (
            "se",
            "server enc",
            "keyEncipherment,dataEncipherment,keyAgreement",
        ),
        ("cs", "client sign", "digitalSignature"),
        (
            "ce",
            "client enc",
            "keyEncipherment,dataEncipherment,keyAgreement",
        ),
    ] {
        let (key, csr, pem) = (
            format!("{name}.key"),
            format!("{name}.csr"),
            format!("{name}.pem"),
        );
        shangmi_ok(dir, &["sm2", "keygen", "-o", &key]);
        let subject = format!("/CN={cn}");
        shangmi_ok(
            dir,
            &[
                "x509",
                "req",
                "--key",
                &key,
                "--subject",
                &subject,
                "--san",
                "DNS:localhost",
                "-o",
                &csr,
            ],
        );
        shangmi_ok(
            dir,
            &[
                "x509",
                "sign",
                "--csr",
                &csr,
                "--ca-cert",
                "ca.pem",
                "--ca-key",
                "ca.key",
                "--days",
                "2",
                "--key-usage",
                usage,
                "-o",
                &pem,
            ],
        );
    }
}

/// The server's pair as `shangmi tlcp serve` options.
pub const TLCP_SERVER_PAIR: [&str; 8] = [
    "--sign-cert",
    "ss.pem",
    "--sign-key",
    "ss.key",
    "--enc-cert",
    "se.pem",
    "--enc-key",
    "se.key",
];
/// The client's pair as `shangmi tlcp connect` options.
pub const TLCP_CLIENT_PAIR: [&str; 8] = [
    "--sign-cert",
    "cs.pem",
    "--sign-key",
    "cs.key",
    "--enc-cert",
    "ce.pem",
    "--enc-key",
    "ce.key",
];

/// Any peer server command, given its port; returns once it accepts.
pub fn peer_server(dir: &Path, make: impl Fn(u16) -> Command) -> Server {
    // The free port is released before the peer binds it: another test's server may take it
    // meanwhile, the peer then fails to bind and exits, and a connection would reach the
    // wrong server. So the peer must still be running once its port accepts, or it is started
    // again on another port.
    for _ in 0..5 {
        let port = free_port();
        let mut child = make(port)
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                std::thread::sleep(Duration::from_millis(100));
                if child.try_wait().unwrap().is_none() {
                    return Server { child, port };
                }
                break;
            }
            assert!(Instant::now() < deadline, "nothing listens on {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.wait();
    }
    panic!("the peer server exited five times before it listened");
}

/// Output of a finished command with stdin fed, bounded in time.
pub struct Ran {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

pub fn run_with(dir: &Path, cmd: &mut Command, stdin: &[u8], limit: Duration) -> Ran {
    use std::io::{Read, Write};
    let mut child = cmd
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            String::from_utf8_lossy(&v).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if Instant::now() > deadline {
            // Still ours (not reaped): killing it cannot hit another process.
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Ran {
        code: status.and_then(|s| s.code()),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// The classpath of BouncyCastle's TLS peer (interop/bctls, built with Maven when its files
/// changed; Maven caches the jars outside the repository).
pub fn bctls() -> Option<String> {
    match shangmi_testkit::maven::peer_classpath("bctls") {
        Ok(cp) => Some(cp),
        Err(e) => unavailable("BouncyCastle bctls", &e.to_string()),
    }
}

/// `java Peer args...` from the bctls classpath.
pub fn bctls_peer(cp: &str) -> Command {
    let mut c = Command::new("java");
    c.args(["-cp", cp, "Peer"]);
    c
}
