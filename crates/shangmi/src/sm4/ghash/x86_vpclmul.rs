//! GHASH with VPCLMULQDQ: `vpclmul-avx2` (two blocks per YMM register, eight per reduction)
//! and `vpclmul-avx512` (four per ZMM register, sixteen per reduction). One kernel, generic
//! over the register ([`Wide`]), so the two differ only in the width; the last blocks of a
//! message go through the 128-bit path.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::x86_clmul::{self, load_u128, reduce, store_u128};
use crate::cpu::{Avx512, Vaes};
use crate::sm4::Block;

/// `hkey` forms of H^1 ..= H^16, laid out for each width: `ymm[j]` holds the powers for
/// blocks 2j and 2j + 1 of a group of eight (H^(8 - 2j), H^(7 - 2j)), `zmm[j]` those for
/// blocks 4j .. 4j + 3 of a group of sixteen; `narrow` is H^1 ..= H^8 for the 128-bit path.
#[derive(Clone, zeroize::ZeroizeOnDrop)]
pub(crate) struct Key {
    ymm: [[u128; 2]; 4],
    zmm: [[u128; 4]; 4],
    narrow: [u128; 8],
}

impl Key {
    pub(crate) fn new(token: crate::cpu::Avx2, h: u128) -> Self {
        let mut p: [u128; 16] = super::x86_clmul::powers(token, h);
        let key = Key {
            ymm: core::array::from_fn(|j| core::array::from_fn(|l| p[7 - 2 * j - l])),
            zmm: core::array::from_fn(|j| core::array::from_fn(|l| p[15 - 4 * j - l])),
            narrow: core::array::from_fn(|i| p[i]),
        };
        zeroize::Zeroize::zeroize(&mut p);
        key
    }
}

/// Absorbs `blocks` into `acc`, two blocks per instruction.
pub(crate) fn update_avx2(_token: Vaes, key: &Key, acc: u128, blocks: &[Block]) -> u128 {
    // SAFETY: the token proves AVX2, VPCLMULQDQ and PCLMULQDQ.
    unsafe { update_ymm(key, acc, blocks) }
}

/// Absorbs `blocks` into `acc`, four blocks per instruction.
pub(crate) fn update_avx512(_token: Avx512, key: &Key, acc: u128, blocks: &[Block]) -> u128 {
    // SAFETY: the token proves AVX-512 F/BW, VPCLMULQDQ and PCLMULQDQ.
    unsafe { update_zmm(key, acc, blocks) }
}

#[target_feature(enable = "avx2,vpclmulqdq,pclmulqdq,ssse3")]
fn update_ymm(key: &Key, acc: u128, blocks: &[Block]) -> u128 {
    let (groups, rest) = blocks.as_chunks::<8>();
    let acc = wide_groups::<__m256i, 2, 8>(&key.ymm, acc, groups);
    x86_clmul::update_clmul(&key.narrow, acc, rest)
}

#[target_feature(enable = "avx512f,avx512bw,vpclmulqdq,pclmulqdq,ssse3")]
fn update_zmm(key: &Key, acc: u128, blocks: &[Block]) -> u128 {
    let (groups, rest) = blocks.as_chunks::<16>();
    let acc = wide_groups::<__m512i, 4, 16>(&key.zmm, acc, groups);
    x86_clmul::update_clmul(&key.narrow, acc, rest)
}

/// A register of `LANES` 128-bit blocks and the operations the kernel needs on it. Every
/// method is register-only and runs inside a caller that enables its features.
trait Wide: Copy {
    /// Loads `LANES` consecutive 16-byte values.
    fn load(p: *const u8) -> Self;
    /// The 16-byte pattern broadcast to every lane.
    fn broadcast(v: __m128i) -> Self;
    fn zero() -> Self;
    /// `v` in the first lane, zeros elsewhere.
    fn first(v: __m128i) -> Self;
    fn xor(self, o: Self) -> Self;
    fn shuffle_bytes(self, m: Self) -> Self;
    /// The two 64-bit halves of every lane exchanged.
    fn swap_halves(self) -> Self;
    fn clmul_lo(self, o: Self) -> Self;
    fn clmul_hi(self, o: Self) -> Self;
    /// The XOR of all lanes.
    fn fold(self) -> __m128i;
}

