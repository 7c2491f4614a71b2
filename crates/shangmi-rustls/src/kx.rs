//! curveSM2 (NamedGroup 41): ephemeral ECDH on the SM2 curve, RFC 8998 section 2.
//!
//! Key shares are uncompressed points (65 bytes, 04 || x || y) as RFC 8446 section 4.2.8.2
//! requires of ECDHE groups; the shared secret is the 32-byte x of the product. A received
//! share that is not exactly that form, not on the curve or the point at infinity is refused
//! before any arithmetic uses it.

use std::sync::{Mutex, MutexGuard, OnceLock};

use rustls::crypto::{ActiveKeyExchange, CompletedKeyExchange, SharedSecret, SupportedKxGroup};
use rustls::{Error, NamedGroup, PeerMisbehaved};
use shangmi::sm2::{EphemeralPool, EphemeralSecret, VerifyingKey};

/// Key shares made 32 at a time with one shared inversion (each handshake takes one; a key
/// made alone costs about twice as much), shared by every connection of the process.
fn pool() -> &'static Mutex<EphemeralPool> {
    static POOL: OnceLock<Mutex<EphemeralPool>> = OnceLock::new();
    POOL.get_or_init(|| Mutex::new(EphemeralPool::new(32)))
}

/// curveSM2's code point.
pub const CURVE_SM2: NamedGroup = NamedGroup::Unknown(0x0029);

/// curveSM2 for rustls' `kx_groups`.
#[derive(Debug)]
pub struct CurveSm2;

/// The group to list in a provider's `kx_groups` (first, for SM clients: one key share then
/// suffices and the server needs no HelloRetryRequest).
pub static CURVE_SM2_GROUP: &dyn SupportedKxGroup = &CurveSm2;

/// The pool, locked. A poisoned lock only means another thread panicked while taking a key;
/// taken keys are wiped from the pool as they leave it, so what remains is unused.
fn locked_pool() -> MutexGuard<'static, EphemeralPool> {
    pool().lock().unwrap_or_else(|p| p.into_inner())
}

fn take_one(pool: &mut EphemeralPool) -> Result<EphemeralSecret, Error> {
    pool.take()
        .map_err(|_| rustls::crypto::GetRandomFailed.into())
}

/// A fresh ephemeral key from the pool.
pub(crate) fn ephemeral() -> Result<EphemeralSecret, Error> {
    take_one(&mut locked_pool())
}

/// `n` fresh ephemeral keys, taken under one lock.
pub(crate) fn take_ephemerals(n: usize) -> Result<Vec<EphemeralSecret>, Error> {
    let mut pool = locked_pool();
    (0..n).map(|_| take_one(&mut pool)).collect()
}

impl SupportedKxGroup for CurveSm2 {
    /// A server's exchange: the agreement [`crate::with_prepared`] put on hand for this peer
    /// share if there is one, else a fresh key and the agreement now.
    fn start_and_complete(&self, peer_pub_key: &[u8]) -> Result<CompletedKeyExchange, Error> {
        if let Some(done) = crate::prepared::take_prepared(peer_pub_key) {
            let (share, x) = done.into_parts();
            return Ok(CompletedKeyExchange {
                group: CURVE_SM2,
                pub_key: share.to_vec(),
                secret: SharedSecret::from(&x[..]),
            });
        }
        let kx = self.start()?;
        Ok(CompletedKeyExchange {
            group: CURVE_SM2,
            pub_key: kx.pub_key().to_vec(),
            secret: kx.complete(peer_pub_key)?,
        })
    }

    fn start(&self) -> Result<Box<dyn ActiveKeyExchange>, Error> {
        let secret = ephemeral()?;
        let share = secret.public_key().to_uncompressed();
        Ok(Box::new(Active { secret, share }))
    }

    fn name(&self) -> NamedGroup {
        CURVE_SM2
    }
}

struct Active {
    secret: EphemeralSecret,
    share: [u8; 65],
}

/// The peer's share as a validated point: uncompressed form only, on the curve, not infinity.
pub fn parse_key_share(share: &[u8]) -> Result<VerifyingKey, Error> {
    if share.len() != 65 || share[0] != 0x04 {
        return Err(PeerMisbehaved::InvalidKeyShare.into());
    }
    VerifyingKey::from_sec1_bytes(share).map_err(|_| PeerMisbehaved::InvalidKeyShare.into())
}

impl ActiveKeyExchange for Active {
    fn complete(self: Box<Self>, peer_pub_key: &[u8]) -> Result<SharedSecret, Error> {
        let peer = parse_key_share(peer_pub_key)?;
        let x = self
            .secret
            .diffie_hellman(&peer)
            .map_err(|_| Error::from(PeerMisbehaved::InvalidKeyShare))?;
        Ok(SharedSecret::from(&x.as_bytes()[..]))
    }

    fn pub_key(&self) -> &[u8] {
        &self.share
    }

    fn group(&self) -> NamedGroup {
        CURVE_SM2
    }
}
