//! The load generator of the server benchmark (`scripts/bench-gateway.sh`): connections per
//! second, each a TCP connect, a full handshake and one GET of the back end's 1 KiB answer
//! with `Connection: close`, from several threads at once, and the latency of each.
//!
//! `gateway-load backend` is that back end: HTTP/1.1 with keep-alive, 1 KiB per request.
//!
//! TLS clients accept any certificate without checking it, as load generators do (wrk,
//! h2load), so the client's cost is its key exchange and records; the TLCP client verifies
//! (shangmi-tlcp has no way not to), which the report states.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand, ValueEnum};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

#[derive(Parser)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The 1 KiB HTTP back end.
    Backend {
        /// ADDR:PORT to listen on.
        #[arg(long)]
        listen: String,
    },
    /// Runs the load and prints one line: `conns/s p50_ms p99_ms errors`.
    Run {
        /// The server, ADDR:PORT.
        #[arg(long)]
        addr: String,
        /// What the clients speak.
        #[arg(long, value_enum)]
        proto: Proto,
        /// Trusted roots (TLCP; the TLS clients trust anything).
        #[arg(long)]
        ca: Option<std::path::PathBuf>,
        /// Connections in flight at once.
        #[arg(long, default_value_t = 32)]
        concurrency: usize,
        /// Seconds measured (after one of warm-up).
        #[arg(long, default_value_t = 5.0)]
        seconds: f64,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Proto {
    /// TLS 1.3, TLS_SM4_GCM_SM3, curveSM2 (RFC 8998).
    Rfc8998,
    /// TLS 1.3, AES-128-GCM, X25519, accepting ECDSA P-256.
    Tls13,
    /// TLCP ECC_SM4_GCM_SM3.
    TlcpEcc,
}

const BODY: usize = 1024;

fn backend(listen: &str) -> std::io::Result<()> {
    let listener = TcpListener::bind(listen)?;
    println!("ready");
    let body = vec![b'x'; BODY];
    let body: Arc<[u8]> = body.into();
    for c in listener.incoming() {
        let Ok(c) = c else { continue };
        let body = body.clone();
        std::thread::spawn(move || {
            let _ = c.set_nodelay(true);
            let Ok(read) = c.try_clone() else { return };
            let mut r = BufReader::new(read);
            let mut w = c;
            loop {
                let mut close = false;
                loop {
                    let mut line = String::new();
                    match r.read_line(&mut line) {
                        Ok(0) | Err(_) => return,
                        Ok(_) => {}
                    }
                    if line.to_ascii_lowercase().starts_with("connection: close") {
                        close = true;
                    }
                    if line == "\r\n" {
                        break;
                    }
                }
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {BODY}\r\n\r\n"
                );
                let mut out = head.into_bytes();
                out.extend_from_slice(&body);
                if w.write_all(&out).is_err() || close {
                    return;
                }
            }
        });
    }
    Ok(())
}

#[derive(Debug)]
struct AnyCertificate(Vec<SignatureScheme>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        _: &[u8],
        _: &CertificateDer<'_>,
        _: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        Ok(HandshakeSignatureValid::assertion())
    }
    fn verify_tls13_signature(
        &self,
        _: &[u8],
        _: &CertificateDer<'_>,
        _: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        Ok(HandshakeSignatureValid::assertion())
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.clone()
    }
}

fn tls_config(proto: Proto) -> Arc<rustls::ClientConfig> {
    let provider = match proto {
        Proto::Rfc8998 => shangmi_rustls::provider(),
        _ => {
            let mut p = rustls::crypto::aws_lc_rs::default_provider();
            p.kx_groups = vec![rustls::crypto::aws_lc_rs::kx_group::X25519];
            p.cipher_suites =
                vec![rustls::crypto::aws_lc_rs::cipher_suite::TLS13_AES_128_GCM_SHA256];
            p
        }
    };
    let schemes = match proto {
        Proto::Rfc8998 => vec![shangmi_rustls::SM2SIG_SM3],
        _ => vec![SignatureScheme::ECDSA_NISTP256_SHA256],
    };
    let mut c = rustls::ClientConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("TLS 1.3")
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCertificate(schemes)))
        .with_no_client_auth();
    // Full handshakes only.
    c.resumption = rustls::client::Resumption::disabled();
    Arc::new(c)
}

