//! An HTTP upstream: HTTP/1.1 or HTTP/2 from the client (HTTP/2 by ALPN or its preface),
//! HTTP/1.1 or h2c to the upstream, bodies streamed both ways. The upstream learns who the
//! client is and how it connected from headers the gateway alone sets: a client's own
//! `X-Forwarded-*` and `X-SM-*` headers are dropped.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::{Request, Response, StatusCode, Uri, Version};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use serde_json::json;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::site::{Generation, Site};
use crate::state::{Session, Shared};
use crate::upstream::Kind;

type Body_ = BoxBody<Bytes, hyper::Error>;

/// Headers the gateway sets: never passed on from the client.
const OURS: [&str; 5] = [
    "x-forwarded-for",
    "x-forwarded-proto",
    "x-forwarded-host",
    "x-sm-protocol",
    "x-sm-client-subject",
];

/// Connection-level headers: meaningful on one hop only (RFC 9110 section 7.6.1).
const HOP: [HeaderName; 8] = [
    header::CONNECTION,
    HeaderName::from_static("keep-alive"),
    HeaderName::from_static("proxy-connection"),
    header::PROXY_AUTHENTICATE,
    header::PROXY_AUTHORIZATION,
    header::TE,
    header::TRAILER,
    header::TRANSFER_ENCODING,
];

struct Cx {
    shared: Arc<Shared>,
    generation: Arc<Generation>,
    site: Arc<Site>,
    session: Arc<Session>,
    /// Upgraded exchanges (WebSocket, say) relaying on their own tasks: the connection lasts
    /// until they end, and they end with it (idle timeout, drain's end).
    upgraded: std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

/// Aborts the upgraded relays when the connection is dropped before they end.
struct Relays(Arc<Cx>);

impl Drop for Relays {
    fn drop(&mut self) {
        for h in self
            .0
            .upgraded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            h.abort();
        }
    }
}

