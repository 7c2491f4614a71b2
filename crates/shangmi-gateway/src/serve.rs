//! Accepting connections and taking each through its life: admitted ([`crate::admission`]),
//! its first flight and handshake run under the handshake deadline ([`crate::handshake`]),
//! then HTTP or a TCP relay until the client, the idle timeout, a drain or its retirement (a
//! reload, its age) ends it. The one place connections are counted, timed out and logged.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::net::{TcpListener, TcpStream};

use crate::handshake::{self, ClientStream, Failure, Negotiated};
use crate::identity::ClientIdentity;
use crate::io::{Activity, Quiet};
use crate::site::{Generation, Site};
use crate::state::{Retire, Session, Shared, event};
use crate::upstream::Kind;
use crate::{budget, local, proxy, relay};

/// Accepts on `listener` (the `index`th of the configuration) until draining starts.
pub async fn accept_loop(shared: Arc<Shared>, index: usize, listener: TcpListener) {
    let mut stop = shared.stopping();
    loop {
        tokio::select! {
            r = listener.accept() => match r {
                Ok((tcp, peer)) => {
                    tokio::spawn(connection(shared.clone(), index, tcp, peer));
                }
                Err(e) => {
                    // Out of descriptors, mostly: wait rather than spin.
                    event("accept", &e.to_string());
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            _ = stop.changed() => return,
        }
    }
}

/// Counts the connection as open while it lives.
struct Open<'a>(&'a Shared);

impl Drop for Open<'_> {
    fn drop(&mut self) {
        self.0.metrics.active.fetch_sub(1, Ordering::Relaxed);
    }
}

async fn connection(shared: Arc<Shared>, index: usize, tcp: TcpStream, peer: SocketAddr) {
    let (generation, seq) = shared.current();
    let limits = &generation.limits;
    let mut admitted = match shared.admission.admit(peer.ip(), limits) {
        Ok(a) => a,
        Err(why) => {
            shared.metrics.refusal(why.reason());
            shared.failure_line(
                &generation,
                peer.ip(),
                json!({"client": peer.to_string(), "event": "refused", "reason": why.reason()}),
            );
            return;
        }
    };
    shared.metrics.active.fetch_add(1, Ordering::Relaxed);
    let _open = Open(&shared);
    shared.metrics.accepted.fetch_add(1, Ordering::Relaxed);
    let _ = tcp.set_nodelay(true);
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(limits.handshake_timeout);
    let activity = Activity::new();
    let listener = &generation.listeners[index];
    let gather = limits.key_agreements.gathered();
    let shed = admitted.shed.clone();
    let done = tokio::select! {
        r = handshake::run(&shared, listener, tcp, deadline, gather, activity.clone()) => r,
        _ = shed.notified() => Err(Failure {
            reason: "shed",
            protocol: "",
            detail: "closed before its handshake ended to make room (max_connections)".into(),
        }),
    };
    match done {
        Ok((stream, site, negotiated)) => {
            admitted.established();
            let session = session(peer, negotiated, start.elapsed());
            let born = (seq, start);
            let conn = Conn {
                generation: &generation,
                index,
                site: &site,
                born,
            };
            finish(&shared, conn, stream, session, activity).await;
        }
        Err(f) => {
            shared.metrics.failure(f.reason);
            shared.failure_line(
                &generation,
                peer.ip(),
                json!({"client": peer.to_string(), "event": "handshake failed", "reason": f.reason,
                       "protocol": f.protocol, "detail": f.detail,
                       "ms": start.elapsed().as_millis() as u64}),
            );
        }
    }
}

fn session(client: SocketAddr, n: Negotiated, handshake: Duration) -> Session {
    Session {
        client,
        protocol: n.protocol,
        suite: n.suite,
        group: n.group,
        sni: n.sni,
        client_identity: n.client_certificate.as_deref().and_then(ClientIdentity::of),
        handshake,
        resumed: n.resumed,
    }
}

/// Where a connection belongs: its configuration, listener and site, and its birth (the
/// configuration's number and the time).
struct Conn<'a> {
    generation: &'a Arc<Generation>,
    index: usize,
    site: &'a Arc<Site>,
    born: (u64, Instant),
}

/// After the handshake: the upstream, until the client, the idle timeout, a drain or the
/// connection's retirement ends it.
async fn finish(
    shared: &Arc<Shared>,
    conn: Conn<'_>,
    stream: ClientStream,
    session: Session,
    activity: Activity,
) {
    let Conn {
        generation,
        index,
        site,
        born: (seq, born),
    } = conn;
    let kind = if session.resumed { "resumed" } else { "full" };
    shared
        .metrics
        .handshake(session.protocol, &session.suite, kind, "ok");
    shared.metrics.handshake_seconds.observe(session.handshake);
    let session = Arc::new(session);
    let limits = &generation.limits;
    let quiet = activity.quiet(
        Duration::from_secs_f64(limits.idle_timeout),
        Duration::from_secs_f64(limits.write_timeout),
    );
    let retire = shared.retire(seq, born, limits);
    let work = async {
        match &site.upstream.kind {
            Kind::Tcp => {
                tokio::select! {
                    _ = relay::relay(shared, generation, site, stream, &session) => {}
                    why = retire => retired(shared, why),
                }
            }
            Kind::Http | Kind::H2c => {
                let budget = budget::Connection::new(limits.response_buffer, shared.budget.clone());
                let stream = budget::Metered::new(stream, budget.clone());
                let cx = proxy::Cx::new(shared, generation, index, site, session.clone(), budget);
                proxy::serve(cx, stream, retire).await
            }
            Kind::Echo => {
                tokio::select! {
                    _ = local::echo(shared, generation, stream, &session) => {}
                    why = retire => retired(shared, why),
                }
            }
            Kind::Respond(text) => local::respond(shared, generation, stream, &session, text).await,
        }
    };
    tokio::select! {
        _ = work => {}
        // An idle keep-alive connection closing is routine; a client that stopped reading
        // what it asked for is not, and is counted and logged.
        why = quiet => if why == Quiet::Unread {
            shared.metrics.failure("unread");
            shared.access(
                generation,
                json!({"client": session.client.to_string(), "event": "closed",
                       "reason": "unread", "detail": "the client read nothing for the write timeout"}),
            );
        }
    }
}

/// Counts a connection closed because it was retired.
pub(crate) fn retired(shared: &Shared, why: Retire) {
    shared.metrics.retired(why.reason());
}
