//! SM4 with the S-box through AESENCLAST: the `aesni` implementation (AES-NI on 128 bits) and
//! the `vaes-avx2` one (VAES on whole 256-bit registers).
//!
//! The SM4 and AES S-boxes are both affine maps around inversion in GF(2^8). The state runs in
//! the A1 domain (`a1_domain`), where the affine map before the inversion is already applied,
//! so a round is one AESENCLAST (zero round key) and three bytewise linear maps of its output
//! that fold in the map after it and the linear transform L, each a pair of 16-entry nibble
//! lookups (VPSHUFB on tables held in registers: the index is data, but there is no memory
//! access, so the timing does not depend on it), plus three byte rotations. AESENCLAST also
//! applies ShiftRows; its input is pre-shuffled with the inverse.
//!
//! Bulk data: eight blocks per YMM set (one word of eight blocks per register), four sets
//! interleaved. Without VAES, AESENCLAST works on 128 bits, so each YMM is split for that one
//! instruction; the two implementations share every other line (generic over [`Enclast`]).
//! One to four blocks run in the lanes of four XMM registers, and a single block of a chained
//! mode is replicated across lanes, which makes ShiftRows a no-op.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::Block;
use super::a1_domain::{INTO, OUT_OF, TA, TB, TC};
use crate::cpu::{Avx2, Vaes};

mod narrow;
mod schedule;
pub(crate) use narrow::*;
pub(crate) use schedule::*;

/// One block on the low-latency path (chained modes), with the round keys in the A1 domain.
/// XMM-wide, so AES-NI serves both implementations.
pub(crate) fn crypt_block(_token: Avx2, rk_a1: &[u32; 32], block: &mut Block) {
    // SAFETY: the token proves AVX2 and AES-NI.
    unsafe { crypt_one(rk_a1, block) }
}

/// Encrypts (or, with reversed round keys, decrypts) blocks with AES-NI; the round keys in
/// the A1 domain.
pub(crate) fn crypt_blocks(_token: Avx2, rk_a1: &[u32; 32], blocks: &mut [Block]) {
    // SAFETY: the token proves AVX2 and AES-NI.
    unsafe { crypt_blocks_aesni(rk_a1, blocks) }
}

/// One to four blocks on the four-lane XMM path (shorter latency than a padded 8-block set).
pub(crate) fn crypt_lanes(_token: Avx2, rk_a1: &[u32; 32], blocks: &mut [Block]) {
    debug_assert!((1..=4).contains(&blocks.len()));
    // SAFETY: the token proves AVX2 and AES-NI.
    unsafe { crypt_lanes4(rk_a1, blocks) }
}

/// Encrypts (or, with reversed round keys, decrypts) blocks with VAES; the round keys in the
/// A1 domain.
pub(crate) fn crypt_blocks_vaes(_token: Vaes, rk_a1: &[u32; 32], blocks: &mut [Block]) {
    // SAFETY: the token proves AVX2, AES-NI and VAES.
    unsafe { crypt_blocks_wide(rk_a1, blocks) }
}

/// AESENCLAST with a zero round key on every 128-bit lane of a YMM register.
pub(super) trait Enclast {
    /// How many 8-block sets one pass interleaves (at most 4): enough independent work to
    /// cover a round's latency with this S-box.
    const SETS: usize;

    fn enclast(x: __m256i) -> __m256i;
}

/// AES-NI: the two 128-bit halves one after the other.
pub(super) struct Split;

impl Enclast for Split {
    const SETS: usize = 4;

    #[inline(always)]
    fn enclast(x: __m256i) -> __m256i {
        // SAFETY: register-only operations; AVX2 and AES-NI are enabled in every caller.
        unsafe {
            let zero = _mm_setzero_si128();
            let lo = _mm_aesenclast_si128(_mm256_castsi256_si128(x), zero);
            let hi = _mm_aesenclast_si128(_mm256_extracti128_si256::<1>(x), zero);
            _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi)
        }
    }
}

/// VAES: one instruction on the whole register.
pub(super) struct Wide;

impl Enclast for Wide {
    const SETS: usize = 4;

