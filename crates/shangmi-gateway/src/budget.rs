//! Response bytes in flight, bounded: an upstream's body is read only as fast as the client
//! takes it. Each connection may hold [`Limits::response_buffer`] bytes that its responses
//! have produced and its client has not yet taken, all connections together
//! [`Limits::response_budget`]; a body that would go over waits, which stops the upstream's
//! reads (and so its sends: back-pressure reaches it through TCP).
//!
//! "Taken" is counted where the client's stream accepts plaintext ([`Metered`]), under the
//! HTTP/1.1 or HTTP/2 framing; what the TLS layer buffers after that is bounded by rustls and
//! the TLCP stream on their own. A body reserves [`CHUNK`] before it pulls a frame (an
//! upstream chunk is at most that, the upstream client's read buffer), so streams pulling at
//! once cannot overshoot together. A connection that holds nothing may always pull one chunk,
//! so no client waits on another's stalled connection for ever.
//!
//! [`Limits::response_buffer`]: crate::config::Limits::response_buffer
//! [`Limits::response_budget`]: crate::config::Limits::response_budget

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// What a body reserves before it pulls a frame; the upstream client reads at most this.
pub const CHUNK: usize = 64 * 1024;

/// The bytes all connections' responses hold.
pub struct Global {
    limit: usize,
    used: AtomicUsize,
    waiting: AtomicBool,
    waiters: Mutex<Vec<Waker>>,
}

impl Global {
    /// A budget of `limit` bytes.
    pub fn new(limit: usize) -> Arc<Global> {
        Arc::new(Global {
            limit,
            used: AtomicUsize::new(0),
            waiting: AtomicBool::new(false),
            waiters: Mutex::new(Vec::new()),
        })
    }

    /// Bytes held now, all connections.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    fn wake(&self) {
        if self.waiting.swap(false, Ordering::AcqRel) {
            let waiters =
                std::mem::take(&mut *self.waiters.lock().unwrap_or_else(|p| p.into_inner()));
            for w in waiters {
                w.wake();
            }
        }
    }
}

#[derive(Default)]
struct Held {
    /// Produced by bodies, not yet taken by the client.
    held: usize,
    /// Reserved by bodies pulling a frame.
    reserved: usize,
    waiters: Vec<Waker>,
}

/// One connection's response bytes in flight.
pub struct Connection {
    limit: usize,
    state: Mutex<Held>,
    global: Arc<Global>,
}

