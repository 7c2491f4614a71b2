//! What each side brings to a connection: its certificate pairs and keys, whom it trusts, the
//! suites it allows; and the sessions it keeps for resumption. A configuration is shared by
//! every connection made with it (behind an `Arc`).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use der::{Decode, Encode};
use shangmi::sm2::{SigningKey, VerifyingKey};
use shangmi_pki::{Cert, Certificate, Verifier};
use x509_cert::ext::pkix::{KeyUsage, KeyUsages};
use zeroize::Zeroizing;

use crate::error::Error;
use crate::suite::Suite;

/// A certificate chain (DER, the end-entity certificate first) and its private key.
pub struct Identity {
    pub(crate) chain: Vec<Vec<u8>>,
    pub(crate) key: SigningKey,
}

impl Identity {
    /// Checks that `key` is the key of `chain[0]`.
    pub fn new(chain: Vec<Vec<u8>>, key: SigningKey) -> Result<Identity, Error> {
        let leaf = chain
            .first()
            .ok_or_else(|| Error::Certificate("an empty certificate chain".into()))?;
        if public_key(leaf)? != *key.verifying_key() {
            return Err(Error::Certificate(
                "the private key is not the certificate's".into(),
            ));
        }
        Ok(Identity { chain, key })
    }
}

impl core::fmt::Debug for Identity {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Identity")
            .field("certificates", &self.chain.len())
            .finish_non_exhaustive()
    }
}

/// A resumable session: its id, suite and master secret, and the peer's certificates as its
/// full handshake verified them, which a resumption brings back (a resumed client is the
/// client it was).
#[derive(Clone)]
pub(crate) struct Session {
    pub(crate) id: Vec<u8>,
    pub(crate) suite: Suite,
    pub(crate) master: Zeroizing<[u8; 48]>,
    pub(crate) peer_certificates: Vec<Vec<u8>>,
}

/// Sessions by key with the clock value of their insertion and the time they were made.
type Aged = (HashMap<Vec<u8>, (u64, Instant, Session)>, u64);

/// Sessions by key, at most `MAX_SESSIONS` (the oldest half goes when full), each for at most
/// its lifetime: a stolen or leaked master secret resumes nothing after that.
pub(crate) struct Sessions {
    map: Mutex<Aged>,
    pub(crate) lifetime: Duration,
}

impl Default for Sessions {
    fn default() -> Self {
        Sessions {
            map: Mutex::default(),
            lifetime: DEFAULT_SESSION_LIFETIME,
        }
    }
}

const MAX_SESSIONS: usize = 4096;

/// How long a session may be resumed unless configured otherwise (OpenSSL's and Tongsuo's
/// servers keep theirs 300 s; two hours is what TLS 1.3 tickets are usually given).
pub const DEFAULT_SESSION_LIFETIME: Duration = Duration::from_secs(2 * 60 * 60);

impl Sessions {
    pub(crate) fn put(&self, key: Vec<u8>, s: Session) {
        let Ok(mut g) = self.map.lock() else { return };
        let (map, clock) = &mut *g;
        *clock += 1;
        if map.len() >= MAX_SESSIONS {
            let lifetime = self.lifetime;
            map.retain(|_, (_, made, _)| made.elapsed() < lifetime);
        }
        if map.len() >= MAX_SESSIONS {
            let mut ages: Vec<u64> = map.values().map(|(t, _, _)| *t).collect();
            ages.sort_unstable();
            let cut = ages[ages.len() / 2];
            map.retain(|_, (t, _, _)| *t > cut);
        }
        map.insert(key, (*clock, Instant::now(), s));
    }

    /// The session under `key` while it is within its lifetime (an expired one is dropped).
    pub(crate) fn get(&self, key: &[u8]) -> Option<Session> {
        let mut g = self.map.lock().ok()?;
        let (_, made, s) = g.0.get(key)?;
        if made.elapsed() < self.lifetime {
            return Some(s.clone());
        }
        g.0.remove(key);
        None
    }
}

/// A client's configuration.
pub struct ClientConfig {
    pub(crate) verifier: Verifier,
    pub(crate) certs: Option<(Identity, Identity)>,
    pub(crate) suites: Vec<Suite>,
    pub(crate) sessions: Sessions,
    pub(crate) resume: bool,
}

