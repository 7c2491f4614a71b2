//! SM4 with the S-box through AESENCLAST between two affine maps: the `aesni` implementation
//! (AES-NI on 128 bits) and the `vaes-avx2` one (VAES on whole 256-bit registers).
//!
//! The SM4 and AES S-boxes are both affine maps around inversion in GF(2^8), so
//! `S_sm4(x) = POST(S_aes(PRE(x)))` for two affine maps, done here as pairs of 16-entry nibble
//! lookups (VPSHUFB on constant tables: the table is indexed by data, but it sits in a register,
//! so there is no memory access and the timing does not depend on the index). AESENCLAST also
//! applies ShiftRows; the input is pre-shuffled with its inverse. Eight blocks per YMM set (one
//! word of eight blocks per register), several sets interleaved. Without VAES, AESENCLAST works
//! on 128 bits, so each YMM is split for that one instruction; with VAES it runs whole. The two
//! share every other line: the kernel is generic over [`Enclast`].
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::Block;
use super::constants::{POST_HI, POST_LO, PRE_HI, PRE_LO};
use crate::cpu::{Avx2, Vaes};

/// One block on the low-latency path (chained modes). XMM-wide, so AES-NI serves both
/// implementations.
pub(crate) fn crypt_block(_token: Avx2, rk: &[u32; 32], block: &mut Block) {
    // SAFETY: the token proves AVX2 and AES-NI.
    unsafe { crypt_lanes4(rk, core::slice::from_mut(block)) }
}

/// Encrypts (or, with reversed round keys, decrypts) blocks with AES-NI.
pub(crate) fn crypt_blocks(_token: Avx2, rk: &[u32; 32], blocks: &mut [Block]) {
    // SAFETY: the token proves AVX2 and AES-NI.
    unsafe { crypt_blocks_aesni(rk, blocks) }
}

/// Encrypts (or, with reversed round keys, decrypts) blocks with VAES.
pub(crate) fn crypt_blocks_vaes(_token: Vaes, rk: &[u32; 32], blocks: &mut [Block]) {
    // SAFETY: the token proves AVX2, AES-NI and VAES.
    unsafe { crypt_blocks_wide(rk, blocks) }
}

/// AESENCLAST with a zero round key on every 128-bit lane of a YMM register.
trait Enclast {
    /// How many 8-block sets one pass interleaves: enough independent work to cover a
    /// round's latency with this S-box.
    const SETS: usize;

    fn enclast(x: __m256i) -> __m256i;
}

/// AES-NI: the two 128-bit halves one after the other.
struct Split;

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
struct Wide;

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

