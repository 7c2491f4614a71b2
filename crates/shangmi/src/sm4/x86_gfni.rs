//! SM4 for the AVX-512 tier: the S-box in two GFNI instructions, 64 blocks in flight.
//!
//! The SM4 S-box is `A2 inv(A1 x + C1) + C2` with the inversion in the AES field, which
//! GF2P8AFFINEINVQB computes after an affine step. Both paths keep the state as Y = A1 X (per
//! byte, the round keys moved likewise), so the S-box input needs no first affine step, and fold
//! the linear transform L and the next round's A1 into the S-box's output matrix: byte `j` of
//! A1 L(S(y)) is the XOR over t of `G_t inv(y_{j-t})`, four GF2P8AFFINEINVQB (three distinct
//! matrices) and a byte rotation each. That is 9.5 instructions a round instead of 11, and a
//! critical path of about 6 cycles instead of 11.
//!
//! Bulk data is transposed so each ZMM register holds the same word of 16 blocks; four such
//! sets run interleaved. Chained modes go through [`crypt_block`], one block in XMM registers.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::Block;
use super::constants::{GFNI_A1, GFNI_A1_INV, GFNI_G, GFNI_KAPPA};
use super::x86_aesni::transpose4;
use crate::cpu::Avx512;

/// Blocks per fully interleaved pass.
const WIDE: usize = 64;

/// Encrypts (or, with reversed round keys, decrypts) blocks in bulk; `rk_a1` from
/// `a1_domain::key_to_a1_domain`.
pub(crate) fn crypt_blocks(_token: Avx512, rk: &[u32; 32], blocks: &mut [Block]) {
    // SAFETY: the token proves AVX-512 F/BW/VL and GFNI.
    unsafe { crypt_blocks_avx512(rk, blocks) }
}

/// One block on the low-latency path; `rk_a1` from `a1_domain::key_to_a1_domain`.
pub(crate) fn crypt_block(_token: Avx512, rk_a1: &[u32; 32], block: &mut Block) {
    // SAFETY: the token proves AVX-512 F/VL and GFNI.
    unsafe { crypt_lanes4(rk_a1, core::slice::from_mut(block)) }
}

/// Whole passes of four 16-block sets, then the rest in one pass of as few sets as hold it
/// (the last one padded), or, for four blocks or fewer, side by side in the lanes of the
/// low-latency path (cheaper than a 16-block set of mostly padding).
#[target_feature(enable = "avx512f,avx512bw,avx512vl,gfni")]
fn crypt_blocks_avx512(rk: &[u32; 32], blocks: &mut [Block]) {
    let (wide, rest) = blocks.as_chunks_mut::<WIDE>();
    for chunk in wide {
        crypt_pass(rk, chunk);
    }
    match rest.len() {
        0 => {}
        1..=4 => crypt_lanes4(rk, rest),
        n if n % 16 == 0 => crypt_pass(rk, rest),
        n => {
            let mut buf = [[0u8; 16]; WIDE];
            let padded = &mut buf[..n.next_multiple_of(16)];
            padded[..n].copy_from_slice(rest);
            crypt_pass(rk, padded);
            rest.copy_from_slice(&padded[..n]);
            // The padding too: it holds the encryption of zero blocks.
            crate::ct::wipe(padded.as_flattened_mut());
        }
    }
}

/// One pass over 16, 32, 48 or 64 blocks, their sets interleaved.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,gfni")]
#[inline]
fn crypt_pass(rk: &[u32; 32], blocks: &mut [Block]) {
    let data = blocks.as_flattened_mut();
    match data.len() / 256 {
        1 => crypt_sets::<1>(rk, data),
        2 => crypt_sets::<2>(rk, data),
        3 => crypt_sets::<3>(rk, data),
        _ => crypt_sets::<4>(rk, data),
    }
}

#[inline(always)]
fn bswap_mask() -> __m512i {
    // SAFETY: plain register construction (AVX-512F is enabled in every caller).
    unsafe {
        _mm512_broadcast_i32x4(_mm_setr_epi8(
            3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12,
        ))
    }
}

