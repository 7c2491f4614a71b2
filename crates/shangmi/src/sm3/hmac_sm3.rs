//! HMAC-SM3 (RFC 2104 / GB/T 15852.2 construction with SM3).
//!
//! The key is absorbed once: the hasher keeps the chaining values after the ipad and opad
//! blocks, so each message costs its own blocks plus one block for the outer hash.

use subtle::ConstantTimeEq;
use zeroize::Zeroize;

use super::{BLOCK_SIZE, Compressor, DIGEST_SIZE, Sm3, hash};
use crate::cpu::Implementation;

/// HMAC-SM3 of `msg` under `key` (any length; keys longer than 64 bytes are hashed first).
pub fn hmac(key: &[u8], msg: &[u8]) -> [u8; DIGEST_SIZE] {
    let mut mac = HmacSm3::new(key);
    mac.update(msg);
    mac.finalize()
}

/// Streaming HMAC-SM3. Dropping it wipes the keyed states.
#[derive(Clone)]
pub struct HmacSm3 {
    inner: Sm3,
    ipad_state: [u32; 8],
    opad_state: [u32; 8],
}

impl core::fmt::Debug for HmacSm3 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("HmacSm3").finish_non_exhaustive()
    }
}

/// The MAC did not match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MacError;

impl core::fmt::Display for MacError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("MAC verification failed")
    }
}

impl std::error::Error for MacError {}

impl HmacSm3 {
    /// A MAC keyed with `key`, on the fastest backend this CPU has.
    pub fn new(key: &[u8]) -> Self {
        Self::with_compressor(Compressor::best(), key)
    }

    pub(crate) fn with_compressor(compressor: Compressor, key: &[u8]) -> Self {
        let mut block = [0u8; BLOCK_SIZE];
        if key.len() > BLOCK_SIZE {
            let mut digest = hash(key);
            block[..DIGEST_SIZE].copy_from_slice(&digest);
            digest.zeroize();
        } else {
            block[..key.len()].copy_from_slice(key);
        }
        let pads = [0x36u8, 0x5c].map(|pad| {
            let mut b = block.map(|k| k ^ pad);
            let mut state = super::soft::IV;
            compressor.compress(&mut state, core::slice::from_ref(&b));
            b.zeroize();
            state
        });
        block.zeroize();
        let [ipad_state, opad_state] = pads;
        HmacSm3 {
            inner: Sm3::from_state(compressor, ipad_state, 1),
            ipad_state,
            opad_state,
        }
    }

    /// Absorbs `data`.
    pub fn update(&mut self, data: &[u8]) {
        self.inner.update(data);
    }

    /// The tag.
    pub fn finalize(mut self) -> [u8; DIGEST_SIZE] {
        self.finalize_reset()
    }

    /// The tag; the MAC is then ready for a new message under the same key.
    pub fn finalize_reset(&mut self) -> [u8; DIGEST_SIZE] {
        let compressor = self.inner.compressor();
        let fresh = Sm3::from_state(compressor, self.ipad_state, 1);
        let mut inner = core::mem::replace(&mut self.inner, fresh).finalize();
        let mut outer = Sm3::from_state(compressor, self.opad_state, 1);
        outer.update(&inner);
        inner.zeroize();
        outer.finalize()
    }

    /// Forgets the message absorbed so far; the key is kept.
    pub fn reset(&mut self) {
        self.inner = Sm3::from_state(self.inner.compressor(), self.ipad_state, 1);
    }

    /// Checks `tag` (exactly 32 bytes) in constant time.
    pub fn verify(self, tag: &[u8]) -> Result<(), MacError> {
        let mut ours = self.finalize();
        let ok = tag.len() == DIGEST_SIZE && crate::ct::public_choice(ours.as_slice().ct_eq(tag));
        ours.zeroize();
        if ok { Ok(()) } else { Err(MacError) }
    }

    /// The keyed chaining values after the ipad and opad blocks (for PBKDF2).
    pub(crate) fn pad_states(&self) -> ([u32; 8], [u32; 8]) {
        (self.ipad_state, self.opad_state)
    }
}

impl Drop for HmacSm3 {
    fn drop(&mut self) {
        self.ipad_state.zeroize();
        self.opad_state.zeroize();
    }
}
