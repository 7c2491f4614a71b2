//! A verifying key with its own comb table, for callers who verify many signatures under one
//! key: about 2,400 point additions and 150 KiB once, then no doublings per verification.

use crate::sm2::Error;
use crate::sm2::arithmetic::engine::dispatch;
use crate::sm2::arithmetic::mul::{Comb, base_table, build_comb, comb_vartime};
use crate::sm2::protocols::keys::{DEFAULT_ID, VerifyingKey};
use crate::sm2::protocols::signature::{Signature, check_scalars, digest, x_matches_vartime};

/// A [`VerifyingKey`] with precomputed multiples.
#[derive(Clone)]
pub struct PrecomputedVerifyingKey {
    key: VerifyingKey,
    z_default: [u8; 32],
    pub(crate) table: Box<Comb>,
}

impl core::fmt::Debug for PrecomputedVerifyingKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PrecomputedVerifyingKey")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl VerifyingKey {
    /// Precomputes for fast repeated verification.
    pub fn precompute(&self) -> PrecomputedVerifyingKey {
        let table = dispatch!(self.engine, |a| build_comb(&self.affine(a)));
        let z_default = self.z(DEFAULT_ID).unwrap_or_default();
        PrecomputedVerifyingKey {
            key: *self,
            z_default,
            table,
        }
    }
}

impl PrecomputedVerifyingKey {
    /// The key.
    pub fn key(&self) -> &VerifyingKey {
        &self.key
    }

    /// Verifies `sig` over `msg` with the default ID.
    pub fn verify(&self, msg: &[u8], sig: &Signature) -> Result<(), Error> {
        self.verify_digest(&digest(&self.z_default, msg), sig)
    }

    /// Verifies under the identity `id`.
    pub fn verify_with_id(&self, id: &[u8], msg: &[u8], sig: &Signature) -> Result<(), Error> {
        self.verify_digest(&digest(&self.key.z(id)?, msg), sig)
    }

    /// Verifies over a precomputed e.
    pub fn verify_digest(&self, e: &[u8; 32], sig: &Signature) -> Result<(), Error> {
        let (r, s, t) = check_scalars(sig)?;
        let ok = dispatch!(self.key.engine, |a| {
            let sg = comb_vartime(a, base_table(), &s);
            let tp = comb_vartime(a, &self.table, &t);
            x_matches_vartime(&sg.add_vartime(&tp), &r, e)
        });
        if ok { Ok(()) } else { Err(Error::Verification) }
    }
}
