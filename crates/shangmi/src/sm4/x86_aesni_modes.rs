//! Modes fused into the `aesni` and `vaes-avx2` kernels, so their masks never make a separate
//! pass over memory.
//!
//! CTR with a counting 32-bit last word: the counter blocks are made in registers, already in
//! the transposed layout (three words are the same in every block, the fourth is a vector add),
//! and the keystream is XORed into the data as it leaves the rounds: no counter blocks written
//! out and read back, no transposes on the way in, no keystream buffer to wipe.
//!
//! XEX (XTS's step): each block is XORed with its mask on the way in and on the way out; CBC
//! decryption: with its mask (the ciphertext before it) on the way out only.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::Block;
use super::x86_aesni::{Enclast, Split, Wide, consts, rounds};
use crate::cpu::{Avx2, Vaes};

/// Blocks per fully interleaved pass: four sets of eight.
const WIDE: usize = 32;

/// XORs into `blocks` the keystream of the counter blocks `counter`, `counter + 1`, ... (the
/// last 32-bit word counting, wrapping modulo 2^32); the round keys in the A1 domain.
pub(crate) fn ctr32_xor(_token: Avx2, rk_a1: &[u32; 32], counter: &Block, blocks: &mut [Block]) {
    // SAFETY: the token proves AVX2 and AES-NI.
    unsafe { ctr32_xor_aesni(rk_a1, counter, blocks) }
}

/// [`ctr32_xor`] with VAES.
pub(crate) fn ctr32_xor_vaes(
    _token: Vaes,
    rk_a1: &[u32; 32],
    counter: &Block,
    blocks: &mut [Block],
) {
    // SAFETY: the token proves AVX2, AES-NI and VAES.
    unsafe { ctr32_xor_wide(rk_a1, counter, blocks) }
}

#[target_feature(enable = "avx2,aes")]
fn ctr32_xor_aesni(rk_a1: &[u32; 32], counter: &Block, blocks: &mut [Block]) {
    ctr32_xor_with::<Split>(rk_a1, counter, blocks);
}

#[target_feature(enable = "avx2,aes,vaes")]
fn ctr32_xor_wide(rk_a1: &[u32; 32], counter: &Block, blocks: &mut [Block]) {
    ctr32_xor_with::<Wide>(rk_a1, counter, blocks);
}

#[inline(always)]
fn ctr32_xor_with<E: Enclast>(rk_a1: &[u32; 32], counter: &Block, blocks: &mut [Block]) {
    let words: [u32; 4] = core::array::from_fn(|k| {
        u32::from_be_bytes(counter[4 * k..4 * k + 4].try_into().expect("4 bytes"))
    });
    let mut next = words[3];
    let (passes, rest) = blocks.as_chunks_mut::<WIDE>();
    for pass in passes {
        ctr_sets::<E, 4>(rk_a1, &words, next, pass.as_flattened_mut());
        next = next.wrapping_add(WIDE as u32);
    }
    if rest.is_empty() {
        return;
    }
    let n = rest.len();
    let mut buf = [[0u8; 16]; WIDE];
    let padded = &mut buf[..n.next_multiple_of(8)];
    padded[..n].copy_from_slice(rest);
    let data = padded.as_flattened_mut();
    match data.len() / 128 {
        1 => ctr_sets::<E, 1>(rk_a1, &words, next, data),
        2 => ctr_sets::<E, 2>(rk_a1, &words, next, data),
        3 => ctr_sets::<E, 3>(rk_a1, &words, next, data),
        _ => ctr_sets::<E, 4>(rk_a1, &words, next, data),
    }
    rest.copy_from_slice(&padded[..n]);
    // The padding now holds keystream for counters that later calls will use.
    crate::ct::wipe(padded.as_flattened_mut());
}

/// XORs the keystream of `S` sets of counter blocks (word 3 from `first` on) into `data`
/// (128 * S bytes).
#[inline(always)]
fn ctr_sets<E: Enclast, const S: usize>(
    rk_a1: &[u32; 32],
    words: &[u32; 4],
    first: u32,
    data: &mut [u8],
) {
    debug_assert_eq!(data.len(), 128 * S);
    let c = consts();
    let p = data.as_mut_ptr().cast::<__m256i>();
    // SAFETY: AVX2 is enabled in every caller; loads and stores stay inside `data` (128 * S
    // bytes, 32 per access).
    unsafe {
        // No closures here: they would not get the caller's target features.
        let fixed = [
            c.to_domain(_mm256_set1_epi32(words[0] as i32)),
            c.to_domain(_mm256_set1_epi32(words[1] as i32)),
            c.to_domain(_mm256_set1_epi32(words[2] as i32)),
        ];
        // The lanes of a set hold blocks 0, 2, 4, 6 | 1, 3, 5, 7: the word transposes work
        // inside 128-bit halves, and each 32-byte load covers two neighbouring blocks.
        let order = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
        let mut y = [[_mm256_setzero_si256(); 4]; S];
        for (s, set) in y.iter_mut().enumerate() {
            let base = _mm256_set1_epi32(first.wrapping_add(8 * s as u32) as i32);
            let count = c.to_domain(_mm256_add_epi32(base, order));
            *set = [fixed[0], fixed[1], fixed[2], count];
        }
        rounds::<E, S>(&c, rk_a1, &mut y);
        for (s, set) in y.iter().enumerate() {
            for (i, ks) in c.out_of_domain(set).into_iter().enumerate() {
                let q = p.add(4 * s + i);
                _mm256_storeu_si256(q, _mm256_xor_si256(_mm256_loadu_si256(q), ks));
            }
        }
    }
}