impl ClientConfig {
    /// Trusting `roots` for servers' certificates, offering every suite (ECDHE only once
    /// client certificates are set: the SM2 key exchange needs them).
    pub fn new<C: Into<Cert>>(roots: impl IntoIterator<Item = C>) -> ClientConfig {
        ClientConfig {
            verifier: Verifier::new(roots),
            certs: None,
            suites: Suite::ALL.to_vec(),
            sessions: Sessions::default(),
            resume: true,
        }
    }

    /// Never offers to resume a session (every handshake full); sessions are kept otherwise.
    pub fn without_resumption(mut self) -> ClientConfig {
        self.resume = false;
        self
    }

    /// How long a session may be resumed after its full handshake (default
    /// [`DEFAULT_SESSION_LIFETIME`]; zero keeps none).
    pub fn with_session_lifetime(mut self, lifetime: Duration) -> ClientConfig {
        self.sessions.lifetime = lifetime;
        self
    }

    /// The client's signing and encryption certificates, for servers that ask.
    pub fn with_certificates(mut self, sign: Identity, enc: Identity) -> ClientConfig {
        self.certs = Some((sign, enc));
        self
    }

    /// Offers only these suites, in this order.
    pub fn with_suites(mut self, suites: &[Suite]) -> ClientConfig {
        self.suites = suites.to_vec();
        self
    }

    /// The suites offered: ECDHE ones only with client certificates.
    pub(crate) fn offered(&self) -> Vec<Suite> {
        self.suites
            .iter()
            .copied()
            .filter(|s| s.key_exchange() == crate::KeyExchange::Ecc || self.certs.is_some())
            .collect()
    }
}

/// A server's configuration.
pub struct ServerConfig {
    pub(crate) sign: Identity,
    pub(crate) enc: Identity,
    pub(crate) client_auth: Option<(Verifier, Vec<Vec<u8>>)>,
    pub(crate) suites: Vec<Suite>,
    pub(crate) sessions: Sessions,
}

impl ServerConfig {
    /// Serving with this signing and encryption pair (each chain leaf first; intermediates
    /// after the signing certificate's leaf are sent after both leaves).
    pub fn new(sign: Identity, enc: Identity) -> Result<ServerConfig, Error> {
        check_usage(&sign.chain[0], Role::Sign, "our signing certificate")?;
        check_usage(&enc.chain[0], Role::Encrypt, "our encryption certificate")?;
        Ok(ServerConfig {
            sign,
            enc,
            client_auth: None,
            suites: Suite::ALL.to_vec(),
            sessions: Sessions::default(),
        })
    }

    /// Requires client certificate pairs chaining to `roots` (and so allows the ECDHE suites).
    pub fn with_client_auth<C: Into<Cert>>(
        mut self,
        roots: impl IntoIterator<Item = C>,
    ) -> Result<ServerConfig, Error> {
        let roots: Vec<Cert> = roots.into_iter().map(Into::into).collect();
        let names = roots
            .iter()
            .map(|c| c.tbs_certificate().subject().to_der())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| Error::Internal("encoding a CA name"))?;
        self.client_auth = Some((Verifier::new(roots), names));
        Ok(self)
    }

    /// Checks client certificates against these CRLs too (PEM or DER as received, each
    /// counting for the CA that signed it); after [`ServerConfig::with_client_auth`].
    pub fn with_client_crls(mut self, crls: &[u8]) -> Result<ServerConfig, Error> {
        let (verifier, names) = self
            .client_auth
            .take()
            .ok_or_else(|| Error::Certificate("CRLs without client authentication".into()))?;
        let crls = shangmi_pki::crls(crls).map_err(|e| Error::Certificate(format!("CRL: {e}")))?;
        let verifier = verifier.with_crls(crls);
        self.client_auth = Some((verifier, names));
        Ok(self)
    }

    /// How long a session may be resumed after its full handshake (default
    /// [`DEFAULT_SESSION_LIFETIME`]; zero keeps none).
    pub fn with_session_lifetime(mut self, lifetime: Duration) -> ServerConfig {
        self.sessions.lifetime = lifetime;
        self
    }

    /// Accepts only these suites, preferring them in this order.
    pub fn with_suites(mut self, suites: &[Suite]) -> ServerConfig {
        self.suites = suites.to_vec();
        self
    }
}

pub(crate) fn parse(der: &[u8]) -> Result<Certificate, Error> {
    Certificate::from_der(der).map_err(|e| Error::Certificate(format!("does not parse: {e}")))
}

pub(crate) fn public_key(der: &[u8]) -> Result<VerifyingKey, Error> {
    key_of(&parse(der)?)
}

