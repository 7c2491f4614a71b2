//! What every handshake state works on, client or server: the records we send and the keys
//! that protect them both ways, the transcript, and what the handshake agreed. The states
//! (`client.rs`, `server.rs`) receive it as `cx`; the connection (`conn.rs`) owns it.

use shangmi::sm3::Sm3;
use zeroize::Zeroizing;

use crate::config::Session;
use crate::error::Error;
use crate::messages::{self, MAX_MESSAGE};
use crate::prf;
use crate::record::{CHANGE_CIPHER_SPEC, HANDSHAKE, KeyShare, MAX_PLAINTEXT, Protector};
use crate::state::{Established, State};
use crate::suite::Suite;

/// What a completed handshake agreed.
#[derive(Clone, Debug)]
pub struct Agreed {
    /// The suite.
    pub suite: Suite,
    /// Whether the session was resumed (abbreviated handshake).
    pub resumed: bool,
    /// The peer's certificates as sent (signing, encryption, then any CAs), as the full
    /// handshake verified them when the session was resumed; empty for a client that sent
    /// none.
    pub peer_certificates: Vec<Vec<u8>>,
}

/// The handshake's secrets as the states pass them on: the suite, both randoms and the
/// master secret.
pub(crate) struct Secrets {
    pub(crate) suite: Suite,
    pub(crate) client_random: [u8; 32],
    pub(crate) server_random: [u8; 32],
    pub(crate) master: Zeroizing<[u8; 48]>,
}

impl Secrets {
    /// The Finished message's verify_data of the client's or the server's side over `hash`.
    pub(crate) fn verify_data(&self, client: bool, hash: &[u8; 32]) -> [u8; 12] {
        prf::verify_data(&self.master, client, hash)
    }

    /// The session these secrets let a later handshake resume, under `id`, with the peer's
    /// verified certificates.
    pub(crate) fn into_session(self, id: Vec<u8>, peer_certificates: Vec<Vec<u8>>) -> Session {
        Session {
            id,
            suite: self.suite,
            master: self.master,
            peer_certificates,
        }
    }
}

/// One handshake message as received, header included (the transcript covers it whole).
pub(crate) struct Message<'a> {
    pub(crate) typ: u8,
    pub(crate) bytes: &'a [u8],
}

impl Message<'_> {
    /// The message without its 4-byte header.
    pub(crate) fn body(&self) -> &[u8] {
        &self.bytes[4..]
    }
}

/// The state the handshake states share, owned by the connection.
pub(crate) struct Context {
    /// Whether this side is the client.
    pub(crate) client: bool,
    pub(crate) read: Protector,
    write: Protector,
    pending_read: Option<Protector>,
    pending_write: Option<Protector>,
    /// Records waiting to be sent.
    pub(crate) out: Vec<u8>,
    transcript: Sm3,
    pub(crate) agreed: Option<Agreed>,
}

impl Context {
    pub(crate) fn new(client: bool) -> Context {
        Context {
            client,
            read: Protector::Null,
            write: Protector::Null,
            pending_read: None,
            pending_write: None,
            out: Vec::new(),
            transcript: Sm3::new(),
            agreed: None,
        }
    }

    /// Adds a received message to the transcript (once it has been checked).
    pub(crate) fn add(&mut self, msg: &Message<'_>) {
        self.transcript.update(msg.bytes);
    }

    /// The transcript's hash so far.
    pub(crate) fn transcript_hash(&self) -> [u8; 32] {
        self.transcript.clone().finalize()
    }

    /// Sends a handshake message (framed) and adds it to the transcript.
    pub(crate) fn send_handshake(&mut self, msg: &[u8]) -> Result<(), Error> {
        self.transcript.update(msg);
        for chunk in msg.chunks(MAX_PLAINTEXT) {
            self.send_record(HANDSHAKE, chunk)?;
        }
        Ok(())
    }

