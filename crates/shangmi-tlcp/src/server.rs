//! The server's side of the handshake: the suite chosen by the server's preference, the
//! certificate pair sent, client certificates required when configured (always for ECDHE),
//! and resumption by session ID.

use std::sync::Arc;

use shangmi::sm2::{DEFAULT_ID, EphemeralSecret, Exchange, Format, Role, Signature, VerifyingKey};
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::codec::{Reader, put_u24, put_vec16};
use crate::config::{Peer, ServerConfig, Session, verify_pair, verify_signing};
use crate::conn::{Agreed, Connection, random32};
use crate::error::Error;
use crate::messages::{self, ClientHello, ServerHello};
use crate::prf;
use crate::record::VERSION;
use crate::suite::{KeyExchange, Suite};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Step {
    ClientHello,
    Certificate,
    KeyExchange,
    CertificateVerify,
    Finished,
    ResumedFinished,
}

pub(crate) struct ServerState {
    config: Arc<ServerConfig>,
    step: Step,
    suite: Suite,
    client_random: [u8; 32],
    server_random: [u8; 32],
    session_id: Vec<u8>,
    ephemeral: Option<EphemeralSecret>,
    client_certs: Vec<Vec<u8>>,
    client_sign: Option<VerifyingKey>,
    client_enc: Option<VerifyingKey>,
    master: Zeroizing<[u8; 48]>,
}

impl ServerState {
    pub(crate) fn new(config: Arc<ServerConfig>) -> ServerState {
        ServerState {
            config,
            step: Step::ClientHello,
            suite: Suite::ECC_SM4_CBC_SM3,
            client_random: [0; 32],
            server_random: [0; 32],
            session_id: Vec::new(),
            ephemeral: None,
            client_certs: Vec::new(),
            client_sign: None,
            client_enc: None,
            master: Zeroizing::new([0; 48]),
        }
    }

    pub(crate) fn awaiting_finished(&self) -> bool {
        matches!(self.step, Step::Finished | Step::ResumedFinished)
    }

    pub(crate) fn handle(
        &mut self,
        conn: &mut Connection,
        typ: u8,
        msg: &[u8],
    ) -> Result<bool, Error> {
        let body = &msg[4..];
        let before = conn.transcript_hash();
        match (self.step, typ) {
            (Step::ClientHello, messages::CLIENT_HELLO) => {
                conn.transcript.update(msg);
                self.client_hello(conn, body)?;
            }
            (Step::Certificate, messages::CERTIFICATE) => {
                let certs = messages::parse_certificates(body)?;
                if certs.is_empty() {
                    return Err(Error::Certificate(
                        "the client sent no certificate, and one is required".into(),
                    ));
                }
                let (verifier, _) = self
                    .config
                    .client_auth
                    .as_ref()
                    .ok_or(Error::Internal("client auth"))?;
                // ECDHE needs the client's encryption key; ECC suites only its signing one.
                if self.suite.key_exchange() == KeyExchange::Ecdhe || certs.len() > 1 {
                    let (sign, enc) = verify_pair(verifier, &certs, Peer::Client)?;
                    self.client_sign = Some(sign);
                    self.client_enc = Some(enc);
                } else {
                    self.client_sign = Some(verify_signing(verifier, &certs, Peer::Client)?);
                }
                self.client_certs = certs;
                conn.transcript.update(msg);
                self.step = Step::KeyExchange;
            }
            (Step::KeyExchange, messages::CLIENT_KEY_EXCHANGE) => {
                let pms = self.client_key_exchange(body)?;
                conn.transcript.update(msg);
                self.master = prf::master_secret(&pms, &self.client_random, &self.server_random);
                conn.install_keys(
                    self.suite,
                    &self.master,
                    &self.client_random,
                    &self.server_random,
                    false,
                );
                self.step = if self.client_sign.is_some() {
                    Step::CertificateVerify
                } else {
                    Step::Finished
                };
            }
            (Step::CertificateVerify, messages::CERTIFICATE_VERIFY) => {
                let mut r = Reader::new(body);
                let sig = messages::parse_signature(&mut r, "certificate verify")?;
                let sig =
                    Signature::from_der(sig).map_err(|_| Error::Decode("certificate verify"))?;
                let key = self
                    .client_sign
                    .as_ref()
                    .ok_or(Error::Internal("client key"))?;
                key.verify_with_id(DEFAULT_ID, &before, &sig)
                    .map_err(|_| Error::DecryptError("the client's CertificateVerify"))?;
                conn.transcript.update(msg);
                self.step = Step::Finished;
            }
            (Step::Finished | Step::ResumedFinished, messages::FINISHED) => {
                if !conn.peer_encrypting() {
                    return Err(Error::UnexpectedMessage(
                        "finished before change cipher spec",
                    ));
                }
                let want = prf::verify_data(&self.master, true, &before);
                if body.len() != 12 || !bool::from(want.ct_eq(body)) {
                    return Err(Error::DecryptError("the client's Finished"));
                }
                conn.transcript.update(msg);
                let resumed = self.step == Step::ResumedFinished;
                if !resumed {
                    conn.send_change_cipher_spec()?;
                    let ours = prf::verify_data(&self.master, false, &conn.transcript_hash());
                    conn.send_handshake(&messages::frame(messages::FINISHED, &ours))?;
                    self.config.sessions.put(
                        self.session_id.clone(),
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
                    peer_certificates: core::mem::take(&mut self.client_certs),
                });
                return Ok(true);
            }
            _ => {
                return Err(Error::UnexpectedMessage(
                    "handshake message out of order (server)",
                ));
            }
        }
        Ok(false)
    }

