//! The access log of the proxy: what one request's line needs, and the response body that counts
//! what it passes and writes the line when the body ends (or the client goes away).

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::{Request, Response};
use serde_json::json;

use super::{Body_, Cx};
use crate::upstream::Slot;

impl Log {
    pub(super) fn new(req: &Request<Incoming>, cx: &Arc<Cx>) -> Log {
        Log {
            cx: cx.clone(),
            start: Instant::now(),
            method: req.method().to_string(),
            version: format!("{:?}", req.version()),
            path: req
                .uri()
                .path_and_query()
                .map_or("/".to_string(), |p| p.as_str().to_string()),
        }
    }
}

/// What the access log line of one request needs, written when its body has gone out.
pub(super) struct Log {
    cx: Arc<Cx>,
    start: Instant,
    method: String,
    version: String,
    pub(super) path: String,
}

impl Log {
    /// The response, counted, logged when its body ends; `slot` held until then.
    pub(super) fn done(
        self,
        resp: Response<Body_>,
        upstream: &str,
        slot: Option<Slot>,
    ) -> Response<Body_> {
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
                _slot: slot,
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
    _slot: Option<Slot>,
}

impl Counted {
    fn write_log(&mut self, complete: bool) {
        let Some((log, status, upstream)) = self.log.take() else {
            return;
        };
        let s = &log.cx.session;
        let subject = s.client_identity.as_ref().map(|c| c.subject.as_str());
        log.cx.shared.access(
            &log.cx.generation,
            json!({"client": s.client.to_string(), "protocol": s.protocol, "suite": s.suite,
                   "group": s.group, "sni": s.sni, "client_subject": subject,
                   "method": log.method, "http": log.version,
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
