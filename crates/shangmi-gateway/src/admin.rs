//! The admin listener: `GET /metrics` (Prometheus text), `GET /healthz` (200, or 503 once
//! draining), `POST /reload` (200, or 500 with why the new configuration was refused).

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use crate::state::{Shared, event};

/// Serves the admin endpoints until draining starts.
pub async fn serve(shared: Arc<Shared>, listener: TcpListener) {
    let mut stop = shared.stopping();
    loop {
        let (tcp, _) = tokio::select! {
            r = listener.accept() => match r {
                Ok(v) => v,
                Err(e) => {
                    event("admin accept", &e.to_string());
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = stop.changed() => return,
        };
        let shared = shared.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                let shared = shared.clone();
                async move { Ok::<_, Infallible>(answer(&shared, &req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(tcp), service)
                .await;
        });
    }
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
            let mut r = reply(StatusCode::OK, shared.metrics.render());
            r.headers_mut().insert(
                hyper::header::CONTENT_TYPE,
                hyper::header::HeaderValue::from_static("text/plain; version=0.0.4"),
            );
            r
        }
        (&Method::GET, "/healthz") if shared.draining() => {
            reply(StatusCode::SERVICE_UNAVAILABLE, "draining\n".into())
        }
        (&Method::GET, "/healthz") => reply(StatusCode::OK, "ok\n".into()),
        (&Method::POST, "/reload") => {
            let s = shared.clone();
            // Reading certificates and keys blocks: off the runtime's workers.
            match tokio::task::spawn_blocking(move || s.reload()).await {
                Ok(Ok(())) => reply(StatusCode::OK, "reloaded\n".into()),
                Ok(Err(e)) => reply(StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")),
                Err(e) => reply(StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")),
            }
        }
        (_, "/metrics" | "/healthz" | "/reload") => reply(
            StatusCode::METHOD_NOT_ALLOWED,
            "method not allowed\n".into(),
        ),
        _ => reply(StatusCode::NOT_FOUND, "not found\n".into()),
    }
}