    fn client_hello(&mut self, conn: &mut Connection, body: &[u8]) -> Result<(), Error> {
        let (hello, version) = ClientHello::parse(body)?;
        if version != VERSION {
            return Err(Error::ProtocolVersion(version));
        }
        let auth = self.config.client_auth.is_some();
        let suite = self
            .config
            .suites
            .iter()
            .copied()
            .filter(|s| s.key_exchange() == KeyExchange::Ecc || auth)
            .find(|s| hello.suites.contains(&s.id()))
            .ok_or_else(|| {
                Error::HandshakeFailure(if auth {
                    "no TLCP suite in common".into()
                } else {
                    "no TLCP suite in common (ECDHE needs --client-ca: client certificates)".into()
                })
            })?;
        self.client_random = hello.random;
        self.server_random = random32()?;
        // Resumption: a session we issued, for a suite the client still offers.
        let cached = (!hello.session_id.is_empty())
            .then(|| self.config.sessions.get(&hello.session_id))
            .flatten()
            .filter(|s| hello.suites.contains(&s.suite.id()));
        if let Some(s) = cached {
            self.suite = s.suite;
            self.session_id = s.id.clone();
            self.master = s.master.clone();
            let sh = ServerHello {
                random: self.server_random,
                session_id: s.id,
                suite: s.suite.id(),
            };
            conn.send_handshake(&sh.encode())?;
            conn.install_keys(
                self.suite,
                &self.master,
                &self.client_random,
                &self.server_random,
                false,
            );
            conn.send_change_cipher_spec()?;
            let fin = prf::verify_data(&self.master, false, &conn.transcript_hash());
            conn.send_handshake(&messages::frame(messages::FINISHED, &fin))?;
            self.step = Step::ResumedFinished;
            return Ok(());
        }
        self.suite = suite;
        self.session_id = random32()?.to_vec();
        let sh = ServerHello {
            random: self.server_random,
            session_id: self.session_id.clone(),
            suite: suite.id(),
        };
        conn.send_handshake(&sh.encode())?;
        let (sign, enc) = (&self.config.sign, &self.config.enc);
        let mut chain: Vec<&[u8]> = vec![&sign.chain[0], &enc.chain[0]];
        chain.extend(sign.chain[1..].iter().map(Vec::as_slice));
        conn.send_handshake(&messages::encode_certificates(&chain))?;

        let mut tbs = Vec::with_capacity(64 + 1024);
        tbs.extend_from_slice(&self.client_random);
        tbs.extend_from_slice(&self.server_random);
        let mut ske = Vec::new();
        match suite.key_exchange() {
            KeyExchange::Ecc => {
                put_u24(&mut tbs, enc.chain[0].len());
                tbs.extend_from_slice(&enc.chain[0]);
            }
            KeyExchange::Ecdhe => {
                let eph =
                    EphemeralSecret::random().map_err(|_| Error::Internal("random generator"))?;
                let params = messages::encode_ecdh_params(&eph.public_key().to_uncompressed());
                tbs.extend_from_slice(&params);
                ske.extend_from_slice(&params);
                self.ephemeral = Some(eph);
            }
        }
        let sig = sign
            .key
            .sign_with_id(DEFAULT_ID, &tbs)
            .map_err(|_| Error::Internal("signing"))?;
        put_vec16(&mut ske, &sig.to_der());
        conn.send_handshake(&messages::frame(messages::SERVER_KEY_EXCHANGE, &ske))?;
        if let Some((_, names)) = &self.config.client_auth {
            conn.send_handshake(&messages::encode_certificate_request(names))?;
            self.step = Step::Certificate;
        } else {
            self.step = Step::KeyExchange;
        }
        conn.send_handshake(&messages::frame(messages::SERVER_HELLO_DONE, &[]))
    }

