//! Accepting connections and taking each through its protocol: the first flight read and
//! decided on (`detect`), the site chosen by its server name, the handshake run under the
//! handshake deadline, then HTTP or a TCP relay until the client, the idle timeout or a drain
//! ends it. The one place connections are limited, timed out and logged.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::timeout_at;

use crate::detect::{Detected, Hello, MAX_FIRST_FLIGHT, Protocol, detect};
use crate::io::{Activity, ClientIo, Quiet};
use crate::site::{Generation, Site};
use crate::state::{Session, Shared, event};
use crate::upstream::Kind;
use crate::{local, proxy, relay};

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

/// Gives the slot back when the connection ends, however it ends.
struct Slot<'a>(&'a Shared);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.metrics.active.fetch_sub(1, Ordering::Relaxed);
    }
}

async fn connection(shared: Arc<Shared>, index: usize, tcp: TcpStream, peer: SocketAddr) {
    let generation = shared.current();
    let limits = &generation.limits;
    let active = shared.metrics.active.fetch_add(1, Ordering::Relaxed) + 1;
    let _slot = Slot(&shared);
    if active > limits.max_connections as i64 {
        shared.metrics.refused.fetch_add(1, Ordering::Relaxed);
        shared.access(
            &generation,
            json!({"client": peer.to_string(), "event": "refused",
                   "reason": format!("{} connections open", limits.max_connections)}),
        );
        return;
    }
    shared.metrics.accepted.fetch_add(1, Ordering::Relaxed);
    let _ = tcp.set_nodelay(true);
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(limits.handshake_timeout);
    let listener = &generation.listeners[index];

    let failed = |reason: &'static str, protocol: &str, detail: String| {
        shared.metrics.failure(reason);
        shared.access(
            &generation,
            json!({"client": peer.to_string(), "event": "handshake failed", "reason": reason,
                   "protocol": protocol, "detail": detail,
                   "ms": start.elapsed().as_millis() as u64}),
        );
    };

    let mut tcp = tcp;
    let gatherer = if limits.key_agreements.gathered() {
        shared.gatherer()
    } else {
        None
    };
    let arriving = gatherer.map(|g| g.arriving());
    let first = timeout_at(deadline.into(), first_flight(&mut tcp)).await;
    drop(arriving);
    let (hello, head) = match first {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => return failed("first flight", "", e),
        Err(_) => return failed("timeout", "", "no complete ClientHello in time".into()),
    };
    let site = listener.site(hello.server_name.as_deref());
    let Some(protocol) = hello.choose(
        site.tlcp.is_some(),
        site.sm2.is_some(),
        site.international.is_some(),
    ) else {
        return failed(
            "no protocol",
            "",
            "the site serves nothing this client offers".into(),
        );
    };
    let activity = Activity::new();
    let io = ClientIo::new(head, tcp, activity.clone());
    let name = match protocol {
        Protocol::Tlcp => "TLCP",
        Protocol::Rfc8998 => "RFC 8998",
        Protocol::International => "TLS",
    };
    match protocol {
        Protocol::Tlcp => {
            let config = site.tlcp.clone().expect("chosen because present");
            let mut s = crate::tlcp_io::TlcpStream::server(config, io);
            let agreed = match timeout_at(deadline.into(), s.handshake()).await {
                Ok(Ok(a)) => a,
                Ok(Err(e)) => {
                    shared.metrics.handshake("TLCP", "", "", "failed");
                    return failed("handshake", name, e.to_string());
                }
                Err(_) => {
                    shared.metrics.handshake("TLCP", "", "", "timeout");
                    return failed("timeout", name, "handshake not completed in time".into());
                }
            };
            let session = Session {
                client: peer,
                protocol: "TLCP",
                suite: agreed.suite.name().to_string(),
                group: None,
                sni: hello.server_name.clone(),
                client_subject: agreed.peer_certificates.first().and_then(|c| subject(c)),
                handshake: start.elapsed(),
                resumed: agreed.resumed,
            };
            finish(&shared, &generation, site, s, session, activity).await;
        }
        Protocol::Rfc8998 | Protocol::International => {
            let config = match protocol {
                Protocol::Rfc8998 => site.sm2.clone(),
                _ => site.international.clone(),
            }
            .expect("chosen because present");
            let gather = match protocol {
                Protocol::Rfc8998 if gatherer.is_some() => {
                    let groups: Vec<u16> = config
                        .crypto_provider()
                        .kx_groups
                        .iter()
                        .map(|g| u16::from(g.name()))
                        .collect();
                    gatherer.zip(hello.sm2_point(&groups))
                }
                _ => None,
            };
            let acceptor = tokio_rustls::TlsAcceptor::from(config);
            let handshake = async {
                let mut prepared = match gather {
                    Some((g, share)) => g.agree(share).await,
                    None => None,
                };
                let mut accept = acceptor.accept(io);
                let done = std::future::poll_fn(|cx| {
                    shangmi_rustls::with_prepared(&mut prepared, || {
                        std::pin::Pin::new(&mut accept).poll(cx)
                    })
                })
                .await;
                if prepared.is_some() {
                    // Not used: a hello retry (computed twice), or the handshake failed first.
                    shared
                        .metrics
                        .gathering
                        .unused
                        .fetch_add(1, Ordering::Relaxed);
                }
                done
            };
            let tls = match timeout_at(deadline.into(), handshake).await {
                Ok(Ok(t)) => t,
                Ok(Err(e)) => {
                    shared.metrics.handshake(name, "", "", "failed");
                    return failed("handshake", name, e.to_string());
                }
                Err(_) => {
                    shared.metrics.handshake(name, "", "", "timeout");
                    return failed("timeout", name, "handshake not completed in time".into());
                }
            };
            let conn = tls.get_ref().1;
            let session = Session {
                client: peer,
                protocol: match conn.protocol_version() {
                    Some(rustls::ProtocolVersion::TLSv1_2) => "TLSv1.2",
                    _ => "TLSv1.3",
                },
                suite: conn
                    .negotiated_cipher_suite()
                    .map(|s| suite_name(s.suite()))
                    .unwrap_or_default(),
                group: conn
                    .negotiated_key_exchange_group()
                    .map(|g| group_name(g.name())),
                sni: hello.server_name.clone(),
                client_subject: conn
                    .peer_certificates()
                    .and_then(|c| c.first())
                    .and_then(|c| subject(c.as_ref())),
                handshake: start.elapsed(),
                resumed: conn.handshake_kind() == Some(rustls::HandshakeKind::Resumed),
            };
            finish(&shared, &generation, site, tls, session, activity).await;
        }
    }
}

