//! What the gateway's tests share: a PKI (SM2 by shangmi-pki, ECDSA and RSA by the system's
//! OpenSSL), an HTTP back end that answers with the request it received, the gateway run in
//! the background, and the clients: TLCP, RFC 8998 and international TLS.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use der::pem::LineEnding;
use der::{Encode, EncodePem};
use shangmi::sm2::SigningKey;
use shangmi_pki::{Certificate, Issue};
use x509_cert::ext::pkix::{KeyUsage, KeyUsages};

/// The admin token the tests' configurations name (`admin.token`, written by [`pki`]).
pub const ADMIN_TOKEN: &str = "test-admin-token-0123456789";

/// Writes the PKI into `dir`, and `admin.token`: `ca.pem` (SM2 root); TLCP pairs `ss/se` (server) and `cs/ce`
/// (client); `sm2.pem` (RFC 8998 server, DNS:localhost); `client.pem` (SM2 client);
/// `ecdsa-ca.pem` with `ecdsa.pem` (P-256) and `rsa.pem` (RSA 2048) for localhost. Keys
/// beside each as `.key`.
pub fn pki(dir: &Path) {
    let ca_key = SigningKey::random().unwrap();
    let ca = shangmi_pki::self_signed(
        &ca_key,
        "/C=CN/O=shangmi test/CN=Gateway Root",
        &Issue::ca(2),
    )
    .unwrap();
    write(dir, "ca.pem", &ca);
    std::fs::write(
        dir.join("ca.key"),
        ca_key.to_pkcs8_pem().unwrap().as_bytes(),
    )
    .unwrap();
    std::fs::write(dir.join("admin.token"), format!("{ADMIN_TOKEN}\n")).unwrap();
    let leaf = |name: &str, cn: &str, usage: KeyUsage| {
        let key = SigningKey::random().unwrap();
        let issue = Issue {
            key_usage: Some(usage),
            san: vec!["DNS:localhost".into()],
            ..Issue::leaf(2)
        };
        let csr = shangmi_pki::request(&key, &format!("/O=shangmi test/CN={cn}"), &[]).unwrap();
        let cert = shangmi_pki::sign_request(&csr, &ca, &ca_key, &issue).unwrap();
        write(dir, &format!("{name}.pem"), &cert);
        std::fs::write(
            dir.join(format!("{name}.key")),
            key.to_pkcs8_pem().unwrap().as_bytes(),
        )
        .unwrap();
    };
    let sign = || KeyUsage(KeyUsages::DigitalSignature.into());
    let enc = || KeyUsage(KeyUsages::KeyEncipherment | KeyUsages::KeyAgreement);
    leaf("ss", "localhost", sign());
    leaf("se", "localhost", enc());
    leaf("cs", "tlcp client", sign());
    leaf("ce", "tlcp client", enc());
    leaf("sm2", "localhost", sign());
    leaf("client", "sm2 client", sign());
    openssl_pki(dir);
}

fn write(dir: &Path, name: &str, cert: &Certificate) {
    std::fs::write(dir.join(name), cert.to_pem(LineEnding::LF).unwrap()).unwrap();
}

fn openssl(dir: &Path, args: &[&str]) {
    let o = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the system's openssl");
    assert!(
        o.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn openssl_pki(dir: &Path) {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            "ecdsa-ca.key",
            "-out",
            "ecdsa-ca.pem",
            "-subj",
            "/CN=ECDSA Test Root",
            "-days",
            "2",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ],
    );
    std::fs::write(
        dir.join("leaf.ext"),
        "subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n\
         keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    for (name, alg) in [("ecdsa", "ec:P-256"), ("rsa", "rsa:2048")] {
        let (kind, opt) = alg.split_once(':').unwrap();
        let pkeyopt = if kind == "ec" {
            format!("ec_paramgen_curve:{opt}")
        } else {
            format!("rsa_keygen_bits:{opt}")
        };
        openssl(
            dir,
            &[
                "req",
                "-newkey",
                kind,
                "-pkeyopt",
                &pkeyopt,
                "-nodes",
                "-keyout",
                &format!("{name}.key"),
                "-out",
                &format!("{name}.csr"),
                "-subj",
                "/CN=localhost",
            ],
        );
        openssl(
            dir,
            &[
                "x509",
                "-req",
                "-in",
                &format!("{name}.csr"),
                "-CA",
                "ecdsa-ca.pem",
                "-CAkey",
                "ecdsa-ca.key",
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                "leaf.ext",
                "-out",
                &format!("{name}.pem"),
            ],
        );
    }
}

