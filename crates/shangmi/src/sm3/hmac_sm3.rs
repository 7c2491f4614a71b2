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
#[derive(Clone, zeroize::ZeroizeOnDrop)]
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

    /// The chaining states after the key's ipad and opad blocks (each one block absorbed):
    /// HMAC-SM3 is then `Sm3::resume(opad, 1)` over the digest of `Sm3::resume(ipad, 1)` over
    /// the message. For front ends that keep a MAC's state themselves; as secret as the key.
    pub fn keyed_states(&self) -> ([u32; 8], [u32; 8]) {
        (self.ipad_state, self.opad_state)
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
        let tag = self.outer(compressor, &inner);
        inner.zeroize();
        tag
    }

    /// The outer hash of an inner digest: its one padded block after the opad one, without a
    /// streaming hasher (two HMAC blocks in a TLS key derivation, so the hasher's copies and
    /// wipes would be a fair part of it).
    fn outer(&self, compressor: Compressor, inner: &[u8; DIGEST_SIZE]) -> [u8; DIGEST_SIZE] {
        let mut tail = [[0u8; BLOCK_SIZE]; 2];
        let bits = (BLOCK_SIZE + DIGEST_SIZE) as u64 * 8;
        let n = super::pad(inner, bits, &mut tail);
        let mut state = self.opad_state;
        compressor.compress(&mut state, &tail[..n]);
        let mut tag = [0u8; DIGEST_SIZE];
        super::write_digest(&state, &mut tag);
        crate::ct::wipe(&mut tail.as_flattened_mut()[..n * BLOCK_SIZE]);
        state.zeroize();
        tag
    }

    /// The tag of `prefix || data[..len]` (the MAC's own state is not used or changed), where
    /// `len` is secret and the time depends only on the lengths of `prefix` and `data` and on
    /// `min_len`, a public lower bound of `len`: what a TLS CBC record's MAC needs, whose
    /// content length is known only from the padding (Lucky13). Every block from the one
    /// holding byte `min_len` to the last block the longest message could need is built with
    /// masks (message byte, 0x80, zero or length) and compressed, and the chaining value after
    /// the message's real last block is selected with masks.
    ///
    /// # Panics
    /// If `min_len > len` or `len > data.len()` (the caller's bounds are wrong).
    pub fn tag_of_secret_length(
        &self,
        prefix: &[u8],
        data: &[u8],
        len: usize,
        min_len: usize,
    ) -> [u8; DIGEST_SIZE] {
        use subtle::{ConditionallySelectable, ConstantTimeEq, ConstantTimeLess};
        assert!(
            min_len <= len && len <= data.len(),
            "bounds of the secret length"
        );
        let compressor = self.inner.compressor();
        let plen = prefix.len();
        let byte_at = |pos: usize| -> u8 {
            if pos < plen {
                prefix[pos]
            } else if pos - plen < data.len() {
                data[pos - plen]
            } else {
                0
            }
        };
        let mut state = self.ipad_state;
        // Whole blocks before the public bound: message bytes for any len, hashed as usual.
        let safe_blocks = (plen + min_len) / BLOCK_SIZE;
        let mut head = vec![0u8; safe_blocks * BLOCK_SIZE];
        for (i, b) in head.iter_mut().enumerate() {
            *b = byte_at(i);
        }
        let (blocks, _) = head.as_chunks::<BLOCK_SIZE>();
        if !blocks.is_empty() {
            compressor.compress(&mut state, blocks);
        }
        head.zeroize();
        // The rest, in constant time in len.
        let total = (plen + len) as u64;
        let last = (total + 9).div_ceil(BLOCK_SIZE as u64) - 1;
        let bits = (BLOCK_SIZE as u64 + total).wrapping_mul(8).to_be_bytes();
        let max_blocks = (plen + data.len() + 9).div_ceil(BLOCK_SIZE);
        let mut chosen = [0u32; 8];
        let mut block = [0u8; BLOCK_SIZE];
        for i in safe_blocks..max_blocks {
            let in_last = (i as u64).ct_eq(&last);
            for (j, out) in block.iter_mut().enumerate() {
                let pos = (i * BLOCK_SIZE + j) as u64;
                let message = pos.ct_lt(&total);
                let marker = pos.ct_eq(&total);
                let mut b = u8::conditional_select(&0, &0x80, marker);
                b = u8::conditional_select(&b, &byte_at(pos as usize), message);
                if j >= BLOCK_SIZE - 8 {
                    b = u8::conditional_select(&b, &bits[j - (BLOCK_SIZE - 8)], in_last);
                }
                *out = b;
            }
            compressor.compress(&mut state, core::slice::from_ref(&block));
            for (c, s) in chosen.iter_mut().zip(state) {
                c.conditional_assign(&s, in_last);
            }
        }
        block.zeroize();
        state.zeroize();
        let mut inner = [0u8; DIGEST_SIZE];
        for (o, w) in inner.chunks_exact_mut(4).zip(chosen) {
            o.copy_from_slice(&w.to_be_bytes());
        }
        chosen.zeroize();
        let tag = self.outer(compressor, &inner);
        inner.zeroize();
        tag
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

#[cfg(test)]
mod tests {
    #[test]
    fn secret_length_tags_equal_the_plain_ones() {
        let mac = super::HmacSm3::new(b"record mac key, 32 bytes long..");
        let data: Vec<u8> = (0..700u32).map(|i| (i * 7 + 3) as u8).collect();
        for plen in [0usize, 13, 64] {
            let prefix: Vec<u8> = (0..plen as u8).collect();
            for total in [
                0usize, 1, 42, 55, 56, 63, 64, 65, 119, 120, 128, 300, 444, 700,
            ] {
                for len in [
                    0usize, 1, 50, 51, 54, 55, 56, 64, 100, 255, 299, 300, 443, 699, 700,
                ] {
                    if len > total {
                        continue;
                    }
                    let mut want = mac.clone();
                    want.update(&prefix);
                    want.update(&data[..len]);
                    let want = want.finalize();
                    for min_len in [0, len / 2, len.saturating_sub(1), len] {
                        let got = mac.tag_of_secret_length(&prefix, &data[..total], len, min_len);
                        assert_eq!(
                            got, want,
                            "plen {plen} total {total} len {len} min {min_len}"
                        );
                    }
                }
            }
        }
    }
}
