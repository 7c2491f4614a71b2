//! GHASH with PCLMULQDQ (AVX2 tier): eight blocks per reduction, Karatsuba products.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use crate::cpu::Avx2;
use crate::sm4::Block;

pub(crate) use super::Powers8 as Key;

/// Absorbs `blocks` into `acc`.
pub(crate) fn update(_token: Avx2, key: &Key, acc: u128, blocks: &[Block]) -> u128 {
    // SAFETY: the token proves PCLMULQDQ and SSSE3 (the AVX2 tier).
    unsafe { update_clmul(&key.powers, acc, blocks) }
}

/// `hkey` forms of H^1 ..= H^N (the same as [`super::hkey_powers`]) with PCLMULQDQ: key setup
/// runs once per GCM key, and TLS makes four keys per handshake on each side.
pub(crate) fn powers<const N: usize>(_token: Avx2, h: u128) -> [u128; N] {
    // SAFETY: the token proves PCLMULQDQ and SSSE3 (the AVX2 tier).
    unsafe { powers_clmul(h) }
}

#[target_feature(enable = "pclmulqdq,ssse3")]
fn powers_clmul<const N: usize>(h: u128) -> [u128; N] {
    let k = load_u128(&super::hkey(h));
    let mut acc = load_u128(&h);
    let mut out = [0u128; N];
    for (i, o) in out.iter_mut().enumerate() {
        if i > 0 {
            let (lo, hi, mid) = product(acc, k);
            acc = reduce(lo, hi, mid);
        }
        *o = super::hkey(store_u128(acc));
    }
    out
}

#[inline(always)]
pub(crate) fn load_u128(v: &u128) -> __m128i {
    // SAFETY: a 16-byte unaligned load from a u128; SSE2 is part of x86-64.
    unsafe { _mm_loadu_si128((v as *const u128).cast()) }
}

#[inline(always)]
pub(crate) fn store_u128(v: __m128i) -> u128 {
    let mut out = 0u128;
    // SAFETY: a 16-byte unaligned store into a u128; SSE2 is part of x86-64.
    unsafe { _mm_storeu_si128((&mut out as *mut u128).cast(), v) };
    out
}

/// Karatsuba pieces of one product: (low, high, middle) 128-bit parts.
#[inline(always)]
pub(crate) fn product(x: __m128i, h: __m128i) -> (__m128i, __m128i, __m128i) {
    // SAFETY: register-only; PCLMULQDQ is enabled in every caller.
    unsafe {
        let lo = _mm_clmulepi64_si128::<0x00>(x, h);
        let hi = _mm_clmulepi64_si128::<0x11>(x, h);
        let xs = _mm_xor_si128(x, _mm_shuffle_epi32::<0x4e>(x));
        let hs = _mm_xor_si128(h, _mm_shuffle_epi32::<0x4e>(h));
        (lo, hi, _mm_clmulepi64_si128::<0x00>(xs, hs))
    }
}

/// Combines summed Karatsuba pieces and reduces them.
#[inline(always)]
pub(crate) fn reduce(lo: __m128i, hi: __m128i, mid: __m128i) -> __m128i {
    // SAFETY: register-only; PCLMULQDQ is enabled in every caller.
    unsafe {
        let mid = _mm_xor_si128(mid, _mm_xor_si128(lo, hi));
        let lo = _mm_xor_si128(lo, _mm_slli_si128::<8>(mid));
        let hi = _mm_xor_si128(hi, _mm_srli_si128::<8>(mid));
        let q = _mm_set_epi64x(0, 0xc200_0000_0000_0000_u64 as i64);
        let t = _mm_clmulepi64_si128::<0x00>(lo, q);
        let lo = _mm_xor_si128(_mm_shuffle_epi32::<0x4e>(lo), t);
        let t = _mm_clmulepi64_si128::<0x00>(lo, q);
        _mm_xor_si128(_mm_xor_si128(_mm_shuffle_epi32::<0x4e>(lo), t), hi)
    }
}

#[inline(always)]
pub(crate) fn load_block(b: &Block, bswap: __m128i) -> __m128i {
    // SAFETY: a 16-byte unaligned load from a block; SSSE3 is enabled in every caller.
    unsafe { _mm_shuffle_epi8(_mm_loadu_si128(b.as_ptr().cast()), bswap) }
}

#[inline(always)]
pub(crate) fn bswap_mask() -> __m128i {
    // SAFETY: register construction; SSE2 is part of x86-64.
    unsafe { _mm_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0) }
}

/// The 128-bit path, also used by the VPCLMULQDQ backend for its last blocks.
#[target_feature(enable = "pclmulqdq,ssse3")]
pub(crate) fn update_clmul(powers: &[u128; 8], acc: u128, blocks: &[Block]) -> u128 {
    let bswap = bswap_mask();
    let mut acc = load_u128(&acc);
    let (groups, rest) = blocks.as_chunks::<8>();
    for g in groups {
        let (mut lo, mut hi, mut mid) = (
            _mm_setzero_si128(),
            _mm_setzero_si128(),
            _mm_setzero_si128(),
        );
        for (i, b) in g.iter().enumerate() {
            let mut x = load_block(b, bswap);
            if i == 0 {
                x = _mm_xor_si128(x, acc);
            }
            let (l, h, m) = product(x, load_u128(&powers[7 - i]));
            lo = _mm_xor_si128(lo, l);
            hi = _mm_xor_si128(hi, h);
            mid = _mm_xor_si128(mid, m);
        }
        acc = reduce(lo, hi, mid);
    }
    let h1 = load_u128(&powers[0]);
    for b in rest {
        let (l, h, m) = product(_mm_xor_si128(load_block(b, bswap), acc), h1);
        acc = reduce(l, h, m);
    }
    store_u128(acc)
}
