//! The servers of `tls serve` and `tlcp serve`: shangmi-gateway's connection path with the
//! command line's bounds. At most `--max-connections` at once (beyond that a connection is
//! closed as soon as it is accepted), a deadline on the handshake, a timeout on an idle
//! connection, another on a write to a client that reads nothing, and the handshake's time to
//! connect to the back end, so stalled, garbage-sending, non-reading or resetting clients cost
//! bounded memory for a bounded time. Every connection is logged in one line on stderr and the
//! server goes on.

use std::net::ToSocketAddrs;
use std::sync::Arc;

use clap::Args as ClapArgs;
use rustls::ServerConfig;
use shangmi_gateway::config::Limits;
use shangmi_gateway::site::{Generation, Site};
use shangmi_gateway::upstream::{Caps, Kind, Upstream};

use crate::fail::{Outcome, Result, error};

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