    #[inline(always)]
    fn enclast(x: __m256i) -> __m256i {
        // SAFETY: a register-only instruction; VAES is enabled in every caller.
        unsafe { _mm256_aesenclast_epi128(x, _mm256_setzero_si256()) }
    }
}

#[target_feature(enable = "avx2,aes")]
fn crypt_blocks_aesni(rk: &[u32; 32], blocks: &mut [Block]) {
    crypt_blocks_with::<Split>(rk, blocks);
}

#[target_feature(enable = "avx2,aes,vaes")]
fn crypt_blocks_wide(rk: &[u32; 32], blocks: &mut [Block]) {
    crypt_blocks_with::<Wide>(rk, blocks);
}

/// Whole passes of `E::SETS` sets, then the rest in one pass of as few sets as hold it (the
/// last one padded), or, for four blocks or fewer, on the four-lane path.
#[inline(always)]
fn crypt_blocks_with<E: Enclast>(rk_a1: &[u32; 32], blocks: &mut [Block]) {
    let mut rest = blocks;
    let wide = 8 * E::SETS;
    while rest.len() >= wide {
        let (pass, tail) = rest.split_at_mut(wide);
        crypt_pass::<E>(rk_a1, pass);
        rest = tail;
    }
    match rest.len() {
        0 => {}
        // SAFETY: every caller enables AVX2 and AES-NI.
        1..=4 => unsafe { crypt_lanes4(rk_a1, rest) },
        n if n % 8 == 0 => crypt_pass::<E>(rk_a1, rest),
        n => {
            let mut buf = [[0u8; 16]; 32];
            let padded = &mut buf[..n.next_multiple_of(8)];
            padded[..n].copy_from_slice(rest);
            crypt_pass::<E>(rk_a1, padded);
            rest.copy_from_slice(&padded[..n]);
            // The padding too: it holds the encryption of zero blocks.
            crate::ct::wipe(padded.as_flattened_mut());
        }
    }
}

/// One pass over 8, 16, 24 or 32 blocks, their sets interleaved.
#[inline(always)]
fn crypt_pass<E: Enclast>(rk_a1: &[u32; 32], blocks: &mut [Block]) {
    let data = blocks.as_flattened_mut();
    match data.len() / 128 {
        1 => crypt_sets::<E, 1>(rk_a1, data),
        2 => crypt_sets::<E, 2>(rk_a1, data),
        3 => crypt_sets::<E, 3>(rk_a1, data),
        _ => crypt_sets::<E, 4>(rk_a1, data),
    }
}

/// The four 128-bit-lane 4x4 word transposes (blocks to words and back).
#[inline(always)]
pub(super) fn transpose(b: [__m256i; 4]) -> [__m256i; 4] {
    // SAFETY: register-only shuffles; AVX2 is enabled in every caller.
    unsafe {
        let t0 = _mm256_unpacklo_epi32(b[0], b[1]);
        let t1 = _mm256_unpackhi_epi32(b[0], b[1]);
        let t2 = _mm256_unpacklo_epi32(b[2], b[3]);
        let t3 = _mm256_unpackhi_epi32(b[2], b[3]);
        [
            _mm256_unpacklo_epi64(t0, t2),
            _mm256_unpackhi_epi64(t0, t2),
            _mm256_unpacklo_epi64(t1, t3),
            _mm256_unpackhi_epi64(t1, t3),
        ]
    }
}

/// Register-held constants of the round function (each 16-byte table in both lanes).
pub(super) struct Consts {
    bswap: __m256i,
    low_nibble: __m256i,
    inv_shift_rows: __m256i,
    rot8: __m256i,
    rot16: __m256i,
    rot24: __m256i,
    into: (__m256i, __m256i),
    out_of: (__m256i, __m256i),
    ta: (__m256i, __m256i),
    tb: (__m256i, __m256i),
    tc: (__m256i, __m256i),
}