/// An HTTP/1.1 server on loopback answering every request with `NAME\n` and then the
/// request's head and body as it received them.
pub struct Backend {
    /// Its port.
    pub port: u16,
}

impl Backend {
    pub fn start(name: &'static str) -> Backend {
        Backend::slow(name, Duration::ZERO)
    }

    /// A back end that waits `delay` before each answer.
    pub fn slow(name: &'static str, delay: Duration) -> Backend {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for c in listener.incoming() {
                let Ok(c) = c else { continue };
                // The head and the body are two writes: without this, keep-alive requests
                // wait out delayed ACKs.
                let _ = c.set_nodelay(true);
                std::thread::spawn(move || {
                    let _ = answer(c, name, delay);
                });
            }
        });
        Backend { port }
    }
}

fn answer(c: TcpStream, name: &str, delay: Duration) -> std::io::Result<()> {
    let mut r = BufReader::new(c.try_clone()?);
    let mut w = c;
    loop {
        let mut head = String::new();
        loop {
            let mut line = String::new();
            if r.read_line(&mut line)? == 0 {
                return Ok(());
            }
            head.push_str(&line);
            if line == "\r\n" {
                break;
            }
        }
        let lower = head.to_ascii_lowercase();
        let len: usize = lower
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        let mut body = vec![0u8; len];
        r.read_exact(&mut body)?;
        std::thread::sleep(delay);
        let mut out = format!("{name}\n{head}").into_bytes();
        out.extend_from_slice(&body);
        write!(
            w,
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nX-Backend: {name}\r\n\r\n",
            out.len()
        )?;
        w.write_all(&out)?;
        if lower.contains("connection: close") {
            return Ok(());
        }
    }
}

/// An HTTP/1.1 back end answering every request with `size` bytes, counting the requests it
/// was sent; it waits `delay` before each answer.
pub struct BigBackend {
    pub port: u16,
    pub requests: Arc<std::sync::atomic::AtomicUsize>,
}

