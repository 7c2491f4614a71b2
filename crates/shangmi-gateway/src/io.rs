//! The transport under every protocol: the bytes read to decide the protocol replayed first,
//! and two clocks: the last byte moved, which the idle timeout watches, and since when a write
//! to the client has waited, which the write timeout watches (a client that sends but never
//! reads keeps the first clock going and stops the second).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// When a connection last moved a byte, as milliseconds since its start, and since when a
/// write has been waiting on the client (0 when none is; otherwise milliseconds + 1).
#[derive(Clone)]
pub struct Activity {
    start: Instant,
    last: Arc<AtomicU64>,
    blocked: Arc<AtomicU64>,
}

/// Why a connection was found quiet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quiet {
    /// Nothing moved either way for the idle timeout.
    Idle,
    /// A write to the client waited for the write timeout: it reads nothing.
    Unread,
}

impl Activity {
    /// A clock starting now.
    pub fn new() -> Activity {
        Activity {
            start: Instant::now(),
            last: Arc::new(AtomicU64::new(0)),
            blocked: Arc::new(AtomicU64::new(0)),
        }
    }

    fn ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    fn touch(&self) {
        self.last.store(self.ms(), Ordering::Relaxed);
    }

    fn wrote(&self) {
        self.touch();
        if self.blocked.load(Ordering::Relaxed) != 0 {
            self.blocked.store(0, Ordering::Relaxed);
        }
    }

    fn write_waits(&self) {
        if self.blocked.load(Ordering::Relaxed) == 0 {
            self.blocked.store(self.ms() + 1, Ordering::Relaxed);
        }
    }

    /// Returns once nothing has moved for `idle`, or a write has waited for `write`.
    pub async fn quiet(&self, idle: Duration, write: Duration) -> Quiet {
        loop {
            let now = Instant::now();
            let last = Duration::from_millis(self.last.load(Ordering::Relaxed));
            let idle_due = self.start + last + idle;
            if now >= idle_due {
                return Quiet::Idle;
            }
            // A write that starts waiting while this sleeps is seen at the next look, at most
            // `write` later: a stalled client is cut between one and two write timeouts.
            let mut due = idle_due.min(now + write);
            let blocked = self.blocked.load(Ordering::Relaxed);
            if blocked != 0 {
                let write_due = self.start + Duration::from_millis(blocked - 1) + write;
                if now >= write_due {
                    return Quiet::Unread;
                }
                due = due.min(write_due);
            }
            tokio::time::sleep_until(due.into()).await;
        }
    }
}

impl Default for Activity {
    fn default() -> Self {
        Activity::new()
    }
}

/// A client's TCP connection: the first flight (already read) comes out first.
pub struct ClientIo {
    head: Vec<u8>,
    at: usize,
    tcp: TcpStream,
    activity: Activity,
}

impl ClientIo {
    /// `head` was read from `tcp` before; it is read again first.
    pub fn new(head: Vec<u8>, tcp: TcpStream, activity: Activity) -> ClientIo {
        ClientIo {
            head,
            at: 0,
            tcp,
            activity,
        }
    }
}

impl AsyncRead for ClientIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.at < this.head.len() {
            let n = (this.head.len() - this.at).min(buf.remaining());
            buf.put_slice(&this.head[this.at..this.at + n]);
            this.at += n;
            if this.at == this.head.len() {
                this.head = Vec::new();
                this.at = 0;
            }
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        let r = Pin::new(&mut this.tcp).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.activity.touch();
        }
        r
    }
}

impl AsyncWrite for ClientIo {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.tcp).poll_write(cx, buf);
        match r {
            Poll::Ready(Ok(n)) if n > 0 => this.activity.wrote(),
            Poll::Pending => this.activity.write_waits(),
            _ => {}
        }
        r
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_shutdown(cx)
    }
}
