//! From a connection's first flight to a stream of application data: the site chosen by the
//! server name, the protocol by what the client offers and the site serves, then one function
//! per protocol. Each returns the stream and what was negotiated, or one [`Failure`], so the
//! connection reads the same whatever the protocol (as pingora's streams answer one digest).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::Instant;

use shangmi_tlcp::AsyncStream;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::timeout_at;

use crate::detect::{Detected, Detector, Hello, MAX_FIRST_FLIGHT, Protocol};
use crate::io::{Activity, ClientIo};
use crate::site::{Listener, Site};
use crate::state::Shared;

/// Why a connection ended before it carried data.
pub struct Failure {
    /// The metric's and the log's reason: "first flight", "timeout", "no protocol",
    /// "handshake".
    pub reason: &'static str,
    /// The protocol chosen, when one was ("TLCP", "RFC 8998", "TLS").
    pub protocol: &'static str,
    /// What happened.
    pub detail: String,
}

impl Failure {
    fn new(reason: &'static str, protocol: &'static str, detail: impl Into<String>) -> Failure {
        Failure {
            reason,
            protocol,
            detail: detail.into(),
        }
    }
}

/// What a handshake agreed, read the same way from TLCP and rustls.
pub struct Negotiated {
    /// "TLCP", "TLSv1.3" or "TLSv1.2".
    pub protocol: &'static str,
    /// The suite's standard name.
    pub suite: String,
    /// The key exchange group (none for TLCP).
    pub group: Option<String>,
    /// Whether a session was resumed.
    pub resumed: bool,
    /// The client's certificate as its handshake verified it (TLCP: the signing
    /// certificate); on resumption, the one the session was made with.
    pub client_certificate: Option<Vec<u8>>,
    /// The server name the client asked for.
    pub sni: Option<String>,
}

/// A client's stream after its handshake, whichever the protocol.
pub enum ClientStream {
    /// TLCP.
    Tlcp(Box<AsyncStream<ClientIo>>),
    /// RFC 8998 or international TLS.
    Tls(Box<tokio_rustls::server::TlsStream<ClientIo>>),
}

/// The name a protocol is logged and counted under.
fn name(p: Protocol) -> &'static str {
    match p {
        Protocol::Tlcp => "TLCP",
        Protocol::Rfc8998 => "RFC 8998",
        Protocol::International => "TLS",
    }
}

/// The first flight read and decided on, the site and protocol chosen, the handshake run,
/// all by `deadline`.
pub async fn run(
    shared: &Shared,
    listener: &Listener,
    mut tcp: TcpStream,
    deadline: Instant,
    gather: bool,
    activity: Activity,
) -> Result<(ClientStream, Arc<Site>, Negotiated), Failure> {
    let gatherer = if gather { shared.gatherer() } else { None };
    let arriving = gatherer.map(|g| g.arriving());
    let first = timeout_at(deadline.into(), first_flight(&mut tcp)).await;
    drop(arriving);
    let (hello, head) = match first {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => return Err(Failure::new("first flight", "", e)),
        Err(_) => {
            return Err(Failure::new(
                "timeout",
                "",
                "no complete ClientHello in time",
            ));
        }
    };
    let site = listener.site(hello.server_name.as_deref()).clone();
    let protocol = hello
        .choose(
            site.tlcp.is_some(),
            site.sm2.is_some(),
            site.international.is_some(),
        )
        .ok_or_else(|| {
            Failure::new(
                "no protocol",
                "",
                "the site serves nothing this client offers",
            )
        })?;
    let io = ClientIo::new(head, tcp, activity);
    let handshake = async {
        match protocol {
            Protocol::Tlcp => tlcp(&site, io).await,
            Protocol::Rfc8998 => {
                let config = site.sm2.clone().expect("chosen because present");
                let share = gatherer.zip(sm2_share(&config, &hello));
                tls(shared, config, io, share).await
            }
            Protocol::International => {
                let intl = site.international.as_ref().expect("chosen because present");
                tls(shared, intl.for_hello(hello.tls13).clone(), io, None).await
            }
        }
    };
    let what = name(protocol);
    match timeout_at(deadline.into(), handshake).await {
        Ok(Ok((stream, mut n))) => {
            n.sni = hello.server_name;
            Ok((stream, site, n))
        }
        Ok(Err(detail)) => {
            shared.metrics.handshake(what, "", "", "failed");
            Err(Failure::new("handshake", what, detail))
        }
        Err(_) => {
            shared.metrics.handshake(what, "", "", "timeout");
            Err(Failure::new(
                "timeout",
                what,
                "handshake not completed in time",
            ))
        }
    }
}

