//! One TLCP connection without I/O: bytes from the peer go in ([`Connection::read_tls`] from
//! a reader, as rustls takes them, or [`Connection::read_tls_bytes`]), bytes for the peer come
//! out ([`Connection::write_tls`] to a writer, or [`Connection::take_tls`]), and application
//! data crosses only once the handshake has completed. Here are the records as they arrive,
//! the handshake messages cut from them and handed to the current state (`state.rs`; the
//! states are in `client.rs` and `server.rs`), alerts and the end of the connection.

use std::sync::Arc;

use crate::common::{Agreed, Context, Message, message_len};
use crate::config::{ClientConfig, ServerConfig};
use crate::error::{Alert, Error};
use crate::messages;
use crate::record::{
    ALERT, APPLICATION_DATA, CHANGE_CIPHER_SPEC, Deframer, HANDSHAKE, MAX_PLAINTEXT, VERSION,
};
use crate::state::State;
use crate::{client, server};

/// What [`Connection::read_tls`] asks of a reader at once: the largest TLCP record (header,
/// 16 KiB of plaintext and room for the protection).
const READ_SIZE: usize = 5 + 16 * 1024 + 2048;

/// A TLCP connection, client or server.
pub struct Connection {
    cx: Context,
    /// The handshake's state; `None` once the connection has failed (or while a state is
    /// handling a message, so an error leaves it failed).
    state: Option<Box<dyn State>>,
    deframer: Deframer,
    hs_buf: Vec<u8>,
    plaintext: Vec<u8>,
    /// The first record of the peer has not come yet (its version may be any 1.x or 3.x).
    first_record: bool,
    peer_closed: bool,
    sent_close: bool,
}

/// 32 bytes from the system's generator (randoms, session IDs).
pub(crate) fn random32() -> Result<[u8; 32], Error> {
    let mut r = [0u8; 32];
    getrandom::fill(&mut r).map_err(|_| Error::Internal("random generator"))?;
    Ok(r)
}

impl Connection {
    /// A client connection to `server_name` (checked against the server's signing
    /// certificate, and the key its sessions are kept under); the ClientHello is ready in
    /// [`Connection::take_tls`].
    pub fn client(config: Arc<ClientConfig>, server_name: &str) -> Result<Connection, Error> {
        let mut cx = Context::new(true);
        let state = client::start(&mut cx, config, server_name)?;
        Ok(Connection::new(cx, state))
    }

    /// A server connection, waiting for a ClientHello.
    pub fn server(config: Arc<ServerConfig>) -> Connection {
        Connection::new(Context::new(false), server::start(config))
    }

    fn new(cx: Context, state: Box<dyn State>) -> Connection {
        Connection {
            cx,
            state: Some(state),
            deframer: Deframer::default(),
            hs_buf: Vec::new(),
            plaintext: Vec::new(),
            first_record: true,
            peer_closed: false,
            sent_close: false,
        }
    }

    fn is_established(&self) -> bool {
        self.state.as_ref().is_some_and(|s| s.is_established())
    }

    /// Whether the handshake is still running.
    pub fn is_handshaking(&self) -> bool {
        self.state.as_ref().is_some_and(|s| !s.is_established())
    }

    /// What the handshake agreed, once it has completed.
    pub fn agreed(&self) -> Option<&Agreed> {
        self.cx.agreed.as_ref()
    }

    /// Whether the peer has closed its side (close_notify received).
    pub fn peer_closed(&self) -> bool {
        self.peer_closed
    }

    /// Bytes waiting to be sent to the peer (taken: the caller sends them).
    pub fn take_tls(&mut self) -> Vec<u8> {
        core::mem::take(&mut self.cx.out)
    }

