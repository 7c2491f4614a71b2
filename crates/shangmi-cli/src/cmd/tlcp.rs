//! `shangmi tlcp`: TLCP (GB/T 38636) with the same conventions as `shangmi tls`. `connect`
//! copies stdin to the connection and the connection to stdout; `serve` echoes or forwards
//! each connection on shangmi-gateway's connection path (the one `tls serve` runs on).

use std::io::{self, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clap::{ArgGroup, Args as ClapArgs, Subcommand};
use shangmi_tlcp::{ClientConfig, Connection, Identity, ServerConfig};

use crate::fail::{Outcome, Result, error, rejected};
use crate::net::peer::{describe_chain_der, read_file};
use crate::net::relay::{self, Closing, End};
use crate::net::serve::{Answer, Bounds, Protocol, serve_site};

#[derive(ClapArgs)]
#[command(after_help = "\
Examples:
  shangmi tlcp serve --sign-cert sign.pem --sign-key sign.key --enc-cert enc.pem \\
      --enc-key enc.key --listen 127.0.0.1:4433 --echo
  echo hello | shangmi tlcp connect 127.0.0.1:4433 --ca ca.pem --servername localhost
  shangmi tlcp connect host:443 --ca ca.pem --sign-cert c.pem --sign-key c.key \\
      --enc-cert ce.pem --enc-key ce.key --suite ecdhe-sm4-gcm-sm3

TLCP 1.1 (GB/T 38636-2020) with ECC_SM4_CBC_SM3, ECC_SM4_GCM_SM3, ECDHE_SM4_CBC_SM3 and
ECDHE_SM4_GCM_SM3; a signing and an encryption certificate per side (ECDHE needs the client's
too). Signatures and the SM2 key exchange use the SM2 ID 1234567812345678.
Exit status (connect): 0 clean close, 1 connection, handshake or certificate failure,
2 usage or input error.")]
pub struct Args {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Connect to a server: stdin to the connection, the connection to stdout; the suite and
    /// the server's certificates on stderr.
    Connect(ConnectArgs),
    /// Accept connections and echo or forward each one.
    Serve(ServeArgs),
}

/// Reads a suite by name from the library's table (`shangmi_tlcp::Suite::ALL`), so the command
/// keeps no list of its own: `ECC_SM4_GCM_SM3`, or `ecc-sm4-gcm-sm3`.
#[derive(Clone)]
struct SuiteName;

impl clap::builder::TypedValueParser for SuiteName {
    type Value = shangmi_tlcp::Suite;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> std::result::Result<Self::Value, clap::Error> {
        let name = value.to_string_lossy();
        shangmi_tlcp::Suite::from_name(&name).ok_or_else(|| {
            let all: Vec<&str> = shangmi_tlcp::Suite::ALL.iter().map(|s| s.name()).collect();
            clap::Error::raw(
                clap::error::ErrorKind::InvalidValue,
                format!("unknown TLCP suite {name:?}: one of {}\n", all.join(", ")),
            )
        })
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        let names = shangmi_tlcp::Suite::ALL.into_iter().map(|s| s.name());
        Some(Box::new(names.map(clap::builder::PossibleValue::new)))
    }
}

/// The signing and encryption pair, from four files.
#[derive(ClapArgs)]
struct Pair {
    /// The signing certificate (leaf first; intermediates may follow).
    #[arg(long, value_name = "FILE")]
    sign_cert: Option<PathBuf>,
    /// The signing certificate's SM2 key.
    #[arg(long, value_name = "FILE")]
    sign_key: Option<PathBuf>,
    /// The encryption certificate.
    #[arg(long, value_name = "FILE")]
    enc_cert: Option<PathBuf>,
    /// The encryption certificate's SM2 key.
    #[arg(long, value_name = "FILE")]
    enc_key: Option<PathBuf>,
    /// Both pairs from a PKCS#12 keystore instead (aliases "sign" and "enc", or its first and
    /// second key); its password from --password-file, or asked.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["sign_cert", "sign_key", "enc_cert", "enc_key"])]
    p12: Option<PathBuf>,
    /// Reads the keys' password from this file when they are encrypted.
    #[arg(long, value_name = "F")]
    password_file: Option<PathBuf>,
}

impl Pair {
    /// Both identities, all four files given, or none when none is.
    fn load(&self) -> Result<Option<(Identity, Identity)>> {
        if let Some(p12) = &self.p12 {
            let (sign, enc) = crate::keyio::tlcp_pair(p12, self.password_file.as_deref())?;
            let id = |h: shangmi_pki::pkcs12::KeyWithChain| {
                Identity::new(h.chain, h.key).map_err(|e| error(p12.display(), e))
            };
            return Ok(Some((id(sign)?, id(enc)?)));
        }
        match (
            &self.sign_cert,
            &self.sign_key,
            &self.enc_cert,
            &self.enc_key,
        ) {
            (None, None, None, None) => Ok(None),
            (Some(sc), Some(sk), Some(ec), Some(ek)) => Ok(Some((
                identity(sc, sk, self.password_file.as_deref())?,
                identity(ec, ek, self.password_file.as_deref())?,
            ))),
            _ => Err(error(
                "certificates",
                "--sign-cert, --sign-key, --enc-cert and --enc-key go together",
            )),
        }
    }
}

fn identity(cert: &Path, key: &Path, password_file: Option<&Path>) -> Result<Identity> {
    let chain =
        shangmi_pki::certificate_ders(&read_file(cert)?).map_err(|e| error(cert.display(), e))?;
    let key_value = crate::keyio::private_key(key, password_file)?;
    Identity::new(chain, key_value)
        .map_err(|e| error(format!("{} with {}", cert.display(), key.display()), e))
}

fn roots(path: &Path) -> Result<Vec<shangmi_pki::Cert>> {
    let roots =
        shangmi_pki::certificates(&read_file(path)?).map_err(|e| error(path.display(), e))?;
    if roots.is_empty() {
        return Err(error(path.display(), "no certificate in the file"));
    }
    Ok(roots)
}

#[derive(ClapArgs)]
struct ConnectArgs {
    /// The server, HOST:PORT.
    #[arg(value_name = "HOST:PORT")]
    address: String,
    /// Trusted root certificates (PEM or DER; several in one PEM file).
    #[arg(long, value_name = "FILE")]
    ca: PathBuf,
    #[command(flatten)]
    pair: Pair,
    /// The name to check the server's signing certificate against (default: the host).
    #[arg(long, value_name = "NAME")]
    servername: Option<String>,
    /// Offer only this suite (default: every usable one: the ECC suites, and the ECDHE ones
    /// when a certificate pair is given).
    #[arg(long, value_name = "SUITE", value_parser = SuiteName)]
    suite: Option<shangmi_tlcp::Suite>,
    /// Connect once, close, then connect again resuming that session (the second connection
    /// carries stdin; stderr says whether it resumed).
    #[arg(long)]
    resume: bool,
    /// Seconds allowed for the TCP connection and the handshake.
    #[arg(long, default_value_t = 10, value_name = "S")]
    timeout: u64,
    /// Seconds without traffic before giving up.
    #[arg(long, default_value_t = 300, value_name = "S")]
    idle_timeout: u64,
}

#[derive(ClapArgs)]
#[command(group(ArgGroup::new("mode").args(["echo", "forward"])))]
struct ServeArgs {
    #[command(flatten)]
    pair: Pair,
    /// Require client certificate pairs chaining to these roots (enables the ECDHE suites).
    #[arg(long, value_name = "FILE")]
    client_ca: Option<PathBuf>,
    /// Where to listen, ADDR:PORT (port 0 picks a free one; the line on stderr names it).
    #[arg(long, value_name = "ADDR:PORT")]
    listen: String,
    /// Send back whatever each client sends (the default without --forward).
    #[arg(long)]
    echo: bool,
    /// Relay each connection to this TCP service (TLCP termination).
    #[arg(long, value_name = "ADDR:PORT")]
    forward: Option<String>,
    /// Accept only this suite (default: every suite).
    #[arg(long, value_name = "SUITE", value_parser = SuiteName)]
    suite: Option<shangmi_tlcp::Suite>,
    #[command(flatten)]
    bounds: Bounds,
}

/// Some TLCP servers (GmSSL's) neither answer close_notify nor close: once ours is sent, a
/// peer quiet this long has said all it will.
const CLOSING: Closing = Closing {
    quiet_after_close: Some(Duration::from_secs(3)),
};

pub fn run(args: Args) -> Result<Outcome> {
    match args.cmd {
        Cmd::Connect(a) => connect(a),
        Cmd::Serve(a) => serve(a),
    }
}

fn connect(a: ConnectArgs) -> Result<Outcome> {
    let mut config = ClientConfig::new(roots(&a.ca)?);
    if let Some((sign, enc)) = a.pair.load()? {
        config = config.with_certificates(sign, enc);
    }
    if let Some(s) = a.suite {
        config = config.with_suites(&[s]);
    }
    let config = Arc::new(config);
    let host = a
        .address
        .rsplit_once(':')
        .map(|(h, _)| h.trim_start_matches('[').trim_end_matches(']'))
        .ok_or_else(|| error(&a.address, "expected HOST:PORT"))?;
    let name = a.servername.clone().unwrap_or_else(|| host.to_string());
    let timeout = Duration::from_secs(a.timeout.max(1));
    let open = |quiet: bool| -> Result<(Connection, TcpStream)> {
        let addr = a
            .address
            .to_socket_addrs()
            .map_err(|e| error(&a.address, e))?
            .next()
            .ok_or_else(|| error(&a.address, "no address"))?;
        let mut sock = TcpStream::connect_timeout(&addr, timeout)
            .map_err(|e| rejected(&a.address, crate::fail::io_cause(&e)))?;
        let _ = sock.set_nodelay(true);
        let mut conn = Connection::client(config.clone(), &name).map_err(|e| error("TLCP", e))?;
        relay::handshake(&mut conn, &mut sock, timeout).map_err(|e| rejected(&a.address, e))?;
        let agreed = conn
            .agreed()
            .cloned()
            .ok_or_else(|| rejected(&a.address, "no handshake"))?;
        if !quiet {
            eprintln!(
                "suite: {} ({})",
                agreed.suite,
                if agreed.resumed { "resumed" } else { "full" }
            );
            for line in describe_chain_der(&agreed.peer_certificates) {
                eprintln!("  {line}");
            }
        }
        Ok((conn, sock))
    };
    if a.resume {
        let (mut conn, mut sock) = open(true)?;
        conn.close();
        let _ = sock.write_all(&conn.take_tls());
        let _ = sock.shutdown(Shutdown::Both);
    }
    let (conn, sock) = open(false)?;
    let idle = Duration::from_secs(a.idle_timeout.max(1));
    match relay::relay(
        conn,
        sock,
        Box::new(io::stdin()),
        &mut io::stdout(),
        idle,
        CLOSING,
    ) {
        End::Clean => Ok(Outcome::Ok),
        End::Truncated => Err(rejected(
            &a.address,
            "the peer closed the connection without close_notify",
        )),
        End::Failed(e) => Err(rejected(&a.address, e)),
    }
}

fn serve(a: ServeArgs) -> Result<Outcome> {
    let (sign, enc) = a.pair.load()?.ok_or_else(|| {
        error(
            "serve",
            "--sign-cert, --sign-key, --enc-cert and --enc-key are required",
        )
    })?;
    let mut config = ServerConfig::new(sign, enc).map_err(|e| error("certificates", e))?;
    if let Some(ca) = &a.client_ca {
        config = config
            .with_client_auth(roots(ca)?)
            .map_err(|e| error(ca.display(), e))?;
    }
    if let Some(s) = a.suite {
        config = config.with_suites(&[s]);
    }
    let answer = match a.forward {
        Some(f) => Answer::Forward(f),
        None => Answer::Echo,
    };
    serve_site(
        &a.listen,
        Protocol::Tlcp(Arc::new(config)),
        answer,
        &a.bounds,
        a.client_ca.is_some(),
    )
}