impl Wide for __m256i {
    #[inline(always)]
    fn load(p: *const u8) -> Self {
        // SAFETY: callers pass a pointer to 32 readable bytes.
        unsafe { _mm256_loadu_si256(p.cast()) }
    }
    #[inline(always)]
    fn broadcast(v: __m128i) -> Self {
        // SAFETY: register-only (AVX2).
        unsafe { _mm256_broadcastsi128_si256(v) }
    }
    #[inline(always)]
    fn zero() -> Self {
        // SAFETY: register-only (AVX).
        unsafe { _mm256_setzero_si256() }
    }
    #[inline(always)]
    fn first(v: __m128i) -> Self {
        // SAFETY: register-only (AVX).
        unsafe { _mm256_zextsi128_si256(v) }
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        // SAFETY: register-only (AVX2).
        unsafe { _mm256_xor_si256(self, o) }
    }
    #[inline(always)]
    fn shuffle_bytes(self, m: Self) -> Self {
        // SAFETY: register-only (AVX2).
        unsafe { _mm256_shuffle_epi8(self, m) }
    }
    #[inline(always)]
    fn swap_halves(self) -> Self {
        // SAFETY: register-only (AVX2).
        unsafe { _mm256_shuffle_epi32::<0x4e>(self) }
    }
    #[inline(always)]
    fn clmul_lo(self, o: Self) -> Self {
        // SAFETY: register-only (VPCLMULQDQ).
        unsafe { _mm256_clmulepi64_epi128::<0x00>(self, o) }
    }
    #[inline(always)]
    fn clmul_hi(self, o: Self) -> Self {
        // SAFETY: register-only (VPCLMULQDQ).
        unsafe { _mm256_clmulepi64_epi128::<0x11>(self, o) }
    }
    #[inline(always)]
    fn fold(self) -> __m128i {
        // SAFETY: register-only (AVX2).
        unsafe {
            _mm_xor_si128(
                _mm256_castsi256_si128(self),
                _mm256_extracti128_si256::<1>(self),
            )
        }
    }
}

impl Wide for __m512i {
    #[inline(always)]
    fn load(p: *const u8) -> Self {
        // SAFETY: callers pass a pointer to 64 readable bytes.
        unsafe { _mm512_loadu_si512(p.cast()) }
    }
    #[inline(always)]
    fn broadcast(v: __m128i) -> Self {
        // SAFETY: register-only (AVX-512F).
        unsafe { _mm512_broadcast_i32x4(v) }
    }
    #[inline(always)]
    fn zero() -> Self {
        // SAFETY: register-only (AVX-512F).
        unsafe { _mm512_setzero_si512() }
    }
    #[inline(always)]
    fn first(v: __m128i) -> Self {
        // SAFETY: register-only (AVX-512F).
        unsafe { _mm512_zextsi128_si512(v) }
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        // SAFETY: register-only (AVX-512F).
        unsafe { _mm512_xor_si512(self, o) }
    }
    #[inline(always)]
    fn shuffle_bytes(self, m: Self) -> Self {
        // SAFETY: register-only (AVX-512BW).
        unsafe { _mm512_shuffle_epi8(self, m) }
    }
    #[inline(always)]
    fn swap_halves(self) -> Self {
        // SAFETY: register-only (AVX-512F).
        unsafe { _mm512_shuffle_epi32::<0x4e>(self) }
    }
    #[inline(always)]
    fn clmul_lo(self, o: Self) -> Self {
        // SAFETY: register-only (VPCLMULQDQ).
        unsafe { _mm512_clmulepi64_epi128::<0x00>(self, o) }
    }
    #[inline(always)]
    fn clmul_hi(self, o: Self) -> Self {
        // SAFETY: register-only (VPCLMULQDQ).
        unsafe { _mm512_clmulepi64_epi128::<0x11>(self, o) }
    }
    #[inline(always)]
    fn fold(self) -> __m128i {
        // SAFETY: register-only (AVX-512F, AVX2).
        unsafe {
            let y = _mm256_xor_si256(
                _mm512_castsi512_si256(self),
                _mm512_extracti64x4_epi64::<1>(self),
            );
            _mm_xor_si128(_mm256_castsi256_si128(y), _mm256_extracti128_si256::<1>(y))
        }
    }
}

/// Groups of `G` blocks (four registers of `G / 4` lanes): each group is multiplied by the
/// powers H^G ..= H^1 with Karatsuba (lo, hi and the middle product) and reduced once.
#[inline(always)]
fn wide_groups<W: Wide, const L: usize, const G: usize>(
    powers: &[[u128; L]; 4],
    acc: u128,
    groups: &[[Block; G]],
) -> u128 {
    debug_assert_eq!(G, 4 * L);
    if groups.is_empty() {
        return acc;
    }
    let bswap = W::broadcast(x86_clmul::bswap_mask());
    // Loops rather than closures: a closure would not get the caller's target features.
    let (mut h, mut hs) = ([W::zero(); 4], [W::zero(); 4]);
    for j in 0..4 {
        h[j] = W::load(powers[j].as_ptr().cast());
        hs[j] = h[j].xor(h[j].swap_halves());
    }
    let mut a = W::first(load_u128(&acc));
    for g in groups {
        let (mut lo, mut hi, mut mid) = (W::zero(), W::zero(), W::zero());
        for j in 0..4 {
            // L consecutive blocks, inside the group of G = 4 L.
            let mut x = W::load(g[j * L].as_ptr()).shuffle_bytes(bswap);
            if j == 0 {
                x = x.xor(a);
            }
            let xs = x.xor(x.swap_halves());
            lo = lo.xor(x.clmul_lo(h[j]));
            hi = hi.xor(x.clmul_hi(h[j]));
            mid = mid.xor(xs.clmul_lo(hs[j]));
        }
        a = W::first(reduce(lo.fold(), hi.fold(), mid.fold()));
    }
    store_u128(a.fold())
}