impl Connection {
    /// A connection allowed `limit` bytes, within `global`.
    pub fn new(limit: usize, global: Arc<Global>) -> Arc<Connection> {
        Arc::new(Connection {
            limit,
            state: Mutex::default(),
            global,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reserves a chunk for a pull, or registers `cx` to be woken when bytes are taken.
    fn poll_reserve(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut s = self.lock();
        let mine = s.held + s.reserved;
        let alone = mine == 0;
        let local = alone || mine + CHUNK <= self.limit;
        let global = alone || self.global.used() + CHUNK <= self.global.limit;
        if local && global {
            s.reserved += CHUNK;
            self.global.used.fetch_add(CHUNK, Ordering::Relaxed);
            return Poll::Ready(());
        }
        if !local {
            // Under the lock `taken` takes too: no wake-up is lost.
            s.waiters.push(cx.waker().clone());
        } else {
            self.global
                .waiters
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(cx.waker().clone());
            self.global.waiting.store(true, Ordering::Release);
            // Another connection may have given bytes back before the waker was in place.
            if self.global.used() + CHUNK <= self.global.limit {
                cx.waker().wake_by_ref();
            }
        }
        Poll::Pending
    }

    /// A pull's reservation becomes the `n` bytes it produced.
    fn settle(&self, n: usize) {
        let mut s = self.lock();
        s.reserved -= CHUNK;
        s.held += n;
        if n < CHUNK {
            self.global.used.fetch_sub(CHUNK - n, Ordering::Relaxed);
        } else {
            self.global.used.fetch_add(n - CHUNK, Ordering::Relaxed);
        }
    }

    /// A pull's reservation given back (the body ended, or was dropped).
    fn release(&self) {
        let waiters = {
            let mut s = self.lock();
            s.reserved -= CHUNK;
            std::mem::take(&mut s.waiters)
        };
        self.global.used.fetch_sub(CHUNK, Ordering::Relaxed);
        for w in waiters {
            w.wake();
        }
        self.global.wake();
    }

    /// The client took `n` bytes (frames' own bytes among them: the count errs low).
    fn taken(&self, n: usize) {
        let waiters = {
            let mut s = self.lock();
            let gone = n.min(s.held);
            s.held -= gone;
            if gone > 0 {
                self.global.used.fetch_sub(gone, Ordering::Relaxed);
            }
            std::mem::take(&mut s.waiters)
        };
        for w in waiters {
            w.wake();
        }
        self.global.wake();
    }

    /// Bytes this connection holds (for tests and metrics).
    pub fn held(&self) -> usize {
        let s = self.lock();
        s.held + s.reserved
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        let s = self.lock();
        let left = s.held + s.reserved;
        drop(s);
        if left > 0 {
            self.global.used.fetch_sub(left, Ordering::Relaxed);
            self.global.wake();
        }
    }
}

/// A response body that pulls from its upstream only within its connection's budget.
pub struct Budgeted<B> {
    inner: B,
    conn: Arc<Connection>,
    reserved: bool,
}

impl<B> Budgeted<B> {
    /// `inner`, pulled within `conn`'s budget.
    pub fn new(inner: B, conn: Arc<Connection>) -> Self {
        Budgeted {
            inner,
            conn,
            reserved: false,
        }
    }
}

impl<B> Drop for Budgeted<B> {
    fn drop(&mut self) {
        if self.reserved {
            self.conn.release();
        }
    }
}

impl<B: Body<Data = Bytes> + Unpin> Body for Budgeted<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let this = &mut *self;
        if !this.reserved {
            if this.inner.is_end_stream() {
                return Poll::Ready(None);
            }
            std::task::ready!(this.conn.poll_reserve(cx));
            this.reserved = true;
        }
        let r = Pin::new(&mut this.inner).poll_frame(cx);
        match &r {
            Poll::Pending => {}
            Poll::Ready(Some(Ok(frame))) => {
                this.reserved = false;
                this.conn
                    .settle(frame.data_ref().map_or(0, |d: &Bytes| d.len()));
            }
            Poll::Ready(_) => {
                this.reserved = false;
                this.conn.release();
            }
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

/// The client's stream, counting what it takes for its connection's budget.
pub struct Metered<S> {
    inner: S,
    conn: Arc<Connection>,
}

impl<S> Metered<S> {
    /// `inner`, reporting to `conn`.
    pub fn new(inner: S, conn: Arc<Connection>) -> Self {
        Metered { inner, conn }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Metered<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Metered<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = r {
            self.conn.taken(n);
        }
        r
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(n)) = r {
            self.conn.taken(n);
        }
        r
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ready(p: Poll<()>) -> bool {
        p.is_ready()
    }

    #[test]
    fn pulls_wait_for_the_client_and_resume_when_it_takes() {
        let global = Global::new(1 << 30);
        let conn = Connection::new(4 * CHUNK, global.clone());
        let waker = Waker::noop();
        let mut cx = Context::from_waker(waker);
        for _ in 0..4 {
            assert!(ready(conn.poll_reserve(&mut cx)));
            conn.settle(CHUNK);
        }
        assert!(
            !ready(conn.poll_reserve(&mut cx)),
            "over the connection's buffer"
        );
        assert_eq!(global.used(), 4 * CHUNK);
        conn.taken(CHUNK);
        assert!(ready(conn.poll_reserve(&mut cx)));
        conn.release();
        drop(conn);
        assert_eq!(global.used(), 0);
    }

    #[test]
    fn the_global_budget_holds_but_every_connection_may_pull_one_chunk() {
        let global = Global::new(2 * CHUNK);
        let a = Connection::new(1 << 30, global.clone());
        let b = Connection::new(1 << 30, global.clone());
        let waker = Waker::noop();
        let mut cx = Context::from_waker(waker);
        assert!(ready(a.poll_reserve(&mut cx)));
        a.settle(CHUNK);
        assert!(ready(a.poll_reserve(&mut cx)));
        a.settle(CHUNK);
        assert!(!ready(a.poll_reserve(&mut cx)), "over the global budget");
        // b holds nothing: it may pull one chunk, not two.
        assert!(ready(b.poll_reserve(&mut cx)));
        b.settle(100);
        assert!(!ready(b.poll_reserve(&mut cx)));
        a.taken(2 * CHUNK);
        assert!(ready(b.poll_reserve(&mut cx)));
    }
}
