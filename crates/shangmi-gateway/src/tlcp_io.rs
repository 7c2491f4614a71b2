//! TLCP over an async transport: shangmi-tlcp's sans-I/O [`Connection`] driven by tokio.
//!
//! The handshake runs in [`TlcpStream::handshake`]; afterwards the stream is an
//! `AsyncRead + AsyncWrite` of application data. Output is held in one buffer that must drain
//! before more is accepted, so a client that stops reading costs at most one record's worth of
//! memory here and back-pressure reaches whoever writes.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use shangmi_tlcp::{Agreed, Connection, Error, ServerConfig};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};

/// The most application data one write takes (one record's worth).
const WRITE_CHUNK: usize = 16 * 1024;
/// A read buffer big enough for one whole record.
const READ_CHUNK: usize = 16 * 1024 + 2048 + 5;

/// A TLCP server connection over `IO`.
pub struct TlcpStream<IO> {
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

impl<IO: AsyncRead + AsyncWrite + Unpin> TlcpStream<IO> {
    /// A server waiting for its client's hello.
    pub fn server(config: Arc<ServerConfig>, io: IO) -> Self {
        TlcpStream {
            conn: Connection::server(config),
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
        let mut buf = vec![0u8; READ_CHUNK];
        while self.conn.is_handshaking() {
            let n = self.io.read(&mut buf).await?;
            if n == 0 {
                return Err(Error::Io(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the client closed the connection during the handshake",
                )));
            }
            let r = self.conn.read_tls_bytes(&buf[..n]);
            // The alert an error queued goes out before the error is returned.
            let out = self.conn.take_tls();
            if !out.is_empty() {
                let w = self.io.write_all(&out).await;
                if r.is_ok() {
                    w?;
                }
            }
            r?;
        }
        self.io.flush().await?;
        // Application data that came with the client's Finished.
        self.plain = self.conn.take_plaintext();
        self.conn.agreed().cloned().ok_or(Error::Closed)
    }

    /// The connection (what was agreed, the client's certificates).
    pub fn connection(&self) -> &Connection {
        &self.conn
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

impl<IO: AsyncRead + AsyncWrite + Unpin> AsyncRead for TlcpStream<IO> {
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
                    "the client closed the transport without close_notify",
                )));
            }
            let mut raw = [0u8; READ_CHUNK];
            let mut rb = ReadBuf::new(&mut raw);
            ready!(Pin::new(&mut this.io).poll_read(cx, &mut rb))?;
            if rb.filled().is_empty() {
                this.eof = true;
                continue;
            }
            let r = this.conn.read_tls_bytes(rb.filled());
            // Alerts (and close_notify's answer) go out as the socket allows; an error's alert
            // is written before the error is returned when it can be.
            if this.conn.wants_write() {
                let _ = this.poll_drain(cx);
            }
            r.map_err(io_error)?;
            this.plain = this.conn.take_plaintext();
            this.taken = 0;
        }
    }
}

impl<IO: AsyncRead + AsyncWrite + Unpin> AsyncWrite for TlcpStream<IO> {
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
