//! A presign pool for high-throughput signers: nonces k and the x coordinates of k G computed
//! ahead, in batches, with one shared inversion per batch.
//!
//! The trade-off: pooled nonces come straight from the operating system's random number
//! generator at refill time and are not hedged with the key and the message, so a broken
//! generator at that moment exposes every key they are used with. Each pair is handed out
//! once and wiped; the pool refills itself when empty, and after a `fork`. What it cannot see
//! is a copy of the whole process (a VM snapshot or a checkpoint restored twice): both copies
//! then sign with the same prepared nonces, which reveals the key. Pooling assumes no such
//! copies; servers that cannot promise it sign with hedged nonces (`SigningKey::sign`).

use zeroize::{Zeroize, Zeroizing};

use crate::cpu::Implementation as _;
use crate::sm2::Error;
use crate::sm2::arithmetic::engine::{Engine, dispatch};
use crate::sm2::arithmetic::mul::fixed_base_many;
use crate::sm2::arithmetic::point::{Affine, Jacobian, batch_to_affine};
use crate::sm2::arithmetic::scalar::{Scalar, SecretScalar};
use crate::sm2::protocols::keys::SigningKey;
use crate::sm2::protocols::signature::{Signature, digest};

/// One prepared nonce as stored: plain data, so the pool can wipe a slot in place when it
/// hands the nonce out (a moved-out value would leave its bytes behind in the buffer).
#[derive(Clone, Copy, Zeroize)]
struct Slot {
    k: Scalar,
    x1: [u8; 32],
}

/// Up to `n` uniform nonzero scalars from the operating system's generator (values 0 and
/// >= n, about 2^-32 each, are skipped; which ones is no secret).
pub(crate) fn fresh_scalars(n: usize) -> Result<Zeroizing<Vec<Scalar>>, Error> {
    let mut out: Zeroizing<Vec<Scalar>> = Zeroizing::new(Vec::with_capacity(n));
    let mut buf = Zeroizing::new(vec![0u8; 32 * n]);
    getrandom::fill(&mut buf).map_err(|_| Error::Rng)?;
    for chunk in buf.chunks_exact(32) {
        let mut b: [u8; 32] = chunk.try_into().expect("32 bytes");
        let k = Scalar::from_bytes(&b);
        b.zeroize();
        if crate::ct::public_choice(k.is_some() & !k.unwrap_or(Scalar::ZERO).is_zero()) {
            out.push(k.unwrap_or(Scalar::ZERO));
        }
    }
    Ok(out)
}

/// Items prepared ahead and handed out once each: the store both pools keep. Taking an item
/// wipes its slot, the storage is wiped when it grows and when dropped, and in a process other
/// than the one that filled it (after `fork`) everything is thrown away first.
pub(crate) struct Prepared<T: Zeroize + Copy> {
    /// `slots[..ready]` are unused; `slots[ready..]` have been handed out and are zero.
    pub(super) slots: Zeroizing<Vec<T>>,
    pub(super) ready: usize,
    pub(crate) batch: usize,
    pub(crate) engine: Engine,
    /// The process that prepared the items in `slots`.
    pub(super) pid: u32,
}

impl<T: Zeroize + Copy> Prepared<T> {
    /// An empty store filled `batch` items at a time (clamped to 1..=4096).
    pub(crate) fn new(batch: usize) -> Self {
        Prepared {
            slots: Zeroizing::new(Vec::new()),
            ready: 0,
            batch: batch.clamp(1, 4096),
            engine: Engine::best(),
            pid: std::process::id(),
        }
    }

    /// Items ready to hand out.
    pub(crate) fn len(&self) -> usize {
        self.ready
    }

    /// In a process other than the one that filled the store (a fork), the items are the
    /// parent's too: wipe them.
    pub(crate) fn forget_if_forked(&mut self) {
        let pid = std::process::id();
        if pid != self.pid {
            self.slots.zeroize();
            self.ready = 0;
            self.pid = pid;
        }
    }

    /// Adds a batch after the items still ready. The used slots past `ready` are zero already
    /// (truncating leaves zeros behind); growth is by hand, because a Vec that reallocates
    /// itself frees the old buffer unwiped.
    pub(crate) fn push_batch(&mut self, items: impl ExactSizeIterator<Item = T>) {
        self.slots.truncate(self.ready);
        let needed = self.ready + items.len();
        if self.slots.capacity() < needed {
            let mut grown = Zeroizing::new(Vec::with_capacity(needed.max(self.batch)));
            grown.extend_from_slice(&self.slots);
            self.slots = grown;
        }
        self.slots.extend(items);
        self.ready = self.slots.len();
    }

