//! A TCP upstream: the decrypted bytes relayed both ways as they come.

use std::time::Instant;

use serde_json::json;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

use crate::site::{Generation, Site};
use crate::state::{Session, Shared};

/// Relays `client` to one of the site's upstreams until either side closes.
pub async fn relay<S>(
    shared: &Shared,
    generation: &Generation,
    site: &Site,
    mut client: S,
    session: &Session,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let start = Instant::now();
    let limits = &generation.limits;
    let log = |status: &str, up: &str, bytes: (u64, u64)| {
        shared.access(
            generation,
            json!({"client": session.client.to_string(), "protocol": session.protocol,
                   "suite": session.suite, "group": session.group, "sni": session.sni,
                   "status": status,
                   "upstream": up, "bytes_in": bytes.0, "bytes_out": bytes.1,
                   "handshake_ms": session.handshake.as_millis() as u64, "resumed": session.resumed,
                   "ms": start.elapsed().as_millis() as u64}),
        );
    };
    if !shared.allow(
        session.client.ip(),
        limits.requests_per_second,
        limits.burst,
    ) {
        return log("rate limited", "", (0, 0));
    }
    let Some(_slot) = site.upstream.connection_slot() else {
        shared.metrics.upstream_error("busy");
        return log("upstream busy", "", (0, 0));
    };
    let (i, addr) = site.upstream.pick();
    let up =
        match tokio::time::timeout(site.upstream.connect_timeout, TcpStream::connect(addr)).await {
            Ok(Ok(s)) => s,
            Ok(Err(_)) | Err(_) => {
                site.upstream.failed(i);
                shared.metrics.upstream_error("connect");
                return log("upstream down", addr, (0, 0));
            }
        };
    site.upstream.succeeded(i);
    let _ = up.set_nodelay(true);
    let mut up = up;
    match tokio::io::copy_bidirectional(&mut client, &mut up).await {
        Ok(bytes) => log("closed", addr, bytes),
        Err(e) => {
            shared.metrics.upstream_error("reset");
            log(&format!("reset: {e}"), addr, (0, 0))
        }
    }
}
