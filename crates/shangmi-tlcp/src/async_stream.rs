//! TLCP over an async transport (the `tokio` feature): the sans-I/O [`Connection`] driven by
//! tokio, as tokio-rustls drives rustls.
//!
//! [`AsyncStream::handshake`] runs the handshake; afterwards the stream is an
//! `AsyncRead + AsyncWrite` of application data. The transport is read straight into the
//! connection's record buffer, where records are opened in place. Output is held in one
//! buffer that must drain before more is accepted, so a peer that stops reading costs at most
//! one record's worth of memory here and back-pressure reaches whoever writes.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};

use crate::common::Agreed;
use crate::config::{ClientConfig, ServerConfig};
use crate::conn::Connection;
use crate::error::Error;

/// The most application data one write takes (one record's worth).
const WRITE_CHUNK: usize = 16 * 1024;

/// A TLCP connection, client or server, over the async transport `IO`.
pub struct AsyncStream<IO> {
    conn: Connection,
    io: IO,
    /// Bytes for the peer not yet written, from `sent`.
    out: Vec<u8>,
    sent: usize,
    /// Application data received and not yet read, from `taken`.
    plain: Vec<u8>,
    taken: usize,
    eof: bool,
    closing: bool,
}

fn io_error(e: Error) -> io::Error {
    match e {
        Error::Io(e) => e,
        e => io::Error::new(io::ErrorKind::InvalidData, e),
    }
}

/// One read of `io` into `buf` as a synchronous read: pending is `WouldBlock`.
fn poll_into<IO: AsyncRead + Unpin>(
    io: &mut IO,
    cx: &mut Context<'_>,
    buf: &mut [u8],
) -> io::Result<usize> {
    let mut rb = ReadBuf::new(buf);
    match Pin::new(io).poll_read(cx, &mut rb) {
        Poll::Ready(Ok(())) => Ok(rb.filled().len()),
        Poll::Ready(Err(e)) => Err(e),
        Poll::Pending => Err(io::ErrorKind::WouldBlock.into()),
    }
}

impl<IO: AsyncRead + AsyncWrite + Unpin> AsyncStream<IO> {
    /// A server waiting for its client's hello.
    pub fn server(config: Arc<ServerConfig>, io: IO) -> Self {
        Self::over(Connection::server(config), io)
    }

    /// A client to `server_name`; its hello goes out when the handshake runs.
    pub fn client(config: Arc<ClientConfig>, server_name: &str, io: IO) -> Result<Self, Error> {
        Ok(Self::over(Connection::client(config, server_name)?, io))
    }

    fn over(conn: Connection, io: IO) -> Self {
        AsyncStream {
            conn,
            io,
            out: Vec::new(),
            sent: 0,
            plain: Vec::new(),
            taken: 0,
            eof: false,
            closing: false,
        }
    }

    /// Runs the handshake to its end; what was agreed. An error has sent its alert.
    pub async fn handshake(&mut self) -> Result<Agreed, Error> {
        while self.conn.is_handshaking() {
            let out = self.conn.take_tls();
            if !out.is_empty() {
                self.io.write_all(&out).await?;
                self.io.flush().await?;
            }
            let n = std::future::poll_fn(|cx| {
                let r = self
                    .conn
                    .read_tls_with(|buf| poll_into(&mut self.io, cx, buf));
                match r {
                    Err(Error::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => Poll::Pending,
                    r => Poll::Ready(r),
                }
            })
            .await;
            // The alert an error queued goes out before the error is returned.
            let out = self.conn.take_tls();
            if !out.is_empty() {
                let w = self.io.write_all(&out).await;
                if n.is_ok() {
                    w?;
                }
            }
            if n? == 0 {
                return Err(Error::Io(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the peer closed the connection during the handshake",
                )));
            }
        }
        self.io.flush().await?;
        // Application data that came with the peer's Finished.
        self.plain = self.conn.take_plaintext();
        self.conn.agreed().cloned().ok_or(Error::Closed)
    }

    /// The connection (what was agreed, the peer's certificates).
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// The transport.
    pub fn get_ref(&self) -> &IO {
        &self.io
    }

    /// Writes what is pending; Ready(Ok) once nothing is.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            if self.sent == self.out.len() {
                let more = self.conn.take_tls();
                if more.is_empty() {
                    self.out.clear();
                    self.sent = 0;
                    return Poll::Ready(Ok(()));
                }
                self.out = more;
                self.sent = 0;
            }
            let n = ready!(Pin::new(&mut self.io).poll_write(cx, &self.out[self.sent..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.sent += n;
        }
    }
}

impl<IO: AsyncRead + AsyncWrite + Unpin> AsyncRead for AsyncStream<IO> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.taken < this.plain.len() {
                let n = (this.plain.len() - this.taken).min(buf.remaining());
                buf.put_slice(&this.plain[this.taken..this.taken + n]);
                this.taken += n;
                if this.taken == this.plain.len() {
                    this.plain.clear();
                    this.taken = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.conn.peer_closed() {
                return Poll::Ready(Ok(()));
            }
            if this.eof {
                return Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the peer closed the transport without close_notify",
                )));
            }
            let r = this.conn.read_tls_with(|b| poll_into(&mut this.io, cx, b));
            // Alerts (and close_notify's answer) go out as the socket allows; an error's alert
            // is written before the error is returned when it can be.
            if this.conn.wants_write() {
                let _ = this.poll_drain(cx);
            }
            match r {
                Ok(0) => this.eof = true,
                Ok(_) => {
                    // The emptied buffer's allocation takes the next records.
                    let spent = core::mem::take(&mut this.plain);
                    this.plain = this.conn.swap_plaintext(spent);
                    this.taken = 0;
                }
                Err(Error::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => {
                    return Poll::Pending;
                }
                Err(e) => return Poll::Ready(Err(io_error(e))),
            }
        }
    }
}

impl<IO: AsyncRead + AsyncWrite + Unpin> AsyncWrite for AsyncStream<IO> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        let n = buf.len().min(WRITE_CHUNK);
        this.conn.send(&buf[..n]).map_err(io_error)?;
        // The record is queued and counted as written; it goes out now or on the next call.
        let _ = this.poll_drain(cx)?;
        Poll::Ready(Ok(n))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.closing {
            this.conn.close();
            this.closing = true;
        }
        ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}