    /// Writes what is waiting for the peer to `wr` with one `write` call, as rustls'
    /// `write_tls` does: the bytes it took (0 when nothing waits); the rest stays queued.
    pub fn write_tls(&mut self, wr: &mut dyn std::io::Write) -> std::io::Result<usize> {
        let out = &mut self.cx.out;
        if out.is_empty() {
            return Ok(0);
        }
        let n = wr.write(out)?;
        out.drain(..n.min(out.len()));
        Ok(n)
    }

    /// Whether there is something to send.
    pub fn wants_write(&self) -> bool {
        !self.cx.out.is_empty()
    }

    /// Application data received (taken). Empty until the handshake has completed: nothing
    /// arrives before it is.
    pub fn take_plaintext(&mut self) -> Vec<u8> {
        core::mem::take(&mut self.plaintext)
    }

    /// Application data received, exchanged for `buf` (cleared first), whose allocation the
    /// next records fill: [`Connection::take_plaintext`] without an allocation per read.
    pub fn swap_plaintext(&mut self, mut buf: Vec<u8>) -> Vec<u8> {
        buf.clear();
        core::mem::replace(&mut self.plaintext, buf)
    }

    /// Puts application data back in front of what is waiting (a reader took too much).
    pub(crate) fn unread(&mut self, mut front: Vec<u8>) {
        front.extend_from_slice(&self.plaintext);
        self.plaintext = front;
    }

    /// Queues `data` as application data; only after the handshake.
    pub fn send(&mut self, data: &[u8]) -> Result<(), Error> {
        if !self.is_established() || self.sent_close {
            return Err(Error::Closed);
        }
        for chunk in data.chunks(MAX_PLAINTEXT) {
            self.cx.send_record(APPLICATION_DATA, chunk)?;
        }
        Ok(())
    }

    /// Queues close_notify; nothing more can be sent.
    pub fn close(&mut self) {
        if !self.sent_close && self.state.is_some() {
            let _ = self.cx.send_record(ALERT, &[1, 0]);
            self.sent_close = true;
        }
    }

    /// Reads from `rd` with one `read` call (at most a whole record's worth) and processes
    /// every whole record received: the bytes read, 0 at the end of the transport. Unlike
    /// rustls, the records are processed here (there is no `process_new_packets`); an error
    /// is [`Connection::read_tls_bytes`]'s, or the reader's as `Error::Io` (`WouldBlock`
    /// included, which leaves the connection as it was).
    pub fn read_tls(&mut self, rd: &mut dyn std::io::Read) -> Result<usize, Error> {
        self.read_tls_with(|buf| {
            loop {
                match rd.read(buf) {
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    r => return r,
                }
            }
        })
    }

    /// [`Connection::read_tls`] for any source: `read` fills (part of) the buffer it is given,
    /// which is the connection's own (no copy), and says how much it wrote; the records
    /// received are then processed. For async transports, whose reads may be pending: a
    /// `WouldBlock` from `read` leaves the connection as it was.
    pub fn read_tls_with(
        &mut self,
        read: impl FnOnce(&mut [u8]) -> std::io::Result<usize>,
    ) -> Result<usize, Error> {
        if self.state.is_none() {
            return Err(Error::Closed);
        }
        let n = read(self.deframer.space(READ_SIZE)).map_err(Error::Io)?;
        self.deframer.filled(n);
        if n > 0 {
            self.process_or_fail()?;
        }
        Ok(n)
    }

    /// Takes bytes from the peer and processes every whole record in them. An error has
    /// queued its alert (send [`Connection::take_tls`] before closing) and ends the connection.
    pub fn read_tls_bytes(&mut self, data: &[u8]) -> Result<(), Error> {
        if self.state.is_none() {
            return Err(Error::Closed);
        }
        self.deframer.push(data);
        self.process_or_fail()
    }

    fn process_or_fail(&mut self) -> Result<(), Error> {
        match self.process() {
            Ok(()) => Ok(()),
            Err(e) => {
                self.fail(&e);
                Err(e)
            }
        }
    }

