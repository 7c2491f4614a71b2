//! The client's side of the handshake, one state per message expected: a full handshake with
//! either key exchange, client certificates when the server asks, and resumption of a
//! session the server remembers.

use std::sync::Arc;

use shangmi::sm2::{DEFAULT_ID, EphemeralSecret, Exchange, Format, Role, Signature, VerifyingKey};
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::codec::{Reader, put_u24, put_vec16};
use crate::common::{Context, Message, Secrets};
use crate::config::{ClientConfig, Peer, Session, verify_pair};
use crate::conn::random32;
use crate::error::Error;
use crate::messages::{self, ClientHello, ServerHello};
use crate::prf;
use crate::state::{State, expect, unexpected};
use crate::suite::{KeyExchange, Suite};

/// Sends the ClientHello: the state that waits for the ServerHello.
pub(crate) fn start(
    cx: &mut Context,
    config: Arc<ClientConfig>,
    name: &str,
) -> Result<Box<dyn State>, Error> {
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
    cx.send_handshake(&hello.encode())?;
    Ok(Box::new(ExpectServerHello {
        config,
        name: name.to_string(),
        random,
        offered,
        offered_session,
    }))
}

/// What the client carries from the ServerHello on.
struct Handshake {
    config: Arc<ClientConfig>,
    name: String,
    suite: Suite,
    client_random: [u8; 32],
    server_random: [u8; 32],
    session_id: Vec<u8>,
}

struct ExpectServerHello {
    config: Arc<ClientConfig>,
    name: String,
    random: [u8; 32],
    offered: Vec<Suite>,
    offered_session: Option<Session>,
}

impl State for ExpectServerHello {
    fn handle(
        self: Box<Self>,
        cx: &mut Context,
        msg: Message<'_>,
    ) -> Result<Box<dyn State>, Error> {
        expect(cx, &msg, messages::SERVER_HELLO)?;
        let sh = ServerHello::parse(msg.body())?;
        let suite = Suite::from_id(sh.suite)
            .filter(|s| self.offered.contains(s))
            .ok_or(Error::IllegalParameter(
                "the server chose a suite not offered",
            ))?;
        cx.add(&msg);
        let hs = Handshake {
            config: self.config,
            name: self.name,
            suite,
            client_random: self.random,
            server_random: sh.random,
            session_id: sh.session_id,
        };
        let resumed = self
            .offered_session
            .filter(|s| !hs.session_id.is_empty() && bool::from(s.id.ct_eq(&hs.session_id)));
        let Some(session) = resumed else {
            return Ok(Box::new(ExpectCertificate { hs }));
        };
        if session.suite != suite {
            return Err(Error::IllegalParameter(
                "a resumed session with another suite",
            ));
        }
        let secrets = Secrets {
            suite,
            client_random: hs.client_random,
            server_random: hs.server_random,
            master: session.master,
        };
        cx.install_keys(&secrets);
        Ok(Box::new(ExpectFinished {
            hs,
            secrets,
            resumed: true,
            peer_certs: session.peer_certificates,
        }))
    }
}

struct ExpectCertificate {
    hs: Handshake,
}

impl State for ExpectCertificate {
    fn handle(
        self: Box<Self>,
        cx: &mut Context,
        msg: Message<'_>,
    ) -> Result<Box<dyn State>, Error> {
        expect(cx, &msg, messages::CERTIFICATE)?;
        let certs = messages::parse_certificates(msg.body())?;
        let (sign, enc) = verify_pair(
            &self.hs.config.verifier,
            &certs,
            Peer::Server(&self.hs.name),
        )?;
        cx.add(&msg);
        Ok(Box::new(ExpectServerKeyExchange {
            hs: self.hs,
            certs,
            sign,
            enc,
        }))
    }
}

struct ExpectServerKeyExchange {
    hs: Handshake,
    certs: Vec<Vec<u8>>,
    sign: VerifyingKey,
    enc: VerifyingKey,
}

impl State for ExpectServerKeyExchange {
    fn handle(
        self: Box<Self>,
        cx: &mut Context,
        msg: Message<'_>,
    ) -> Result<Box<dyn State>, Error> {
        expect(cx, &msg, messages::SERVER_KEY_EXCHANGE)?;
        let body = msg.body();
        let mut r = Reader::new(body);
        let mut tbs = Vec::with_capacity(64 + 1024);
        tbs.extend_from_slice(&self.hs.client_random);
        tbs.extend_from_slice(&self.hs.server_random);
        let mut ephemeral = None;
        match self.hs.suite.key_exchange() {
            KeyExchange::Ecc => {
                // Signed: both randoms and the encryption certificate with its 3-byte length.
                let enc = &self.certs[1];
                put_u24(&mut tbs, enc.len());
                tbs.extend_from_slice(enc);
            }
            KeyExchange::Ecdhe => {
                let point = messages::parse_ecdh_params(&mut r)?;
                let eph = VerifyingKey::from_sec1_bytes(point)
                    .map_err(|_| Error::IllegalParameter("the server's ECDHE point"))?;
                tbs.extend_from_slice(&body[..body.len() - r.rest_len()]);
                ephemeral = Some(eph);
            }
        }
        let sig = messages::parse_signature(&mut r, "server key exchange signature")?;
        let sig =
            Signature::from_der(sig).map_err(|_| Error::Decode("server key exchange signature"))?;
        self.sign
            .verify_with_id(DEFAULT_ID, &tbs, &sig)
            .map_err(|_| Error::DecryptError("the server's key exchange signature"))?;
        cx.add(&msg);
        Ok(Box::new(ExpectServerHelloDone {
            hs: self.hs,
            server: ServerKeys {
                certs: self.certs,
                enc: self.enc,
                ephemeral,
            },
            cert_requested: false,
        }))
    }
}

