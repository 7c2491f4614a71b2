//! Modes of operation of SM4.
//!
//! Unauthenticated modes (ECB, CBC, CFB, OFB, CTR, XTS) protect confidentiality only: an
//! attacker can change ciphertext undetected, and CBC with padding is a padding oracle if
//! decryption failures are observable. Use SM4-GCM or SM4-CCM, or
//! encrypt-then-MAC with HMAC-SM3 verified before decrypting, unless a protocol fixes the mode.

pub mod cbc;
pub mod ccm;
pub mod cfb;
pub mod ctr;
pub mod ecb;
pub mod gcm;
pub mod mac;
pub mod ofb;
pub mod padding;
pub mod xts;

use core::fmt;

/// Why an SM4 mode refused its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The data length does not suit the mode (e.g. not a whole number of blocks, shorter
    /// than one block for XTS or CTS, too long for the counter or the standard).
    InvalidLength,
    /// A nonce or IV of a length the mode does not take.
    InvalidNonce,
    /// A tag length the mode does not take, or one below the configured minimum.
    InvalidTagLength,
    /// A key the mode refuses (XTS with equal halves).
    InvalidKey,
    /// Decryption failed: wrong tag, wrong padding or tampered ciphertext. One error for every
    /// cause, so the failure reveals nothing about which check failed.
    Decrypt,
    /// The output buffer is smaller than the size the call said it needs; nothing changed.
    BufferTooSmall,
    /// The stream has already been finished.
    Finished,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Error::InvalidLength => "invalid data length for this SM4 mode",
            Error::InvalidNonce => "invalid nonce or IV length",
            Error::InvalidTagLength => "invalid tag length",
            Error::InvalidKey => "invalid key for this mode",
            Error::Decrypt => "decryption failed",
            Error::BufferTooSmall => "output buffer too small",
            Error::Finished => "stream already finished",
        })
    }
}

impl std::error::Error for Error {}

/// Blocks handed to the cipher per call in the parallel modes: enough for the widest backend
/// (64 in flight; 128 for WebAssembly's SIMD bitslicing) while staying in L1.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
pub(crate) const CHUNK_BLOCKS: usize = 64;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(crate) const CHUNK_BLOCKS: usize = 128;

#[inline]
pub(crate) fn xor_in_place(dst: &mut [u8], src: &[u8]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d ^= s;
    }
}

/// Views a slice of whole blocks as blocks.
#[inline]
pub(crate) fn as_blocks_mut(data: &mut [u8]) -> Result<&mut [super::Block], Error> {
    let (blocks, rest) = data.as_chunks_mut::<16>();
    if rest.is_empty() {
        Ok(blocks)
    } else {
        Err(Error::InvalidLength)
    }
}
