//! The admin listener: `GET /metrics` (Prometheus text), `GET /healthz` (200; 503 while
//! draining or when a listener has stopped accepting), `POST /reload` (200, or 500 naming the
//! line of the problem, never a file's path).
//!
//! Nobody else drives it: it listens on loopback unless a token is set, `POST /reload` needs
//! `Authorization: Bearer TOKEN` (compared in constant time; without a token configured,
//! reloads are by SIGHUP only), a request head must arrive within [`HEADER_TIMEOUT`], a
//! connection lasts [`CONNECTION_TIMEOUT`] at most, and [`MAX_CONNECTIONS`] are served at once
//! (more are closed on arrival). Reloads run one at a time.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use subtle::ConstantTimeEq;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use crate::state::{Shared, event};

/// Admin connections served at once.
pub const MAX_CONNECTIONS: usize = 16;
/// How long a request head may take.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(5);
/// How long an admin connection may last.
pub const CONNECTION_TIMEOUT: Duration = Duration::from_secs(30);

/// Serves the admin endpoints until draining starts.
pub async fn serve(shared: Arc<Shared>, listener: TcpListener) {
    let mut stop = shared.stopping();
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let (tcp, _) = tokio::select! {
            r = listener.accept() => match r {
                Ok(v) => v,
                Err(e) => {
                    event("admin accept", &e.to_string());
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = stop.changed() => return,
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            continue; // dropped: closed on arrival
        };
        let shared = shared.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                let shared = shared.clone();
                async move { Ok::<_, Infallible>(answer(&shared, &req).await) }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(tcp), service);
            let _ = tokio::time::timeout(CONNECTION_TIMEOUT, conn).await;
            drop(slot);
        });
    }
}

/// Whether `req` carries the admin token.
fn authorized(shared: &Shared, req: &Request<hyper::body::Incoming>) -> Option<bool> {
    let (generation, _) = shared.current();
    let token = generation.admin.as_ref()?.token.as_ref()?;
    let given = req
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    Some(bool::from(given.as_bytes().ct_eq(token.as_bytes())))
}

async fn answer(
    shared: &Arc<Shared>,
    req: &Request<hyper::body::Incoming>,
) -> Response<Full<Bytes>> {
    let reply = |status: StatusCode, body: String| {
        let mut r = Response::new(Full::new(Bytes::from(body)));
        *r.status_mut() = status;
        r
    };
    match (req.method(), req.uri().path()) {
        (&Method::GET, "/metrics") => {
            let gauges = [
                (
                    "shangmi_gateway_response_bytes_held",
                    "Response bytes produced by upstreams and not yet taken by clients.",
                    shared.budget.used() as u64,
                ),
                (
                    "shangmi_gateway_connections_open",
                    "Connections admitted and not yet closed.",
                    shared.admission.open() as u64,
                ),
            ];
            let mut r = reply(StatusCode::OK, shared.metrics.render(&gauges));
            r.headers_mut().insert(
                hyper::header::CONTENT_TYPE,
                hyper::header::HeaderValue::from_static("text/plain; version=0.0.4"),
            );
            r
        }
        (&Method::GET, "/healthz") if shared.draining() => {
            reply(StatusCode::SERVICE_UNAVAILABLE, "draining\n".into())
        }
        (&Method::GET, "/healthz") => match shared.dead_listeners().first() {
            Some(i) => reply(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("listener {i} is not accepting\n"),
            ),
            None => reply(StatusCode::OK, "ok\n".into()),
        },
        (&Method::POST, "/reload") => match authorized(shared, req) {
            None => reply(
                StatusCode::FORBIDDEN,
                "reload by SIGHUP: no [admin] token_file is set\n".into(),
            ),
            Some(false) => reply(StatusCode::UNAUTHORIZED, "unauthorized\n".into()),
            Some(true) => {
                let s = shared.clone();
                // Reading certificates and keys blocks: off the runtime's workers.
                match tokio::task::spawn_blocking(move || s.reload()).await {
                    Ok(Ok(())) => reply(StatusCode::OK, "reloaded\n".into()),
                    Ok(Err(e)) => reply(StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")),
                    Err(_) => reply(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "the reload did not finish\n".into(),
                    ),
                }
            }
        },
        (_, "/metrics" | "/healthz" | "/reload") => reply(
            StatusCode::METHOD_NOT_ALLOWED,
            "method not allowed\n".into(),
        ),
        _ => reply(StatusCode::NOT_FOUND, "not found\n".into()),
    }
}
