//! The client's side of the handshake: a full handshake with either key exchange, client
//! certificates when the server asks, and resumption of a session the server remembers.

use std::sync::Arc;

use shangmi::sm2::{DEFAULT_ID, EphemeralSecret, Exchange, Format, Role, Signature, VerifyingKey};
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::codec::{Reader, put_u24, put_vec16};
use crate::config::{ClientConfig, Peer, Session, verify_pair};
use crate::conn::{Agreed, Connection, random32};
use crate::error::Error;
use crate::messages::{self, ClientHello, ServerHello};
use crate::prf;
use crate::suite::{KeyExchange, Suite};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Step {
    ServerHello,
    Certificate,
    KeyExchange,
    RequestOrDone,
    Done,
    /// Our Finished is sent; the server's CCS and Finished come next.
    Finished,
    /// Resuming: the server's CCS and Finished come first, then ours.
    ResumedFinished,
}

pub(crate) struct ClientState {
    config: Arc<ClientConfig>,
    name: String,
    random: [u8; 32],
    offered: Vec<Suite>,
    offered_session: Option<Session>,
    step: Step,
    suite: Suite,
    server_random: [u8; 32],
    session_id: Vec<u8>,
    peer_certs: Vec<Vec<u8>>,
    server_sign: Option<VerifyingKey>,
    server_enc: Option<VerifyingKey>,
    server_ephemeral: Option<VerifyingKey>,
    cert_requested: bool,
    master: Zeroizing<[u8; 48]>,
}

impl ClientState {
    pub(crate) fn start(
        conn: &mut Connection,
        config: Arc<ClientConfig>,
        name: &str,
    ) -> Result<ClientState, Error> {
        let offered = config.offered();
        if offered.is_empty() {
            return Err(Error::HandshakeFailure(
                "no suite to offer (ECDHE needs client certificates)".into(),
            ));
        }
        let offered_session = config
            .sessions
            .get(name.as_bytes())
            .filter(|s| config.resume && offered.contains(&s.suite));
        let random = random32()?;
        // No extensions: TLCP defines none that these suites need, Tongsuo picks curveSM2 for
        // ECDHE without supported_groups, and GmSSL refuses any ClientHello that has them.
        let hello = ClientHello {
            random,
            session_id: offered_session
                .as_ref()
                .map(|s| s.id.clone())
                .unwrap_or_default(),
            suites: offered.iter().map(|s| s.id()).collect(),
            extensions: Vec::new(),
        };
        conn.send_handshake(&hello.encode())?;
        Ok(ClientState {
            config,
            name: name.to_string(),
            random,
            offered,
            offered_session,
            step: Step::ServerHello,
            suite: Suite::ECC_SM4_CBC_SM3,
            server_random: [0; 32],
            session_id: Vec::new(),
            peer_certs: Vec::new(),
            server_sign: None,
            server_enc: None,
            server_ephemeral: None,
            cert_requested: false,
            master: Zeroizing::new([0; 48]),
        })
    }

    pub(crate) fn awaiting_finished(&self) -> bool {
        matches!(self.step, Step::Finished | Step::ResumedFinished)
    }