    /// The next unused item, read by `f` and then wiped in its slot; `None` when empty.
    pub(crate) fn take_with<R>(&mut self, f: impl FnOnce(&T) -> R) -> Option<R> {
        self.ready = self.ready.checked_sub(1)?;
        let slot = &mut self.slots[self.ready];
        let taken = f(slot);
        slot.zeroize();
        Some(taken)
    }
}

/// Prepared nonces for [`SigningKey::sign_with_pool`].
///
/// Every nonce is used once: taking one wipes its slot, the storage is wiped when it grows and
/// when the pool is dropped. After `fork` the parent and the child would hold the same nonces,
/// and two signatures with one nonce reveal the key; so the pool remembers the process that
/// filled it and, in any other process, throws its nonces away and refills first.
pub struct PresignPool {
    store: Prepared<Slot>,
}

impl core::fmt::Debug for PresignPool {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PresignPool")
            .field("ready", &self.store.ready)
            .field("batch", &self.store.batch)
            .finish()
    }
}

impl PresignPool {
    /// An empty pool that prepares `batch` nonces at a time (clamped to 1..=4096; 64 is a good
    /// size: the shared inversion is then a few percent of the work).
    pub fn new(batch: usize) -> Self {
        PresignPool {
            store: Prepared::new(batch),
        }
    }

    /// Nonces ready to use.
    pub fn len(&self) -> usize {
        self.store.len()
    }

    /// Whether no nonce is ready (the next signature refills first).
    pub fn is_empty(&self) -> bool {
        self.store.len() == 0
    }

    /// Prepares another batch.
    pub fn refill(&mut self) -> Result<(), Error> {
        self.store.forget_if_forked();
        let ks = fresh_scalars(self.store.batch)?;
        let xs: Zeroizing<Vec<[u8; 32]>> = dispatch!(self.store.engine, |a| {
            let points: Vec<Jacobian<_>> = fixed_base_many(a, &ks);
            let mut affine = vec![Affine::generator(a); points.len()];
            batch_to_affine(&points, &mut affine);
            Zeroizing::new(affine.iter().map(|p| p.x.to_bytes()).collect())
        });
        let slots = ks
            .iter()
            .zip(xs.iter())
            .map(|(k, x1)| Slot { k: *k, x1: *x1 });
        self.store.push_batch(slots);
        Ok(())
    }

    fn take(&mut self) -> Result<(SecretScalar, Zeroizing<[u8; 32]>), Error> {
        self.store.forget_if_forked();
        if self.store.len() == 0 {
            self.refill()?;
        }
        self.store
            .take_with(|slot| (SecretScalar::new(slot.k), Zeroizing::new(slot.x1)))
            .ok_or(Error::Rng)
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
            let (k, x1) = pool.take()?;
            // A nonce unusable for this e (probability about 2^-255) is discarded.
            if let Ok(sig) = self.finish(e, &k, &x1) {
                return Ok(sig);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_zero(s: &Slot) -> bool {
        s.k.0 == [0; 4] && s.x1 == [0; 32]
    }

    #[test]
    fn used_nonces_are_wiped_where_they_were_stored() {
        let key = SigningKey::random().unwrap();
        let mut pool = PresignPool::new(8);
        pool.refill().unwrap();
        let before: Vec<[u64; 4]> = pool.store.slots.iter().map(|s| s.k.0).collect();
        for used in 1..=5 {
            key.sign_with_pool(&mut pool, b"m").unwrap();
            assert_eq!(pool.len(), 8 - used);
            assert!(pool.store.slots[pool.store.ready..].iter().all(is_zero));
            assert!(
                pool.store.slots[..pool.store.ready]
                    .iter()
                    .all(|s| !is_zero(s))
            );
        }
        // Refilling with nonces still ready keeps them and adds a batch, in fresh storage.
        pool.refill().unwrap();
        assert_eq!(pool.len(), 11);
        assert_eq!(
            pool.store.slots[..3]
                .iter()
                .map(|s| s.k.0)
                .collect::<Vec<_>>(),
            before[..3]
        );
    }

    #[test]
    fn a_forked_process_does_not_reuse_the_parents_nonces() {
        let key = SigningKey::random().unwrap();
        let mut pool = PresignPool::new(4);
        pool.refill().unwrap();
        let parents: Vec<[u64; 4]> = pool.store.slots.iter().map(|s| s.k.0).collect();
        // As after fork(): the pool finds itself in a process that did not fill it.
        pool.store.pid = pool.store.pid.wrapping_add(1);
        key.sign_with_pool(&mut pool, b"m").unwrap();
        assert_eq!(pool.store.pid, std::process::id());
        assert_eq!(pool.len(), 3);
        assert!(
            pool.store.slots[..pool.store.ready]
                .iter()
                .all(|s| !parents.contains(&s.k.0))
        );
    }
}
