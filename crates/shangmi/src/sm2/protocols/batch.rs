//! Verifying many signatures at once, each with its own verdict, spread over threads.
//!
//! Everything in a verification is public, so a batch is only a matter of throughput: the
//! items are split into one contiguous share per thread (`std::thread::scope`, no pool to
//! keep), and each item is checked exactly as [`VerifyingKey::verify_with_id`] checks it. A
//! malformed signature is that item's `false`, never an error for the batch.

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
    let mut verdicts = vec![false; items.len()];
    if threads == 1 {
        for (v, item) in verdicts.iter_mut().zip(items) {
            *v = item.verify();
        }
        return verdicts;
    }
    let share = items.len().div_ceil(threads);
    let check = |vs: &mut [bool], its: &[BatchItem<'_>]| {
        for (v, item) in vs.iter_mut().zip(its) {
            *v = item.verify();
        }
    };
    std::thread::scope(|scope| {
        let mut shares = verdicts.chunks_mut(share).zip(items.chunks(share));
        // The calling thread takes the first share instead of waiting idle: one thread fewer
        // to start, which on a virtual machine can mean waking a halted CPU.
        let first = shares.next();
        for (vs, its) in shares {
            scope.spawn(move || check(vs, its));
        }
        if let Some((vs, its)) = first {
            check(vs, its);
        }
    });
    verdicts
}
