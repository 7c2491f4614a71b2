//! Moving plaintext between a TLS connection on a TCP socket and stdin and stdout, for
//! `shangmi tls connect` (the servers run on shangmi-gateway's async connection path).
//!
//! Two threads share the connection under a lock: one reads the socket and delivers what the
//! peer sent, the other reads the plain source and sends it. Neither holds the lock while it
//! waits on I/O, so a quiet peer never stalls the other direction. Plaintext is delivered only
//! after rustls has authenticated its record, and only once the handshake is complete (the
//! callers finish the handshake before relaying).

use std::io::{self, ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rustls::Connection;

/// How a relay ended.
#[derive(Debug)]
pub enum End {
    /// The peer sent close_notify (and everything before it was delivered).
    Clean,
    /// The TCP connection ended without close_notify: what arrived may be truncated.
    Truncated,
    /// A TLS or I/O error, described.
    Failed(String),
}

/// Reads from a socket that may have a read timeout: `None` for a timeout.
fn read_some(sock: &mut TcpStream, buf: &mut [u8]) -> io::Result<Option<usize>> {
    match sock.read(buf) {
        Ok(n) => Ok(Some(n)),
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => Ok(None),
        Err(e) if e.kind() == ErrorKind::Interrupted => Ok(None),
        Err(e) => Err(e),
    }
}

/// Writes every pending TLS record to the socket.
fn flush(conn: &mut Connection, sock: &mut TcpStream) -> io::Result<()> {
    while conn.wants_write() {
        conn.write_tls(sock)?;
    }
    Ok(())
}

/// Completes the handshake within `limit` (a peer that trickles bytes cannot hold it open
/// longer), writing any alert rustls produced before failing.
pub fn handshake(
    conn: &mut Connection,
    sock: &mut TcpStream,
    limit: Duration,
) -> Result<(), String> {
    let deadline = Instant::now() + limit;
    let mut buf = vec![0u8; 16 << 10];
    let result = (|| {
        loop {
            flush(conn, sock).map_err(|e| format!("sending: {}", crate::fail::io_cause(&e)))?;
            if !conn.is_handshaking() {
                return Ok(());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!("handshake not complete after {}s", limit.as_secs()));
            }
            sock.set_read_timeout(Some(left.min(Duration::from_secs(1))))
                .map_err(|e| e.to_string())?;
            match read_some(sock, &mut buf) {
                Ok(None) => continue,
                Ok(Some(0)) => {
                    return Err("the peer closed the connection during the handshake".into());
                }
                Ok(Some(n)) => {
                    // rustls takes at most a few KiB a call: the rest of a large flight (a
                    // ClientHello with post-quantum shares, a client certificate chain) is
                    // fed in further calls, never dropped.
                    let mut rd = &buf[..n];
                    while !rd.is_empty() {
                        conn.read_tls(&mut rd).map_err(|e| e.to_string())?;
                        conn.process_new_packets().map_err(|e| e.to_string())?;
                    }
                }
                Err(e) => return Err(crate::fail::io_cause(&e)),
            }
        }
    })();
    if result.is_err() {
        // The alert saying why, if rustls made one; the peer may already be gone.
        let _ = flush(conn, sock);
    }
    result
}