/// Reads until `detect` decides; what it found and every byte read.
async fn first_flight(tcp: &mut TcpStream) -> Result<(Hello, Vec<u8>), String> {
    let mut buf = Vec::with_capacity(1024);
    loop {
        match detect(&buf) {
            Detected::Hello(h) => return Ok((h, buf)),
            Detected::Invalid(why) => return Err(why.to_string()),
            Detected::NeedMore(n) => {
                // Memory grows with what arrives, not with what a header declares: a client
                // that announces 16 KiB and sends a byte holds 4 KiB at most.
                let want = n.min(MAX_FIRST_FLIGHT).max(buf.len() + 1);
                buf.reserve((want - buf.len()).min(4096));
                let got = tcp.read_buf(&mut buf).await.map_err(|e| e.to_string())?;
                if got == 0 {
                    return Err(format!("closed after {} bytes", buf.len()));
                }
            }
        }
    }
}

/// After the handshake: the upstream, until the client, the idle timeout or a drain ends it.
async fn finish<S>(
    shared: &Arc<Shared>,
    generation: &Arc<Generation>,
    site: &Arc<Site>,
    stream: S,
    session: Session,
    activity: Activity,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
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
    let work = async {
        match &site.upstream.kind {
            Kind::Tcp => relay::relay(shared, generation, site, stream, &session).await,
            Kind::Http | Kind::H2c => {
                let s = session.clone();
                proxy::serve(shared.clone(), generation.clone(), site.clone(), stream, s).await
            }
            Kind::Echo => local::echo(shared, generation, stream, &session).await,
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

/// The standard name of a key exchange group.
fn group_name(g: rustls::NamedGroup) -> String {
    match u16::from(g) {
        0x0029 => "curveSM2".into(),
        0x11EE => "curveSM2MLKEM768".into(),
        _ => g.as_str().map_or_else(|| format!("{g:?}"), str::to_string),
    }
}

/// The standard name of a TLS suite (`TLS_AES_128_GCM_SHA256`, `TLS_SM4_GCM_SM3`).
fn suite_name(s: rustls::CipherSuite) -> String {
    match u16::from(s) {
        0x00C6 => "TLS_SM4_GCM_SM3".into(),
        0x00C7 => "TLS_SM4_CCM_SM3".into(),
        _ => {
            let n = s.as_str().map_or_else(|| format!("{s:?}"), str::to_string);
            match n.strip_prefix("TLS13_") {
                Some(rest) => format!("TLS_{rest}"),
                None => n,
            }
        }
    }
}

/// A certificate's subject in RFC 4514 form.
fn subject(der: &[u8]) -> Option<String> {
    let c = <shangmi_pki::Certificate as der::Decode>::from_der(der).ok()?;
    Some(c.tbs_certificate().subject().to_string())
}