impl BigBackend {
    pub fn start(size: usize, delay: Duration) -> BigBackend {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = requests.clone();
        let body: Arc<Vec<u8>> = Arc::new((0..size).map(|i| (i % 251) as u8).collect());
        std::thread::spawn(move || {
            for c in listener.incoming() {
                let Ok(c) = c else { continue };
                let _ = c.set_nodelay(true);
                let (body, counted) = (body.clone(), counted.clone());
                std::thread::spawn(move || {
                    let mut r = BufReader::new(c.try_clone().unwrap());
                    let mut w = c;
                    loop {
                        let mut line = String::new();
                        loop {
                            line.clear();
                            if r.read_line(&mut line).unwrap_or(0) == 0 {
                                return;
                            }
                            if line == "\r\n" {
                                break;
                            }
                        }
                        counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        std::thread::sleep(delay);
                        let head =
                            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len());
                        if w.write_all(head.as_bytes()).is_err() || w.write_all(&body).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        BigBackend { port, requests }
    }
}

/// A TCP server on loopback that sends back what it receives.
pub fn echo_backend() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for c in listener.incoming() {
            let Ok(mut c) = c else { continue };
            std::thread::spawn(move || {
                let mut r = c.try_clone().unwrap();
                let _ = std::io::copy(&mut r, &mut c);
            });
        }
    });
    port
}

/// A loopback port nothing listens on.
pub fn dead_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The gateway running in the background, killed on drop.
pub struct Gateway {
    pub child: Child,
    /// Each listener's port, in the file's order.
    pub ports: Vec<u16>,
    /// The admin listener's port.
    pub admin: Option<u16>,
    /// Its stderr lines after the announcements.
    pub log: Arc<Mutex<Vec<String>>>,
}

pub fn gateway_command() -> Command {
    Command::new(env!("CARGO_BIN_EXE_shangmi-gateway"))
}

impl Gateway {
    /// Starts `shangmi-gateway --config FILE` with `listeners` listeners; returns once each
    /// says it listens (and the admin listener, when `admin`).
    pub fn start(config: &Path, listeners: usize, admin: bool) -> Gateway {
        Gateway::start_with(config, listeners, admin, Stdio::null(), true)
    }

    /// [`Gateway::start`] with its stdout going to `stdout`, and its stderr read on after
    /// the announcements only when `keep_reading` (otherwise the pipe is closed then).
    pub fn start_with(
        config: &Path,
        listeners: usize,
        admin: bool,
        stdout: Stdio,
        keep_reading: bool,
    ) -> Gateway {
        let mut child = gateway_command()
            .arg("--config")
            .arg(config)
            .arg("--workers")
            .arg("2")
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let mut ports = Vec::new();
        let mut admin_port = None;
        while ports.len() < listeners || (admin && admin_port.is_none()) {
            let line = match lines.next() {
                Some(Ok(l)) => l,
                _ => panic!("the gateway ended before listening: {:?}", child.wait()),
            };
            let port = |l: &str| l.rsplit(':').next().unwrap().parse::<u16>().unwrap();
            if let Some(a) = line.strip_prefix("listening on ") {
                ports.push(port(a));
            } else if let Some(a) = line.strip_prefix("admin on http://") {
                admin_port = Some(port(a));
            } else {
                eprintln!("gateway: {line}");
            }
        }
        let log = Arc::new(Mutex::new(Vec::new()));
        let keep = log.clone();
        if keep_reading {
            std::thread::spawn(move || {
                for line in lines.map_while(Result::ok) {
                    eprintln!("gateway: {line}");
                    keep.lock().unwrap().push(line);
                }
            });
        } else {
            drop(lines);
        }
        Gateway {
            child,
            ports,
            admin: admin_port,
            log,
        }
    }

    pub fn port(&self) -> u16 {
        self.ports[0]
    }

    /// Its resident memory, KiB (VmRSS).
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }

    /// The CPU time its threads have run, nanoseconds (schedstat, summed over threads).
    pub fn cpu_ns(&self) -> u64 {
        let dir = format!("/proc/{}/task", self.child.id());
        std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("schedstat")).ok())
            .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
            .sum()
    }

    /// A counter's value in `/metrics` (the line that starts with `name` ends with it), 0 if
    /// absent.
    pub fn metric(&self, name: &str) -> u64 {
        let (_, m) = self.admin("GET", "/metrics");
        m.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse::<f64>().ok())
            .map_or(0, |v| v as u64)
    }

    /// Sends `signal` ("HUP", "TERM").
    pub fn signal(&self, signal: &str) {
        let ok = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .unwrap()
            .success();
        assert!(ok);
    }

    /// Waits up to `limit` for a stderr line containing `text`.
    pub fn wait_log(&self, text: &str, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if self.log.lock().unwrap().iter().any(|l| l.contains(text)) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// `METHOD path` on the admin listener with the tests' token: (status, body).
    pub fn admin(&self, method: &str, path: &str) -> (u16, String) {
        self.admin_as(
            method,
            path,
            &format!("Authorization: Bearer {ADMIN_TOKEN}\r\n"),
        )
    }

    /// `METHOD path` on the admin listener with `headers`: (status, body).
    pub fn admin_as(&self, method: &str, path: &str, headers: &str) -> (u16, String) {
        let mut c = TcpStream::connect(("127.0.0.1", self.admin.unwrap())).unwrap();
        write!(
            c,
            "{method} {path} HTTP/1.1\r\nHost: admin\r\n{headers}Content-Length: 0\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut out = String::new();
        c.read_to_string(&mut out).unwrap();
        let status = out[9..12].parse().unwrap();
        let body = out.split_once("\r\n\r\n").map_or("", |p| p.1).to_string();
        (status, body)
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A GET with `Connection: close` over an established stream: the whole response.
/// A failure to send is returned as the text `send failed: ...`.
pub fn get<S: Read + Write>(mut s: S, extra_headers: &str) -> String {
    let sent = write!(
        s,
        "GET /hello?x=1 HTTP/1.1\r\nHost: localhost\r\n{extra_headers}Connection: close\r\n\r\n"
    )
    .and_then(|()| s.flush());
    if let Err(e) = sent {
        return format!("send failed: {e}");
    }
    let mut out = Vec::new();
    // A peer that closes without close_notify still gave us what it sent.
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

pub fn tcp(port: u16) -> TcpStream {
    let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s
}

/// A TLCP client trusting `ca.pem`, with the `cs/ce` pair when `certs`.
pub fn tlcp_client(
    dir: &Path,
    suites: &[shangmi_tlcp::Suite],
    certs: bool,
) -> Arc<shangmi_tlcp::ClientConfig> {
    let roots = shangmi_pki::certificates(&std::fs::read(dir.join("ca.pem")).unwrap()).unwrap();
    let mut c = shangmi_tlcp::ClientConfig::new(roots).with_suites(suites);
    if certs {
        let id = |cert: &str, key: &str| {
            let chain =
                shangmi_pki::certificate_ders(&std::fs::read(dir.join(cert)).unwrap()).unwrap();
            let k =
                SigningKey::from_key_file(&std::fs::read(dir.join(key)).unwrap(), None).unwrap();
            shangmi_tlcp::Identity::new(chain, k).unwrap()
        };
        c = c.with_certificates(id("cs.pem", "cs.key"), id("ce.pem", "ce.key"));
    }
    Arc::new(c)
}

/// An RFC 8998 client trusting `ca.pem`, offering `client.pem` when `cert`.
pub fn sm_client(dir: &Path, cert: bool) -> Arc<rustls::ClientConfig> {
    sm_client_with(dir, cert, shangmi_rustls::ALL_CIPHER_SUITES)
}

/// [`sm_client`] offering only `suites`.
pub fn sm_client_with(
    dir: &Path,
    cert: bool,
    suites: &[rustls::SupportedCipherSuite],
) -> Arc<rustls::ClientConfig> {
    sm_client_groups(dir, cert, suites, &[shangmi_rustls::CURVE_SM2_GROUP])
}

/// [`sm_client_with`] offering only `groups` (the first with a key share).
pub fn sm_client_groups(
    dir: &Path,
    cert: bool,
    suites: &[rustls::SupportedCipherSuite],
    groups: &[&'static dyn rustls::crypto::SupportedKxGroup],
) -> Arc<rustls::ClientConfig> {
    let mut provider = shangmi_rustls::provider();
    provider.cipher_suites = suites.to_vec();
    provider.kx_groups = groups.to_vec();
    let provider = Arc::new(provider);
    let roots =
        Arc::new(shangmi_rustls::load_roots(&std::fs::read(dir.join("ca.pem")).unwrap()).unwrap());
    let b = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(
            shangmi_rustls::Sm2ServerVerifier::new(roots, provider).unwrap(),
        );
    let c = if cert {
        let key = shangmi_rustls::load_certified_key(
            &std::fs::read(dir.join("client.pem")).unwrap(),
            &std::fs::read(dir.join("client.key")).unwrap(),
            None,
        )
        .unwrap();
        b.with_client_cert_resolver(Arc::new(shangmi_rustls::SmClientCert::new(key)))
    } else {
        b.with_no_client_auth()
    };
    Arc::new(c)
}

/// An international client (aws-lc-rs) trusting `ecdsa-ca.pem`, at `version`.
pub fn intl_client(
    dir: &Path,
    version: &'static rustls::SupportedProtocolVersion,
) -> Arc<rustls::ClientConfig> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(dir.join("ecdsa-ca.pem")).unwrap() {
        roots.add(c.unwrap()).unwrap();
    }
    Arc::new(
        rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::aws_lc_rs::default_provider(),
        ))
        .with_protocol_versions(&[version])
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth(),
    )
}

/// A rustls connection to the gateway.
pub fn rustls_stream(
    config: Arc<rustls::ClientConfig>,
    port: u16,
) -> rustls::StreamOwned<rustls::ClientConnection, TcpStream> {
    let conn = rustls::ClientConnection::new(config, "localhost".try_into().unwrap()).unwrap();
    rustls::StreamOwned::new(conn, tcp(port))
}

/// A peer's tool built by scripts/peers/build.sh ("openssl4", "tongsuo", "gmssl"); under
/// CI=true one that cannot be built fails the test, elsewhere it is skipped.
pub fn peer_tool(name: &str) -> Option<PathBuf> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/peers/build.sh");
    let o = Command::new(&script)
        .arg(name)
        .stderr(Stdio::piped())
        .output();
    match o {
        Ok(o) if o.status.success() => Some(PathBuf::from(
            String::from_utf8_lossy(&o.stdout).trim().to_string(),
        )),
        other => {
            let why = format!("{other:?}");
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!("CI=true and {name} is not available: {why}");
            }
            eprintln!("{name} is not available: skipped");
            None
        }
    }
}

/// Runs `cmd` in `dir` with `stdin`, killed after `limit`: (exit code, stdout, stderr).
pub fn run(
    dir: &Path,
    cmd: &mut Command,
    stdin: &[u8],
    limit: Duration,
) -> (Option<i32>, String, String) {
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
        // Held open a moment: s_client ends at EOF on stdin before the answer otherwise.
        std::thread::sleep(Duration::from_secs(3));
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
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (
        status.and_then(|s| s.code()),
        out.join().unwrap(),
        err.join().unwrap(),
    )
}

/// `a.der` for tests that need the DER of a PEM certificate.
pub fn der_of(pem_path: &Path) -> Vec<u8> {
    let c = shangmi_pki::certificates(&std::fs::read(pem_path).unwrap()).unwrap();
    c[0].to_der().unwrap()
}
