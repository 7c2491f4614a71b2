//! A site's upstreams: addresses taken in turn, an address that failed to connect skipped
//! for a while (the passive health check), and for HTTP one client that keeps connections.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

/// What the upstream speaks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// HTTP/1.1.
    Http,
    /// HTTP/2 without TLS (prior knowledge).
    H2c,
    /// Bytes relayed as they come.
    Tcp,
    /// No upstream: every byte the client sends comes back (`shangmi tls|tlcp serve --echo`).
    Echo,
    /// No upstream: these bytes answer each connection, which then closes
    /// (`shangmi tls serve --response`).
    Respond(std::sync::Arc<[u8]>),
}

impl Kind {
    /// Whether requests are HTTP (the upstream has a client and ALPN offers h2).
    pub fn is_http(&self) -> bool {
        matches!(self, Kind::Http | Kind::H2c)
    }
}

/// One site's upstreams.
pub struct Upstream {
    /// What they speak.
    pub kind: Kind,
    addrs: Vec<String>,
    next: AtomicUsize,
    /// Milliseconds since `epoch` until which each address is skipped.
    down_until: Vec<AtomicU64>,
    epoch: Instant,
    retry: Duration,
    /// How long a connection may take.
    pub connect_timeout: Duration,
    /// The HTTP client (none for TCP).
    pub client: Option<Client<HttpConnector, Incoming>>,
}

/// Parses `scheme://HOST:PORT` (nothing after the port).
pub fn parse(url: &str) -> Result<(Kind, String), String> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| format!("`{url}` is not SCHEME://HOST:PORT"))?;
    let kind = match scheme {
        "http" => Kind::Http,
        "h2c" => Kind::H2c,
        "tcp" => Kind::Tcp,
        _ => {
            return Err(format!(
                "`{scheme}`: the upstream scheme is http, h2c or tcp"
            ));
        }
    };
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let port_ok = rest
        .rsplit_once(':')
        .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0));
    if !port_ok || rest.contains('/') || rest.contains('@') {
        return Err(format!("`{url}`: give HOST:PORT and nothing after it"));
    }
    Ok((kind, rest.to_string()))
}

impl Upstream {
    /// Upstreams of one kind at `addrs` (HOST:PORT each; at least one unless the kind is
    /// `Echo` or `Respond`, which take none).
    pub fn new(
        kind: Kind,
        addrs: Vec<String>,
        connect_timeout: Duration,
        retry: Duration,
    ) -> Result<Self, String> {
        let local = matches!(kind, Kind::Echo | Kind::Respond(_));
        if local != addrs.is_empty() {
            return Err(if local {
                "echo and respond take no upstream address".into()
            } else {
                "upstream: at least one address".into()
            });
        }
        let client = kind.is_http().then(|| {
            let mut connector = HttpConnector::new();
            connector.set_connect_timeout(Some(connect_timeout));
            connector.set_nodelay(true);
            Client::builder(TokioExecutor::new())
                .http2_only(kind == Kind::H2c)
                .pool_idle_timeout(Duration::from_secs(30))
                .build(connector)
        });
        Ok(Upstream {
            kind,
            down_until: addrs.iter().map(|_| AtomicU64::new(0)).collect(),
            addrs,
            next: AtomicUsize::new(0),
            epoch: Instant::now(),
            retry,
            connect_timeout,
            client,
        })
    }

    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// The next address in turn that is not marked down (the next in turn when all are).
    pub fn pick(&self) -> (usize, &str) {
        let n = self.addrs.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        let now = self.now_ms();
        let i = (0..n)
            .map(|k| (start + k) % n)
            .find(|&i| self.down_until[i].load(Ordering::Relaxed) <= now)
            .unwrap_or(start % n);
        (i, &self.addrs[i])
    }

    /// Marks address `i` down for the retry period (it failed to connect).
    pub fn failed(&self, i: usize) {
        let until = self.now_ms() + self.retry.as_millis() as u64;
        self.down_until[i].store(until, Ordering::Relaxed);
    }

    /// Marks address `i` up (it answered).
    pub fn succeeded(&self, i: usize) {
        if self.down_until[i].load(Ordering::Relaxed) != 0 {
            self.down_until[i].store(0, Ordering::Relaxed);
        }
    }
}
