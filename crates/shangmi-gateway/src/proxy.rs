//! An HTTP upstream: HTTP/1.1 or HTTP/2 from the client (HTTP/2 by ALPN or its preface),
//! HTTP/1.1 or h2c to the upstream, bodies streamed both ways and each response read no
//! faster than the client takes it ([`crate::budget`]). The request is checked and cleaned
//! first ([`crate::headers`]): its Host must name the site the server name chose where that
//! matters (421), and the upstream learns who the client is only from the gateway.
//!
//! HTTP/2 is bounded as nginx and Envoy bound it: streams at once, windows, the send buffer
//! per stream, requests per connection (then a graceful GOAWAY), and a client that resets
//! most of what it opens (after [`RESET_FLOOR`] resets, more than half its requests) is
//! disconnected.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Request, Response, StatusCode, Uri, Version};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Notify;

use crate::budget::{self, Budgeted};
use crate::headers;
use crate::site::{Generation, Site};
use crate::state::{Retire, Session, Shared};
use crate::upstream::{Kind, Slot};

mod access;
use access::Log;

type Body_ = BoxBody<Bytes, hyper::Error>;

/// Client resets a connection may make before its share of resets is judged.
pub const RESET_FLOOR: usize = 100;
/// What HTTP/2 buffers per stream for a client that reads slowly.
const SEND_BUFFER: usize = 64 * 1024;

/// One client connection's HTTP context.
pub struct Cx {
    shared: Arc<Shared>,
    generation: Arc<Generation>,
    /// The listener's index in the generation.
    listener: usize,
    site: Arc<Site>,
    session: Arc<Session>,
    budget: Arc<budget::Connection>,
    requests: AtomicUsize,
    abandoned: AtomicUsize,
    /// Set when the client resets most of what it opens: the connection is closed at once
    /// (a graceful GOAWAY waits for a ping the client need not answer).
    abusive: AtomicBool,
    /// Notified when the connection should close: asked to (too many requests), or at once
    /// (resets).
    close: Notify,
    /// Upgraded exchanges (WebSocket, say) relaying on their own tasks: the connection lasts
    /// until they end, and they end with it (idle timeout, drain's end).
    upgraded: std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

impl Cx {
    /// The context of a connection to `site`.
    pub fn new(
        shared: &Arc<Shared>,
        generation: &Arc<Generation>,
        listener: usize,
        site: &Arc<Site>,
        session: Arc<Session>,
        budget: Arc<budget::Connection>,
    ) -> Arc<Cx> {
        Arc::new(Cx {
            shared: shared.clone(),
            generation: generation.clone(),
            listener,
            site: site.clone(),
            session,
            budget,
            requests: AtomicUsize::new(0),
            abandoned: AtomicUsize::new(0),
            abusive: AtomicBool::new(false),
            close: Notify::new(),
            upgraded: std::sync::Mutex::new(Vec::new()),
        })
    }

