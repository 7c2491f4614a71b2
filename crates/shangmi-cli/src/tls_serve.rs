//! `shangmi tls serve`: an RFC 8998 server that keeps serving whatever its clients do.
//!
//! It runs on shangmi-gateway's connection path, as `tlcp serve` does: at most
//! `--max-connections` at once (beyond that a connection is closed as soon as it is accepted),
//! a deadline on the handshake, a timeout on an idle connection, another on a write to a client
//! that reads nothing, and the handshake's time to connect to the back end, so stalled,
//! garbage-sending, non-reading or resetting clients cost bounded memory for a bounded time.
//! Every connection is logged in one line on stderr and the server goes on.

use std::net::ToSocketAddrs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{ArgGroup, Args as ClapArgs};
use rustls::ServerConfig;
use shangmi_gateway::config::Limits;
use shangmi_gateway::site::{Generation, Site};
use shangmi_gateway::upstream::{Caps, Kind, Upstream};

use crate::fail::{Outcome, Result, error};
use crate::tls_cmd::{Group, Suite, certified_key, provider, roots};

#[derive(ClapArgs)]
#[command(group(ArgGroup::new("mode").required(true).args(["echo", "forward", "response"])))]
pub struct ServeArgs {
    /// The server's certificate chain (leaf first; PEM or DER).
    #[arg(long, value_name = "FILE", required_unless_present = "p12")]
    cert: Option<PathBuf>,
    /// The certificate's SM2 private key.
    #[arg(long, value_name = "FILE", required_unless_present = "p12")]
    key: Option<PathBuf>,
    /// The key and its chain from a PKCS#12 keystore instead (its password from
    /// --password-file, or asked).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["cert", "key", "chain"])]
    p12: Option<PathBuf>,
    /// Intermediate certificates to send after the leaf, if not in --cert.
    #[arg(long, value_name = "FILE")]
    chain: Option<PathBuf>,
    /// Require client certificates chaining to these roots.
    #[arg(long, value_name = "FILE")]
    client_ca: Option<PathBuf>,
    /// Reads the key's password from this file when it is encrypted.
    #[arg(long, value_name = "F")]
    password_file: Option<PathBuf>,
    /// Where to listen, ADDR:PORT (port 0 picks a free one; the line on stderr names it).
    #[arg(long, value_name = "ADDR:PORT")]
    listen: String,
    /// Send back whatever each client sends.
    #[arg(long)]
    echo: bool,
    /// Relay each connection to this TCP service (TLS termination).
    #[arg(long, value_name = "ADDR:PORT")]
    forward: Option<String>,
    /// Answer each connection with this text, then close.
    #[arg(long, value_name = "TEXT")]
    response: Option<String>,
    /// Accept only this suite (default: both).
    #[arg(long, value_enum)]
    suite: Option<Suite>,
    /// Key exchange groups to accept (the client's order decides among them).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "curveSM2,curveSM2MLKEM768"
    )]
    groups: Vec<Group>,
    #[command(flatten)]
    bounds: Bounds,
    /// Sign handshakes with nonces prepared in batches from the system's generator (a
    /// signature then costs about a fifth), instead of hedging each with the key and the
    /// transcript. Only for a process that is never duplicated while running: a VM snapshot
    /// restored twice or a checkpoint restored twice replays the same prepared nonces, and two
    /// signatures with one nonce reveal the key (fork alone is detected).
    #[arg(long, conflicts_with = "hedged")]
    presign: bool,
    /// Hedge every signature's nonce with the key and the transcript (the default; kept for
    /// scripts that ask for it).
    #[arg(long, hide = true)]
    hedged: bool,
}

/// The first key of a PKCS#12 keystore with its chain, as rustls serves it.
pub(crate) fn keystore_key(
    p12: &Path,
    password_file: Option<&Path>,
    presign: bool,
) -> Result<rustls::sign::CertifiedKey> {
    let held = crate::pkcs12_cmd::key_chains(p12, password_file)?
        .into_iter()
        .next()
        .ok_or_else(|| error(p12.display(), "no key in the keystore"))?;
    let mut signer = shangmi_rustls::Sm2SigningKey::new(held.key);
    if presign {
        signer = signer.with_presign_pool(64);
    }
    let chain = held.chain.into_iter().map(Into::into).collect();
    shangmi_rustls::certified_key(chain, signer).map_err(|e| error(p12.display(), e))
}