    /// One handshake message (`msg` framed); true once the handshake has completed.
    pub(crate) fn handle(
        &mut self,
        conn: &mut Connection,
        typ: u8,
        msg: &[u8],
    ) -> Result<bool, Error> {
        let body = &msg[4..];
        let before = conn.transcript_hash();
        match (self.step, typ) {
            (Step::ServerHello, messages::SERVER_HELLO) => {
                let sh = ServerHello::parse(body)?;
                let suite = Suite::from_id(sh.suite)
                    .filter(|s| self.offered.contains(s))
                    .ok_or(Error::IllegalParameter(
                        "the server chose a suite not offered",
                    ))?;
                self.suite = suite;
                self.server_random = sh.random;
                self.session_id = sh.session_id.clone();
                conn.transcript.update(msg);
                let resumed = match &self.offered_session {
                    Some(s)
                        if !sh.session_id.is_empty() && bool::from(s.id.ct_eq(&sh.session_id)) =>
                    {
                        if s.suite != suite {
                            return Err(Error::IllegalParameter(
                                "a resumed session with another suite",
                            ));
                        }
                        Some(s.master.clone())
                    }
                    _ => None,
                };
                if let Some(master) = resumed {
                    self.master = master;
                    conn.install_keys(suite, &self.master, &self.random, &self.server_random, true);
                    self.step = Step::ResumedFinished;
                } else {
                    self.step = Step::Certificate;
                }
            }
            (Step::Certificate, messages::CERTIFICATE) => {
                let certs = messages::parse_certificates(body)?;
                let (sign, enc) =
                    verify_pair(&self.config.verifier, &certs, Peer::Server(&self.name))?;
                self.server_sign = Some(sign);
                self.server_enc = Some(enc);
                self.peer_certs = certs;
                conn.transcript.update(msg);
                self.step = Step::KeyExchange;
            }
            (Step::KeyExchange, messages::SERVER_KEY_EXCHANGE) => {
                self.server_key_exchange(body)?;
                conn.transcript.update(msg);
                self.step = Step::RequestOrDone;
            }
            (Step::RequestOrDone, messages::CERTIFICATE_REQUEST) => {
                messages::parse_certificate_request(body)?;
                self.cert_requested = true;
                conn.transcript.update(msg);
                self.step = Step::Done;
            }
            (Step::RequestOrDone | Step::Done, messages::SERVER_HELLO_DONE) => {
                if !body.is_empty() {
                    return Err(Error::Decode("server hello done"));
                }
                conn.transcript.update(msg);
                self.finish_flight(conn)?;
                self.step = Step::Finished;
            }
            (Step::Finished | Step::ResumedFinished, messages::FINISHED) => {
                if !conn.peer_encrypting() {
                    return Err(Error::UnexpectedMessage(
                        "finished before change cipher spec",
                    ));
                }
                let want = prf::verify_data(&self.master, false, &before);
                if body.len() != 12 || !bool::from(want.ct_eq(body)) {
                    return Err(Error::DecryptError("the server's Finished"));
                }
                conn.transcript.update(msg);
                let resumed = self.step == Step::ResumedFinished;
                if resumed {
                    conn.send_change_cipher_spec()?;
                    let ours = prf::verify_data(&self.master, true, &conn.transcript_hash());
                    conn.send_handshake(&messages::frame(messages::FINISHED, &ours))?;
                }
                if !self.session_id.is_empty() {
                    self.config.sessions.put(
                        self.name.as_bytes().to_vec(),
                        Session {
                            id: self.session_id.clone(),
                            suite: self.suite,
                            master: self.master.clone(),
                        },
                    );
                }
                conn.agreed = Some(Agreed {
                    suite: self.suite,
                    resumed,
                    peer_certificates: core::mem::take(&mut self.peer_certs),
                });
                return Ok(true);
            }
            _ => {
                return Err(Error::UnexpectedMessage(
                    "handshake message out of order (client)",
                ));
            }
        }
        Ok(false)
    }

    fn server_key_exchange(&mut self, body: &[u8]) -> Result<(), Error> {
        let sign = self
            .server_sign
            .as_ref()
            .ok_or(Error::Internal("no server key"))?;
        let mut r = Reader::new(body);
        let mut tbs = Vec::with_capacity(64 + 1024);
        tbs.extend_from_slice(&self.random);
        tbs.extend_from_slice(&self.server_random);
        match self.suite.key_exchange() {
            KeyExchange::Ecc => {
                // Signed: both randoms and the encryption certificate with its 3-byte length.
                let enc = &self.peer_certs[1];
                put_u24(&mut tbs, enc.len());
                tbs.extend_from_slice(enc);
            }
            KeyExchange::Ecdhe => {
                let point = messages::parse_ecdh_params(&mut r)?;
                let eph = VerifyingKey::from_sec1_bytes(point)
                    .map_err(|_| Error::IllegalParameter("the server's ECDHE point"))?;
                tbs.extend_from_slice(&body[..body.len() - r.rest_len()]);
                self.server_ephemeral = Some(eph);
            }
        }
        let sig = messages::parse_signature(&mut r, "server key exchange signature")?;
        let sig =
            Signature::from_der(sig).map_err(|_| Error::Decode("server key exchange signature"))?;
        sign.verify_with_id(DEFAULT_ID, &tbs, &sig)
            .map_err(|_| Error::DecryptError("the server's key exchange signature"))
    }