    fn relays(&self) -> std::sync::MutexGuard<'_, Vec<tokio::task::JoinHandle<()>>> {
        self.upgraded.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Aborts the upgraded relays when the connection is dropped before they end.
struct Relays(Arc<Cx>);

impl Drop for Relays {
    fn drop(&mut self) {
        for h in self.0.relays().iter() {
            h.abort();
        }
    }
}

/// Serves HTTP on `stream` until the client closes, a drain has let in-flight requests end,
/// or the connection is retired (`retire` resolves, or it carried its share of requests) and
/// has ended what it was doing, or `reload_grace` after that.
pub async fn serve<S>(cx: Arc<Cx>, stream: S, retire: impl Future<Output = Retire>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let limits = cx.generation.limits.clone();
    let mut stop = cx.shared.stopping();
    let relays = Relays(cx.clone());
    let service_cx = cx.clone();
    let service = hyper::service::service_fn(move |req| {
        let cx = service_cx.clone();
        async move { Ok::<_, Infallible>(handle(req, cx).await) }
    });
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(Duration::from_secs_f64(limits.idle_timeout))
        .max_buf_size(limits.max_header_bytes);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_header_list_size(limits.max_header_bytes as u32)
        .max_concurrent_streams(limits.max_concurrent_streams)
        .initial_stream_window_size(limits.stream_window)
        .initial_connection_window_size(limits.connection_window)
        .max_send_buf_size(SEND_BUFFER)
        .max_pending_accept_reset_streams(20);
    let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
    tokio::pin!(conn);
    tokio::pin!(retire);
    if *stop.borrow() {
        conn.as_mut().graceful_shutdown();
    }
    let grace = Duration::from_secs_f64(limits.reload_grace);
    let mut cut: Option<Instant> = None;
    loop {
        let cut_at = cut.unwrap_or_else(|| Instant::now() + Duration::from_secs(86_400 * 365));
        tokio::select! {
            _ = conn.as_mut() => break,
            r = stop.changed() => {
                conn.as_mut().graceful_shutdown();
                if r.is_err() {
                    let _ = conn.as_mut().await;
                    break;
                }
            }
            why = &mut retire, if cut.is_none() => {
                cx.shared.metrics.retired(why.reason());
                conn.as_mut().graceful_shutdown();
                cut = Some(Instant::now() + grace);
                abort_relays(&cx);
            }
            _ = cx.close.notified(), if cut.is_none() => {
                if cx.abusive.load(Ordering::Relaxed) {
                    break;
                }
                conn.as_mut().graceful_shutdown();
                cut = Some(Instant::now() + grace);
            }
            _ = tokio::time::sleep_until(cut_at.into()), if cut.is_some() => break,
        }
    }
    let handles: Vec<_> = std::mem::take(&mut *relays.0.relays());
    for h in handles {
        let _ = h.await;
    }
}

fn abort_relays(cx: &Cx) {
    for h in cx.relays().iter() {
        h.abort();
    }
}

fn text(status: StatusCode, body: &'static str) -> Response<Body_> {
    let mut r = Response::new(
        Full::new(Bytes::from_static(body.as_bytes()))
            .map_err(|n| match n {})
            .boxed(),
    );
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// The upgrade an HTTP/1.1 request asks for (WebSocket, say: `Connection: upgrade` and an
/// `Upgrade` header), when it is one the configuration relays.
fn wanted_upgrade(req: &Request<Incoming>, allowed: &[String]) -> Option<HeaderValue> {
    let asks = req.version() == Version::HTTP_11
        && req
            .headers()
            .get_all(header::CONNECTION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case("upgrade"));
    let protocol = req.headers().get(header::UPGRADE)?;
    let token = protocol.to_str().ok()?.split('/').next()?.trim();
    (asks && allowed.iter().any(|a| a.eq_ignore_ascii_case(token))).then(|| protocol.clone())
}

/// Counts a request whose client went away (an HTTP/2 reset, mostly) before its answer.
struct InFlight {
    cx: Arc<Cx>,
    answered: bool,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.answered {
            return;
        }
        let abandoned = self.cx.abandoned.fetch_add(1, Ordering::Relaxed) + 1;
        let requests = self.cx.requests.load(Ordering::Relaxed);
        if abandoned >= RESET_FLOOR
            && 2 * abandoned > requests
            && !self.cx.abusive.swap(true, Ordering::Relaxed)
        {
            self.cx.shared.metrics.retired("resets");
            self.cx.close.notify_one();
        }
    }
}

async fn handle(req: Request<Incoming>, cx: Arc<Cx>) -> Response<Body_> {
    let n = cx.requests.fetch_add(1, Ordering::Relaxed) + 1;
    if n == cx.generation.limits.max_requests_per_connection {
        cx.shared.metrics.retired("requests");
        cx.close.notify_one();
    }
    let mut guard = InFlight {
        cx: cx.clone(),
        answered: false,
    };
    let r = answer(req, &cx).await;
    guard.answered = true;
    r
}

async fn answer(mut req: Request<Incoming>, cx: &Arc<Cx>) -> Response<Body_> {
    let log = Log::new(&req, cx);
    if let Err((status, why)) = admit(&req, cx) {
        return log.done(text(status, why), "", None);
    }
    let upstream = &cx.site.upstream;
    let Some(slot) = upstream.slot() else {
        cx.shared.metrics.upstream_error("busy");
        return log.done(text(StatusCode::SERVICE_UNAVAILABLE, "busy\n"), "", None);
    };
    let (i, addr) = upstream.pick();
    // An upgrade goes through only to an HTTP/1.1 upstream; the client's side of it is taken
    // before the request is passed on.
    let upgrade = wanted_upgrade(&req, &cx.generation.http.upgrades)
        .filter(|_| upstream.kind == Kind::Http)
        .map(|protocol| (hyper::upgrade::on(&mut req), protocol));
    let protocol = upgrade.as_ref().map(|(_, p)| p.clone());
    let forwarded = match upstream_request(req, cx, addr, &log.path, protocol) {
        Ok(r) => r,
        Err((status, why)) => return log.done(text(status, why), "", None),
    };
    let mut resp = match send(cx, i, forwarded).await {
        Ok(r) => r,
        Err((status, why)) => return log.done(text(status, why), addr, None),
    };
    if resp.status() == StatusCode::SWITCHING_PROTOCOLS {
        let Some((client_side, _)) = upgrade else {
            // A switch nobody asked for cannot be relayed.
            cx.shared.metrics.upstream_error("unasked upgrade");
            return log.done(text(StatusCode::BAD_GATEWAY, "bad gateway\n"), addr, None);
        };
        return log.done(relay_upgrade(cx, resp, client_side, slot), addr, None);
    }
    headers::strip_hop(resp.headers_mut());
    let budget = cx.budget.clone();
    let resp = resp.map(|b| Budgeted::new(b, budget).boxed());
    log.done(resp, addr, Some(slot))
}

/// An answer the gateway gives itself instead of the upstream's: its status and text.
type Refusal = (StatusCode, &'static str);

/// The checks a request passes before any upstream sees it: the client's request rate, one
/// Host, a Host of the site the handshake chose (where the listener checks), and a client
/// certificate where the site requires one.
fn admit(req: &Request<Incoming>, cx: &Cx) -> Result<(), Refusal> {
    let limits = &cx.generation.limits;
    let s = &cx.session;
    if !cx
        .shared
        .allow(s.client.ip(), limits.requests_per_second, limits.burst)
    {
        return Err((StatusCode::TOO_MANY_REQUESTS, "too many requests\n"));
    }
    let host = headers::host(req.version(), req.uri(), req.headers())
        .map_err(|_| (StatusCode::BAD_REQUEST, "bad request\n"))?;
    let listener = &cx.generation.listeners[cx.listener];
    if listener.check_host && !Arc::ptr_eq(listener.site(host.as_deref()), &cx.site) {
        return Err((StatusCode::MISDIRECTED_REQUEST, "misdirected request\n"));
    }
    if cx.site.client_auth && s.client_identity.is_none() {
        // Every handshake to such a site verified a certificate; a session without one is
        // not let through on any account.
        return Err((StatusCode::FORBIDDEN, "forbidden\n"));
    }
    Ok(())
}

/// The request as the upstream at `addr` gets it: the client's headers cleaned, the target
/// rewritten, the Host kept, the upgrade asked for, the gateway's own headers written.
fn upstream_request(
    req: Request<Incoming>,
    cx: &Cx,
    addr: &str,
    path: &str,
    upgrade: Option<HeaderValue>,
) -> Result<Request<Incoming>, Refusal> {
    let (mut parts, body) = req.into_parts();
    if headers::clean(&mut parts.headers, cx.generation.http.underscore_headers).is_err() {
        return Err((StatusCode::BAD_REQUEST, "bad request\n"));
    }
    let uri: Uri = format!("http://{addr}{path}")
        .parse()
        .map_err(|_| (StatusCode::BAD_REQUEST, "bad request target\n"))?;
    let authority = parts.uri.authority().map(|a| a.to_string());
    parts.uri = uri;
    parts.version = match cx.site.upstream.kind {
        Kind::H2c => Version::HTTP_2,
        _ => Version::HTTP_11,
    };
    let h = &mut parts.headers;
    if let Some(protocol) = upgrade {
        h.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
        h.insert(header::UPGRADE, protocol);
    }
    if !h.contains_key(header::HOST)
        && let Some(a) = authority
            .as_deref()
            .and_then(|a| HeaderValue::from_str(a).ok())
    {
        h.insert(header::HOST, a);
    }
    headers::write_ours(h, &cx.session);
    Ok(Request::from_parts(parts, body))
}

/// Sends the request to upstream `i` within the upstream timeout; a failure is the answer
/// the client gets, counted by kind (and a failed connect marks the upstream).
async fn send(cx: &Cx, i: usize, req: Request<Incoming>) -> Result<Response<Incoming>, Refusal> {
    let upstream = &cx.site.upstream;
    let client = upstream.client.as_ref().expect("an HTTP site has a client");
    let wait = Duration::from_secs_f64(cx.generation.limits.upstream_timeout);
    match tokio::time::timeout(wait, client.request(req)).await {
        Ok(Ok(r)) => {
            upstream.succeeded(i);
            Ok(r)
        }
        Ok(Err(e)) if crate::upstream::is_busy(&e) => {
            cx.shared.metrics.upstream_error("busy");
            Err((StatusCode::SERVICE_UNAVAILABLE, "busy\n"))
        }
        Ok(Err(e)) => {
            let kind = if e.is_connect() {
                upstream.failed(i);
                "connect"
            } else {
                "reset"
            };
            cx.shared.metrics.upstream_error(kind);
            Err((StatusCode::BAD_GATEWAY, "bad gateway\n"))
        }
        Err(_) => {
            cx.shared.metrics.upstream_error("timeout");
            Err((StatusCode::GATEWAY_TIMEOUT, "gateway timeout\n"))
        }
    }
}

/// A 101 from the upstream: both sides' connections joined in a relay task that holds the
/// upstream slot until either side closes, and the switch answered to the client.
fn relay_upgrade(
    cx: &Cx,
    mut resp: Response<Incoming>,
    client_side: hyper::upgrade::OnUpgrade,
    slot: Slot,
) -> Response<Body_> {
    let upstream_side = hyper::upgrade::on(&mut resp);
    let protocol = resp.headers().get(header::UPGRADE).cloned();
    let relay = tokio::spawn(async move {
        if let (Ok(c), Ok(u)) = (client_side.await, upstream_side.await) {
            let _ = tokio::io::copy_bidirectional(&mut TokioIo::new(c), &mut TokioIo::new(u)).await;
        }
        drop(slot);
    });
    cx.relays().push(relay);
    headers::strip_hop(resp.headers_mut());
    resp.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
    if let Some(p) = protocol {
        resp.headers_mut().insert(header::UPGRADE, p);
    }
    resp.map(|b| b.boxed())
}
