//! `shangmi tls`: TLS 1.3 with the SM suites (RFC 8998), shaped like `openssl s_client` and
//! `s_server`. `connect` copies stdin to the connection and the connection to stdout;
//! `serve` answers each connection with an echo, a fixed response, or a forward to a TCP
//! service (a TLS terminator).

use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::{Args as ClapArgs, Subcommand, ValueEnum};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, DigitallySignedStruct, SignatureScheme};

use crate::fail::{Outcome, Result, error, rejected};
use crate::files::read_small;
use crate::tls_relay::{self, End, Plain};

/// Certificate and key files are small; the bound keeps /dev/zero from exhausting memory.
const FILE_LIMIT: u64 = 16 << 20;

#[derive(ClapArgs)]
#[command(after_help = "\
Examples:
  shangmi tls serve --cert server.pem --key server.key --listen 127.0.0.1:4433 --echo
  shangmi tls serve --cert server.pem --key server.key --client-ca ca.pem \\
      --listen 0.0.0.0:443 --forward 127.0.0.1:8080
  echo hello | shangmi tls connect 127.0.0.1:4433 --ca ca.pem --servername localhost
  shangmi tls connect example.cn:443 --ca root.pem --cert client.pem --key client.key

TLS 1.3 only, with TLS_SM4_GCM_SM3 and TLS_SM4_CCM_SM3, curveSM2 and sm2sig_sm3 (RFC 8998).
Certificate chains are checked with the SM2 ID 1234567812345678; handshake signatures use
RFC 8998's TLSv1.3+GM+Cipher+Suite. Certificates signed by OpenSSL 3 without
-sigopt distid:1234567812345678 do not verify (OpenSSL 3 signs with an empty ID).
Exit status (connect): 0 clean close, 1 connection, handshake or certificate failure,
2 usage or input error.")]
pub struct Args {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Connect to a server: stdin to the connection, the connection to stdout; the
    /// negotiated parameters and the server's chain on stderr.
    Connect(ConnectArgs),
    /// Accept connections and echo, answer with a fixed response, or forward each one.
    Serve(crate::tls_serve::ServeArgs),
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Suite {
    /// TLS_SM4_GCM_SM3 (0x00C6).
    Sm4Gcm,
    /// TLS_SM4_CCM_SM3 (0x00C7).
    Sm4Ccm,
}

/// A key exchange group.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Group {
    /// curveSM2 (41): ECDH on the SM2 curve, RFC 8998.
    #[value(name = "curveSM2")]
    CurveSm2,
    /// curveSM2MLKEM768 (0x11EE): curveSM2 and ML-KEM-768, post-quantum hybrid.
    #[value(name = "curveSM2MLKEM768")]
    CurveSm2MlKem768,
}

#[derive(ClapArgs)]
struct ConnectArgs {
    /// The server, HOST:PORT.
    #[arg(value_name = "HOST:PORT")]
    address: String,
    /// Trusted root certificates (PEM or DER; several in one PEM file).
    #[arg(long, value_name = "FILE")]
    ca: Option<PathBuf>,
    /// A client certificate chain (leaf first) for servers that ask for one.
    #[arg(long, value_name = "FILE", requires = "key")]
    cert: Option<PathBuf>,
    /// The client certificate's SM2 private key.
    #[arg(long, value_name = "FILE", requires = "cert")]
    key: Option<PathBuf>,
    /// The client key and its chain from a PKCS#12 keystore instead (its password from
    /// --password-file, or asked).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["cert", "key"])]
    p12: Option<PathBuf>,
    /// Reads the key's password (or the keystore's) from this file.
    #[arg(long, value_name = "F")]
    password_file: Option<PathBuf>,
    /// The name to send (SNI) and to check the certificate against (default: the host).
    #[arg(long, value_name = "NAME")]
    servername: Option<String>,
    /// Offer only this suite (default: both, GCM first).
    #[arg(long, value_enum)]
    suite: Option<Suite>,
    /// Key exchange groups to offer, preferred first; the first gets a key share (a
    /// curveSM2MLKEM768 share carries a curveSM2 one too when both are listed).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "curveSM2")]
    groups: Vec<Group>,
    /// Connect once, close, then connect again resuming that session (the second
    /// connection carries stdin; stderr says whether it resumed).
    #[arg(long)]
    resume: bool,
    /// Seconds allowed for the TCP connection and the handshake.
    #[arg(long, default_value_t = 10, value_name = "S")]
    timeout: u64,
    /// Seconds without traffic before giving up.
    #[arg(long, default_value_t = 300, value_name = "S")]
    idle_timeout: u64,
}

