//! The SM4 key schedule with its S-box through AESENCLAST (`aesni`, `vaes-avx2`).

use core::arch::x86_64::*;

use crate::cpu::Avx2;

/// The key schedule with its S-box through AESENCLAST (the same round keys as the portable
/// schedule; the tests compare them).
pub(crate) fn expand_key(_token: Avx2, key: &[u8; 16]) -> [u32; 32] {
    // SAFETY: the token proves AVX2 and AES-NI.
    unsafe { expand_key_aesni(key) }
}

#[target_feature(enable = "avx2,aes")]
fn expand_key_aesni(key: &[u8; 16]) -> [u32; 32] {
    crate::sm4::expand_key_with(key, &SboxAesni::new())
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
}

impl crate::sm4::Tau for SboxAesni {
    #[inline(always)]
    fn tau(&self, x: u32) -> u32 {
        // SAFETY: register-only; AES-NI and SSSE3 are enabled in every caller.
        unsafe {
            // The word in all four columns, so that AESENCLAST's ShiftRows moves nothing.
            let v = self.map(_mm_set1_epi32(x as i32), self.pre);
            let u = _mm_aesenclast_si128(v, _mm_setzero_si128());
            _mm_cvtsi128_si32(self.map(u, self.post)) as u32
        }
    }
}