fn key_of(c: &Certificate) -> Result<VerifyingKey, Error> {
    shangmi_pki::public_key(c.tbs_certificate().subject_public_key_info())
        .map_err(|e| Error::Certificate(format!("not an SM2 key: {e}")))
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Sign,
    Encrypt,
}

/// The key usage the certificate's role needs, when the certificate states its usage.
pub(crate) fn check_usage(der: &[u8], role: Role, what: &str) -> Result<(), Error> {
    check_usage_of(&parse(der)?, role, what)
}

fn check_usage_of(c: &Certificate, role: Role, what: &str) -> Result<(), Error> {
    let ku = c
        .tbs_certificate()
        .get_extension::<KeyUsage>()
        .map_err(|e| Error::Certificate(format!("{what}: key usage: {e}")))?;
    let Some((_, ku)) = ku else { return Ok(()) };
    let ok = match role {
        Role::Sign => ku.0.contains(KeyUsages::DigitalSignature),
        Role::Encrypt => {
            ku.0.contains(KeyUsages::KeyEncipherment) || ku.0.contains(KeyUsages::KeyAgreement)
        }
    };
    if ok {
        Ok(())
    } else {
        Err(Error::Certificate(format!(
            "{what}: key usage lacks {}",
            match role {
                Role::Sign => "digitalSignature",
                Role::Encrypt => "keyEncipherment",
            }
        )))
    }
}

/// The peer's certificates as sent, each keeping its bytes (what its signature covers).
fn parse_all(certs: &[Vec<u8>]) -> Result<Vec<Cert>, Error> {
    certs
        .iter()
        .map(|d| Cert::from_der(d).map_err(|e| Error::Certificate(format!("does not parse: {e}"))))
        .collect()
}

/// The peer's signing and encryption certificates verified (chains, usage, and the server's
/// name on the signing certificate when one is expected); their public keys.
pub(crate) fn verify_pair(
    verifier: &Verifier,
    certs: &[Vec<u8>],
    peer: Peer<'_>,
) -> Result<(VerifyingKey, VerifyingKey), Error> {
    if certs.len() < 2 {
        return Err(Error::Certificate(
            "one certificate where TLCP sends two (signing, then encryption)".into(),
        ));
    }
    let certs = parse_all(certs)?;
    let sign = verify_signing_cert(verifier, &certs, peer)?;
    verify_one(verifier, &certs, 1, "encryption certificate")?;
    check_usage_of(&certs[1], Role::Encrypt, "encryption certificate")?;
    shangmi_pki::check_extended(&certs[1], peer.purpose())
        .map_err(|e| Error::Certificate(format!("encryption certificate: {e}")))?;
    Ok((sign, key_of(&certs[1])?))
}

/// Whose certificates are being verified.
#[derive(Clone, Copy)]
pub(crate) enum Peer<'a> {
    /// A server's, which must be for this host name or address.
    Server(&'a str),
    /// A client's.
    Client,
}

impl Peer<'_> {
    fn purpose(self) -> shangmi_pki::Purpose {
        match self {
            Peer::Server(_) => shangmi_pki::Purpose::ServerAuth,
            Peer::Client => shangmi_pki::Purpose::ClientAuth,
        }
    }
}

/// A client's signing certificate alone: what an ECC suite uses of a client (some clients,
/// tjfoc/gmsm's among them, send no encryption certificate there).
pub(crate) fn verify_signing(
    verifier: &Verifier,
    certs: &[Vec<u8>],
    peer: Peer<'_>,
) -> Result<VerifyingKey, Error> {
    verify_signing_cert(verifier, &parse_all(certs)?, peer)
}

fn verify_signing_cert(
    verifier: &Verifier,
    certs: &[Cert],
    peer: Peer<'_>,
) -> Result<VerifyingKey, Error> {
    verify_one(verifier, certs, 0, "signing certificate")?;
    shangmi_pki::check_signing(&certs[0], peer.purpose())
        .map_err(|e| Error::Certificate(format!("signing certificate: {e}")))?;
    if let Peer::Server(name) = peer {
        shangmi_pki::check_host(&certs[0], name)
            .map_err(|e| Error::Certificate(format!("signing certificate: {e}")))?;
    }
    key_of(&certs[0])
}

fn verify_one(verifier: &Verifier, certs: &[Cert], i: usize, what: &str) -> Result<(), Error> {
    verifier
        .verify(&certs[i], certs)
        .map(drop)
        .map_err(|e| Error::Certificate(format!("{what}: {e}")))
}
