//! SM2 key exchange (GB/T 32918.3-2016).
//!
//! Each party has a static key pair and an identity, and makes a single-use ephemeral key
//! pair (r, R = r G) for the exchange. The initiator (A) sends R_A; the responder (B) answers
//! with R_B and, optionally, the confirmation S_B; the initiator checks S_B and answers with
//! S_A, which the responder checks. With x̄ = 2^127 + (x mod 2^127) of an ephemeral point:
//!
//! - t = d + x̄_own r mod n,
//! - U = t (P_peer + x̄_peer R_peer), which must not be infinity,
//! - K = KDF(x_U || y_U || Z_A || Z_B, klen),
//! - S_B = SM3(02 || y_U || SM3(x_U || Z_A || Z_B || x_RA || y_RA || x_RB || y_RB)), and S_A
//!   the same with 03.
//!
//! Both parties compute the same U; the role decides only which of the two Z, which
//! ephemeral point and which confirmation prefix come first. The secret parts (r, d, t) are
//! handled in constant time; the peer's points are public and validated by their type.

use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::cpu::Implementation as _;
use crate::sm2::Error;
use crate::sm2::arithmetic::engine::{Engine, dispatch};
use crate::sm2::arithmetic::mul::{double_base_vartime, fixed_base, variable_base};
use crate::sm2::arithmetic::point::{Affine, Jacobian};
use crate::sm2::arithmetic::scalar::{PublicScalar, Scalar, SecretScalar};
use crate::sm2::protocols::encrypt::random_scalar;
use crate::sm2::protocols::keys::{SigningKey, VerifyingKey};
use crate::sm3::{Kdf, Sm3};

/// Which side of the exchange this party is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A: sends its ephemeral point first, receives S_B, sends S_A.
    Initiator,
    /// B: answers with its ephemeral point and S_B, receives S_A.
    Responder,
}

/// A single-use ephemeral key pair. Consumed by the exchange; cannot be cloned; wiped on drop.
///
/// ```compile_fail
/// let e = shangmi::sm2::EphemeralSecret::random().unwrap();
/// let again = e.clone(); // single use: there is no second copy to reuse
/// ```
pub struct EphemeralSecret {
    pub(super) r: SecretScalar,
    pub(super) public: VerifyingKey,
}

impl core::fmt::Debug for EphemeralSecret {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("EphemeralSecret")
            .field("public", &self.public)
            .finish_non_exhaustive()
    }
}

impl EphemeralSecret {
    /// A fresh ephemeral key from the operating system's generator.
    pub fn random() -> Result<Self, Error> {
        Ok(Self::from_scalar(random_scalar()?, Engine::best()))
    }

    fn from_scalar(r: SecretScalar, engine: Engine) -> Self {
        let public = dispatch!(engine, |a| {
            let p = fixed_base(a, &r).to_affine();
            // r is in [1, n-1], so R is never infinity; that it is not is no secret.
            VerifyingKey::from_affine(
                &crate::ct::public(p.unwrap_or(Affine::generator(a))),
                engine,
            )
        });
        EphemeralSecret { r, public }
    }

    /// An ephemeral key from a caller-chosen r. Only for known-answer tests: an r used twice
    /// or predictable reveals the static private key.
    #[cfg(feature = "hazmat")]
    #[doc(hidden)]
    pub fn from_bytes_for_known_answer_tests(r: &[u8; 32]) -> Result<Self, Error> {
        Self::from_bytes_with(r, Engine::best())
    }

    #[cfg(any(feature = "hazmat", shangmi_ctgrind))]
    pub(crate) fn from_bytes_with(r: &[u8; 32], engine: Engine) -> Result<Self, Error> {
        let parsed = Scalar::from_bytes(r);
        let r = SecretScalar::new(parsed.unwrap_or(Scalar::ZERO));
        if !crate::ct::public_choice(parsed.is_some() & !r.is_zero()) {
            return Err(Error::InvalidNonce);
        }
        Ok(Self::from_scalar(r, engine))
    }