/// The server's keys as its certificates and key exchange gave them.
struct ServerKeys {
    certs: Vec<Vec<u8>>,
    enc: VerifyingKey,
    ephemeral: Option<VerifyingKey>,
}

/// A CertificateRequest (once) may come before the ServerHelloDone.
struct ExpectServerHelloDone {
    hs: Handshake,
    server: ServerKeys,
    cert_requested: bool,
}

impl State for ExpectServerHelloDone {
    fn handle(
        mut self: Box<Self>,
        cx: &mut Context,
        msg: Message<'_>,
    ) -> Result<Box<dyn State>, Error> {
        match msg.typ {
            messages::CERTIFICATE_REQUEST if !self.cert_requested => {
                messages::parse_certificate_request(msg.body())?;
                cx.add(&msg);
                self.cert_requested = true;
                Ok(self)
            }
            messages::SERVER_HELLO_DONE => {
                if !msg.body().is_empty() {
                    return Err(Error::Decode("server hello done"));
                }
                cx.add(&msg);
                let secrets = self.flight(cx)?;
                Ok(Box::new(ExpectFinished {
                    hs: self.hs,
                    secrets,
                    resumed: false,
                    peer_certs: self.server.certs,
                }))
            }
            _ => Err(unexpected(cx)),
        }
    }
}

impl ExpectServerHelloDone {
    /// Our flight: certificates if asked, the key exchange, CertificateVerify,
    /// ChangeCipherSpec and Finished.
    fn flight(&self, cx: &mut Context) -> Result<Secrets, Error> {
        let hs = &self.hs;
        let ecdhe = hs.suite.key_exchange() == KeyExchange::Ecdhe;
        let certs = hs.config.certs.as_ref();
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
            cx.send_handshake(&messages::encode_certificates(&chain))?;
        }
        let server_enc = &self.server.enc;
        let mut cke = Vec::new();
        let pms: Zeroizing<Vec<u8>> = match hs.suite.key_exchange() {
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
                    .server
                    .ephemeral
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
        cx.send_handshake(&messages::frame(messages::CLIENT_KEY_EXCHANGE, &cke))?;
        if let Some((sign, _)) = send_certs {
            let h = cx.transcript_hash();
            let sig = sign
                .key
                .sign_with_id(DEFAULT_ID, &h)
                .map_err(|_| Error::Internal("signing"))?;
            let mut b = Vec::new();
            put_vec16(&mut b, &sig.to_der());
            cx.send_handshake(&messages::frame(messages::CERTIFICATE_VERIFY, &b))?;
        }
        let secrets = Secrets {
            suite: hs.suite,
            client_random: hs.client_random,
            server_random: hs.server_random,
            master: prf::master_secret(&pms, &hs.client_random, &hs.server_random),
        };
        cx.install_keys(&secrets);
        cx.send_change_cipher_spec()?;
        cx.send_finished(&secrets)?;
        Ok(secrets)
    }
}

/// The server's ChangeCipherSpec and Finished: after our flight, or first when resuming
/// (ours follow).
struct ExpectFinished {
    hs: Handshake,
    secrets: Secrets,
    resumed: bool,
    peer_certs: Vec<Vec<u8>>,
}

impl State for ExpectFinished {
    fn handle(
        self: Box<Self>,
        cx: &mut Context,
        msg: Message<'_>,
    ) -> Result<Box<dyn State>, Error> {
        expect(cx, &msg, messages::FINISHED)?;
        cx.check_finished(&self.secrets, &msg)?;
        if self.resumed {
            cx.send_change_cipher_spec()?;
            cx.send_finished(&self.secrets)?;
        }
        let hs = self.hs;
        if !hs.session_id.is_empty() {
            let session = self
                .secrets
                .into_session(hs.session_id, self.peer_certs.clone());
            hs.config.sessions.put(hs.name.into_bytes(), session);
        }
        Ok(cx.complete(hs.suite, self.resumed, self.peer_certs))
    }

    fn expects_change_cipher_spec(&self) -> bool {
        true
    }
}
