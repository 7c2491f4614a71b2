//! GHASH with VPCLMULQDQ on ZMM registers (AVX-512 tier): four blocks per instruction,
//! sixteen per reduction; the last blocks go through the 128-bit path.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::x86_clmul::{self, load_u128, reduce, store_u128};
use super::{hkey, power};
use crate::cpu::Avx512;
use crate::sm4::Block;

/// `hkey` forms of H^1 ..= H^16: `wide[j][l]` is H^(16 - 4j - l), the power for block 4j + l
/// of a group of sixteen; `narrow` is H^1 ..= H^8 for the 128-bit path.
#[derive(Clone)]
pub(crate) struct Key {
    wide: [[u128; 4]; 4],
    narrow: [u128; 8],
}

impl Key {
    pub(crate) fn new(h: u128) -> Self {
        let p: [u128; 16] = core::array::from_fn(|i| hkey(power(h, i + 1)));
        Key {
            wide: core::array::from_fn(|j| core::array::from_fn(|l| p[15 - 4 * j - l])),
            narrow: core::array::from_fn(|i| p[i]),
        }
    }
}

impl Drop for Key {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.wide);
        zeroize::Zeroize::zeroize(&mut self.narrow);
    }
}

/// Absorbs `blocks` into `acc`.
pub(crate) fn update(_token: Avx512, key: &Key, acc: u128, blocks: &[Block]) -> u128 {
    // SAFETY: the token proves AVX-512 F/BW, VPCLMULQDQ and the AVX2 tier (PCLMULQDQ).
    unsafe { update_vpclmul(key, acc, blocks) }
}

#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq,pclmulqdq,ssse3")]
fn update_vpclmul(key: &Key, acc: u128, blocks: &[Block]) -> u128 {
    let (groups, rest) = blocks.as_chunks::<16>();
    let mut acc = acc;
    if !groups.is_empty() {
        // SAFETY: loads read 64 bytes from `key.wide[j]` (4 x u128) and from four consecutive
        // blocks of a group; everything else is register arithmetic with enabled features.
        unsafe {
            let bswap = _mm512_broadcast_i32x4(x86_clmul::bswap_mask());
            let h: [__m512i; 4] =
                core::array::from_fn(|j| _mm512_loadu_si512(key.wide[j].as_ptr().cast()));
            let hs: [__m512i; 4] = h.map(|v| _mm512_xor_si512(v, _mm512_shuffle_epi32::<0x4e>(v)));
            let mut a = _mm512_zextsi128_si512(load_u128(&acc));
            for g in groups {
                let (mut lo, mut hi, mut mid) = (
                    _mm512_setzero_si512(),
                    _mm512_setzero_si512(),
                    _mm512_setzero_si512(),
                );
                for j in 0..4 {
                    let mut x =
                        _mm512_shuffle_epi8(_mm512_loadu_si512(g[4 * j].as_ptr().cast()), bswap);
                    if j == 0 {
                        x = _mm512_xor_si512(x, a);
                    }
                    let xs = _mm512_xor_si512(x, _mm512_shuffle_epi32::<0x4e>(x));
                    lo = _mm512_xor_si512(lo, _mm512_clmulepi64_epi128::<0x00>(x, h[j]));
                    hi = _mm512_xor_si512(hi, _mm512_clmulepi64_epi128::<0x11>(x, h[j]));
                    mid = _mm512_xor_si512(mid, _mm512_clmulepi64_epi128::<0x00>(xs, hs[j]));
                }
                let fold = |v: __m512i| {
                    let y = _mm256_xor_si256(
                        _mm512_castsi512_si256(v),
                        _mm512_extracti64x4_epi64::<1>(v),
                    );
                    _mm_xor_si128(_mm256_castsi256_si128(y), _mm256_extracti128_si256::<1>(y))
                };
                a = _mm512_zextsi128_si512(reduce(fold(lo), fold(hi), fold(mid)));
            }
            acc = store_u128(_mm512_castsi512_si128(a));
        }
    }
    x86_clmul::update_clmul(&key.narrow, acc, rest)
}
