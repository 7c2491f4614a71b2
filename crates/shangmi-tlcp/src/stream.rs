//! A blocking TLCP stream over any `Read + Write` transport (a `TcpStream`, usually).

use std::io::{self, Read, Write};
use std::sync::Arc;

use crate::common::Agreed;
use crate::config::{ClientConfig, ServerConfig};
use crate::conn::Connection;
use crate::error::Error;

/// A TLCP connection over a transport. Reads return application data only after the
/// handshake; [`Stream::handshake`] runs it explicitly (reads and writes run it otherwise).
pub struct Stream<S: Read + Write> {
    conn: Connection,
    sock: S,
    eof: bool,
}

fn io_err(e: Error) -> io::Error {
    match e {
        Error::Io(e) => e,
        e => io::Error::other(e),
    }
}

impl<S: Read + Write> Stream<S> {
    /// A client over `sock` to `server_name`.
    pub fn client(config: Arc<ClientConfig>, server_name: &str, sock: S) -> Result<Self, Error> {
        Ok(Stream {
            conn: Connection::client(config, server_name)?,
            sock,
            eof: false,
        })
    }

    /// A server over `sock`.
    pub fn server(config: Arc<ServerConfig>, sock: S) -> Self {
        Stream {
            conn: Connection::server(config),
            sock,
            eof: false,
        }
    }

    /// The connection (what was agreed, the peer's certificates).
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// The transport.
    pub fn get_ref(&self) -> &S {
        &self.sock
    }

    /// Writes everything queued for the peer, then flushes the transport.
    fn flush_tls(&mut self) -> Result<(), Error> {
        if !self.conn.wants_write() {
            return Ok(());
        }
        while self.conn.wants_write() {
            match self.conn.write_tls(&mut self.sock) {
                Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero).into()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        self.sock.flush()?;
        Ok(())
    }

    /// Reads once from the transport into the connection; false at EOF.
    fn fill(&mut self) -> Result<bool, Error> {
        let r = self.conn.read_tls(&mut self.sock);
        // The alert an error queued goes out before the error is returned.
        let f = self.flush_tls();
        let n = r?;
        f?;
        if n == 0 {
            self.eof = true;
        }
        Ok(n > 0)
    }

    /// Runs the handshake to completion: what was agreed.
    pub fn handshake(&mut self) -> Result<Agreed, Error> {
        self.flush_tls()?;
        while self.conn.is_handshaking() {
            if !self.fill()? {
                return Err(Error::Io(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the peer closed the connection during the handshake",
                )));
            }
        }
        self.flush_tls()?;
        self.conn.agreed().cloned().ok_or(Error::Closed)
    }

    /// Sends close_notify.
    pub fn close(&mut self) -> Result<(), Error> {
        self.conn.close();
        self.flush_tls()
    }
}

impl<S: Read + Write> Read for Stream<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.conn.is_handshaking() {
            self.handshake().map_err(io_err)?;
        }
        loop {
            let data = self.conn.take_plaintext();
            if !data.is_empty() {
                let n = data.len().min(buf.len());
                buf[..n].copy_from_slice(&data[..n]);
                if n < data.len() {
                    // Put the rest back in front: read_tls appends, so rebuild.
                    let rest = data[n..].to_vec();
                    self.pending_front(rest);
                }
                return Ok(n);
            }
            if self.conn.peer_closed() {
                return Ok(0);
            }
            if self.eof {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the peer closed the transport without close_notify (truncation?)",
                ));
            }
            self.fill().map_err(io_err)?;
        }
    }
}

impl<S: Read + Write> Stream<S> {
    fn pending_front(&mut self, rest: Vec<u8>) {
        self.conn.unread(rest);
    }
}

impl<S: Read + Write> Write for Stream<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.conn.is_handshaking() {
            self.handshake().map_err(io_err)?;
        }
        self.conn.send(buf).map_err(io_err)?;
        self.flush_tls().map_err(io_err)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.flush_tls().map_err(io_err)?;
        self.sock.flush()
    }
}