/// Whole passes of `E::SETS` sets, then single sets, then the few blocks left: on the
/// four-lane path, or one padded set.
#[inline(always)]
fn crypt_blocks_with<E: Enclast>(rk: &[u32; 32], blocks: &mut [Block]) {
    let mut rest = blocks;
    let wide = 8 * E::SETS;
    while rest.len() >= wide {
        let (pass, tail) = rest.split_at_mut(wide);
        match E::SETS {
            8 => crypt_sets::<E, 8>(rk, pass.as_flattened_mut()),
            6 => crypt_sets::<E, 6>(rk, pass.as_flattened_mut()),
            5 => crypt_sets::<E, 5>(rk, pass.as_flattened_mut()),
            4 => crypt_sets::<E, 4>(rk, pass.as_flattened_mut()),
            3 => crypt_sets::<E, 3>(rk, pass.as_flattened_mut()),
            _ => crypt_sets::<E, 2>(rk, pass.as_flattened_mut()),
        }
        rest = tail;
    }
    let (sets, rest) = rest.as_chunks_mut::<8>();
    for chunk in sets {
        crypt_sets::<E, 1>(rk, chunk.as_flattened_mut());
    }
    if (1..=4).contains(&rest.len()) {
        // SAFETY: every caller enables AVX2 and AES-NI.
        unsafe { crypt_lanes4(rk, rest) };
    } else if !rest.is_empty() {
        let mut buf = [[0u8; 16]; 8];
        buf[..rest.len()].copy_from_slice(rest);
        crypt_sets::<E, 1>(rk, buf.as_flattened_mut());
        rest.copy_from_slice(&buf[..rest.len()]);
        // Only the blocks that held data (volatile stores are slow beside one block's work).
        zeroize::Zeroize::zeroize(buf[..rest.len()].as_flattened_mut());
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

/// Register-held constants of the round function.
struct Consts {
    bswap: __m256i,
    low_nibble: __m256i,
    pre_lo: __m256i,
    pre_hi: __m256i,
    post_lo: __m256i,
    post_hi: __m256i,
    inv_shift_rows: __m256i,
    rot8: __m256i,
    rot16: __m256i,
    rot24: __m256i,
}

#[inline(always)]
fn table(t: [u8; 16]) -> __m256i {
    // SAFETY: an unaligned load of 16 bytes from a 16-byte array; AVX2 is enabled in callers.
    unsafe { _mm256_broadcastsi128_si256(_mm_loadu_si128(t.as_ptr().cast())) }
}

#[inline(always)]
fn consts() -> Consts {
    // SAFETY: register construction only; AVX2 is enabled in every caller.
    unsafe {
        let perm = |p: [i8; 16]| {
            _mm256_broadcastsi128_si256(_mm_setr_epi8(
                p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[12],
                p[13], p[14], p[15],
            ))
        };
        Consts {
            bswap: perm([3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12]),
            low_nibble: _mm256_set1_epi8(0x0f),
            pre_lo: table(PRE_LO),
            pre_hi: table(PRE_HI),
            post_lo: table(POST_LO),
            post_hi: table(POST_HI),
            // AESENCLAST's ShiftRows moves byte 5 to 1, 10 to 2, ...; this undoes it ahead.
            inv_shift_rows: perm([0, 13, 10, 7, 4, 1, 14, 11, 8, 5, 2, 15, 12, 9, 6, 3]),
            rot8: perm([3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14]),
            rot16: perm([2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13]),
            rot24: perm([1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12]),
        }
    }
}

/// `lo[x & 15] ^ hi[x >> 4]` on every byte.
#[inline(always)]
fn nibble_affine(x: __m256i, lo: __m256i, hi: __m256i, mask: __m256i) -> __m256i {
    // SAFETY: register-only operations; AVX2 is enabled in every caller.
    unsafe {
        let l = _mm256_shuffle_epi8(lo, _mm256_and_si256(x, mask));
        let h = _mm256_shuffle_epi8(hi, _mm256_and_si256(_mm256_srli_epi16::<4>(x), mask));
        _mm256_xor_si256(l, h)
    }
}

/// The SM4 S-box on every byte.
#[inline(always)]
fn sbox<E: Enclast>(x: __m256i, c: &Consts) -> __m256i {
    // SAFETY: register-only operations; AVX2 is enabled in every caller.
    unsafe {
        let x = nibble_affine(
            _mm256_shuffle_epi8(x, c.inv_shift_rows),
            c.pre_lo,
            c.pre_hi,
            c.low_nibble,
        );
        nibble_affine(E::enclast(x), c.post_lo, c.post_hi, c.low_nibble)
    }
}

/// x0 ^ L(t), with L(t) = t ^ rotl24(t) ^ rotl2(t ^ rotl8(t) ^ rotl16(t)): the byte
/// rotations are single shuffles, leaving one shift-based rotation.
#[inline(always)]
fn linear(x0: __m256i, t: __m256i, c: &Consts) -> __m256i {
    // SAFETY: register-only operations; AVX2 is enabled in every caller.
    unsafe {
        let a = _mm256_xor_si256(
            _mm256_xor_si256(t, _mm256_shuffle_epi8(t, c.rot8)),
            _mm256_shuffle_epi8(t, c.rot16),
        );
        let a = _mm256_or_si256(_mm256_slli_epi32::<2>(a), _mm256_srli_epi32::<30>(a));
        _mm256_xor_si256(
            _mm256_xor_si256(x0, t),
            _mm256_xor_si256(a, _mm256_shuffle_epi8(t, c.rot24)),
        )
    }
}

/// `S` sets of 8 blocks (`data` is 128 * S bytes), interleaved round by round. Inlined into
/// the target-feature entry points, which give its intrinsics their features.
#[inline(always)]
fn crypt_sets<E: Enclast, const S: usize>(rk: &[u32; 32], data: &mut [u8]) {
    debug_assert_eq!(data.len(), 128 * S);
    // SAFETY: AVX2 and AES-NI (and VAES for `Wide`) are enabled in every caller; loads and
    // stores stay inside `data` (128 * S bytes, 32 per access).
    unsafe {
        let c = consts();
        let p = data.as_mut_ptr().cast::<__m256i>();
        let mut x: [[__m256i; 4]; S] = core::array::from_fn(|s| {
            transpose(core::array::from_fn(|i| {
                _mm256_shuffle_epi8(_mm256_loadu_si256(p.add(4 * s + i)), c.bswap)
            }))
        });
        // Round i replaces word i % 4; four rounds at a time keep every index constant.
        macro_rules! round {
            ($i:expr, $a:literal, $b:literal, $c:literal, $d:literal) => {{
                let key = _mm256_set1_epi32(rk[$i] as i32);
                for set in x.iter_mut() {
                    let t = _mm256_xor_si256(
                        _mm256_xor_si256(set[$b], set[$c]),
                        _mm256_xor_si256(set[$d], key),
                    );
                    let t = sbox::<E>(t, &c);
                    set[$a] = linear(set[$a], t, &c);
                }
            }};
        }
        for i in (0..32).step_by(4) {
            round!(i, 0, 1, 2, 3);
            round!(i + 1, 1, 2, 3, 0);
            round!(i + 2, 2, 3, 0, 1);
            round!(i + 3, 3, 0, 1, 2);
        }
        for (s, set) in x.iter().enumerate() {
            let out = transpose([set[3], set[2], set[1], set[0]]);
            for (i, v) in out.iter().enumerate() {
                _mm256_storeu_si256(p.add(4 * s + i), _mm256_shuffle_epi8(*v, c.bswap));
            }
        }
    }
}

/// A 4x4 transpose of 32-bit words: lane j of output k is lane k of input j (SSE2, so any
/// x86-64 has it).
#[inline(always)]
pub(crate) fn transpose4(b: [__m128i; 4]) -> [__m128i; 4] {
    // SAFETY: register-only SSE2 shuffles; SSE2 is part of x86-64.
    unsafe {
        let t0 = _mm_unpacklo_epi32(b[0], b[1]);
        let t1 = _mm_unpackhi_epi32(b[0], b[1]);
        let t2 = _mm_unpacklo_epi32(b[2], b[3]);
        let t3 = _mm_unpackhi_epi32(b[2], b[3]);
        [
            _mm_unpacklo_epi64(t0, t2),
            _mm_unpackhi_epi64(t0, t2),
            _mm_unpacklo_epi64(t1, t3),
            _mm_unpackhi_epi64(t1, t3),
        ]
    }
}

/// One to four blocks, block j in lane j of four XMM registers (one word each): the path for
/// chained modes and short messages. XMM-wide, AESENCLAST needs no split of its operand, which
/// takes about a third off the latency of a round against the 8-block YMM pass.
#[target_feature(enable = "avx2,aes")]
fn crypt_lanes4(rk: &[u32; 32], blocks: &mut [Block]) {
    debug_assert!((1..=4).contains(&blocks.len()));
    let c = consts();
    // The YMM constants hold the same 16 bytes in both lanes.
    let low = |v: __m256i| _mm256_castsi256_si128(v);
    let (bswap, mask, shift_rows) = (low(c.bswap), low(c.low_nibble), low(c.inv_shift_rows));
    let (pre_lo, pre_hi, post_lo, post_hi) =
        (low(c.pre_lo), low(c.pre_hi), low(c.post_lo), low(c.post_hi));
    let (rot8, rot16, rot24) = (low(c.rot8), low(c.rot16), low(c.rot24));
    let nibbles = |x: __m128i, lo: __m128i, hi: __m128i| {
        let l = _mm_shuffle_epi8(lo, _mm_and_si128(x, mask));
        let h = _mm_shuffle_epi8(hi, _mm_and_si128(_mm_srli_epi16::<4>(x), mask));
        _mm_xor_si128(l, h)
    };
    let round = |x0: __m128i, t: __m128i| {
        let t = nibbles(_mm_shuffle_epi8(t, shift_rows), pre_lo, pre_hi);
        let t = nibbles(
            _mm_aesenclast_si128(t, _mm_setzero_si128()),
            post_lo,
            post_hi,
        );
        let a = _mm_xor_si128(
            _mm_xor_si128(t, _mm_shuffle_epi8(t, rot8)),
            _mm_shuffle_epi8(t, rot16),
        );
        let a = _mm_or_si128(_mm_slli_epi32::<2>(a), _mm_srli_epi32::<30>(a));
        _mm_xor_si128(
            _mm_xor_si128(x0, t),
            _mm_xor_si128(a, _mm_shuffle_epi8(t, rot24)),
        )
    };
    let b: [__m128i; 4] = core::array::from_fn(|j| match blocks.get(j) {
        // SAFETY: a 16-byte load of a block.
        Some(blk) => unsafe { _mm_shuffle_epi8(_mm_loadu_si128(blk.as_ptr().cast()), bswap) },
        None => _mm_setzero_si128(),
    });
    let [mut w0, mut w1, mut w2, mut w3] = transpose4(b);
    let key = |i: usize| _mm_set1_epi32(rk[i] as i32);
    // The word a round has just made goes into the next round's XOR last: everything else is
    // ready earlier, so the chain from round to round is one XOR long there.
    for i in (0..32).step_by(4) {
        w0 = round(
            w0,
            _mm_xor_si128(_mm_xor_si128(_mm_xor_si128(w1, w2), key(i)), w3),
        );
        w1 = round(
            w1,
            _mm_xor_si128(_mm_xor_si128(_mm_xor_si128(w2, w3), key(i + 1)), w0),
        );
        w2 = round(
            w2,
            _mm_xor_si128(_mm_xor_si128(_mm_xor_si128(w3, w0), key(i + 2)), w1),
        );
        w3 = round(
            w3,
            _mm_xor_si128(_mm_xor_si128(_mm_xor_si128(w0, w1), key(i + 3)), w2),
        );
    }
    // The output is X35, X34, X33, X32.
    let out = transpose4([w3, w2, w1, w0]);
    for (blk, v) in blocks.iter_mut().zip(out) {
        // SAFETY: a 16-byte store into the block.
        unsafe { _mm_storeu_si128(blk.as_mut_ptr().cast(), _mm_shuffle_epi8(v, bswap)) };
    }
}
