//! The server's side of the handshake, one state per message expected: the suite chosen by the server's preference, the
//! certificate pair sent, client certificates required when configured (always for ECDHE),
//! and resumption by session ID.

use std::sync::Arc;

use shangmi::sm2::{DEFAULT_ID, EphemeralSecret, Exchange, Format, Role, Signature, VerifyingKey};
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::codec::{Reader, put_u24, put_vec16};
use crate::common::{Context, Message, Secrets};
use crate::config::{Peer, ServerConfig, verify_pair, verify_signing};
use crate::conn::random32;
use crate::error::Error;
use crate::messages::{self, ClientHello, ServerHello};
use crate::prf;
use crate::record::VERSION;
use crate::state::{State, expect};
use crate::suite::{KeyExchange, Suite};

/// The state that waits for a ClientHello.
pub(crate) fn start(config: Arc<ServerConfig>) -> Box<dyn State> {
    Box::new(ExpectClientHello { config })
}

/// What the server carries from the ClientHello on.
struct Handshake {
    config: Arc<ServerConfig>,
    suite: Suite,
    client_random: [u8; 32],
    server_random: [u8; 32],
    session_id: Vec<u8>,
}

/// The client's keys as its certificates gave them (the encryption key for ECDHE, or when
/// the client sent both certificates).
struct ClientKeys {
    certs: Vec<Vec<u8>>,
    sign: VerifyingKey,
    enc: Option<VerifyingKey>,
}

struct ExpectClientHello {
    config: Arc<ServerConfig>,
}

impl State for ExpectClientHello {
    fn handle(
        self: Box<Self>,
        cx: &mut Context,
        msg: Message<'_>,
    ) -> Result<Box<dyn State>, Error> {
        expect(cx, &msg, messages::CLIENT_HELLO)?;
        let (hello, version) = ClientHello::parse(msg.body())?;
        if version != VERSION {
            return Err(Error::ProtocolVersion(version));
        }
        cx.add(&msg);
        let config = self.config;
        let auth = config.client_auth.is_some();
        let suite = config
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
        let server_random = random32()?;
        // Resumption: a session we issued, for a suite the client still offers.
        let cached = (!hello.session_id.is_empty())
            .then(|| config.sessions.get(&hello.session_id))
            .flatten()
            .filter(|s| hello.suites.contains(&s.suite.id()));
        if let Some(s) = cached {
            let sh = ServerHello {
                random: server_random,
                session_id: s.id.clone(),
                suite: s.suite.id(),
            };
            cx.send_handshake(&sh.encode())?;
            let secrets = Secrets {
                suite: s.suite,
                client_random: hello.random,
                server_random,
                master: s.master,
            };
            cx.install_keys(&secrets);
            cx.send_change_cipher_spec()?;
            cx.send_finished(&secrets)?;
            let hs = Handshake {
                config,
                suite: s.suite,
                client_random: hello.random,
                server_random,
                session_id: s.id,
            };
            return Ok(Box::new(ExpectFinished {
                hs,
                secrets,
                resumed: true,
                client_certs: s.peer_certificates,
            }));
        }
        let hs = Handshake {
            config,
            suite,
            client_random: hello.random,
            server_random,
            session_id: random32()?.to_vec(),
        };
        let ephemeral = first_flight(cx, &hs)?;
        Ok(if hs.config.client_auth.is_some() {
            Box::new(ExpectCertificate { hs, ephemeral })
        } else {
            Box::new(ExpectClientKeyExchange {
                hs,
                ephemeral,
                client: None,
            })
        })
    }
}

/// A full handshake's flight: ServerHello, our certificates, the signed key exchange, a
/// CertificateRequest when configured and ServerHelloDone; the ephemeral key for ECDHE.
fn first_flight(cx: &mut Context, hs: &Handshake) -> Result<Option<EphemeralSecret>, Error> {
    let sh = ServerHello {
        random: hs.server_random,
        session_id: hs.session_id.clone(),
        suite: hs.suite.id(),
    };
    cx.send_handshake(&sh.encode())?;
    let (sign, enc) = (&hs.config.sign, &hs.config.enc);
    let mut chain: Vec<&[u8]> = vec![&sign.chain[0], &enc.chain[0]];
    chain.extend(sign.chain[1..].iter().map(Vec::as_slice));
    cx.send_handshake(&messages::encode_certificates(&chain))?;

    let mut tbs = Vec::with_capacity(64 + 1024);
    tbs.extend_from_slice(&hs.client_random);
    tbs.extend_from_slice(&hs.server_random);
    let mut ske = Vec::new();
    let mut ephemeral = None;
    match hs.suite.key_exchange() {
        KeyExchange::Ecc => {
            put_u24(&mut tbs, enc.chain[0].len());
            tbs.extend_from_slice(&enc.chain[0]);
        }
        KeyExchange::Ecdhe => {
            let eph = EphemeralSecret::random().map_err(|_| Error::Internal("random generator"))?;
            let params = messages::encode_ecdh_params(&eph.public_key().to_uncompressed());
            tbs.extend_from_slice(&params);
            ske.extend_from_slice(&params);
            ephemeral = Some(eph);
        }
    }
    let sig = sign
        .key
        .sign_with_id(DEFAULT_ID, &tbs)
        .map_err(|_| Error::Internal("signing"))?;
    put_vec16(&mut ske, &sig.to_der());
    cx.send_handshake(&messages::frame(messages::SERVER_KEY_EXCHANGE, &ske))?;
    if let Some((_, names)) = &hs.config.client_auth {
        cx.send_handshake(&messages::encode_certificate_request(names))?;
    }
    cx.send_handshake(&messages::frame(messages::SERVER_HELLO_DONE, &[]))?;
    Ok(ephemeral)
}