pub fn serve(a: ServeArgs) -> Result<Outcome> {
    let provider = provider(a.suite, &a.groups);
    let mut key = match (&a.p12, &a.cert, &a.key) {
        (Some(p12), _, _) => keystore_key(p12, a.password_file.as_deref(), a.presign)?,
        (None, Some(cert), Some(key)) => {
            certified_key(cert, key, a.password_file.as_deref(), a.presign)?
        }
        _ => return Err(error("serve", "--cert and --key, or --p12")),
    };
    if let Some(chain) = &a.chain {
        let extra = shangmi_rustls::load_certificates(&crate::tls_cmd::read_file(chain)?)
            .map_err(|e| error(chain.display(), e))?;
        key.cert.extend(extra);
    }
    let client_auth = match &a.client_ca {
        Some(ca) => Some(
            shangmi_rustls::Sm2ClientVerifier::new(roots(ca)?, provider.clone())
                .map_err(|e| error(ca.display(), e))?
                as Arc<dyn rustls::server::danger::ClientCertVerifier>,
        ),
        None => None,
    };
    let ticketer = shangmi_rustls::ticketer().map_err(|e| error("session tickets", e))?;
    let config = shangmi_rustls::server_config(key, provider, client_auth, ticketer, Vec::new())
        .map_err(|e| error("configuration", e))?;
    let answer = match (a.forward, a.response) {
        (Some(f), _) => Answer::Forward(f),
        (_, Some(r)) => Answer::Respond(r.into_bytes()),
        _ => Answer::Echo,
    };
    serve_site(
        &a.listen,
        Protocol::Rfc8998(Arc::new(config)),
        answer,
        &a.bounds,
        a.client_ca.is_some(),
    )
}

/// The one protocol a command-line server speaks.
pub enum Protocol {
    /// TLS 1.3 with the SM suites.
    Rfc8998(Arc<ServerConfig>),
    /// TLCP.
    Tlcp(Arc<shangmi_tlcp::ServerConfig>),
}

/// What a command-line server does with a connection once its handshake is done.
pub enum Answer {
    /// Sends back what the client sends.
    Echo,
    /// Relays to this TCP service.
    Forward(String),
    /// Answers with these bytes, then closes.
    Respond(Vec<u8>),
}

impl Answer {
    /// The gateway's upstream for it; the back end gets the handshake's time to connect.
    fn upstream(self, limits: &Limits) -> Result<Upstream> {
        let (kind, addrs) = match self {
            Answer::Echo => (Kind::Echo, Vec::new()),
            Answer::Respond(r) => (Kind::Respond(r.into()), Vec::new()),
            Answer::Forward(to) => (Kind::Tcp, vec![to]),
        };
        Upstream::new(kind, addrs, &Caps::of(limits)).map_err(|e| error("--forward", e))
    }
}

/// The command line's bounds on a server, in whole seconds (`tls serve` and `tlcp serve`).
#[derive(ClapArgs)]
pub struct Bounds {
    /// Connections served at once; more are closed on arrival.
    #[arg(long, default_value_t = 256, value_name = "N")]
    pub max_connections: usize,
    /// Seconds a client has to complete its handshake.
    #[arg(long, default_value_t = 10, value_name = "S")]
    pub handshake_timeout: u64,
    /// Seconds without traffic before a connection is closed.
    #[arg(long, default_value_t = 300, value_name = "S")]
    pub idle_timeout: u64,
    /// Seconds a write may wait on a client (or back end) that reads nothing before the
    /// connection is closed.
    #[arg(long, default_value_t = 30, value_name = "S")]
    pub write_timeout: u64,
}

/// Serves `protocol` on `listen` with the gateway's connection path (the one place
/// connections are accepted, limited, timed out and logged) until the process is stopped.
pub fn serve_site(
    listen: &str,
    protocol: Protocol,
    answer: Answer,
    b: &Bounds,
    client_auth: bool,
) -> Result<Outcome> {
    let addr = listen
        .to_socket_addrs()
        .map_err(|e| error(listen, e))?
        .next()
        .ok_or_else(|| error(listen, "resolves to no address"))?;
    let (tlcp, sm2) = match protocol {
        Protocol::Rfc8998(c) => (None, Some(c)),
        Protocol::Tlcp(c) => (Some(c), None),
    };
    let secs = |s: u64| s.max(1) as f64;
    let limits = Limits {
        max_connections: b.max_connections.max(1),
        // One client may take them all: the command line serves one party's tests.
        max_connections_per_address: 0,
        handshake_timeout: secs(b.handshake_timeout),
        idle_timeout: secs(b.idle_timeout),
        write_timeout: secs(b.write_timeout),
        connect_timeout: secs(b.handshake_timeout),
        upstream_retry: 1.0,
        ..Limits::default()
    };
    let site = Site {
        names: Vec::new(),
        tlcp,
        sm2,
        international: None,
        client_auth,
        upstream: answer.upstream(&limits)?,
    };
    match shangmi_gateway::run::serve_blocking(Generation::single(addr, site, limits)) {
        Ok(never) => match never {},
        Err(e) => Err(error(listen, e)),
    }
}

#[cfg(test)]
mod tests {
    use clap::{Args as _, FromArgMatches as _};

    use super::ServeArgs;

    fn parse(extra: &[&str]) -> ServeArgs {
        let cmd = ServeArgs::augment_args(clap::Command::new("serve"));
        let mut argv = vec![
            "serve", "--cert", "c", "--key", "k", "--listen", "l", "--echo",
        ];
        argv.extend(extra);
        ServeArgs::from_arg_matches(&cmd.try_get_matches_from(argv).unwrap()).unwrap()
    }

    /// Prepared nonces replay in a duplicated VM: handshakes are signed with hedged nonces
    /// unless the operator asks for the pool.
    #[test]
    fn handshake_signatures_are_hedged_unless_asked() {
        assert!(!parse(&[]).presign);
        assert!(!parse(&["--hedged"]).presign);
        assert!(parse(&["--presign"]).presign);
    }
}
