//! Verifying many signatures at once, each with its own verdict, spread over threads.
//!
//! Everything in a verification is public, so a batch is only a matter of throughput: the
//! threads (`std::thread::scope`, no pool to keep) claim items a few at a time, and each item
//! is decided exactly as [`VerifyingKey::verify_with_id`] decides it. The items claimed
//! together are computed together: eight at a time in AVX512-IFMA lanes where the key's
//! backend has them, else sharing the one inversion their tables of multiples need. A
//! malformed signature is that item's `false`, never an error for the batch.

use core::sync::atomic::{AtomicUsize, Ordering};

use crate::sm2::protocols::keys::VerifyingKey;
use crate::sm2::protocols::signature::{Signature, digest, verify_digests};

/// How the signatures of a batch are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SignatureEncoding {
    /// DER `SEQUENCE { r, s }`, strict (what [`Signature::from_der`] takes).
    #[default]
    Der,
    /// `r || s`, 64 bytes.
    Raw,
}

/// One signature to check: the signer's key and ID (`DEFAULT_ID` for most signers), the
/// message, and the signature as received.
#[derive(Clone, Copy, Debug)]
pub struct BatchItem<'a> {
    /// The signer's public key.
    pub key: &'a VerifyingKey,
    /// The signer's distinguishing ID.
    pub id: &'a [u8],
    /// The signed message.
    pub message: &'a [u8],
    /// The signature's bytes.
    pub signature: &'a [u8],
    /// How `signature` is encoded.
    pub encoding: SignatureEncoding,
}

/// How many items a thread claims and checks together: one pass of the IFMA lanes, and enough
/// to share the inversion (about 3% of a verification) among elsewhere.
const CHUNK: usize = 8;

impl<'a> BatchItem<'a> {
    /// The key, e = SM3(Z || M) and the decoded signature, or `None` where
    /// [`VerifyingKey::verify_with_id`] would refuse before any arithmetic.
    fn prepare(&self) -> Option<(&'a VerifyingKey, [u8; 32], Signature)> {
        let sig = match self.encoding {
            SignatureEncoding::Der => Signature::from_der(self.signature),
            SignatureEncoding::Raw => Signature::from_bytes(self.signature),
        }
        .ok()?;
        let z = self.key.z(self.id).ok()?;
        Some((self.key, digest(&z, self.message), sig))
    }
}

/// The verdicts of consecutive items, decided together.
fn verify_chunk(items: &[BatchItem<'_>]) -> Vec<bool> {
    let mut verdicts = vec![false; items.len()];
    let (index, ready): (Vec<usize>, Vec<_>) = items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| Some((i, item.prepare()?)))
        .unzip();
    for (i, ok) in index.into_iter().zip(verify_digests(&ready)) {
        verdicts[i] = ok;
    }
    verdicts
}

/// Each item's verdict, in the items' order: `true` exactly when
/// [`VerifyingKey::verify_with_id`] accepts it. `threads` is how many threads may share the
/// work: 0 for as many as the machine runs at once, 1 for the calling thread alone.
///
/// On CPUs with AVX512-IFMA each thread verifies eight items per pass of the vector lanes,
/// about three times the rate of one-by-one verification (Zen 4); a thread pays for its start
/// (tens of microseconds), so small batches are best left to one.
pub fn verify_batch(items: &[BatchItem<'_>], threads: usize) -> Vec<bool> {
    let threads = match threads {
        0 => std::thread::available_parallelism().map_or(1, usize::from),
        n => n,
    }
    .clamp(1, items.len().div_ceil(CHUNK).max(1));
    if threads == 1 {
        return items.chunks(CHUNK).flat_map(verify_chunk).collect();
    }
    // Chunks are claimed one at a time from a shared counter rather than dealt out in fixed
    // shares: a thread that starts late (a halted virtual CPU takes a while to wake) or is
    // preempted leaves its chunks to the others instead of holding up the whole batch.
    let next = AtomicUsize::new(0);
    let work = || {
        let mut mine = Vec::new();
        loop {
            let start = next.fetch_add(1, Ordering::Relaxed) * CHUNK;
            if start >= items.len() {
                return mine;
            }
            let chunk = &items[start..items.len().min(start + CHUNK)];
            mine.extend((start..).zip(verify_chunk(chunk)));
        }
    };
    let mut verdicts = vec![false; items.len()];
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
        // The calling thread works too instead of waiting idle.
        let record = |done: Vec<(usize, bool)>, verdicts: &mut [bool]| {
            for (i, ok) in done {
                verdicts[i] = ok;
            }
        };
        record(work(), &mut verdicts);
        for h in helpers {
            // `verify` reports every failure as `false`; a panic here would be a bug in it,
            // and is passed on to the caller as `thread::scope` does.
            match h.join() {
                Ok(done) => record(done, &mut verdicts),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
    });
    verdicts
}
