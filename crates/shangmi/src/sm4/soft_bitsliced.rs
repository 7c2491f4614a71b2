//! Portable SM4 on 64 blocks at once, fully bitsliced: plane `b` of word `w` holds bit `b` of
//! word `w` of all 64 blocks. The S-box is the circuit of `soft_sbox.rs` on each byte's eight
//! planes, the rotations of L are a renaming of planes, so a round is a fixed sequence of ANDs
//! and XORs with no table and nothing that depends on data or keys.

use super::soft_sbox::{Bits, sbox};
use super::soft_word::{load, store};

/// Blocks per pass.
pub(crate) const LANES: usize = 64;

/// One 32-bit word of the state as 32 planes.
pub(crate) type Word<P> = [P; 32];

/// Encrypts (or, with reversed round keys, decrypts) up to 64 blocks.
pub(crate) fn crypt64(rk: &[u32; 32], blocks: &mut [[u8; 16]]) {
    let mut x = planes(blocks);
    rounds(rk, &mut x);
    unplanes(&x, blocks);
    for w in &mut x {
        zeroize::Zeroize::zeroize(w);
    }
}

/// Up to 64 blocks as the four state words' planes (lanes past the blocks are zero).
pub(crate) fn planes(blocks: &[[u8; 16]]) -> [Word<u64>; 4] {
    debug_assert!(blocks.len() <= LANES);
    let mut rows = [[0u64; LANES]; 2];
    for (k, block) in blocks.iter().enumerate() {
        let w = load(block);
        rows[0][k] = u64::from(w[0]) << 32 | u64::from(w[1]);
        rows[1][k] = u64::from(w[2]) << 32 | u64::from(w[3]);
    }
    transpose64(&mut rows[0]);
    transpose64(&mut rows[1]);
    let split = |planes: &[u64; 64]| -> (Word<u64>, Word<u64>) {
        (
            core::array::from_fn(|b| planes[32 + b]),
            core::array::from_fn(|b| planes[b]),
        )
    };
    let (x0, x1) = split(&rows[0]);
    let (x2, x3) = split(&rows[1]);
    zeroize::Zeroize::zeroize(&mut rows);
    [x0, x1, x2, x3]
}

/// The 32 rounds on planes of any width: the S-box circuit on each byte's eight planes, L
/// as a renaming of planes.
#[inline(always)]
pub(crate) fn rounds<P: Bits>(rk: &[u32; 32], x: &mut [Word<P>; 4]) {
    for (i, &k) in rk.iter().enumerate() {
        let [a, b, c, d] = [i % 4, (i + 1) % 4, (i + 2) % 4, (i + 3) % 4];
        let mut t: Word<P> = core::array::from_fn(|bit| {
            x[b][bit] ^ x[c][bit] ^ x[d][bit] ^ P::splat_bit(u64::from(k >> bit & 1))
        });
        for q in 0..4 {
            let byte: [P; 8] = core::array::from_fn(|i| t[8 * q + i]);
            let s = sbox(byte, !P::ZERO);
            t[8 * q..8 * q + 8].copy_from_slice(&s);
        }
        // L: bit b of rotl(s, r) is bit (b - r) mod 32 of s.
        let r = |bit: usize, by: usize| t[(bit + 32 - by) % 32];
        for bit in 0..32 {
            x[a][bit] ^= t[bit] ^ r(bit, 2) ^ r(bit, 10) ^ r(bit, 18) ^ r(bit, 24);
        }
    }
}

/// The state after the rounds back into `blocks`: X35, X34, X33, X32.
pub(crate) fn unplanes(x: &[Word<u64>; 4], blocks: &mut [[u8; 16]]) {
    let join = |hi: &Word<u64>, lo: &Word<u64>| -> [u64; 64] {
        core::array::from_fn(|j| if j < 32 { lo[j] } else { hi[j - 32] })
    };
    let mut rows = [join(&x[3], &x[2]), join(&x[1], &x[0])];
    transpose64(&mut rows[0]);
    transpose64(&mut rows[1]);
    for (k, block) in blocks.iter_mut().enumerate() {
        let words = [
            (rows[0][k] >> 32) as u32,
            rows[0][k] as u32,
            (rows[1][k] >> 32) as u32,
            rows[1][k] as u32,
        ];
        store(&words, block);
    }
    zeroize::Zeroize::zeroize(&mut rows);
}

/// Transposes a 64x64 bit matrix: bit j of row k moves to bit k of row j.
fn transpose64(m: &mut [u64; 64]) {
    let masks = [
        (32, 0x0000_0000_ffff_ffffu64),
        (16, 0x0000_ffff_0000_ffff),
        (8, 0x00ff_00ff_00ff_00ff),
        (4, 0x0f0f_0f0f_0f0f_0f0f),
        (2, 0x3333_3333_3333_3333),
        (1, 0x5555_5555_5555_5555),
    ];
    for (j, mask) in masks {
        for k in 0..64 {
            if k & j == 0 {
                let t = ((m[k] >> j) ^ m[k + j]) & mask;
                m[k + j] ^= t;
                m[k] ^= t << j;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transpose_moves_every_bit() {
        let mut m = [0u64; 64];
        for (k, row) in m.iter_mut().enumerate() {
            *row = (k as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (k as u64) << 7;
        }
        let orig = m;
        transpose64(&mut m);
        for k in 0..64 {
            for j in 0..64 {
                assert_eq!(orig[k] >> j & 1, m[j] >> k & 1);
            }
        }
    }
}