    /// The ephemeral half of an exchange from a key pair the application made and sent
    /// itself (the JCA hands SM2 key agreements their ephemeral key, as BouncyCastle's and
    /// Kona's do): the exchange consumes it, and the key must not serve another exchange.
    pub fn from_signing_key(key: SigningKey) -> Self {
        EphemeralSecret {
            r: key.d.clone(),
            public: key.public,
        }
    }

    /// R, the point sent to the peer.
    pub fn public_key(&self) -> &VerifyingKey {
        &self.public
    }
}

/// The outcome of an exchange: the shared key and the two confirmation values.
pub struct Agreement {
    key: Zeroizing<Vec<u8>>,
    /// The value this party sends (S_B from the responder, S_A from the initiator).
    ours: [u8; 32],
    /// The value expected from the peer.
    theirs: [u8; 32],
}

impl core::fmt::Debug for Agreement {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Agreement").finish_non_exhaustive()
    }
}

impl Agreement {
    /// The shared key, `key_len` bytes.
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// The shared key, owned (wiped on drop).
    pub fn into_key(mut self) -> Zeroizing<Vec<u8>> {
        core::mem::take(&mut self.key)
    }

    /// The confirmation value to send to the peer: S_B if this party is the responder, S_A if
    /// the initiator. Optional in the protocol: send it when both sides want confirmation.
    pub fn confirmation(&self) -> [u8; 32] {
        self.ours
    }

    /// Checks the peer's confirmation value (S_B at the initiator, S_A at the responder), in
    /// constant time.
    pub fn verify_confirmation(&self, theirs: &[u8]) -> Result<(), Error> {
        let ok = theirs.len() == 32 && crate::ct::public_choice(self.theirs.ct_eq(theirs));
        if ok {
            Ok(())
        } else {
            Err(Error::KeyConfirmation)
        }
    }
}

/// x̄ = 2^127 + (x mod 2^127) for the big-endian x coordinate.
fn x_bar(x: &[u8; 32]) -> Scalar {
    let mut b = [0u8; 32];
    b[16..].copy_from_slice(&x[16..]);
    b[16] = (b[16] & 0x7f) | 0x80;
    Scalar::from_bytes_reduced(&b)
}

/// What both roles share once U is known: the key and the confirmations.
#[allow(clippy::too_many_arguments)]
fn derive(
    role: Role,
    u: &[u8; 64],
    za: &[u8; 32],
    zb: &[u8; 32],
    ra: &[u8; 64],
    rb: &[u8; 64],
    key_len: usize,
) -> Result<Agreement, Error> {
    let mut z = Zeroizing::new([0u8; 128]);
    z[..64].copy_from_slice(u);
    z[64..96].copy_from_slice(za);
    z[96..].copy_from_slice(zb);
    // The KDF's 32-bit counter bounds the key length; past that, or past what memory holds,
    // the exchange fails instead of aborting the process.
    if key_len == 0 || key_len as u64 > crate::sm2::MAX_MESSAGE_LEN {
        return Err(Error::KeyExchange);
    }
    let mut key = Vec::new();
    key.try_reserve_exact(key_len)
        .map_err(|_| Error::KeyExchange)?;
    key.resize(key_len, 0);
    let mut key = Zeroizing::new(key);
    Kdf::new(&z[..])
        .fill(&mut key)
        .map_err(|_| Error::MessageTooLong)?;
    let mut inner = Sm3::new();
    inner.update(&u[..32]);
    inner.update(za);
    inner.update(zb);
    inner.update(ra);
    inner.update(rb);
    let inner = Zeroizing::new(inner.finalize());
    let confirm = |prefix: u8| {
        let mut h = Sm3::new();
        h.update(&[prefix]);
        h.update(&u[32..]);
        h.update(&*inner);
        h.finalize()
    };
    let (s_b, s_a) = (confirm(2), confirm(3));
    let (ours, theirs) = match role {
        Role::Responder => (s_b, s_a),
        Role::Initiator => (s_a, s_b),
    };
    Ok(Agreement { key, ours, theirs })
}