    /// Sends our Finished over the transcript so far.
    pub(crate) fn send_finished(&mut self, secrets: &Secrets) -> Result<(), Error> {
        let ours = secrets.verify_data(self.client, &self.transcript_hash());
        self.send_handshake(&messages::frame(messages::FINISHED, &ours))
    }

    pub(crate) fn send_record(&mut self, typ: u8, payload: &[u8]) -> Result<(), Error> {
        let rec = self.write.seal(typ, payload)?;
        self.out.extend_from_slice(&rec);
        Ok(())
    }

    /// Derives the keys from the key block and installs them: ours take effect when we send
    /// ChangeCipherSpec, the peer's when its ChangeCipherSpec arrives.
    pub(crate) fn install_keys(&mut self, secrets: &Secrets) {
        let protection = secrets.suite.protection();
        let (mac, key, iv) = protection.key_sizes();
        let block = prf::key_block(
            &secrets.master,
            &secrets.client_random,
            &secrets.server_random,
            2 * (mac + key + iv),
        );
        // GB/T 38636 (as TLS 1.2): both MAC keys, both cipher keys, then both IVs.
        let share = |i: usize| {
            let k = 2 * mac + i * key;
            let iv_at = 2 * (mac + key) + i * iv;
            Protector::new(
                protection,
                &KeyShare {
                    mac: &block[i * mac..(i + 1) * mac],
                    key: block[k..k + key].try_into().expect("16-byte cipher key"),
                    iv: &block[iv_at..iv_at + iv],
                },
            )
        };
        let (client, server) = (share(0), share(1));
        let (mine, theirs) = if self.client {
            (client, server)
        } else {
            (server, client)
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

    /// The peer's ChangeCipherSpec: its records are protected from here on.
    pub(crate) fn peer_change_cipher_spec(&mut self) -> Result<(), Error> {
        self.read = self.pending_read.take().ok_or(Error::UnexpectedMessage(
            "change cipher spec before the keys",
        ))?;
        Ok(())
    }

    /// Whether the peer's ChangeCipherSpec has switched its records to the new keys.
    pub(crate) fn peer_encrypting(&self) -> bool {
        !self.read.is_null() && self.pending_read.is_none()
    }

    /// The handshake has completed: what it agreed is kept, and application data may flow.
    pub(crate) fn complete(
        &mut self,
        suite: Suite,
        resumed: bool,
        peer_certificates: Vec<Vec<u8>>,
    ) -> Box<dyn State> {
        self.agreed = Some(Agreed {
            suite,
            resumed,
            peer_certificates,
        });
        Box::new(Established)
    }

    /// Checks the peer's Finished (`msg`) against the transcript before it.
    pub(crate) fn check_finished(
        &mut self,
        secrets: &Secrets,
        msg: &Message<'_>,
    ) -> Result<(), Error> {
        use subtle::ConstantTimeEq;
        if !self.peer_encrypting() {
            return Err(Error::UnexpectedMessage(
                "finished before change cipher spec",
            ));
        }
        let want = secrets.verify_data(!self.client, &self.transcript_hash());
        let body = msg.body();
        if body.len() != 12 || !bool::from(want.ct_eq(body)) {
            return Err(Error::DecryptError(if self.client {
                "the server's Finished"
            } else {
                "the client's Finished"
            }));
        }
        self.add(msg);
        Ok(())
    }
}

/// The length a handshake message's header gives, once `buf` holds the header; refuses one
/// longer than any TLCP message.
pub(crate) fn message_len(buf: &[u8]) -> Result<Option<usize>, Error> {
    if buf.len() < 4 {
        return Ok(None);
    }
    let len = usize::from(buf[1]) << 16 | usize::from(buf[2]) << 8 | usize::from(buf[3]);
    if len > MAX_MESSAGE {
        return Err(Error::Decode("handshake message (too long)"));
    }
    Ok(Some(len))
}
