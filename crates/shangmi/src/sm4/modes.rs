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

pub(crate) use super::Error;

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