const REQUEST: &[u8] = b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";

/// One connection, start to end; whether it got a whole 200 answer.
fn one(
    addr: &str,
    proto: Proto,
    tls: &Arc<rustls::ClientConfig>,
    tlcp: &Option<Arc<shangmi_tlcp::ClientConfig>>,
) -> bool {
    let Ok(tcp) = TcpStream::connect(addr) else {
        return false;
    };
    let _ = tcp.set_nodelay(true);
    let _ = tcp.set_read_timeout(Some(Duration::from_secs(10)));
    let mut out = Vec::with_capacity(2048);
    let ok = match proto {
        Proto::TlcpEcc => {
            let Some(config) = tlcp else { return false };
            let Ok(mut s) = shangmi_tlcp::Stream::client(config.clone(), "localhost", tcp) else {
                return false;
            };
            s.write_all(REQUEST).is_ok() && {
                let _ = s.read_to_end(&mut out);
                true
            }
        }
        _ => {
            let conn = match rustls::ClientConnection::new(
                tls.clone(),
                "localhost".try_into().expect("name"),
            ) {
                Ok(c) => c,
                Err(_) => return false,
            };
            let mut s = rustls::StreamOwned::new(conn, tcp);
            s.write_all(REQUEST).is_ok() && {
                let _ = s.read_to_end(&mut out);
                true
            }
        }
    };
    // s_server -www answers HTTP/1.0.
    ok && (out.starts_with(b"HTTP/1.1 200") || out.starts_with(b"HTTP/1.0 200"))
        && out.len() >= BODY
}

fn run(
    addr: String,
    proto: Proto,
    ca: Option<std::path::PathBuf>,
    concurrency: usize,
    seconds: f64,
) {
    let tls = tls_config(proto);
    let tlcp = ca.map(|ca| {
        let roots = shangmi_pki::certificates(&std::fs::read(ca).expect("the CA file"))
            .expect("certificates");
        Arc::new(
            shangmi_tlcp::ClientConfig::new(roots)
                .with_suites(&[shangmi_tlcp::Suite::ECC_SM4_GCM_SM3])
                .without_resumption(),
        )
    });
    let start = Instant::now();
    let warm = start + Duration::from_secs(1);
    let end = warm + Duration::from_secs_f64(seconds);
    let stop = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..concurrency)
        .map(|_| {
            let (addr, tls, tlcp, stop) = (addr.clone(), tls.clone(), tlcp.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut lat = Vec::new();
                let mut errors = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let t = Instant::now();
                    let ok = one(&addr, proto, &tls, &tlcp);
                    let done = Instant::now();
                    if t >= warm && done <= end {
                        if ok {
                            lat.push(done - t);
                        } else {
                            errors += 1;
                        }
                    }
                    if done > end {
                        break;
                    }
                }
                (lat, errors)
            })
        })
        .collect();
    std::thread::sleep(end.saturating_duration_since(Instant::now()));
    stop.store(true, Ordering::Relaxed);
    let mut all = Vec::new();
    let mut errors = 0;
    for t in threads {
        let (l, e) = t.join().expect("a load thread");
        all.extend(l);
        errors += e;
    }
    all.sort();
    let pct = |p: f64| {
        all.get(((all.len() as f64 * p) as usize).min(all.len().saturating_sub(1)))
            .map_or(0.0, |d| d.as_secs_f64() * 1e3)
    };
    println!(
        "{:.0} {:.2} {:.2} {}",
        all.len() as f64 / seconds,
        pct(0.5),
        pct(0.99),
        errors
    );
}

fn main() {
    match Args::parse().command {
        Command::Backend { listen } => {
            if let Err(e) = backend(&listen) {
                eprintln!("gateway-load backend: {e}");
                std::process::exit(1);
            }
        }
        Command::Run {
            addr,
            proto,
            ca,
            concurrency,
            seconds,
        } => run(addr, proto, ca, concurrency, seconds),
    }
}