/// The ClientHello's SM2 point for the gatherer, when rustls will agree with it.
fn sm2_share<'h>(config: &rustls::ServerConfig, hello: &'h Hello) -> Option<&'h [u8]> {
    let groups: Vec<u16> = config
        .crypto_provider()
        .kx_groups
        .iter()
        .map(|g| u16::from(g.name()))
        .collect();
    hello.sm2_point(&groups)
}

async fn tlcp(site: &Site, io: ClientIo) -> Result<(ClientStream, Negotiated), String> {
    let config = site.tlcp.clone().expect("chosen because present");
    let mut s = AsyncStream::server(config, io);
    let agreed = s.handshake().await.map_err(|e| e.to_string())?;
    let n = Negotiated {
        protocol: "TLCP",
        suite: agreed.suite.name().to_string(),
        group: None,
        resumed: agreed.resumed,
        client_certificate: agreed.peer_certificates.into_iter().next(),
        sni: None,
    };
    Ok((ClientStream::Tlcp(Box::new(s)), n))
}

async fn tls(
    shared: &Shared,
    config: Arc<rustls::ServerConfig>,
    io: ClientIo,
    share: Option<(&crate::gather::Gatherer, &[u8])>,
) -> Result<(ClientStream, Negotiated), String> {
    let mut prepared = match share {
        Some((g, share)) => g.agree(share).await,
        None => None,
    };
    let mut accept = tokio_rustls::TlsAcceptor::from(config).accept(io);
    let done = std::future::poll_fn(|cx| {
        shangmi_rustls::with_prepared(&mut prepared, || Pin::new(&mut accept).poll(cx))
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
    let tls = done.map_err(|e| e.to_string())?;
    let conn = tls.get_ref().1;
    let n = Negotiated {
        protocol: match conn.protocol_version() {
            Some(rustls::ProtocolVersion::TLSv1_2) => "TLSv1.2",
            _ => "TLSv1.3",
        },
        suite: conn
            .negotiated_cipher_suite()
            .map(|s| shangmi_rustls::suite_name(s.suite()))
            .unwrap_or_default(),
        group: conn
            .negotiated_key_exchange_group()
            .map(|g| shangmi_rustls::group_name(g.name())),
        resumed: conn.handshake_kind() == Some(rustls::HandshakeKind::Resumed),
        client_certificate: conn
            .peer_certificates()
            .and_then(|c| c.first())
            .map(|c| c.as_ref().to_vec()),
        sni: None,
    };
    Ok((ClientStream::Tls(Box::new(tls)), n))
}

/// Reads until the detector decides; what it found and every byte read. The buffer holds
/// exactly what was read, never more than [`MAX_FIRST_FLIGHT`].
async fn first_flight(tcp: &mut TcpStream) -> Result<(Hello, Vec<u8>), String> {
    let mut buf = Vec::new();
    let mut detector = Detector::default();
    let mut chunk = [0u8; 4096];
    loop {
        match detector.detect(&buf) {
            Detected::Hello(h) => return Ok((h, buf)),
            Detected::Invalid(why) => return Err(why.to_string()),
            Detected::NeedMore(n) => {
                // Memory grows with what arrives, not with what a header declares: a client
                // that announces 16 KiB and sends a byte holds a byte.
                let want = (n.min(MAX_FIRST_FLIGHT) - buf.len()).clamp(1, chunk.len());
                let got = tcp
                    .read(&mut chunk[..want])
                    .await
                    .map_err(|e| e.to_string())?;
                if got == 0 {
                    return Err(format!("closed after {} bytes", buf.len()));
                }
                buf.reserve_exact(got);
                buf.extend_from_slice(&chunk[..got]);
            }
        }
    }
}

impl AsyncRead for ClientStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ClientStream::Tlcp(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
            ClientStream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for ClientStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            ClientStream::Tlcp(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
            ClientStream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            ClientStream::Tlcp(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
            ClientStream::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            ClientStream::Tlcp(s) => s.is_write_vectored(),
            ClientStream::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ClientStream::Tlcp(s) => Pin::new(s.as_mut()).poll_flush(cx),
            ClientStream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            ClientStream::Tlcp(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
            ClientStream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}