/// The exchange's last step after U, exposed for the standard's example (on its test curve,
/// where U is computed by a reference implementation). Not for applications.
#[cfg(feature = "hazmat")]
#[cfg(feature = "hazmat")]
#[doc(hidden)]
#[allow(clippy::too_many_arguments)]
pub fn derive_for_known_answer_tests(
    role: Role,
    u: &[u8; 64],
    za: &[u8; 32],
    zb: &[u8; 32],
    ra: &[u8; 64],
    rb: &[u8; 64],
    key_len: usize,
) -> Result<Agreement, Error> {
    derive(role, u, za, zb, ra, rb, key_len)
}

fn xy(p: &VerifyingKey) -> [u8; 64] {
    let (x, y) = p.coordinates();
    let mut out = [0u8; 64];
    out[..32].copy_from_slice(&x);
    out[32..].copy_from_slice(&y);
    out
}

/// The parameters of one exchange, as seen by one party.
#[derive(Clone, Copy, Debug)]
pub struct Exchange<'a> {
    /// This party's role.
    pub role: Role,
    /// This party's identity (the default ID is [`crate::sm2::DEFAULT_ID`]).
    pub own_id: &'a [u8],
    /// The peer's static public key.
    pub peer: &'a VerifyingKey,
    /// The peer's identity.
    pub peer_id: &'a [u8],
    /// The peer's ephemeral point R.
    pub peer_ephemeral: &'a VerifyingKey,
    /// The length of the shared key, in bytes.
    pub key_len: usize,
}

impl SigningKey {
    /// Runs this party's side of a key exchange with its single-use `ephemeral` key.
    /// Fails with [`Error::KeyExchange`] if U is infinity (a degenerate peer input) or the key
    /// length is 0 or over the KDF's limit ([`crate::sm2::MAX_MESSAGE_LEN`] bytes), and with [`Error::IdTooLong`] for an ID over 8191 bytes.
    pub fn key_exchange(
        &self,
        ephemeral: EphemeralSecret,
        ex: &Exchange<'_>,
    ) -> Result<Agreement, Error> {
        // Checked before any work, the same way `derive` checks it again.
        if ex.key_len == 0 || ex.key_len as u64 > crate::sm2::MAX_MESSAGE_LEN {
            return Err(Error::KeyExchange);
        }
        let own_z = if ex.own_id == crate::sm2::DEFAULT_ID {
            *self.z_default()
        } else {
            self.public.z(ex.own_id)?
        };
        let peer_z = ex.peer.z(ex.peer_id)?;
        let own_r = xy(&ephemeral.public);
        let peer_r = xy(ex.peer_ephemeral);
        let own_xbar = x_bar(own_r[..32].try_into().expect("32 bytes"));
        let peer_xbar = x_bar(peer_r[..32].try_into().expect("32 bytes"));
        // Wiped on every path out, the early returns included.
        let t = SecretScalar::new(self.d.add(&own_xbar.mul(&ephemeral.r)));
        drop(ephemeral);
        let u = dispatch!(self.engine, |a| {
            // P_peer + x̄ R_peer: public points and a public scalar.
            let r = Jacobian::from_affine(&ex.peer_ephemeral.affine(a));
            let xbar = PublicScalar::declassify(peer_xbar);
            let q = double_base_vartime(a, &PublicScalar::ZERO, &xbar, &r)
                .add_vartime(&Jacobian::from_affine(&ex.peer.affine(a)));
            let u = variable_base(a, &q, &t).to_affine();
            if !crate::ct::public_choice(u.is_some()) {
                return Err(Error::KeyExchange);
            }
            let u = u.unwrap_or(Affine::generator(a));
            let mut out = Zeroizing::new([0u8; 64]);
            out[..32].copy_from_slice(&u.x.to_bytes());
            out[32..].copy_from_slice(&u.y.to_bytes());
            Ok(out)
        });
        drop(t);
        let u = u?;
        match ex.role {
            Role::Initiator => derive(ex.role, &u, &own_z, &peer_z, &own_r, &peer_r, ex.key_len),
            Role::Responder => derive(ex.role, &u, &peer_z, &own_z, &peer_r, &own_r, ex.key_len),
        }
    }
}