#[inline(always)]
pub(super) fn consts() -> Consts {
    // SAFETY: register construction; AVX2 is enabled in every caller.
    unsafe {
        Consts {
            bswap: perm([3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12]),
            low_nibble: _mm256_set1_epi8(0x0f),
            // AESENCLAST's ShiftRows moves byte 5 to 1, 10 to 2, ...; this undoes it ahead.
            inv_shift_rows: perm([0, 13, 10, 7, 4, 1, 14, 11, 8, 5, 2, 15, 12, 9, 6, 3]),
            rot8: perm([3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14]),
            // Opaque, so that LLVM keeps one VPSHUFB for the 16-bit rotation rather than the
            // VPSHUFLW + VPSHUFHW pair it prefers (two shuffle-port instructions, not one).
            rot16: core::hint::black_box(perm([
                2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
            ])),
            rot24: perm([1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12]),
            into: pair(&INTO),
            out_of: pair(&OUT_OF),
            ta: pair(&TA),
            tb: pair(&TB),
            tc: pair(&TC),
        }
    }
}

// The kernels below are `inline(always)` functions and loops, never closures: a closure in
// a function without target features does not get them from its caller, and its intrinsics
// then become calls (with every register passed through memory).

/// A byte permutation in both 128-bit lanes.
#[inline(always)]
pub(super) fn perm(p: [u8; 16]) -> __m256i {
    // SAFETY: a 16-byte load from the array; AVX2 is enabled in every caller.
    unsafe { _mm256_broadcastsi128_si256(_mm_loadu_si128(p.as_ptr().cast())) }
}

/// A nibble-table pair, each table in both 128-bit lanes.
#[inline(always)]
fn pair(t: &([u8; 16], [u8; 16])) -> (__m256i, __m256i) {
    (perm(t.0), perm(t.1))
}

/// `x`, opaque to the optimiser: LLVM would otherwise push a byte rotation through the XOR of
/// a table pair (one VPSHUFB becomes two, on the ports that bound this kernel).
#[target_feature(enable = "avx")]
#[inline]
fn keep256(mut x: __m256i) -> __m256i {
    // SAFETY: the assembly is empty; it reads and writes only the register it is given.
    unsafe {
        core::arch::asm!(
            "/* {0} */",
            inout(ymm_reg) x,
            options(pure, nomem, nostack, preserves_flags)
        );
    }
    x
}

/// A bytewise linear map by its nibble tables: `t.0[x & 15] ^ t.1[x >> 4]` on every byte, the
/// nibbles split ahead (so several maps of one value share the split).
#[inline(always)]
fn lookup(lo: __m256i, hi: __m256i, t: (__m256i, __m256i)) -> __m256i {
    // SAFETY: register-only operations; AVX2 is enabled in every caller.
    unsafe { _mm256_xor_si256(_mm256_shuffle_epi8(t.0, lo), _mm256_shuffle_epi8(t.1, hi)) }
}

/// The low and high nibbles of every byte.
#[inline(always)]
fn split(x: __m256i, mask: __m256i) -> (__m256i, __m256i) {
    // SAFETY: register-only operations; AVX2 is enabled in every caller.
    unsafe {
        (
            _mm256_and_si256(x, mask),
            _mm256_and_si256(_mm256_srli_epi16::<4>(x), mask),
        )
    }
}

/// `S` sets of 8 blocks (`data` is 128 * S bytes), interleaved round by round. Inlined into
/// the target-feature entry points, which give its intrinsics their features.
#[inline(always)]
fn crypt_sets<E: Enclast, const S: usize>(rk_a1: &[u32; 32], data: &mut [u8]) {
    debug_assert_eq!(data.len(), 128 * S);
    let c = consts();
    let p = data.as_mut_ptr().cast::<__m256i>();
    // SAFETY: AVX2 is enabled in every caller; loads and stores stay inside `data` (128 * S
    // bytes, 32 per access).
    unsafe {
        let mut y = [[_mm256_setzero_si256(); 4]; S];
        for (s, set) in y.iter_mut().enumerate() {
            let mut b = [_mm256_setzero_si256(); 4];
            for (i, v) in b.iter_mut().enumerate() {
                *v = _mm256_loadu_si256(p.add(4 * s + i));
            }
            *set = c.set_from_blocks(b);
        }
        rounds::<E, S>(&c, rk_a1, &mut y);
        for (s, set) in y.iter().enumerate() {
            for (i, v) in c.out_of_domain(set).into_iter().enumerate() {
                _mm256_storeu_si256(p.add(4 * s + i), v);
            }
        }
    }
}

