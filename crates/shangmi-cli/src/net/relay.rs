//! The client side of `tls connect` and `tlcp connect`: a handshake within a deadline on a
//! blocking socket, then plaintext between the connection and stdin/stdout. One relay for
//! both protocols: each connection type is a [`Session`].
//!
//! Two threads share the session under a lock: one reads the socket and delivers what the
//! peer sent, the other reads the plain source and sends it. Neither holds the lock while it
//! waits on I/O, so a quiet peer never stalls the other direction. Plaintext is delivered only
//! after its record was authenticated, and only once the handshake is complete.

use std::io::{self, ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// What the relay needs of a connection, rustls's or shangmi-tlcp's.
pub trait Session: Send {
    fn is_handshaking(&self) -> bool;
    /// Takes bytes from the peer (all of them, records split anywhere); an error is the
    /// protocol's, its alert left in the records to send.
    fn feed(&mut self, data: &[u8]) -> Result<(), String>;
    /// Moves the authenticated plaintext received into `out`; whether the peer has closed.
    fn take_plaintext(&mut self, out: &mut Vec<u8>) -> Result<bool, String>;
    fn send(&mut self, data: &[u8]) -> Result<(), String>;
    /// Queues close_notify.
    fn close(&mut self);
    /// The records waiting to be sent.
    fn take_records(&mut self) -> Vec<u8>;
}

impl Session for rustls::Connection {
    fn is_handshaking(&self) -> bool {
        // CommonState's, through the connection's Deref (not this trait's method).
        std::ops::Deref::deref(self).is_handshaking()
    }

    fn feed(&mut self, mut data: &[u8]) -> Result<(), String> {
        // rustls takes at most a few KiB a call: the rest of a large flight (a ClientHello
        // with post-quantum shares, a certificate chain) goes in further calls.
        while !data.is_empty() {
            self.read_tls(&mut data).map_err(|e| e.to_string())?;
            self.process_new_packets().map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    fn take_plaintext(&mut self, out: &mut Vec<u8>) -> Result<bool, String> {
        let mut buf = [0u8; 4096];
        loop {
            match self.reader().read(&mut buf) {
                Ok(0) => return Ok(true),
                Ok(k) => out.extend_from_slice(&buf[..k]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(e.to_string()),
            }
        }
    }

    fn send(&mut self, data: &[u8]) -> Result<(), String> {
        self.writer().write_all(data).map_err(|e| e.to_string())
    }

    fn close(&mut self) {
        self.send_close_notify();
    }

    fn take_records(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        while self.wants_write() {
            if self.write_tls(&mut out).is_err() {
                break;
            }
        }
        out
    }
}

impl Session for shangmi_tlcp::Connection {
    fn is_handshaking(&self) -> bool {
        // The inherent method (inherent methods come before the trait's).
        shangmi_tlcp::Connection::is_handshaking(self)
    }

    fn feed(&mut self, data: &[u8]) -> Result<(), String> {
        self.read_tls_bytes(data).map_err(|e| e.to_string())
    }

    fn take_plaintext(&mut self, out: &mut Vec<u8>) -> Result<bool, String> {
        out.extend_from_slice(&shangmi_tlcp::Connection::take_plaintext(self));
        Ok(self.peer_closed())
    }

    fn send(&mut self, data: &[u8]) -> Result<(), String> {
        shangmi_tlcp::Connection::send(self, data).map_err(|e| e.to_string())
    }

    fn close(&mut self) {
        shangmi_tlcp::Connection::close(self);
    }

    fn take_records(&mut self) -> Vec<u8> {
        self.take_tls()
    }
}

/// How a relay ended.
#[derive(Debug)]
pub enum End {
    /// The peer closed cleanly (and everything before it was delivered), or, where the
    /// relay was told to, went quiet after our close_notify.
    Clean,
    /// The TCP connection ended without close_notify: what arrived may be truncated.
    Truncated,
    /// A protocol or I/O error, described.
    Failed(String),
}

/// How long the socket read waits before the relay looks at its clocks.
const POLL: Duration = Duration::from_millis(200);

/// Reads from a socket with a read timeout: `None` for a timeout.
fn read_some(sock: &mut TcpStream, buf: &mut [u8]) -> io::Result<Option<usize>> {
    match sock.read(buf) {
        Ok(n) => Ok(Some(n)),
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => Ok(None),
        Err(e) if e.kind() == ErrorKind::Interrupted => Ok(None),
        Err(e) => Err(e),
    }
}

fn flush(s: &mut dyn Session, sock: &mut TcpStream) -> io::Result<()> {
    let out = s.take_records();
    if out.is_empty() {
        return Ok(());
    }
    sock.write_all(&out)
}

/// Completes the handshake within `limit` (a peer that trickles bytes cannot hold it open
/// longer), sending the alert the session made before failing.
pub fn handshake(s: &mut dyn Session, sock: &mut TcpStream, limit: Duration) -> Result<(), String> {
    let deadline = Instant::now() + limit;
    let mut buf = vec![0u8; 32 << 10];
    let result = (|| loop {
        flush(s, sock).map_err(|e| format!("sending: {}", crate::fail::io_cause(&e)))?;
        if !s.is_handshaking() {
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
            Ok(Some(0)) => return Err("the peer closed the connection during the handshake".into()),
            Ok(Some(n)) => s.feed(&buf[..n])?,
            Err(e) => return Err(crate::fail::io_cause(&e)),
        }
    })();
    if result.is_err() {
        // The alert saying why, if there is one; the peer may already be gone.
        let _ = flush(s, sock);
    }
    result
}

/// When our side has closed: how long a peer may stay silent before the relay ends without
/// its close_notify (`None`: wait for it, up to the idle timeout). Some TLCP servers
/// (GmSSL's) neither answer close_notify nor close.
#[derive(Clone, Copy)]
pub struct Closing {
    pub quiet_after_close: Option<Duration>,
}

/// Relays `source` into the session and the peer's plaintext into `sink` until the peer
/// closes (or fails, or is idle for `idle`). When `source` ends the relay sends close_notify
/// and goes on delivering until the peer closes; when the peer closes first, close_notify
/// goes back.
pub fn relay<S: Session + 'static>(
    session: S,
    sock: TcpStream,
    mut source: Box<dyn Read + Send>,
    sink: &mut dyn Write,
    idle: Duration,
    closing: Closing,
) -> End {
    let session: Arc<Mutex<S>> = Arc::new(Mutex::new(session));
    let closed_at: Arc<Mutex<Option<Instant>>> = Arc::new(Mutex::new(None));
    let (reader, writer) = match (sock.try_clone(), sock.try_clone()) {
        (Ok(r), Ok(w)) => (r, w),
        (Err(e), _) | (_, Err(e)) => return End::Failed(crate::fail::io_cause(&e)),
    };
    {
        let (session, closed_at) = (Arc::clone(&session), Arc::clone(&closed_at));
        // Not joined: a source such as stdin may never end; the process's exit ends it.
        std::thread::spawn(move || {
            let _ = send(&*session, writer, &mut *source, &closed_at);
        });
    }
    let end = deliver(&*session, reader, sink, idle, closing, &closed_at);
    // Ends a sending thread blocked on a socket write, and the peer's wait.
    let _ = sock.shutdown(Shutdown::Both);
    end
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A thread that panicked while holding it left a session no one should use further; the
    // data in it is still consistent enough to send an alert, so take it.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Sends everything `source` yields, then close_notify. Errors end the sending side only.
fn send<S: Session>(
    session: &Mutex<S>,
    mut sock: TcpStream,
    source: &mut dyn Read,
    closed_at: &Mutex<Option<Instant>>,
) -> io::Result<()> {
    let mut buf = vec![0u8; 16 << 10];
    loop {
        let n = match source.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let mut s = lock(session);
        if n == 0 {
            s.close();
            flush(&mut *s, &mut sock)?;
            *lock(closed_at) = Some(Instant::now());
            return Ok(());
        }
        s.send(&buf[..n]).map_err(io::Error::other)?;
        flush(&mut *s, &mut sock)?;
    }
}

/// Delivers the peer's plaintext to `sink` until it closes, the connection ends, an error,
/// or `idle` without traffic.
fn deliver<S: Session>(
    session: &Mutex<S>,
    mut sock: TcpStream,
    sink: &mut dyn Write,
    idle: Duration,
    closing: Closing,
    closed_at: &Mutex<Option<Instant>>,
) -> End {
    let mut raw = vec![0u8; 32 << 10];
    if sock.set_read_timeout(Some(POLL.min(idle))).is_err() {
        return End::Failed("setting the read timeout".into());
    }
    let mut last = Instant::now();
    // The handshake's last read may have carried application data (and even close_notify)
    // already: what the session holds is delivered before waiting on the socket.
    let mut input: &[u8] = &[];
    loop {
        let mut out = Vec::new();
        let (closed, result) = {
            let mut s = lock(session);
            let fed = if input.is_empty() {
                Ok(())
            } else {
                s.feed(input)
            };
            let taken = s.take_plaintext(&mut out);
            let closed = matches!(taken, Ok(true));
            if closed {
                // The peer is done: our close_notify goes back (once more is harmless).
                s.close();
            }
            let sent = flush(&mut *s, &mut sock);
            let result = match (fed, taken, sent) {
                (Err(e), _, _) | (_, Err(e), _) => Err(e),
                (_, _, Err(e)) => Err(crate::fail::io_cause(&e)),
                _ => Ok(()),
            };
            (closed, result)
        };
        // What was authenticated before a failure is still delivered.
        if let Err(e) = sink.write_all(&out).and_then(|()| sink.flush()) {
            return End::Failed(format!("writing: {}", crate::fail::io_cause(&e)));
        }
        if let Err(e) = result {
            return End::Failed(e);
        }
        if closed {
            return End::Clean;
        }
        let n = loop {
            match read_some(&mut sock, &mut raw) {
                Ok(Some(n)) => break n,
                Ok(None) => {
                    let ours = *lock(closed_at);
                    if let (Some(t), Some(wait)) = (ours, closing.quiet_after_close)
                        && t.max(last).elapsed() >= wait
                    {
                        return End::Clean;
                    }
                    if last.elapsed() >= idle {
                        return End::Failed(format!("idle for {}s", idle.as_secs()));
                    }
                }
                Err(e) => return End::Failed(crate::fail::io_cause(&e)),
            }
        };
        if n == 0 {
            let ours = lock(closed_at).is_some();
            return if ours && closing.quiet_after_close.is_some() {
                End::Clean
            } else {
                End::Truncated
            };
        }
        last = Instant::now();
        input = &raw[..n];
    }
}