/// Four 4x4 transposes of 32-bit words inside each 128-bit lane: blocks to words and back.
#[inline(always)]
fn transpose(b: [__m512i; 4]) -> [__m512i; 4] {
    // SAFETY: register-only shuffles; AVX-512F is enabled in every caller.
    unsafe {
        let t0 = _mm512_unpacklo_epi32(b[0], b[1]);
        let t1 = _mm512_unpackhi_epi32(b[0], b[1]);
        let t2 = _mm512_unpacklo_epi32(b[2], b[3]);
        let t3 = _mm512_unpackhi_epi32(b[2], b[3]);
        [
            _mm512_unpacklo_epi64(t0, t2),
            _mm512_unpackhi_epi64(t0, t2),
            _mm512_unpacklo_epi64(t1, t3),
            _mm512_unpackhi_epi64(t1, t3),
        ]
    }
}

/// `S` sets of 16 blocks (`data` is 256 * S bytes), interleaved round by round.
///
/// Same formulation as [`crypt_block`]: the state lives in the A1 domain and a round is three
/// GF2P8AFFINEINVQB (G_1 = G_2), three byte rotations and the XORs. The byte rotations are
/// VPSHUFB rather than VPROLD so they run on the shuffle port while the GFNI instructions
/// occupy the other vector port.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,gfni")]
#[inline]
fn crypt_sets<const S: usize>(rk_a1: &[u32; 32], data: &mut [u8]) {
    debug_assert_eq!(data.len(), 256 * S);
    // SAFETY: AVX-512 F/BW/VL and GFNI are enabled in the only caller; loads and stores stay
    // inside `data` (256 * S bytes, 64 per access).
    unsafe {
        let bswap = bswap_mask();
        let perm = |p: [i8; 16]| {
            _mm512_broadcast_i32x4(_mm_setr_epi8(
                p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[12],
                p[13], p[14], p[15],
            ))
        };
        let rot8 = perm([3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14]);
        let rot16 = perm([2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13]);
        let rot24 = perm([1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12]);
        let a1 = _mm512_set1_epi64(GFNI_A1 as i64);
        let g0 = _mm512_set1_epi64(GFNI_G[0] as i64);
        let g12 = _mm512_set1_epi64(GFNI_G[1] as i64);
        let g3 = _mm512_set1_epi64(GFNI_G[3] as i64);
        let p = data.as_mut_ptr().cast::<__m512i>();
        let mut y: [[__m512i; 4]; S] = core::array::from_fn(|s| {
            transpose(core::array::from_fn(|i| {
                _mm512_shuffle_epi8(_mm512_loadu_si512(p.add(4 * s + i).cast()), bswap)
            }))
            .map(|w| _mm512_gf2p8affine_epi64_epi8::<0>(w, a1))
        });
        let mut pair = [_mm512_setzero_si512(); S];
        // Round i replaces word i % 4; written out four rounds at a time so every index is a
        // constant and the state stays in registers. Rounds i and i + 1 (i even) share
        // Y_{i+2} ^ Y_{i+3}.
        macro_rules! round {
            ($i:expr, $a:literal, $b:literal, $c:literal, $d:literal, $even:literal) => {{
                let key = _mm512_set1_epi32(rk_a1[$i] as i32);
                for s in 0..S {
                    let set = &mut y[s];
                    let t = if $even {
                        pair[s] = _mm512_xor_si512(set[$c], set[$d]);
                        _mm512_ternarylogic_epi32::<0x96>(set[$b], pair[s], key)
                    } else {
                        _mm512_ternarylogic_epi32::<0x96>(pair[s], set[$d], key)
                    };
                    let z0 = _mm512_gf2p8affineinv_epi64_epi8::<{ GFNI_KAPPA as i32 }>(t, g0);
                    let z12 = _mm512_gf2p8affineinv_epi64_epi8::<0>(t, g12);
                    let z3 = _mm512_gf2p8affineinv_epi64_epi8::<0>(t, g3);
                    let u = _mm512_ternarylogic_epi32::<0x96>(
                        set[$a],
                        z0,
                        _mm512_shuffle_epi8(z12, rot8),
                    );
                    set[$a] = _mm512_ternarylogic_epi32::<0x96>(
                        u,
                        _mm512_shuffle_epi8(z12, rot16),
                        _mm512_shuffle_epi8(z3, rot24),
                    );
                }
            }};
        }
        for i in (0..32).step_by(4) {
            round!(i, 0, 1, 2, 3, true);
            round!(i + 1, 1, 2, 3, 0, false);
            round!(i + 2, 2, 3, 0, 1, true);
            round!(i + 3, 3, 0, 1, 2, false);
        }
        let a1_inv = _mm512_set1_epi64(GFNI_A1_INV as i64);
        for (s, set) in y.iter().enumerate() {
            // Out of the A1 domain; output words X35, X34, X33, X32.
            let x = set.map(|w| _mm512_gf2p8affine_epi64_epi8::<0>(w, a1_inv));
            let out = transpose([x[3], x[2], x[1], x[0]]);
            for (i, v) in out.iter().enumerate() {
                _mm512_storeu_si512(p.add(4 * s + i).cast(), _mm512_shuffle_epi8(*v, bswap));
            }
        }
    }
}