/// Serves HTTP on `stream` until the client closes or a drain has let in-flight requests end.
pub async fn serve<S>(
    shared: Arc<Shared>,
    generation: Arc<Generation>,
    site: Arc<Site>,
    stream: S,
    session: Arc<Session>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let limits = generation.limits.clone();
    let mut stop = shared.stopping();
    let cx = Arc::new(Cx {
        shared,
        generation,
        site,
        session,
        upgraded: std::sync::Mutex::new(Vec::new()),
    });
    let relays = Relays(cx.clone());
    let service = hyper::service::service_fn(move |req| {
        let cx = cx.clone();
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
        .max_concurrent_streams(128);
    let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
    tokio::pin!(conn);
    if *stop.borrow() {
        conn.as_mut().graceful_shutdown();
    }
    loop {
        tokio::select! {
            _ = conn.as_mut() => break,
            r = stop.changed() => {
                conn.as_mut().graceful_shutdown();
                if r.is_err() {
                    let _ = conn.as_mut().await;
                    break;
                }
            }
        }
    }
    let handles: Vec<_> =
        std::mem::take(&mut *relays.0.upgraded.lock().unwrap_or_else(|p| p.into_inner()));
    for h in handles {
        let _ = h.await;
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

/// A header value from any text: bytes outside visible ASCII written as `\xNN`.
fn header_value(s: &str) -> HeaderValue {
    HeaderValue::from_str(s).unwrap_or_else(|_| {
        let escaped: String = s
            .bytes()
            .map(|b| {
                if (0x20..0x7f).contains(&b) && b != b'\\' {
                    (b as char).to_string()
                } else {
                    format!("\\x{b:02x}")
                }
            })
            .collect();
        HeaderValue::from_str(&escaped).unwrap_or(HeaderValue::from_static("-"))
    })
}

/// Whether an HTTP/1.1 request asks to switch protocols (WebSocket, say): `Connection:
/// upgrade` and an `Upgrade` header.
fn wants_upgrade(req: &Request<Incoming>) -> bool {
    req.version() == Version::HTTP_11
        && req.headers().contains_key(header::UPGRADE)
        && req
            .headers()
            .get_all(header::CONNECTION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case("upgrade"))
}

fn strip_hop(headers: &mut HeaderMap) {
    // Names listed in Connection are hop-by-hop too.
    let listed: Vec<HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|n| HeaderName::from_bytes(n.trim().as_bytes()).ok())
        .collect();
    for n in listed.iter().chain(HOP.iter()) {
        headers.remove(n);
    }
    headers.remove(header::UPGRADE);
}

async fn handle(mut req: Request<Incoming>, cx: Arc<Cx>) -> Response<Body_> {
    let start = Instant::now();
    let limits = &cx.generation.limits;
    let s = &cx.session;
    let method = req.method().to_string();
    let version = format!("{:?}", req.version());
    let path = req
        .uri()
        .path_and_query()
        .map_or("/".to_string(), |p| p.as_str().to_string());
    let log = Log {
        cx: cx.clone(),
        start,
        method,
        version,
        path,
    };
    if !cx
        .shared
        .allow(s.client.ip(), limits.requests_per_second, limits.burst)
    {
        return log.done(
            text(StatusCode::TOO_MANY_REQUESTS, "too many requests\n"),
            "",
        );
    }
    let upstream = &cx.site.upstream;
    let (i, addr) = upstream.pick();
    // An upgrade goes through only to an HTTP/1.1 upstream; the client's side of it is taken
    // before the request is passed on.
    let upgrade = (wants_upgrade(&req) && upstream.kind == Kind::Http).then(|| {
        let protocol = req.headers().get(header::UPGRADE).cloned();
        (hyper::upgrade::on(&mut req), protocol)
    });
    let (mut parts, body) = req.into_parts();
    let authority = parts.uri.authority().map(|a| a.to_string());
    let uri: Uri = match format!("http://{addr}{}", log.path).parse() {
        Ok(u) => u,
        Err(_) => return log.done(text(StatusCode::BAD_REQUEST, "bad request target\n"), ""),
    };
    parts.uri = uri;
    parts.version = match upstream.kind {
        Kind::H2c => Version::HTTP_2,
        _ => Version::HTTP_11,
    };
    let h = &mut parts.headers;
    strip_hop(h);
    for n in OURS {
        h.remove(n);
    }
    if let Some((_, Some(protocol))) = &upgrade {
        h.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
        h.insert(header::UPGRADE, protocol.clone());
    }
    if !h.contains_key(header::HOST)
        && let Some(a) = authority
            .as_deref()
            .and_then(|a| HeaderValue::from_str(a).ok())
    {
        h.insert(header::HOST, a);
    }
    h.insert("x-forwarded-for", header_value(&s.client.ip().to_string()));
    h.insert("x-forwarded-proto", HeaderValue::from_static("https"));
    h.insert("x-sm-protocol", header_value(&s.header()));
    if let Some(subject) = &s.client_subject {
        h.insert("x-sm-client-subject", header_value(subject));
    }
    let client = upstream.client.as_ref().expect("an HTTP site has a client");
    let wait = Duration::from_secs_f64(limits.upstream_timeout);
    let sent = tokio::time::timeout(wait, client.request(Request::from_parts(parts, body))).await;
    let mut resp = match sent {
        Ok(Ok(r)) => {
            upstream.succeeded(i);
            r
        }
        Ok(Err(e)) => {
            let kind = if e.is_connect() {
                upstream.failed(i);
                "connect"
            } else {
                "reset"
            };
            cx.shared.metrics.upstream_error(kind);
            return log.done(text(StatusCode::BAD_GATEWAY, "bad gateway\n"), addr);
        }
        Err(_) => {
            cx.shared.metrics.upstream_error("timeout");
            return log.done(text(StatusCode::GATEWAY_TIMEOUT, "gateway timeout\n"), addr);
        }
    };
    if resp.status() == StatusCode::SWITCHING_PROTOCOLS {
        let Some((client_side, _)) = upgrade else {
            // A switch nobody asked for cannot be relayed.
            cx.shared.metrics.upstream_error("unasked upgrade");
            return log.done(text(StatusCode::BAD_GATEWAY, "bad gateway\n"), addr);
        };
        let upstream_side = hyper::upgrade::on(&mut resp);
        let protocol = resp.headers().get(header::UPGRADE).cloned();
        let relay = tokio::spawn(async move {
            if let (Ok(c), Ok(u)) = (client_side.await, upstream_side.await) {
                let _ =
                    tokio::io::copy_bidirectional(&mut TokioIo::new(c), &mut TokioIo::new(u)).await;
            }
        });
        cx.upgraded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(relay);
        strip_hop(resp.headers_mut());
        resp.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
        if let Some(p) = protocol {
            resp.headers_mut().insert(header::UPGRADE, p);
        }
        let addr = addr.to_string();
        return log.done(resp.map(|b| b.boxed()), &addr);
    }
    strip_hop(resp.headers_mut());
    let addr = addr.to_string();
    let resp = resp.map(|b| b.boxed());
    log.done(resp, &addr)
}

/// What the access log line of one request needs, written when its body has gone out.
struct Log {
    cx: Arc<Cx>,
    start: Instant,
    method: String,
    version: String,
    path: String,
}

impl Log {
    fn done(self, resp: Response<Body_>, upstream: &str) -> Response<Body_> {
        let status = resp.status().as_u16();
        self.cx
            .shared
            .metrics
            .request(self.cx.session.protocol, status);
        self.cx
            .shared
            .metrics
            .request_seconds
            .observe(self.start.elapsed());
        let upstream = upstream.to_string();
        resp.map(|inner| {
            Counted {
                inner,
                bytes: 0,
                log: Some((self, status, upstream)),
            }
            .boxed()
        })
    }
}

/// A response body that counts what it passes and logs the request when it ends.
struct Counted {
    inner: Body_,
    bytes: u64,
    log: Option<(Log, u16, String)>,
}

impl Counted {
    fn write_log(&mut self, complete: bool) {
        let Some((log, status, upstream)) = self.log.take() else {
            return;
        };
        let s = &log.cx.session;
        log.cx.shared.access(
            &log.cx.generation,
            json!({"client": s.client.to_string(), "protocol": s.protocol, "suite": s.suite,
                   "group": s.group,
                   "sni": s.sni, "client_subject": s.client_subject, "method": log.method, "http": log.version,
                   "path": log.path, "status": status, "bytes": self.bytes,
                   "complete": complete, "upstream": upstream,
                   "handshake_ms": s.handshake.as_millis() as u64, "resumed": s.resumed,
                   "ms": log.start.elapsed().as_millis() as u64}),
        );
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        let complete = self.inner.is_end_stream();
        self.write_log(complete);
    }
}

impl Body for Counted {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let r = Pin::new(&mut self.inner).poll_frame(cx);
        match &r {
            Poll::Ready(Some(Ok(f))) => {
                if let Some(d) = f.data_ref() {
                    self.bytes += d.len() as u64;
                }
            }
            Poll::Ready(None) => self.write_log(true),
            Poll::Ready(Some(Err(_))) => self.write_log(false),
            Poll::Pending => {}
        }
        r
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
