//! Verifying many signatures at once, each with its own verdict, spread over threads.
//!
//! Everything in a verification is public, so a batch is only a matter of throughput: the
//! threads (`std::thread::scope`, no pool to keep) claim items one by one, and each item is
//! checked exactly as [`VerifyingKey::verify_with_id`] checks it. A malformed signature is
//! that item's `false`, never an error for the batch.

use core::sync::atomic::{AtomicUsize, Ordering};

use crate::sm2::keys::VerifyingKey;
use crate::sm2::signature::Signature;

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

impl BatchItem<'_> {
    fn verify(&self) -> bool {
        let sig = match self.encoding {
            SignatureEncoding::Der => Signature::from_der(self.signature),
            SignatureEncoding::Raw => Signature::from_bytes(self.signature),
        };
        sig.is_ok_and(|s| self.key.verify_with_id(self.id, self.message, &s).is_ok())
    }
}

/// Each item's verdict, in the items' order: `true` exactly when
/// [`VerifyingKey::verify_with_id`] accepts it. `threads` is how many threads may share the
/// work: 0 for as many as the machine runs at once, 1 for the calling thread alone.
pub fn verify_batch(items: &[BatchItem<'_>], threads: usize) -> Vec<bool> {
    let threads = match threads {
        0 => std::thread::available_parallelism().map_or(1, usize::from),
        n => n,
    }
    .clamp(1, items.len().max(1));
    if threads == 1 {
        return items.iter().map(BatchItem::verify).collect();
    }
    // Items are claimed one at a time from a shared counter rather than dealt out in fixed
    // shares: a thread that starts late (a halted virtual CPU takes a while to wake) or is
    // preempted leaves its items to the others instead of holding up the whole batch.
    let next = AtomicUsize::new(0);
    let work = || {
        let mut mine = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else {
                return mine;
            };
            mine.push((i, item.verify()));
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