    /// After ServerHelloDone: our certificates if asked, the key exchange, CertificateVerify,
    /// ChangeCipherSpec and Finished.
    fn finish_flight(&mut self, conn: &mut Connection) -> Result<(), Error> {
        let ecdhe = self.suite.key_exchange() == KeyExchange::Ecdhe;
        let certs = self.config.certs.as_ref();
        if ecdhe && (!self.cert_requested || certs.is_none()) {
            return Err(Error::HandshakeFailure(
                "ECDHE needs client certificates (and the server to ask for them)".into(),
            ));
        }
        let send_certs = self.cert_requested.then_some(certs).flatten();
        if self.cert_requested {
            let chain: Vec<&[u8]> = match send_certs {
                // Both, for every suite, as GB/T 38636 and Tongsuo (which refuses a lone
                // signing certificate) have it; GmSSL's server, which reads the list as one
                // chain, refuses the pair.
                Some((sign, enc)) => {
                    let mut c: Vec<&[u8]> = vec![&sign.chain[0], &enc.chain[0]];
                    c.extend(sign.chain[1..].iter().map(Vec::as_slice));
                    c
                }
                None => Vec::new(),
            };
            conn.send_handshake(&messages::encode_certificates(&chain))?;
        }
        let server_enc = self
            .server_enc
            .as_ref()
            .ok_or(Error::Internal("no server key"))?;
        let mut cke = Vec::new();
        let pms: Zeroizing<Vec<u8>> = match self.suite.key_exchange() {
            KeyExchange::Ecc => {
                let mut pms = Zeroizing::new(vec![0u8; 48]);
                pms[..2].copy_from_slice(&crate::record::VERSION.to_be_bytes());
                getrandom::fill(&mut pms[2..]).map_err(|_| Error::Internal("random generator"))?;
                let ct = server_enc
                    .encrypt(&pms, Format::Der)
                    .map_err(|_| Error::Internal("SM2 encryption"))?;
                put_vec16(&mut cke, &ct);
                pms
            }
            KeyExchange::Ecdhe => {
                let (_, enc) = certs.ok_or(Error::Internal("no client certificates"))?;
                let peer_eph = self
                    .server_ephemeral
                    .as_ref()
                    .ok_or(Error::Internal("no ECDHE point"))?;
                let eph =
                    EphemeralSecret::random().map_err(|_| Error::Internal("random generator"))?;
                let point = eph.public_key().to_uncompressed();
                // GB/T 38636: the server is the SM2 key exchange's initiator, the client its
                // responder; both with GM/T 0009's default ID; no confirmation.
                let agreement = enc
                    .key
                    .key_exchange(
                        eph,
                        &Exchange {
                            role: Role::Responder,
                            own_id: DEFAULT_ID,
                            peer: server_enc,
                            peer_id: DEFAULT_ID,
                            peer_ephemeral: peer_eph,
                            key_len: 48,
                        },
                    )
                    .map_err(|_| Error::IllegalParameter("the SM2 key exchange"))?;
                cke = messages::encode_ecdh_params(&point);
                agreement.into_key()
            }
        };
        conn.send_handshake(&messages::frame(messages::CLIENT_KEY_EXCHANGE, &cke))?;
        if let Some((sign, _)) = send_certs {
            let h = conn.transcript_hash();
            let sig = sign
                .key
                .sign_with_id(DEFAULT_ID, &h)
                .map_err(|_| Error::Internal("signing"))?;
            let mut b = Vec::new();
            put_vec16(&mut b, &sig.to_der());
            conn.send_handshake(&messages::frame(messages::CERTIFICATE_VERIFY, &b))?;
        }
        self.master = prf::master_secret(&pms, &self.random, &self.server_random);
        conn.install_keys(
            self.suite,
            &self.master,
            &self.random,
            &self.server_random,
            true,
        );
        conn.send_change_cipher_spec()?;
        let fin = prf::verify_data(&self.master, true, &conn.transcript_hash());
        conn.send_handshake(&messages::frame(messages::FINISHED, &fin))
    }
}