/// For each block: `E(block ^ mask) ^ mask` with `IN`, `E(block) ^ mask` without, `masks[i]`
/// for `blocks[i]` (decryption with reversed round keys); the round keys in the A1 domain.
pub(crate) fn masked<const IN: bool>(
    _token: Avx2,
    rk_a1: &[u32; 32],
    masks: &[Block],
    blocks: &mut [Block],
) {
    // SAFETY: the token proves AVX2 and AES-NI.
    unsafe { masked_aesni::<IN>(rk_a1, masks, blocks) }
}

/// [`masked`] with VAES.
pub(crate) fn masked_vaes<const IN: bool>(
    _token: Vaes,
    rk_a1: &[u32; 32],
    masks: &[Block],
    blocks: &mut [Block],
) {
    // SAFETY: the token proves AVX2, AES-NI and VAES.
    unsafe { masked_wide::<IN>(rk_a1, masks, blocks) }
}

#[target_feature(enable = "avx2,aes")]
fn masked_aesni<const IN: bool>(rk_a1: &[u32; 32], masks: &[Block], blocks: &mut [Block]) {
    masked_with::<Split, IN>(rk_a1, masks, blocks);
}

#[target_feature(enable = "avx2,aes,vaes")]
fn masked_wide<const IN: bool>(rk_a1: &[u32; 32], masks: &[Block], blocks: &mut [Block]) {
    masked_with::<Wide, IN>(rk_a1, masks, blocks);
}

#[inline(always)]
fn masked_with<E: Enclast, const IN: bool>(
    rk_a1: &[u32; 32],
    masks: &[Block],
    blocks: &mut [Block],
) {
    assert_eq!(masks.len(), blocks.len(), "one mask per block");
    let (passes, rest) = blocks.as_chunks_mut::<WIDE>();
    let (mask_passes, mask_rest) = masks.as_chunks::<WIDE>();
    for (pass, m) in passes.iter_mut().zip(mask_passes) {
        masked_sets::<E, 4, IN>(rk_a1, m.as_flattened(), pass.as_flattened_mut());
    }
    if rest.is_empty() {
        return;
    }
    let n = rest.len();
    let (mut buf, mut mbuf) = ([[0u8; 16]; WIDE], [[0u8; 16]; WIDE]);
    let len = n.next_multiple_of(8);
    let (padded, m) = (&mut buf[..len], &mut mbuf[..len]);
    padded[..n].copy_from_slice(rest);
    m[..n].copy_from_slice(mask_rest);
    let (data, m) = (padded.as_flattened_mut(), m.as_flattened());
    match data.len() / 128 {
        1 => masked_sets::<E, 1, IN>(rk_a1, m, data),
        2 => masked_sets::<E, 2, IN>(rk_a1, m, data),
        3 => masked_sets::<E, 3, IN>(rk_a1, m, data),
        _ => masked_sets::<E, 4, IN>(rk_a1, m, data),
    }
    rest.copy_from_slice(&padded[..n]);
    crate::ct::wipe(padded.as_flattened_mut());
    crate::ct::wipe(mbuf[..len].as_flattened_mut());
}

/// [`masked`] over `S` sets: `data` and `masks` are 128 * S bytes each.
#[inline(always)]
fn masked_sets<E: Enclast, const S: usize, const IN: bool>(
    rk_a1: &[u32; 32],
    masks: &[u8],
    data: &mut [u8],
) {
    debug_assert_eq!(data.len(), 128 * S);
    debug_assert_eq!(masks.len(), 128 * S);
    let c = consts();
    let p = data.as_mut_ptr().cast::<__m256i>();
    let m = masks.as_ptr().cast::<__m256i>();
    // SAFETY: AVX2 is enabled in every caller; loads and stores stay inside `data` and
    // `masks` (128 * S bytes each, 32 per access).
    unsafe {
        let mut y = [[_mm256_setzero_si256(); 4]; S];
        for (s, set) in y.iter_mut().enumerate() {
            let mut b = [_mm256_setzero_si256(); 4];
            for (i, v) in b.iter_mut().enumerate() {
                *v = _mm256_loadu_si256(p.add(4 * s + i));
                if IN {
                    *v = _mm256_xor_si256(*v, _mm256_loadu_si256(m.add(4 * s + i)));
                }
            }
            *set = c.set_from_blocks(b);
        }
        rounds::<E, S>(&c, rk_a1, &mut y);
        for (s, set) in y.iter().enumerate() {
            for (i, v) in c.out_of_domain(set).into_iter().enumerate() {
                let out = _mm256_xor_si256(v, _mm256_loadu_si256(m.add(4 * s + i)));
                _mm256_storeu_si256(p.add(4 * s + i), out);
            }
        }
    }
}
