//! The SM4 key schedule with its S-box through AESENCLAST (`aesni`, `vaes-avx2`, and the GFNI
//! engines, whose CPUs all have AES-NI).
//!
//! The schedule is a chain of 32 S-box applications, so its latency is what a key costs (four
//! or more keys a TLS or TLCP handshake). The chain stays in XMM registers, each word in all
//! four columns: moving a word to a general register and back each round (for the XORs and L')
//! cost as much as the S-box itself. The kernels' A1-domain round keys (`A1 rk + C1` per byte,
//! the PRE map) are taken off the chain beside it, one more nibble-table map a round.

use core::arch::x86_64::*;

use zeroize::Zeroize;

use crate::cpu::Avx2;
use crate::sm4::CK;

/// The standard round keys (the portable schedule's; the tests compare them).
#[cfg(test)]
pub(crate) fn expand_key(_token: Avx2, key: &[u8; 16]) -> [u32; 32] {
    // SAFETY: the token proves AVX2 and AES-NI.
    unsafe { expand_key_aesni::<false>(key) }
}

/// The round keys in the A1 domain, as the AES-NI and GFNI kernels run them.
pub(crate) fn expand_key_a1(_token: Avx2, key: &[u8; 16]) -> [u32; 32] {
    // SAFETY: the token proves AVX2 and AES-NI.
    unsafe { expand_key_aesni::<true>(key) }
}

#[target_feature(enable = "avx2,aes")]
fn expand_key_aesni<const A1: bool>(key: &[u8; 16]) -> [u32; 32] {
    let s = SboxAesni::new();
    let mut k = crate::sm4::key_words(key);
    let mut v = k.map(splat);
    k.zeroize();
    let mut rk = [0u32; 32];
    for (r, &ck) in rk.iter_mut().zip(&CK) {
        // k1 ^ k2 ^ CK does not wait for the last round's word, k3.
        let x = xor(xor(v[1], v[2]), xor(splat(ck), v[3]));
        let t = s.sbox(x);
        let new = xor(v[0], xor(t, xor(rotl::<13, 19>(t), rotl::<23, 9>(t))));
        let out = if A1 { s.map(new, s.pre) } else { new };
        *r = _mm_cvtsi128_si32(out) as u32;
        v = [v[1], v[2], v[3], new];
    }
    rk
}

#[inline(always)]
fn splat(w: u32) -> __m128i {
    // SAFETY: register construction (SSE2).
    unsafe { _mm_set1_epi32(w as i32) }
}

#[inline(always)]
fn xor(a: __m128i, b: __m128i) -> __m128i {
    // SAFETY: register-only (SSE2).
    unsafe { _mm_xor_si128(a, b) }
}

/// Each 32-bit lane rotated left by `L` (`R` = 32 - `L`).
#[inline(always)]
fn rotl<const L: i32, const R: i32>(x: __m128i) -> __m128i {
    // SAFETY: register-only (SSE2).
    unsafe { _mm_or_si128(_mm_slli_epi32::<L>(x), _mm_srli_epi32::<R>(x)) }
}

/// SM4's S-box as `POST(AES_S(PRE(x)))`, the two affine maps as nibble-table pairs held in
/// registers (VPSHUFB: the index is data, but no memory is read by it).
struct SboxAesni {
    low_nibble: __m128i,
    pre: (__m128i, __m128i),
    post: (__m128i, __m128i),
}

impl SboxAesni {
    #[inline(always)]
    fn new() -> Self {
        use crate::sm4::constants::{POST_HI, POST_LO, PRE_HI, PRE_LO};
        // SAFETY: 16-byte loads from the tables; SSE2 is part of x86-64.
        let load = |t: &[u8; 16]| unsafe { _mm_loadu_si128(t.as_ptr().cast()) };
        SboxAesni {
            // SAFETY: register construction (SSE2).
            low_nibble: unsafe { _mm_set1_epi8(0x0f) },
            pre: (load(&PRE_LO), load(&PRE_HI)),
            post: (load(&POST_LO), load(&POST_HI)),
        }
    }

    /// A bytewise affine map by its nibble tables.
    #[inline(always)]
    fn map(&self, x: __m128i, t: (__m128i, __m128i)) -> __m128i {
        // SAFETY: register-only; SSSE3 is enabled in every caller.
        unsafe {
            let lo = _mm_and_si128(x, self.low_nibble);
            let hi = _mm_and_si128(_mm_srli_epi16::<4>(x), self.low_nibble);
            _mm_xor_si128(_mm_shuffle_epi8(t.0, lo), _mm_shuffle_epi8(t.1, hi))
        }
    }

    /// The S-box on each byte of a word held in all four columns, so that AESENCLAST's
    /// ShiftRows moves nothing.
    #[inline(always)]
    fn sbox(&self, x: __m128i) -> __m128i {
        let v = self.map(x, self.pre);
        // SAFETY: register-only; AES-NI is enabled in every caller.
        let u = unsafe { _mm_aesenclast_si128(v, _mm_setzero_si128()) };
        self.map(u, self.post)
    }
}