pub fn run(args: Args) -> Result<Outcome> {
    match args.cmd {
        Cmd::Connect(a) => connect(a),
        Cmd::Serve(a) => crate::tls_serve::serve(a),
    }
}

/// The provider, limited to one suite if asked, with `groups` in that order.
pub fn provider(suite: Option<Suite>, groups: &[Group]) -> Arc<CryptoProvider> {
    let mut p = shangmi_rustls::provider();
    p.kx_groups = groups
        .iter()
        .map(|g| match g {
            Group::CurveSm2 => shangmi_rustls::CURVE_SM2_GROUP,
            Group::CurveSm2MlKem768 => shangmi_rustls::CURVE_SM2_MLKEM768_GROUP,
        })
        .collect();
    match suite {
        Some(Suite::Sm4Gcm) => p.cipher_suites = vec![shangmi_rustls::TLS13_SM4_GCM_SM3],
        Some(Suite::Sm4Ccm) => p.cipher_suites = vec![shangmi_rustls::TLS13_SM4_CCM_SM3],
        None => {}
    }
    Arc::new(p)
}

pub fn read_file(path: &Path) -> Result<Vec<u8>> {
    Ok(read_small(path, FILE_LIMIT)?.to_vec())
}

/// A certificate chain and its key, from files; with `presign`, signing from a presign pool.
pub fn certified_key(
    cert: &Path,
    key: &Path,
    password_file: Option<&Path>,
    presign: bool,
) -> Result<rustls::sign::CertifiedKey> {
    let chain = shangmi_rustls::load_certificates(&read_file(cert)?)
        .map_err(|e| error(cert.display(), e))?;
    let mut signer =
        shangmi_rustls::Sm2SigningKey::new(crate::keyio::private_key(key, password_file)?);
    if presign {
        signer = signer.with_presign_pool(64);
    }
    shangmi_rustls::certified_key(chain, signer).map_err(|e| {
        let what = format!("{} with {}", cert.display(), key.display());
        match e {
            rustls::Error::InconsistentKeys(_) => {
                error(what, "the private key is not the one the certificate names")
            }
            e => error(what, e),
        }
    })
}

/// Trust anchors from a file.
pub fn roots(path: &Path) -> Result<Arc<shangmi_rustls::Roots>> {
    shangmi_rustls::load_roots(&read_file(path)?)
        .map(Arc::new)
        .map_err(|e| error(path.display(), e))
}

pub fn handshake_kind(k: Option<rustls::HandshakeKind>) -> &'static str {
    match k {
        Some(rustls::HandshakeKind::Resumed) => "resumed",
        Some(rustls::HandshakeKind::FullWithHelloRetryRequest) => "full with HelloRetryRequest",
        _ => "full",
    }
}

