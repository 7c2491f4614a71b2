//! Ephemeral key pairs made ahead in batches, for servers and clients that make many
//! key exchanges (a TLS endpoint makes one curveSM2 key share per handshake): the fixed-base
//! multiplications of a batch share one inversion, which a key made alone pays for itself.
//!
//! The same trade-off and guards as [`crate::sm2::PresignPool`]: the keys come from the
//! operating system's generator at refill time, each is handed out once and its slot wiped,
//! the storage is wiped when it grows and when the pool is dropped, and a pool in a process
//! other than the one that filled it (after `fork`) throws its keys away first.

use zeroize::Zeroize;

use crate::sm2::Error;
use crate::sm2::arithmetic::engine::dispatch;
use crate::sm2::arithmetic::mul::fixed_base_many;
use crate::sm2::arithmetic::point::{Affine, Jacobian, batch_to_affine};
use crate::sm2::arithmetic::scalar::{Scalar, SecretScalar};
use crate::sm2::protocols::keys::VerifyingKey;
use crate::sm2::protocols::kx::EphemeralSecret;
use crate::sm2::protocols::pool::{Prepared, fresh_scalars};

/// One prepared key: plain data, so its slot can be wiped in place when it is handed out.
#[derive(Clone, Copy, Zeroize)]
struct Slot {
    r: Scalar,
    public: [u8; 65],
}

/// Prepared ephemeral keys for [`EphemeralPool::take`].
pub struct EphemeralPool {
    store: Prepared<Slot>,
}

impl core::fmt::Debug for EphemeralPool {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("EphemeralPool")
            .field("ready", &self.store.ready)
            .field("batch", &self.store.batch)
            .finish()
    }
}

impl EphemeralPool {
    /// An empty pool that prepares `batch` keys at a time (clamped to 1..=4096).
    pub fn new(batch: usize) -> Self {
        EphemeralPool {
            store: Prepared::new(batch),
        }
    }

    /// Keys ready to hand out.
    pub fn len(&self) -> usize {
        self.store.len()
    }

    /// Whether no key is ready (the next `take` refills first).
    pub fn is_empty(&self) -> bool {
        self.store.len() == 0
    }

    fn refill(&mut self) -> Result<(), Error> {
        let rs = fresh_scalars(self.store.batch)?;
        let publics: Vec<[u8; 65]> = dispatch!(self.store.engine, |a| {
            let points: Vec<Jacobian<_>> = fixed_base_many(a, &rs);
            let mut affine = vec![Affine::generator(a); points.len()];
            batch_to_affine(&points, &mut affine);
            // Public points: what the key shares send.
            affine
                .iter()
                .map(|p| {
                    let mut out = [0u8; 65];
                    out[0] = 4;
                    out[1..33].copy_from_slice(&p.x.to_bytes());
                    out[33..].copy_from_slice(&p.y.to_bytes());
                    crate::ct::public(out)
                })
                .collect()
        });
        let slots = rs
            .iter()
            .zip(publics)
            .map(|(r, public)| Slot { r: *r, public });
        self.store.push_batch(slots);
        Ok(())
    }

    /// A fresh ephemeral key, never handed out before.
    pub fn take(&mut self) -> Result<EphemeralSecret, Error> {
        self.store.forget_if_forked();
        if self.store.len() == 0 {
            self.refill()?;
        }
        let (r, public) = self
            .store
            .take_with(|slot| {
                let public = VerifyingKey::from_sec1_bytes(&slot.public);
                (SecretScalar::new(slot.r), public)
            })
            .ok_or(Error::Rng)?;
        Ok(EphemeralSecret {
            r,
            public: public.map_err(|_| Error::Rng)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pooled_keys_agree_differ_and_are_wiped_when_taken() {
        let mut pool = EphemeralPool::new(5);
        let mut seen = Vec::new();
        for _ in 0..12 {
            let a = pool.take().unwrap();
            assert!(
                pool.store.slots[pool.store.ready..]
                    .iter()
                    .all(|s| s.public == [0; 65])
            );
            let b = EphemeralSecret::random().unwrap();
            let (pa, pb) = (*a.public_key(), *b.public_key());
            assert!(!seen.contains(&pa.to_uncompressed()));
            seen.push(pa.to_uncompressed());
            assert_eq!(
                a.diffie_hellman(&pb).unwrap().as_bytes(),
                b.diffie_hellman(&pa).unwrap().as_bytes()
            );
        }
    }

    #[test]
    fn a_forked_process_does_not_reuse_the_parents_keys() {
        let mut pool = EphemeralPool::new(4);
        let first = *pool.take().unwrap().public_key();
        let parents: Vec<[u8; 65]> = pool.store.slots[..pool.store.ready]
            .iter()
            .map(|s| s.public)
            .collect();
        pool.store.pid = pool.store.pid.wrapping_add(1);
        let next = *pool.take().unwrap().public_key();
        assert!(!parents.contains(&next.to_uncompressed()));
        assert_ne!(first, next);
    }
}
