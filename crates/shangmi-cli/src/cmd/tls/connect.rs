//! `shangmi tls connect`: stdin to the connection, the connection to stdout; what was
//! negotiated and the server's chain on stderr.

use std::net::{TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Args as ClapArgs;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, DigitallySignedStruct, SignatureScheme};

use super::{Group, Suite, certified_key, keystore_key, provider, roots};
use crate::fail::{Outcome, Result, error, rejected};
use crate::net::peer::describe_chain_der;
use crate::net::relay::{self, Closing, End};

/// A TLS 1.3 peer answers close_notify or closes: the relay waits for that (up to the idle
/// timeout), and a connection that ends without it is reported as possibly truncated.
const TLS_CLOSING: Closing = Closing {
    quiet_after_close: None,
};

#[derive(ClapArgs)]
pub struct ConnectArgs {
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

fn handshake_kind(k: Option<rustls::HandshakeKind>) -> &'static str {
    match k {
        Some(rustls::HandshakeKind::Resumed) => "resumed",
        Some(rustls::HandshakeKind::FullWithHelloRetryRequest) => "full with HelloRetryRequest",
        _ => "full",
    }
}

/// A one-line description of a certificate: subject and issuer.
fn describe_chain(chain: &[CertificateDer<'_>]) -> Vec<String> {
    describe_chain_der(chain)
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

fn scheme_name(s: Option<SignatureScheme>) -> String {
    match s {
        Some(s) if s == shangmi_rustls::SM2SIG_SM3 => "sm2sig_sm3".into(),
        Some(s) => format!("{s:?}"),
        None => "none (resumed)".into(),
    }
}

pub fn connect(a: ConnectArgs) -> Result<Outcome> {
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
        (Some(p12), _, _) => Some(keystore_key(p12, a.password_file.as_deref(), false)?),
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
        let _ = relay::relay(
            conn,
            sock,
            Box::new(std::io::empty()),
            &mut std::io::sink(),
            timeout,
            TLS_CLOSING,
        );
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
    let end = relay::relay(
        conn,
        sock,
        Box::new(std::io::stdin()),
        &mut stdout,
        Duration::from_secs(a.idle_timeout.max(1)),
        TLS_CLOSING,
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
    relay::handshake(&mut conn, &mut sock, timeout)
        .map_err(|e| rejected(format!("{address}: handshake"), e))?;
    Ok((conn, sock))
}