/// A one-line description of a certificate: subject and issuer.
pub fn describe_chain(chain: &[CertificateDer<'_>]) -> Vec<String> {
    describe_chain_der(chain)
}

/// [`describe_chain`] for any DER certificates.
pub fn describe_chain_der<C: AsRef<[u8]>>(chain: &[C]) -> Vec<String> {
    chain
        .iter()
        .enumerate()
        .map(
            |(i, c)| match <shangmi_pki::Certificate as der::Decode>::from_der(c.as_ref()) {
                Ok(cert) => format!(
                    "{i} s:{} i:{}",
                    cert.tbs_certificate().subject(),
                    cert.tbs_certificate().issuer()
                ),
                Err(_) => format!("{i} (unparsable, {} bytes)", c.as_ref().len()),
            },
        )
        .collect()
}

/// The server verifier, remembering the scheme of the handshake signature it checked (rustls
/// does not report it).
#[derive(Debug)]
struct Recording {
    inner: Arc<dyn ServerCertVerifier>,
    scheme: Mutex<Option<SignatureScheme>>,
}

impl ServerCertVerifier for Recording {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        self.inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        let ok = self.inner.verify_tls13_signature(message, cert, dss)?;
        *self.scheme.lock().unwrap_or_else(|p| p.into_inner()) = Some(dss.scheme);
        Ok(ok)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

pub fn scheme_name(s: Option<SignatureScheme>) -> String {
    match s {
        Some(s) if s == shangmi_rustls::SM2SIG_SM3 => "sm2sig_sm3".into(),
        Some(s) => format!("{s:?}"),
        None => "none (resumed)".into(),
    }
}

fn connect(a: ConnectArgs) -> Result<Outcome> {
    let provider = provider(a.suite, &a.groups);
    let Some(ca) = a.ca.as_deref() else {
        return Err(error(
            "--ca",
            "a trust anchor is required (no SM2 roots ship with the system)",
        ));
    };
    let inner = shangmi_rustls::Sm2ServerVerifier::new(roots(ca)?, provider.clone())
        .map_err(|e| error(ca.display(), e))?;
    let verifier = Arc::new(Recording {
        inner,
        scheme: Mutex::new(None),
    });
    let builder = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| error("configuration", e))?
        .dangerous()
        .with_custom_certificate_verifier(verifier.clone());
    let key = match (&a.p12, &a.cert, &a.key) {
        (Some(p12), _, _) => Some(crate::tls_serve::keystore_key(
            p12,
            a.password_file.as_deref(),
            false,
        )?),
        (None, Some(cert), Some(key)) => {
            Some(certified_key(cert, key, a.password_file.as_deref(), false)?)
        }
        _ => None,
    };
    let config = match key {
        Some(key) => {
            builder.with_client_cert_resolver(Arc::new(shangmi_rustls::SmClientCert::new(key)))
        }
        None => builder.with_no_client_auth(),
    };
    let config = Arc::new(config);
    let host = a
        .address
        .rsplit_once(':')
        .map(|(h, _)| h.trim_start_matches('[').trim_end_matches(']'))
        .unwrap_or(&a.address);
    let name = a.servername.as_deref().unwrap_or(host);
    let name = ServerName::try_from(name.to_string())
        .map_err(|e| error(format!("server name {name:?}"), e))?;
    let timeout = Duration::from_secs(a.timeout.max(1));
    if a.resume {
        let (mut conn, sock) = open(&a.address, &config, &name, timeout)?;
        // Sessions tickets come after the handshake: read until the server closes.
        conn.send_close_notify();
        let sink: &mut dyn std::io::Write = &mut std::io::sink();
        let source = Box::new(std::io::empty());
        let plain = Plain {
            source,
            sink,
            on_close: None,
        };
        let _ = tls_relay::relay(conn, sock, plain, timeout);
        eprintln!("first connection closed; resuming");
        // What the second handshake verifies, if anything, is what to report.
        *verifier.scheme.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
    let (conn, sock) = open(&a.address, &config, &name, timeout)?;
    eprintln!(
        "protocol TLSv1.3, suite {}, group {}, signature {}, handshake {}",
        conn.negotiated_cipher_suite()
            .map(|s| shangmi_rustls::suite_name(s.suite()))
            .unwrap_or_default(),
        conn.negotiated_key_exchange_group()
            .map(|g| shangmi_rustls::group_name(g.name()))
            .unwrap_or_default(),
        scheme_name(
            verifier
                .scheme
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take()
        ),
        handshake_kind(conn.handshake_kind()),
    );
    if let Some(chain) = conn.peer_certificates() {
        eprintln!("server chain:");
        for line in describe_chain(chain) {
            eprintln!("  {line}");
        }
    }
    let mut stdout = std::io::stdout();
    let end = tls_relay::relay(
        conn,
        sock,
        Plain {
            source: Box::new(std::io::stdin()),
            sink: &mut stdout,
            on_close: None,
        },
        Duration::from_secs(a.idle_timeout.max(1)),
    );
    match end {
        End::Clean => Ok(Outcome::Ok),
        End::Truncated => Err(rejected(
            &a.address,
            "the connection ended without close_notify (the data may be truncated)",
        )),
        End::Failed(e) => Err(rejected(&a.address, e)),
    }
}

/// A TCP connection and a completed handshake.
fn open(
    address: &str,
    config: &Arc<ClientConfig>,
    name: &ServerName<'static>,
    timeout: Duration,
) -> Result<(rustls::Connection, TcpStream)> {
    let addrs: Vec<_> = address
        .to_socket_addrs()
        .map_err(|e| error(address, e))?
        .collect();
    let mut last = None;
    let mut sock = None;
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, timeout) {
            Ok(s) => {
                sock = Some(s);
                break;
            }
            Err(e) => last = Some(e),
        }
    }
    let mut sock = sock.ok_or_else(|| {
        rejected(
            address,
            last.map(|e| crate::fail::io_cause(&e))
                .unwrap_or_else(|| "no address".into()),
        )
    })?;
    let _ = sock.set_nodelay(true);
    let _ = sock.set_write_timeout(Some(timeout));
    let conn = ClientConnection::new(config.clone(), name.clone())
        .map_err(|e| error("configuration", e))?;
    let mut conn = rustls::Connection::Client(conn);
    tls_relay::handshake(&mut conn, &mut sock, timeout)
        .map_err(|e| rejected(format!("{address}: handshake"), e))?;
    Ok((conn, sock))
}