    fn fail(&mut self, e: &Error) {
        if let Some(a) = e.alert()
            && !self.sent_close
        {
            let _ = self.cx.send_record(ALERT, &[2, a.code()]);
        }
        self.sent_close = true;
        self.state = None;
        self.plaintext.clear();
    }

    fn process(&mut self) -> Result<(), Error> {
        while let Some(rec) = self.deframer.next()? {
            if self.peer_closed {
                return Err(Error::UnexpectedMessage("data after close_notify"));
            }
            let version_ok = rec.version == VERSION
                || (self.first_record && (rec.version >> 8 == 1 || rec.version >> 8 == 3));
            if !version_ok {
                return Err(Error::ProtocolVersion(rec.version));
            }
            self.first_record = false;
            let fragment = self.deframer.fragment(&rec);
            let range = self.cx.read.open_in_place(rec.typ, fragment)?;
            let plain = &fragment[range];
            match rec.typ {
                HANDSHAKE => {
                    if plain.is_empty() {
                        return Err(Error::Decode("empty handshake record"));
                    }
                    self.hs_buf.extend_from_slice(plain);
                    self.handshake_messages()?;
                }
                CHANGE_CIPHER_SPEC => {
                    if plain != [1] {
                        return Err(Error::Decode("change cipher spec"));
                    }
                    // Only where the handshake expects it, and never inside a message.
                    if !self.hs_buf.is_empty() {
                        return Err(Error::UnexpectedMessage("change cipher spec mid-message"));
                    }
                    self.cx.peer_change_cipher_spec()?;
                    if !self
                        .state
                        .as_ref()
                        .is_some_and(|s| s.expects_change_cipher_spec())
                    {
                        return Err(Error::UnexpectedMessage("change cipher spec out of order"));
                    }
                }
                ALERT => {
                    let a: [u8; 2] = plain.try_into().map_err(|_| Error::Decode("alert"))?;
                    self.alert(a)?;
                }
                APPLICATION_DATA => {
                    // The state by its field: `plain` borrows the deframer meanwhile.
                    if !self.state.as_ref().is_some_and(|s| s.is_established()) {
                        return Err(Error::UnexpectedMessage(
                            "application data before the handshake completed",
                        ));
                    }
                    self.plaintext.extend_from_slice(plain);
                }
                _ => return Err(Error::Decode("record type")),
            }
        }
        Ok(())
    }

    fn alert(&mut self, a: [u8; 2]) -> Result<(), Error> {
        let alert = Alert::from_code(a[1]);
        if alert == Alert::CloseNotify {
            self.peer_closed = true;
            // An unfinished handshake closed by the peer is a failure, not an EOF.
            if self.is_handshaking() {
                return Err(Error::PeerAlert(alert));
            }
            return Ok(());
        }
        if a[0] == 1 && alert == Alert::NoRenegotiation {
            return Ok(());
        }
        Err(Error::PeerAlert(alert))
    }

    /// Hands every whole handshake message received to the current state.
    fn handshake_messages(&mut self) -> Result<(), Error> {
        while let Some(len) = message_len(&self.hs_buf)? {
            if self.hs_buf.len() < 4 + len {
                return Ok(());
            }
            let bytes: Vec<u8> = self.hs_buf.drain(..4 + len).collect();
            let msg = Message {
                typ: bytes[0],
                bytes: &bytes,
            };
            let state = self.state.take().ok_or(Error::Closed)?;
            // Before the handshake is done a client ignores HelloRequest (RFC 5246).
            if self.cx.client && msg.typ == messages::HELLO_REQUEST && !state.is_established() {
                self.state = Some(state);
                continue;
            }
            self.state = Some(state.handle(&mut self.cx, msg)?);
        }
        Ok(())
    }

    /// Undelivered bytes from the peer remain (a partial record).
    pub fn has_pending_input(&self) -> bool {
        self.deframer.has_pending()
    }
}
