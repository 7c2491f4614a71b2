//! A presign pool for high-throughput signers: nonces k and the x coordinates of k G computed
//! ahead, in batches, with one shared inversion per batch.
//!
//! The trade-off: pooled nonces come straight from the operating system's random number
//! generator at refill time and are not hedged with the key and the message, so a broken
//! generator at that moment exposes every key they are used with. Each pair is handed out
//! once and wiped; the pool refills itself when empty.

use zeroize::{Zeroize, Zeroizing};

use super::Error;
use super::engine::{Engine, dispatch};
use super::keys::SigningKey;
use super::mul::fixed_base_many;
use super::point::{Affine, Jacobian, batch_to_affine};
use super::scalar::Scalar;
use super::signature::{Signature, digest};

/// One prepared nonce.
struct Presigned {
    k: Scalar,
    x1: [u8; 32],
}

impl Drop for Presigned {
    fn drop(&mut self) {
        self.k.zeroize();
        self.x1.zeroize();
    }
}

/// Prepared nonces for [`SigningKey::sign_with_pool`].
pub struct PresignPool {
    entries: Vec<Presigned>,
    batch: usize,
    engine: Engine,
}

impl core::fmt::Debug for PresignPool {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PresignPool")
            .field("ready", &self.entries.len())
            .field("batch", &self.batch)
            .finish()
    }
}

impl PresignPool {
    /// An empty pool that prepares `batch` nonces at a time (clamped to 1..=4096; 64 is a good
    /// size: the shared inversion is then a few percent of the work).
    pub fn new(batch: usize) -> Self {
        PresignPool {
            entries: Vec::new(),
            batch: batch.clamp(1, 4096),
            engine: Engine::best(),
        }
    }

    /// Nonces ready to use.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no nonce is ready (the next signature refills first).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Prepares another batch.
    pub fn refill(&mut self) -> Result<(), Error> {
        let mut ks = Vec::with_capacity(self.batch);
        let mut buf = Zeroizing::new(vec![0u8; 32 * self.batch]);
        getrandom::fill(&mut buf).map_err(|_| Error::Rng)?;
        for chunk in buf.chunks_exact(32) {
            let mut b = [0u8; 32];
            b.copy_from_slice(chunk);
            let k = Option::<Scalar>::from(Scalar::from_bytes(&b));
            b.zeroize();
            // 0 and values >= n (probability about 2^-32 each) are skipped.
            if let Some(k) = k.filter(|k| !bool::from(k.is_zero())) {
                ks.push(k);
            }
        }
        let xs: Vec<[u8; 32]> = dispatch!(self.engine, |a| {
            let points: Vec<Jacobian<_>> = fixed_base_many(a, &ks);
            let mut affine = vec![Affine::generator(a); points.len()];
            batch_to_affine(&points, &mut affine);
            affine.iter().map(|p| p.x.to_bytes()).collect()
        });
        self.entries
            .extend(ks.into_iter().zip(xs).map(|(k, x1)| Presigned { k, x1 }));
        Ok(())
    }

    fn take(&mut self) -> Result<Presigned, Error> {
        if self.entries.is_empty() {
            self.refill()?;
        }
        self.entries.pop().ok_or(Error::Rng)
    }
}

impl SigningKey {
    /// Signs `msg` (default ID) with a nonce from `pool`: one pooled nonce per signature, never
    /// reused. See [`PresignPool`] for what pooling trades.
    pub fn sign_with_pool(&self, pool: &mut PresignPool, msg: &[u8]) -> Result<Signature, Error> {
        self.sign_digest_with_pool(pool, &digest(self.z_default(), msg))
    }

    /// Signs a precomputed e with a nonce from `pool`.
    pub fn sign_digest_with_pool(
        &self,
        pool: &mut PresignPool,
        e: &[u8; 32],
    ) -> Result<Signature, Error> {
        loop {
            let p = pool.take()?;
            // A nonce unusable for this e (probability about 2^-255) is discarded.
            if let Ok(sig) = self.finish(e, &p.k, &p.x1) {
                return Ok(sig);
            }
        }
    }
}