struct ExpectCertificate {
    hs: Handshake,
    ephemeral: Option<EphemeralSecret>,
}

impl State for ExpectCertificate {
    fn handle(
        self: Box<Self>,
        cx: &mut Context,
        msg: Message<'_>,
    ) -> Result<Box<dyn State>, Error> {
        expect(cx, &msg, messages::CERTIFICATE)?;
        let certs = messages::parse_certificates(msg.body())?;
        if certs.is_empty() {
            return Err(Error::Certificate(
                "the client sent no certificate, and one is required".into(),
            ));
        }
        let (verifier, _) = self
            .hs
            .config
            .client_auth
            .as_ref()
            .ok_or(Error::Internal("client auth"))?;
        // ECDHE needs the client's encryption key; ECC suites only its signing one.
        let (sign, enc) = if self.hs.suite.key_exchange() == KeyExchange::Ecdhe || certs.len() > 1 {
            let (sign, enc) = verify_pair(verifier, &certs, Peer::Client)?;
            (sign, Some(enc))
        } else {
            (verify_signing(verifier, &certs, Peer::Client)?, None)
        };
        cx.add(&msg);
        Ok(Box::new(ExpectClientKeyExchange {
            hs: self.hs,
            ephemeral: self.ephemeral,
            client: Some(ClientKeys { certs, sign, enc }),
        }))
    }
}

struct ExpectClientKeyExchange {
    hs: Handshake,
    ephemeral: Option<EphemeralSecret>,
    client: Option<ClientKeys>,
}

impl State for ExpectClientKeyExchange {
    fn handle(
        self: Box<Self>,
        cx: &mut Context,
        msg: Message<'_>,
    ) -> Result<Box<dyn State>, Error> {
        expect(cx, &msg, messages::CLIENT_KEY_EXCHANGE)?;
        let me = *self;
        let pms = client_key_exchange(&me.hs, me.ephemeral, me.client.as_ref(), msg.body())?;
        cx.add(&msg);
        let hs = me.hs;
        let secrets = Secrets {
            suite: hs.suite,
            client_random: hs.client_random,
            server_random: hs.server_random,
            master: prf::master_secret(&pms, &hs.client_random, &hs.server_random),
        };
        cx.install_keys(&secrets);
        Ok(match me.client {
            Some(client) => Box::new(ExpectCertificateVerify {
                hs,
                secrets,
                client,
            }),
            None => Box::new(ExpectFinished {
                hs,
                secrets,
                resumed: false,
                client_certs: Vec::new(),
            }),
        })
    }
}

/// The pre-master secret from the client's key exchange.
fn client_key_exchange(
    hs: &Handshake,
    ephemeral: Option<EphemeralSecret>,
    client: Option<&ClientKeys>,
    body: &[u8],
) -> Result<Zeroizing<Vec<u8>>, Error> {
    let mut r = Reader::new(body);
    match hs.suite.key_exchange() {
        KeyExchange::Ecc => {
            let ct = r.vec16("encrypted pre-master secret")?;
            r.end("client key exchange")?;
            let mut random = Zeroizing::new([0u8; 48]);
            getrandom::fill(&mut random[..]).map_err(|_| Error::Internal("randomness"))?;
            let decrypted = hs
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
            let peer = client
                .and_then(|c| c.enc.as_ref())
                .ok_or(Error::Internal("client key"))?;
            let eph = ephemeral.ok_or(Error::Internal("no ephemeral key"))?;
            let agreement = hs
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

struct ExpectCertificateVerify {
    hs: Handshake,
    secrets: Secrets,
    client: ClientKeys,
}

impl State for ExpectCertificateVerify {
    fn handle(
        self: Box<Self>,
        cx: &mut Context,
        msg: Message<'_>,
    ) -> Result<Box<dyn State>, Error> {
        expect(cx, &msg, messages::CERTIFICATE_VERIFY)?;
        let mut r = Reader::new(msg.body());
        let sig = messages::parse_signature(&mut r, "certificate verify")?;
        let sig = Signature::from_der(sig).map_err(|_| Error::Decode("certificate verify"))?;
        self.client
            .sign
            .verify_with_id(DEFAULT_ID, &cx.transcript_hash(), &sig)
            .map_err(|_| Error::DecryptError("the client's CertificateVerify"))?;
        cx.add(&msg);
        Ok(Box::new(ExpectFinished {
            hs: self.hs,
            secrets: self.secrets,
            resumed: false,
            client_certs: self.client.certs,
        }))
    }
}

/// The client's ChangeCipherSpec and Finished: after its flight (ours follow), or after
/// ours when resuming.
struct ExpectFinished {
    hs: Handshake,
    secrets: Secrets,
    resumed: bool,
    client_certs: Vec<Vec<u8>>,
}

impl State for ExpectFinished {
    fn handle(
        self: Box<Self>,
        cx: &mut Context,
        msg: Message<'_>,
    ) -> Result<Box<dyn State>, Error> {
        expect(cx, &msg, messages::FINISHED)?;
        cx.check_finished(&self.secrets, &msg)?;
        let hs = self.hs;
        if !self.resumed {
            cx.send_change_cipher_spec()?;
            cx.send_finished(&self.secrets)?;
            let session = self
                .secrets
                .into_session(hs.session_id.clone(), self.client_certs.clone());
            hs.config.sessions.put(hs.session_id, session);
        }
        Ok(cx.complete(hs.suite, self.resumed, self.client_certs))
    }

    fn expects_change_cipher_spec(&self) -> bool {
        true
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