/// One to four blocks at the latency of one: block j in lane j of four XMM registers (one
/// word each), the rounds computing in every lane alike.
#[target_feature(enable = "avx512f,avx512vl,gfni,ssse3")]
fn crypt_lanes4(rk_a1: &[u32; 32], blocks: &mut [Block]) {
    debug_assert!((1..=4).contains(&blocks.len()));
    // SAFETY: the target features are enabled; loads and stores are the 16 bytes of each block.
    unsafe {
        let bswap = _mm_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
        let b: [__m128i; 4] = core::array::from_fn(|j| match blocks.get(j) {
            Some(blk) => _mm_shuffle_epi8(_mm_loadu_si128(blk.as_ptr().cast()), bswap),
            None => _mm_setzero_si128(),
        });
        let a1 = _mm_set1_epi64x(GFNI_A1 as i64);
        let [mut w0, mut w1, mut w2, mut w3] =
            transpose4(b).map(|w| _mm_gf2p8affine_epi64_epi8::<0>(w, a1));
        let g = GFNI_G.map(|m| _mm_set1_epi64x(m as i64));
        let key = |i: usize| _mm_set1_epi32(rk_a1[i % 32] as i32);
        // The S-box input of round 0; later ones are formed as each round ends.
        let mut input = _mm_ternarylogic_epi32::<0x96>(_mm_xor_si128(w1, w2), w3, key(0));
        // Round i replaces the oldest word with Y_{i+4} = Y_i ^ A1 L(S(input)). The next input,
        // Y_{i+2} ^ Y_{i+3} ^ Y_{i+4} ^ rk_{i+1}, adds the new terms last: Y_{i+2} ^ Y_{i+3} ^
        // rk_{i+1} ^ Y_i is ready before this round's S-box finishes.
        macro_rules! round {
            ($i:expr, $old:ident, $n2:ident, $n3:ident) => {{
                let early =
                    _mm_ternarylogic_epi32::<0x96>($old, $n2, _mm_xor_si128($n3, key($i + 1)));
                let g0 = _mm_gf2p8affineinv_epi64_epi8::<{ GFNI_KAPPA as i32 }>(input, g[0]);
                let r1 = _mm_rol_epi32::<8>(_mm_gf2p8affineinv_epi64_epi8::<0>(input, g[1]));
                let r2 = _mm_rol_epi32::<16>(_mm_gf2p8affineinv_epi64_epi8::<0>(input, g[2]));
                let r3 = _mm_rol_epi32::<24>(_mm_gf2p8affineinv_epi64_epi8::<0>(input, g[3]));
                let u = _mm_ternarylogic_epi32::<0x96>(g0, r1, r2);
                input = _mm_ternarylogic_epi32::<0x96>(early, u, r3);
                $old = _mm_ternarylogic_epi32::<0x96>($old, u, r3);
            }};
        }
        for i in (0..32).step_by(4) {
            round!(i, w0, w2, w3);
            round!(i + 1, w1, w3, w0);
            round!(i + 2, w2, w0, w1);
            round!(i + 3, w3, w1, w2);
        }
        let w = [w0, w1, w2, w3];
        // Back from the A1 domain; the output is X35, X34, X33, X32.
        let inv = _mm_set1_epi64x(GFNI_A1_INV as i64);
        let x = w.map(|v| _mm_gf2p8affine_epi64_epi8::<0>(v, inv));
        let out = transpose4([x[3], x[2], x[1], x[0]]);
        for (blk, v) in blocks.iter_mut().zip(out) {
            _mm_storeu_si128(blk.as_mut_ptr().cast(), _mm_shuffle_epi8(v, bswap));
        }
    }
}