impl Consts {
    /// Eight blocks (two per register, in order) as the four words of a set in the A1 domain.
    #[inline(always)]
    pub(super) fn set_from_blocks(&self, blocks: [__m256i; 4]) -> [__m256i; 4] {
        // SAFETY: register-only operations; AVX2 is enabled in every caller.
        unsafe {
            let mut w = blocks;
            for v in w.iter_mut() {
                *v = _mm256_shuffle_epi8(*v, self.bswap);
            }
            let mut set = transpose(w);
            for v in set.iter_mut() {
                *v = self.to_domain(*v);
            }
            set
        }
    }

    /// A word of eight blocks into the A1 domain.
    #[inline(always)]
    pub(super) fn to_domain(&self, w: __m256i) -> __m256i {
        let (lo, hi) = split(w, self.low_nibble);
        lookup(lo, hi, self.into)
    }

    /// The four words of a set out of the domain (output words X35, X34, X33, X32), back in
    /// block order and byte order: the four registers hold blocks 0-1, 2-3, 4-5 and 6-7.
    #[inline(always)]
    pub(super) fn out_of_domain(&self, set: &[__m256i; 4]) -> [__m256i; 4] {
        // SAFETY: register-only operations; AVX2 is enabled in every caller.
        unsafe {
            let mut x = [_mm256_setzero_si256(); 4];
            for (v, w) in x.iter_mut().zip(set.iter().rev()) {
                let (lo, hi) = split(*w, self.low_nibble);
                *v = lookup(lo, hi, self.out_of);
            }
            let mut out = transpose(x);
            for v in out.iter_mut() {
                *v = _mm256_shuffle_epi8(*v, self.bswap);
            }
            out
        }
    }
}

/// The 32 rounds on `S` sets in the A1 domain, interleaved round by round: a round is one
/// AESENCLAST, three table pairs and three byte rotations, no affine map before the S-box.
#[inline(always)]
pub(super) fn rounds<E: Enclast, const S: usize>(
    c: &Consts,
    rk_a1: &[u32; 32],
    y: &mut [[__m256i; 4]; S],
) {
    // SAFETY: register-only operations; AVX2 and AES-NI (and VAES for `Wide`) are enabled in
    // every caller.
    unsafe {
        // Round i replaces word i % 4; four rounds at a time keep every index constant.
        macro_rules! round {
            ($i:expr, $a:literal, $b:literal, $c:literal, $d:literal) => {{
                let key = _mm256_set1_epi32(rk_a1[$i] as i32);
                for set in y.iter_mut() {
                    let t = _mm256_xor_si256(
                        _mm256_xor_si256(set[$b], set[$c]),
                        _mm256_xor_si256(set[$d], key),
                    );
                    let u = E::enclast(_mm256_shuffle_epi8(t, c.inv_shift_rows));
                    let (lo, hi) = split(u, c.low_nibble);
                    let b = keep256(lookup(lo, hi, c.tb));
                    let tc = keep256(lookup(lo, hi, c.tc));
                    set[$a] = _mm256_xor_si256(
                        _mm256_xor_si256(set[$a], lookup(lo, hi, c.ta)),
                        _mm256_xor_si256(
                            _mm256_xor_si256(
                                _mm256_shuffle_epi8(b, c.rot8),
                                _mm256_shuffle_epi8(b, c.rot16),
                            ),
                            _mm256_shuffle_epi8(tc, c.rot24),
                        ),
                    );
                }
            }};
        }
        for i in (0..32).step_by(4) {
            round!(i, 0, 1, 2, 3);
            round!(i + 1, 1, 2, 3, 0);
            round!(i + 2, 2, 3, 0, 1);
            round!(i + 3, 3, 0, 1, 2);
        }
    }
}
