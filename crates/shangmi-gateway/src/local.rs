//! Answers with no upstream, for `shangmi tls|tlcp serve`: every byte sent back (echo), or a
//! fixed text then close (respond). They run on the same connection path as the upstreams, so
//! the command line's servers are limited, timed out and logged where the gateway's are.

use std::io;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::site::Generation;
use crate::state::{Session, Shared};

/// How long a client has to close its side once the response and close_notify are sent.
const CLOSE_WAIT: Duration = Duration::from_secs(3);

/// How a connection ended, for its log line.
fn ending(r: io::Result<()>) -> String {
    match r {
        Ok(()) => "closed".into(),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
            "the client left without close_notify".into()
        }
        Err(e) => format!("failed: {e}"),
    }
}

fn log(shared: &Shared, generation: &Generation, session: &Session, status: &str, start: Instant) {
    shared.access(
        generation,
        json!({"client": session.client.to_string(), "protocol": session.protocol,
               "suite": session.suite, "group": session.group, "sni": session.sni,
               "status": status, "resumed": session.resumed,
               "handshake_ms": session.handshake.as_millis() as u64,
               "ms": start.elapsed().as_millis() as u64}),
    );
}

/// Sends back whatever arrives until the client closes; answers its close_notify with ours.
pub async fn echo<S>(shared: &Shared, generation: &Generation, mut client: S, session: &Session)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let start = Instant::now();
    let mut buf = vec![0u8; 16 * 1024];
    let r = async {
        loop {
            let n = client.read(&mut buf).await?;
            if n == 0 {
                return client.shutdown().await;
            }
            client.write_all(&buf[..n]).await?;
            client.flush().await?;
        }
    }
    .await;
    log(shared, generation, session, &ending(r), start);
}

/// Sends `text`, then close_notify, then waits (briefly) for the client to close: closing
/// with its bytes unread would reset the connection and could destroy the answer in flight.
pub async fn respond<S>(
    shared: &Shared,
    generation: &Generation,
    mut client: S,
    session: &Session,
    text: &[u8],
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let start = Instant::now();
    let r = async {
        client.write_all(text).await?;
        client.shutdown().await?;
        let mut sink = [0u8; 4096];
        let drained = tokio::time::timeout(CLOSE_WAIT, async {
            while client.read(&mut sink).await? != 0 {}
            Ok::<(), io::Error>(())
        })
        .await;
        match drained {
            // The client's end is not ours to judge once the answer is out.
            Ok(_) | Err(_) => Ok(()),
        }
    }
    .await;
    log(shared, generation, session, &ending(r), start);
}
