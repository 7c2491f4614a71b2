//! One TLCP connection without I/O: bytes from the peer go in ([`Connection::read_tls`] from
//! a reader, as rustls takes them, or [`Connection::read_tls_bytes`]), bytes for the peer come
//! out ([`Connection::write_tls`] to a writer, or [`Connection::take_tls`]), and application
//! data crosses only once the handshake has completed. The handshake itself is in `client.rs` and `server.rs`;
//! this is what both share: records, the handshake message stream and its transcript, the
//! keys, alerts and the end of the connection.

use std::sync::Arc;

use shangmi::sm3::{HmacSm3, Sm3};
use shangmi::sm4::Sm4;
use shangmi::sm4::modes::gcm::Sm4Gcm;
use zeroize::Zeroizing;

use crate::client::ClientState;
use crate::config::{ClientConfig, ServerConfig};
use crate::error::{Alert, Error};
use crate::messages::{self, MAX_MESSAGE};
use crate::prf;
use crate::record::{
    ALERT, APPLICATION_DATA, CHANGE_CIPHER_SPEC, Deframer, HANDSHAKE, MAX_PLAINTEXT, Protector,
    VERSION,
};
use crate::server::ServerState;
use crate::suite::{Protection, Suite};

/// What [`Connection::read_tls`] asks of a reader at once: the largest TLCP record (header,
/// 16 KiB of plaintext and room for the protection).
const READ_SIZE: usize = 5 + 16 * 1024 + 2048;

pub(crate) enum State {
    Client(Box<ClientState>),
    Server(Box<ServerState>),
    Established,
    Failed,
}

/// What a completed handshake agreed.
#[derive(Clone, Debug)]
pub struct Agreed {
    /// The suite.
    pub suite: Suite,
    /// Whether the session was resumed (abbreviated handshake).
    pub resumed: bool,
    /// The peer's certificates as sent (signing, encryption, then any CAs); empty for a
    /// resumed session or a client that sent none.
    pub peer_certificates: Vec<Vec<u8>>,
}

/// A TLCP connection, client or server.
pub struct Connection {
    pub(crate) state: State,
    deframer: Deframer,
    hs_buf: Vec<u8>,
    read: Protector,
    write: Protector,
    pending_read: Option<Protector>,
    pending_write: Option<Protector>,
    out: Vec<u8>,
    plaintext: Vec<u8>,
    pub(crate) transcript: Sm3,
    pub(crate) agreed: Option<Agreed>,
    /// The first record of the peer has not come yet (its version may be any 1.x or 3.x).
    first_record: bool,
    peer_closed: bool,
    sent_close: bool,
}

/// Both directions' keys from the key block.
struct Keys {
    client: Protector,
    server: Protector,
}