/// Delivers the peer's plaintext to `sink` until close_notify, end of stream, an error, or
/// `idle` without traffic.
fn deliver(
    conn: &Mutex<Connection>,
    mut sock: TcpStream,
    sink: &mut dyn Write,
    idle: Duration,
) -> End {
    let mut raw = vec![0u8; 18 << 10];
    let mut plain = vec![0u8; 16 << 10];
    if sock.set_read_timeout(Some(idle)).is_err() {
        return End::Failed("setting the idle timeout".into());
    }
    // The handshake's last read may have carried application data (and even close_notify)
    // already: what the connection holds is delivered before waiting on the socket.
    let mut first = true;
    loop {
        let mut out = Vec::new();
        let mut closed = false;
        let mut c = if first {
            first = false;
            let mut c = lock(conn);
            match take_plaintext(&mut c, &mut plain, &mut out) {
                Ok(end) => closed = end,
                Err(e) => return End::Failed(e),
            }
            c
        } else {
            let n = match read_some(&mut sock, &mut raw) {
                Ok(Some(n)) => n,
                Ok(None) => return End::Failed(format!("idle for {}s", idle.as_secs())),
                Err(e) => return End::Failed(crate::fail::io_cause(&e)),
            };
            let mut c = lock(conn);
            if n == 0 {
                return End::Truncated;
            }
            // Fed a piece at a time, the plaintext taken out after each: rustls holds at most
            // 16 KiB of it, and a read may bring more.
            let mut rd = &raw[..n];
            while !rd.is_empty() && !closed {
                if let Err(e) = c.read_tls(&mut rd) {
                    return End::Failed(e.to_string());
                }
                if let Err(e) = c.process_new_packets() {
                    let _ = flush(&mut c, &mut sock);
                    return End::Failed(e.to_string());
                }
                match take_plaintext(&mut c, &mut plain, &mut out) {
                    Ok(end) => closed = end,
                    Err(e) => return End::Failed(e),
                }
            }
            c
        };
        if let Err(e) = flush(&mut c, &mut sock) {
            return End::Failed(crate::fail::io_cause(&e));
        }
        drop(c);
        if let Err(e) = sink.write_all(&out).and_then(|()| sink.flush()) {
            return End::Failed(format!("writing: {}", crate::fail::io_cause(&e)));
        }
        if closed {
            return End::Clean;
        }
    }
}

/// Moves the plaintext rustls holds into `out`; whether the peer has closed.
fn take_plaintext(c: &mut Connection, buf: &mut [u8], out: &mut Vec<u8>) -> Result<bool, String> {
    loop {
        match c.reader().read(buf) {
            Ok(0) => return Ok(true),
            Ok(k) => out.extend_from_slice(&buf[..k]),
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(false),
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// Sends everything `source` yields, then close_notify. Errors end the sending side only.
fn send(conn: &Mutex<Connection>, mut sock: TcpStream, source: &mut dyn Read) -> io::Result<()> {
    let mut buf = vec![0u8; 16 << 10];
    loop {
        let n = match source.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let mut c = lock(conn);
        if n == 0 {
            c.send_close_notify();
            flush(&mut c, &mut sock)?;
            return Ok(());
        }
        c.writer().write_all(&buf[..n])?;
        flush(&mut c, &mut sock)?;
    }
}

fn lock(conn: &Mutex<Connection>) -> MutexGuard<'_, Connection> {
    // A thread that panicked while holding it left a connection no one should use further;
    // the data in it is still consistent enough to send an alert, so take it.
    conn.lock().unwrap_or_else(|p| p.into_inner())
}

/// What feeds the connection and what its plaintext goes to.
pub struct Plain<'a> {
    /// Sent (from a thread of its own).
    pub source: Box<dyn Read + Send>,
    /// Where the peer's plaintext goes.
    pub sink: &'a mut dyn Write,
    /// When the peer closes cleanly: called (to pass the close on, as a half-close of a back
    /// end), and then the sending side is waited for, until its source ends. Without it the
    /// sending thread is not waited for: a source such as stdin may never end.
    pub on_close: Option<Box<dyn FnOnce() + 'a>>,
}

/// Relays until the peer closes (or fails, or goes idle for `idle`). The sending side ends
/// with close_notify when its source ends; a peer that then closes ends the relay cleanly.
pub fn relay(conn: Connection, sock: TcpStream, plain: Plain<'_>, idle: Duration) -> End {
    let conn = Arc::new(Mutex::new(conn));
    let clone = || {
        sock.try_clone()
            .map_err(|e| End::Failed(crate::fail::io_cause(&e)))
    };
    let Plain {
        mut source,
        sink,
        on_close,
    } = plain;
    let end = match (clone(), clone()) {
        (Err(e), _) | (_, Err(e)) => e,
        (Ok(reader), Ok(writer)) => {
            let c = Arc::clone(&conn);
            let sending = std::thread::spawn(move || {
                let _ = send(&c, writer, &mut *source);
            });
            let end = deliver(&conn, reader, sink, idle);
            if let (End::Clean, Some(close)) = (&end, on_close) {
                close();
                let _ = sending.join();
            }
            end
        }
    };
    // Ends a sending thread blocked on a socket write, and the peer's wait.
    let _ = sock.shutdown(Shutdown::Both);
    end
}