    fn client_key_exchange(&mut self, body: &[u8]) -> Result<Zeroizing<Vec<u8>>, Error> {
        let mut r = Reader::new(body);
        match self.suite.key_exchange() {
            KeyExchange::Ecc => {
                let ct = r.vec16("encrypted pre-master secret")?;
                r.end("client key exchange")?;
                let mut random = Zeroizing::new([0u8; 48]);
                getrandom::fill(&mut random[..]).map_err(|_| Error::Internal("randomness"))?;
                let decrypted = self
                    .config
                    .enc
                    .key
                    .decrypt(ct, Format::Der)
                    .map(Zeroizing::new);
                Ok(premaster(decrypted.ok(), &random))
            }
            KeyExchange::Ecdhe => {
                // GB/T 38636 wraps the parameters in a 2-byte length; most peers do not.
                if body.len() >= 2
                    && usize::from(u16::from_be_bytes([body[0], body[1]])) == body.len() - 2
                {
                    r.u16("client key exchange length")?;
                }
                let point = messages::parse_ecdh_params(&mut r)?;
                r.end("client key exchange")?;
                let peer_eph = VerifyingKey::from_sec1_bytes(point)
                    .map_err(|_| Error::IllegalParameter("the client's ECDHE point"))?;
                let peer = self
                    .client_enc
                    .as_ref()
                    .ok_or(Error::Internal("client key"))?;
                let eph = self
                    .ephemeral
                    .take()
                    .ok_or(Error::Internal("no ephemeral key"))?;
                let agreement = self
                    .config
                    .enc
                    .key
                    .key_exchange(
                        eph,
                        &Exchange {
                            role: Role::Initiator,
                            own_id: DEFAULT_ID,
                            peer,
                            peer_id: DEFAULT_ID,
                            peer_ephemeral: &peer_eph,
                            key_len: 48,
                        },
                    )
                    .map_err(|_| Error::IllegalParameter("the SM2 key exchange"))?;
                Ok(agreement.into_key())
            }
        }
    }
}

/// The ECC suites' pre-master secret: what the client encrypted when it decrypted to 48 bytes
/// that start with TLCP's version, a random secret otherwise, chosen without a branch on
/// which. A bad ClientKeyExchange then fails at the client's Finished like any other wrong
/// key, rather than with an alert of its own that tells an attacker which check it failed.
fn premaster(decrypted: Option<Zeroizing<Vec<u8>>>, random: &[u8; 48]) -> Zeroizing<Vec<u8>> {
    use subtle::ConditionallySelectable;
    let mut take = subtle::Choice::from(0);
    let mut got = Zeroizing::new([0u8; 48]);
    if let Some(d) = decrypted.filter(|d| d.len() == 48) {
        got.copy_from_slice(&d);
        take = got[..2].ct_eq(&crate::record::VERSION.to_be_bytes());
    }
    let mut out = Zeroizing::new(vec![0u8; 48]);
    for ((o, g), r) in out.iter_mut().zip(got.iter()).zip(random) {
        *o = u8::conditional_select(r, g, take);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::premaster;
    use zeroize::Zeroizing;

    #[test]
    fn a_bad_premaster_secret_becomes_a_random_one() {
        let random = [7u8; 48];
        let mut good = vec![0x01, 0x01];
        good.extend([9u8; 46]);
        assert_eq!(
            *premaster(Some(Zeroizing::new(good.clone())), &random),
            good
        );
        let mut wrong_version = good.clone();
        wrong_version[1] = 0x03;
        assert_eq!(
            *premaster(Some(Zeroizing::new(wrong_version)), &random),
            random
        );
        assert_eq!(
            *premaster(Some(Zeroizing::new(good[..47].to_vec())), &random),
            random
        );
        assert_eq!(*premaster(None, &random), random);
    }
}