impl Keys {
    fn derive(
        suite: Suite,
        master: &[u8; 48],
        client_random: &[u8; 32],
        server_random: &[u8; 32],
    ) -> Keys {
        let (mac_len, iv_len) = match suite.protection() {
            Protection::Cbc => (32, 16),
            Protection::Gcm => (0, 4),
        };
        let kb = prf::key_block(
            master,
            client_random,
            server_random,
            2 * (mac_len + 16 + iv_len),
        );
        let (macs, rest) = kb.split_at(2 * mac_len);
        let (keys, ivs) = rest.split_at(32);
        let key =
            |i: usize| -> [u8; 16] { keys[16 * i..16 * i + 16].try_into().expect("16 bytes") };
        let make = |i: usize| match suite.protection() {
            Protection::Cbc => Protector::Cbc {
                mac: HmacSm3::new(&macs[32 * i..32 * i + 32]),
                cipher: Box::new(Sm4::new(&Zeroizing::new(key(i)))),
                seq: 0,
            },
            Protection::Gcm => Protector::Gcm {
                aead: Box::new(Sm4Gcm::new(&Zeroizing::new(key(i)))),
                fixed: ivs[4 * i..4 * i + 4].try_into().expect("4 bytes"),
                seq: 0,
            },
        };
        Keys {
            client: make(0),
            server: make(1),
        }
    }
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
        let mut c = Connection::new(State::Failed);
        let state = ClientState::start(&mut c, config, server_name)?;
        c.state = State::Client(Box::new(state));
        Ok(c)
    }

    /// A server connection, waiting for a ClientHello.
    pub fn server(config: Arc<ServerConfig>) -> Connection {
        Connection::new(State::Server(Box::new(ServerState::new(config))))
    }

    fn new(state: State) -> Connection {
        Connection {
            state,
            deframer: Deframer::default(),
            hs_buf: Vec::new(),
            read: Protector::Null,
            write: Protector::Null,
            pending_read: None,
            pending_write: None,
            out: Vec::new(),
            plaintext: Vec::new(),
            transcript: Sm3::new(),
            agreed: None,
            first_record: true,
            peer_closed: false,
            sent_close: false,
        }
    }

    /// Whether the handshake is still running.
    pub fn is_handshaking(&self) -> bool {
        matches!(self.state, State::Client(_) | State::Server(_))
    }

    /// What the handshake agreed, once it has completed.
    pub fn agreed(&self) -> Option<&Agreed> {
        self.agreed.as_ref()
    }

    /// Whether the peer has closed its side (close_notify received).
    pub fn peer_closed(&self) -> bool {
        self.peer_closed
    }

    /// Bytes waiting to be sent to the peer (taken: the caller sends them).
    pub fn take_tls(&mut self) -> Vec<u8> {
        core::mem::take(&mut self.out)
    }

    /// Writes what is waiting for the peer to `wr` with one `write` call, as rustls'
    /// `write_tls` does: the bytes it took (0 when nothing waits); the rest stays queued.
    pub fn write_tls(&mut self, wr: &mut dyn std::io::Write) -> std::io::Result<usize> {
        if self.out.is_empty() {
            return Ok(0);
        }
        let n = wr.write(&self.out)?;
        self.out.drain(..n.min(self.out.len()));
        Ok(n)
    }

    /// Whether there is something to send.
    pub fn wants_write(&self) -> bool {
        !self.out.is_empty()
    }

    /// Application data received (taken). Empty until the handshake has completed: nothing
    /// arrives before it is.
    pub fn take_plaintext(&mut self) -> Vec<u8> {
        core::mem::take(&mut self.plaintext)
    }

    /// Puts application data back in front of what is waiting (a reader took too much).
    pub(crate) fn unread(&mut self, mut front: Vec<u8>) {
        front.extend_from_slice(&self.plaintext);
        self.plaintext = front;
    }

    /// Queues `data` as application data; only after the handshake.
    pub fn send(&mut self, data: &[u8]) -> Result<(), Error> {
        if !matches!(self.state, State::Established) || self.sent_close {
            return Err(Error::Closed);
        }
        for chunk in data.chunks(MAX_PLAINTEXT) {
            self.send_record(APPLICATION_DATA, chunk)?;
        }
        Ok(())
    }

    /// Queues close_notify; nothing more can be sent.
    pub fn close(&mut self) {
        if !self.sent_close && !matches!(self.state, State::Failed) {
            let _ = self.send_record(ALERT, &[1, 0]);
            self.sent_close = true;
        }
    }

    /// Reads from `rd` with one `read` call (at most a whole record's worth) and processes
    /// every whole record received: the bytes read, 0 at the end of the transport. Unlike
    /// rustls, the records are processed here (there is no `process_new_packets`); an error
    /// is [`Connection::read_tls_bytes`]'s, or the reader's as `Error::Io` (`WouldBlock`
    /// included, which leaves the connection as it was).
    pub fn read_tls(&mut self, rd: &mut dyn std::io::Read) -> Result<usize, Error> {
        let mut buf = [0u8; READ_SIZE];
        let n = loop {
            match rd.read(&mut buf) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Error::Io(e)),
            }
        };
        if n > 0 {
            self.read_tls_bytes(&buf[..n])?;
        }
        Ok(n)
    }

    /// Takes bytes from the peer and processes every whole record in them. An error has
    /// queued its alert (send [`Connection::take_tls`] before closing) and ends the connection.
    pub fn read_tls_bytes(&mut self, data: &[u8]) -> Result<(), Error> {
        if matches!(self.state, State::Failed) {
            return Err(Error::Closed);
        }
        self.deframer.push(data);
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
            let _ = self.send_record(ALERT, &[2, a.code()]);
        }
        self.sent_close = true;
        self.state = State::Failed;
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
            let plain = self.read.open(rec.typ, &rec.fragment)?;
            match rec.typ {
                HANDSHAKE => {
                    if plain.is_empty() {
                        return Err(Error::Decode("empty handshake record"));
                    }
                    self.hs_buf.extend_from_slice(&plain);
                    self.handshake_messages()?;
                }
                CHANGE_CIPHER_SPEC => {
                    if plain[..] != [1] {
                        return Err(Error::Decode("change cipher spec"));
                    }
                    // Only where the handshake expects it, and never inside a message.
                    if !self.hs_buf.is_empty() {
                        return Err(Error::UnexpectedMessage("change cipher spec mid-message"));
                    }
                    let next = self.pending_read.take().ok_or(Error::UnexpectedMessage(
                        "change cipher spec before the keys",
                    ))?;
                    self.read = next;
                    self.expect_ccs_done()?;
                }
                ALERT => self.alert(&plain)?,
                APPLICATION_DATA => {
                    if !matches!(self.state, State::Established) {
                        return Err(Error::UnexpectedMessage(
                            "application data before the handshake completed",
                        ));
                    }
                    self.plaintext.extend_from_slice(&plain);
                }
                _ => return Err(Error::Decode("record type")),
            }
        }
        Ok(())
    }

    fn alert(&mut self, a: &[u8]) -> Result<(), Error> {
        if a.len() != 2 {
            return Err(Error::Decode("alert"));
        }
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

    fn handshake_messages(&mut self) -> Result<(), Error> {
        loop {
            if self.hs_buf.len() < 4 {
                return Ok(());
            }
            let len = usize::from(self.hs_buf[1]) << 16
                | usize::from(self.hs_buf[2]) << 8
                | usize::from(self.hs_buf[3]);
            if len > MAX_MESSAGE {
                return Err(Error::Decode("handshake message (too long)"));
            }
            if self.hs_buf.len() < 4 + len {
                return Ok(());
            }
            let msg: Vec<u8> = self.hs_buf.drain(..4 + len).collect();
            let typ = msg[0];
            match core::mem::replace(&mut self.state, State::Failed) {
                State::Client(mut s) => {
                    if typ == messages::HELLO_REQUEST {
                        self.state = State::Client(s);
                        // Before the handshake is done a HelloRequest is ignored (RFC 5246).
                        continue;
                    }
                    let done = s.handle(self, typ, &msg)?;
                    if !done {
                        self.state = State::Client(s);
                    } else {
                        self.state = State::Established;
                    }
                }
                State::Server(mut s) => {
                    let done = s.handle(self, typ, &msg)?;
                    if !done {
                        self.state = State::Server(s);
                    } else {
                        self.state = State::Established;
                    }
                }
                State::Established => {
                    self.state = State::Established;
                    return Err(Error::Renegotiation);
                }
                State::Failed => return Err(Error::Closed),
            }
        }
    }

    /// After a ChangeCipherSpec: the state machine must be waiting for Finished.
    fn expect_ccs_done(&mut self) -> Result<(), Error> {
        let ok = match &self.state {
            State::Client(s) => s.awaiting_finished(),
            State::Server(s) => s.awaiting_finished(),
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err(Error::UnexpectedMessage("change cipher spec out of order"))
        }
    }

    /// Sends a handshake message (framed) and adds it to the transcript.
    pub(crate) fn send_handshake(&mut self, msg: &[u8]) -> Result<(), Error> {
        self.transcript.update(msg);
        for chunk in msg.chunks(MAX_PLAINTEXT) {
            self.send_record(HANDSHAKE, chunk)?;
        }
        Ok(())
    }

    pub(crate) fn send_record(&mut self, typ: u8, payload: &[u8]) -> Result<(), Error> {
        let rec = self.write.seal(typ, payload)?;
        self.out.extend_from_slice(&rec);
        Ok(())
    }

    /// Derives the keys of `suite` from the master secret and installs them: ours take effect
    /// when we send ChangeCipherSpec, the peer's when its ChangeCipherSpec arrives.
    pub(crate) fn install_keys(
        &mut self,
        suite: Suite,
        master: &[u8; 48],
        client_random: &[u8; 32],
        server_random: &[u8; 32],
        client: bool,
    ) {
        let keys = Keys::derive(suite, master, client_random, server_random);
        let (mine, theirs) = if client {
            (keys.client, keys.server)
        } else {
            (keys.server, keys.client)
        };
        self.pending_write = Some(mine);
        self.pending_read = Some(theirs);
    }

    pub(crate) fn send_change_cipher_spec(&mut self) -> Result<(), Error> {
        self.send_record(CHANGE_CIPHER_SPEC, &[1])?;
        self.write = self
            .pending_write
            .take()
            .ok_or(Error::Internal("no keys for change cipher spec"))?;
        Ok(())
    }

    /// Whether the peer's ChangeCipherSpec has switched its records to the new keys.
    pub(crate) fn peer_encrypting(&self) -> bool {
        !self.read.is_null() && self.pending_read.is_none()
    }

    /// The transcript's hash so far.
    pub(crate) fn transcript_hash(&self) -> [u8; 32] {
        self.transcript.clone().finalize()
    }

    /// Undelivered bytes from the peer remain (a partial record).
    pub fn has_pending_input(&self) -> bool {
        self.deframer.has_pending()
    }
}
