//! A site's upstreams: addresses taken in turn, an address that failed to connect skipped
//! for a while (the passive health check), and for HTTP one client that keeps connections.
//!
//! Each site caps what it asks of its upstreams: requests in flight
//! ([`Limits::max_upstream_requests`]) and connections open
//! ([`Limits::max_upstream_connections`]); a request beyond either is answered 503 at once
//! and counted, rather than queued behind the others or sent to an upstream that is already
//! saturated (clients that open and reset streams in a loop cannot multiply the upstream's
//! work). The HTTP client reads at most [`crate::budget::CHUNK`] of a response at a time.
//!
//! [`Limits::max_upstream_requests`]: crate::config::Limits::max_upstream_requests
//! [`Limits::max_upstream_connections`]: crate::config::Limits::max_upstream_connections

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::Uri;
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::config::Limits;

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

/// How a site's upstreams are reached and how much of them it may take.
#[derive(Clone, Debug)]
pub struct Caps {
    /// How long a connection may take.
    pub connect_timeout: Duration,
    /// How long an address that failed to connect is skipped.
    pub retry: Duration,
    /// Requests in flight at most.
    pub requests: usize,
    /// Connections open at most.
    pub connections: usize,
}

impl Caps {
    /// The caps `limits` set.
    pub fn of(limits: &Limits) -> Caps {
        Caps {
            connect_timeout: Duration::from_secs_f64(limits.connect_timeout),
            retry: Duration::from_secs_f64(limits.upstream_retry),
            requests: limits.max_upstream_requests,
            connections: limits.max_upstream_connections,
        }
    }
}

/// The HTTP client of a site.
pub type HttpClient = Client<Capped, Incoming>;

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
    pub client: Option<HttpClient>,
    requests: Arc<Semaphore>,
    connections: Arc<Semaphore>,
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

/// A request's place among a site's requests in flight; given back when dropped (when the
/// response's body has ended).
pub struct Slot(#[allow(dead_code)] OwnedSemaphorePermit);

impl Upstream {
    /// Upstreams of one kind at `addrs` (HOST:PORT each; at least one unless the kind is
    /// `Echo` or `Respond`, which take none).
    pub fn new(kind: Kind, addrs: Vec<String>, caps: &Caps) -> Result<Self, String> {
        let local = matches!(kind, Kind::Echo | Kind::Respond(_));
        if local != addrs.is_empty() {
            return Err(if local {
                "echo and respond take no upstream address".into()
            } else {
                "upstream: at least one address".into()
            });
        }
        let connections = Arc::new(Semaphore::new(caps.connections));
        let client = kind.is_http().then(|| {
            let mut connector = HttpConnector::new();
            connector.set_connect_timeout(Some(caps.connect_timeout));
            connector.set_nodelay(true);
            Client::builder(TokioExecutor::new())
                .http2_only(kind == Kind::H2c)
                .pool_idle_timeout(Duration::from_secs(30))
                .http1_max_buf_size(crate::budget::CHUNK)
                .build(Capped {
                    inner: connector,
                    permits: connections.clone(),
                })
        });
        Ok(Upstream {
            kind,
            down_until: addrs.iter().map(|_| AtomicU64::new(0)).collect(),
            addrs,
            next: AtomicUsize::new(0),
            epoch: Instant::now(),
            retry: caps.retry,
            connect_timeout: caps.connect_timeout,
            client,
            requests: Arc::new(Semaphore::new(caps.requests)),
            connections,
        })
    }

    /// A place for one more request in flight, if the site has one free.
    pub fn slot(&self) -> Option<Slot> {
        self.requests.clone().try_acquire_owned().ok().map(Slot)
    }

    /// A place for one more TCP relay (a connection to the upstream), if the site has one
    /// free.
    pub fn connection_slot(&self) -> Option<Slot> {
        self.connections.clone().try_acquire_owned().ok().map(Slot)
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

/// The site's connections to its upstreams are all open: the request is not sent.
#[derive(Debug)]
pub struct Busy;

impl std::fmt::Display for Busy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("every connection to the upstreams is in use")
    }
}

impl std::error::Error for Busy {}

/// Whether `e` (from the HTTP client) is a [`Busy`] refusal.
pub fn is_busy(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut at = Some(e);
    while let Some(e) = at {
        if e.is::<Busy>() {
            return true;
        }
        at = e.source();
    }
    false
}

/// An HTTP connector that opens at most as many connections as it has permits.
#[derive(Clone)]
pub struct Capped {
    inner: HttpConnector,
    permits: Arc<Semaphore>,
}

type Connecting = Pin<
    Box<dyn Future<Output = Result<CappedIo, Box<dyn std::error::Error + Send + Sync>>> + Send>,
>;

impl tower_service::Service<Uri> for Capped {
    type Response = CappedIo;
    type Error = Box<dyn std::error::Error + Send + Sync>;
    type Future = Connecting;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, dst: Uri) -> Connecting {
        let permit = self.permits.clone().try_acquire_owned();
        let connecting = self.inner.call(dst);
        Box::pin(async move {
            let permit = permit.map_err(|_| Box::new(Busy))?;
            let io = connecting.await?;
            Ok(CappedIo {
                io,
                _permit: permit,
            })
        })
    }
}

/// A connection to an upstream, holding its permit while open.
pub struct CappedIo {
    io: TokioIo<TcpStream>,
    _permit: OwnedSemaphorePermit,
}

impl Connection for CappedIo {
    fn connected(&self) -> Connected {
        self.io.connected()
    }
}

impl hyper::rt::Read for CappedIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl hyper::rt::Write for CappedIo {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }
}
