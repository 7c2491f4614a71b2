//! SM4 with GFNI on 256-bit registers, for CPUs that have GFNI but not AVX-512 (the
//! `gfni-avx2` implementation: Alder Lake and later client cores, Atom-core servers).
//!
//! The same rounds as the AVX-512 kernel (`x86_gfni.rs`, whose comment explains them): the
//! state lives in the A1 domain, and a round is three GF2P8AFFINEINVQB whose matrices fold in
//! the linear transform L, three byte rotations and the XORs. Without AVX-512 there is no
//! three-way XOR instruction and no rotate, so those are two XORs and a VPSHUFB each. Eight
//! blocks per set (one word of eight blocks per YMM register, as the AES-NI kernel lays them
//! out), four sets interleaved; one to four blocks go through the AES-NI four-lane path.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::Block;
use super::constants::{GFNI_A1, GFNI_A1_INV, GFNI_G, GFNI_KAPPA};
use super::x86_aesni::{self, perm, transpose};
use crate::cpu::Gfni;

/// Blocks per fully interleaved pass: four sets of eight.
const WIDE: usize = 32;

/// Encrypts (or, with reversed round keys, decrypts) blocks; the round keys in the A1 domain
/// (`a1_domain::key_to_a1_domain`). Whole passes of four sets, then the rest in one pass of
/// as few sets as hold it (the last one padded), or, for four blocks or fewer, on the AES-NI
/// four-lane path.
pub(crate) fn crypt_blocks(token: Gfni, rk_a1: &[u32; 32], blocks: &mut [Block]) {
    let (wide, rest) = blocks.as_chunks_mut::<WIDE>();
    for chunk in wide {
        // SAFETY: the token proves AVX2 and GFNI.
        unsafe { crypt_pass(rk_a1, chunk) };
    }
    match rest.len() {
        0 => {}
        1..=4 => x86_aesni::crypt_lanes(token.avx2(), rk_a1, rest),
        // SAFETY: as above.
        n if n % 8 == 0 => unsafe { crypt_pass(rk_a1, rest) },
        n => {
            let mut buf = [[0u8; 16]; WIDE];
            let padded = &mut buf[..n.next_multiple_of(8)];
            padded[..n].copy_from_slice(rest);
            // SAFETY: as above.
            unsafe { crypt_pass(rk_a1, padded) };
            rest.copy_from_slice(&padded[..n]);
            // The padding too: it holds the encryption of zero blocks.
            crate::ct::wipe(padded.as_flattened_mut());
        }
    }
}

/// One pass over 8, 16, 24 or 32 blocks, their sets interleaved.
#[target_feature(enable = "avx2,gfni")]
fn crypt_pass(rk_a1: &[u32; 32], blocks: &mut [Block]) {
    let data = blocks.as_flattened_mut();
    match data.len() / 128 {
        1 => crypt_sets::<1>(rk_a1, data),
        2 => crypt_sets::<2>(rk_a1, data),
        3 => crypt_sets::<3>(rk_a1, data),
        _ => crypt_sets::<4>(rk_a1, data),
    }
}

/// `S` sets of 8 blocks (`data` is 128 * S bytes), interleaved round by round.
#[inline(always)]
fn crypt_sets<const S: usize>(rk_a1: &[u32; 32], data: &mut [u8]) {
    debug_assert_eq!(data.len(), 128 * S);
    // SAFETY: AVX2 and GFNI are enabled in every caller; loads and stores stay inside `data`
    // (128 * S bytes, 32 per access).
    unsafe {
        let bswap = perm([3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12]);
        let rot8 = perm([3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14]);
        let rot16 = perm([2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13]);
        let rot24 = perm([1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12]);
        let a1 = _mm256_set1_epi64x(GFNI_A1 as i64);
        let g0 = _mm256_set1_epi64x(GFNI_G[0] as i64);
        let g12 = _mm256_set1_epi64x(GFNI_G[1] as i64);
        let g3 = _mm256_set1_epi64x(GFNI_G[3] as i64);
        let p = data.as_mut_ptr().cast::<__m256i>();
        // Loops rather than closures: a closure would not get the caller's target features.
        let mut y = [[_mm256_setzero_si256(); 4]; S];
        for (s, set) in y.iter_mut().enumerate() {
            let mut w = [_mm256_setzero_si256(); 4];
            for (i, v) in w.iter_mut().enumerate() {
                *v = _mm256_shuffle_epi8(_mm256_loadu_si256(p.add(4 * s + i)), bswap);
            }
            for (v, w) in set.iter_mut().zip(transpose(w)) {
                *v = _mm256_gf2p8affine_epi64_epi8::<0>(w, a1);
            }
        }
        let mut pair = [_mm256_setzero_si256(); S];
        // Round i replaces word i % 4; rounds i and i + 1 (i even) share Y_{i+2} ^ Y_{i+3}.
        macro_rules! round {
            ($i:expr, $a:literal, $b:literal, $c:literal, $d:literal, $even:literal) => {{
                let key = _mm256_set1_epi32(rk_a1[$i] as i32);
                for s in 0..S {
                    let set = &mut y[s];
                    let t = if $even {
                        pair[s] = _mm256_xor_si256(set[$c], set[$d]);
                        _mm256_xor_si256(_mm256_xor_si256(set[$b], key), pair[s])
                    } else {
                        _mm256_xor_si256(_mm256_xor_si256(set[$d], key), pair[s])
                    };
                    let z0 = _mm256_gf2p8affineinv_epi64_epi8::<{ GFNI_KAPPA as i32 }>(t, g0);
                    let z12 = _mm256_gf2p8affineinv_epi64_epi8::<0>(t, g12);
                    let z3 = _mm256_gf2p8affineinv_epi64_epi8::<0>(t, g3);
                    let u = _mm256_xor_si256(
                        _mm256_xor_si256(set[$a], z0),
                        _mm256_shuffle_epi8(z12, rot8),
                    );
                    set[$a] = _mm256_xor_si256(
                        _mm256_xor_si256(u, _mm256_shuffle_epi8(z12, rot16)),
                        _mm256_shuffle_epi8(z3, rot24),
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
        let a1_inv = _mm256_set1_epi64x(GFNI_A1_INV as i64);
        for (s, set) in y.iter().enumerate() {
            // Out of the A1 domain; output words X35, X34, X33, X32.
            let mut x = [_mm256_setzero_si256(); 4];
            for (v, w) in x.iter_mut().zip(set.iter().rev()) {
                *v = _mm256_gf2p8affine_epi64_epi8::<0>(*w, a1_inv);
            }
            let out = transpose(x);
            for (i, v) in out.iter().enumerate() {
                _mm256_storeu_si256(p.add(4 * s + i), _mm256_shuffle_epi8(*v, bswap));
            }
        }
    }
}
