//! SM4 with the S-box through the Armv8 AES instruction: the `aes-neon` implementation, for
//! arm64 cores without the SM4 instruction.
//!
//! The same construction as the x86 AES-NI kernel (`x86_aesni`): the state runs in the A1
//! domain (`a1_domain`), a round is one AESE with a zero key (AddRoundKey, ShiftRows, SubBytes;
//! its input pre-shuffled by the inverse ShiftRows) and three bytewise linear maps of its output
//! as 16-entry nibble tables (TBL on tables held in registers: data-dependent indices, but no
//! memory access), plus the byte rotations of L (TBL, and REV32 on halfwords for 16 bits).
//!
//! A set is four blocks, one word of each per register (LD4 deinterleaves them as it loads);
//! two sets are interleaved, which with two SIMD pipes keeps both busy through a round's
//! dependency chain. Fewer blocks are padded to a set. CTR is fused into the same passes: the
//! counter blocks are made in the transposed layout (three words the same in every block, the
//! fourth a vector add) and the keystream is XORed into the data as it is stored.
#![allow(unsafe_code)]

use core::arch::aarch64::*;

use super::Block;
use super::a1_domain::{INTO, OUT_OF, TA, TB, TC};
use crate::cpu::NeonAes;

/// Blocks per set (one word of each in a register) and sets per pass.
const SET: usize = 4;
const SETS: usize = 2;

/// One block, as a padded set (chained modes).
pub(crate) fn crypt_block(token: NeonAes, rk_a1: &[u32; 32], block: &mut Block) {
    crypt_blocks(token, rk_a1, core::slice::from_mut(block));
}

/// Encrypts (or, with reversed round keys, decrypts) blocks; the round keys in the A1 domain.
pub(crate) fn crypt_blocks(_token: NeonAes, rk_a1: &[u32; 32], blocks: &mut [Block]) {
    // SAFETY: the token proves NEON and the AES instructions.
    unsafe { crypt_blocks_neon(rk_a1, blocks) }
}

/// XORs into `blocks` the keystream of the counter blocks `counter`, `counter + 1`, ... (the
/// last 32-bit word counting, wrapping modulo 2^32); the round keys in the A1 domain.
pub(crate) fn ctr32_xor(_token: NeonAes, rk_a1: &[u32; 32], counter: &Block, blocks: &mut [Block]) {
    let words = core::array::from_fn(|k| {
        u32::from_be_bytes(counter[4 * k..4 * k + 4].try_into().expect("4 bytes"))
    });
    // SAFETY: the token proves NEON and the AES instructions.
    unsafe { passes(rk_a1, blocks, Some(Counter(words))) }
}

#[target_feature(enable = "neon,aes")]
fn crypt_blocks_neon(rk_a1: &[u32; 32], blocks: &mut [Block]) {
    passes(rk_a1, blocks, None);
}

/// Whole passes of two sets, then the rest in one padded pass (a counter moves on with them).
#[target_feature(enable = "neon,aes")]
fn passes(rk_a1: &[u32; 32], blocks: &mut [Block], mut counter: Option<Counter>) {
    let c = Consts::new();
    let mut pass = blocks.chunks_exact_mut(SET * SETS);
    for chunk in &mut pass {
        crypt_sets::<SETS>(&c, rk_a1, chunk.as_flattened_mut(), counter);
        if let Some(Counter(w)) = &mut counter {
            w[3] = w[3].wrapping_add((SET * SETS) as u32);
        }
    }
    let rest = pass.into_remainder();
    if rest.is_empty() {
        return;
    }
    let n = rest.len();
    let mut buf = [[0u8; 16]; SET * SETS];
    let padded = &mut buf[..n.next_multiple_of(SET)];
    padded[..n].copy_from_slice(rest);
    if padded.len() == SET {
        crypt_sets::<1>(&c, rk_a1, padded.as_flattened_mut(), counter);
    } else {
        crypt_sets::<SETS>(&c, rk_a1, padded.as_flattened_mut(), counter);
    }
    rest.copy_from_slice(&padded[..n]);
    // The padding too: it holds cipher output (of zero blocks, or keystream).
    crate::ct::wipe(padded.as_flattened_mut());
}

/// Register-held constants of the round function.
struct Consts {
    low_nibble: uint8x16_t,
    inv_shift_rows: uint8x16_t,
    rot8: uint8x16_t,
    rot24: uint8x16_t,
    into: (uint8x16_t, uint8x16_t),
    out_of: (uint8x16_t, uint8x16_t),
    ta: (uint8x16_t, uint8x16_t),
    tb: (uint8x16_t, uint8x16_t),
    tc: (uint8x16_t, uint8x16_t),
}

#[target_feature(enable = "neon")]
#[inline]
fn table(t: &[u8; 16]) -> uint8x16_t {
    // SAFETY: a 16-byte load from the array.
    unsafe { vld1q_u8(t.as_ptr()) }
}

#[target_feature(enable = "neon")]
#[inline]
fn pair(t: &([u8; 16], [u8; 16])) -> (uint8x16_t, uint8x16_t) {
    (table(&t.0), table(&t.1))
}

// The helpers carry the features of their callers (and are inlined into them), so the
// intrinsics inside are plain calls.
impl Consts {
    #[target_feature(enable = "neon")]
    #[inline]
    fn new() -> Self {
        Consts {
            low_nibble: vdupq_n_u8(0x0f),
            // AESE's ShiftRows moves byte 5 to 1, 10 to 2, ...; this undoes it ahead.
            inv_shift_rows: table(&[0, 13, 10, 7, 4, 1, 14, 11, 8, 5, 2, 15, 12, 9, 6, 3]),
            rot8: table(&[3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14]),
            rot24: table(&[1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12]),
            into: pair(&INTO),
            out_of: pair(&OUT_OF),
            ta: pair(&TA),
            tb: pair(&TB),
            tc: pair(&TC),
        }
    }

    /// A bytewise linear map by its nibble tables, on a value split into nibbles.
    #[target_feature(enable = "neon")]
    #[inline]
    fn lookup(&self, lo: uint8x16_t, hi: uint8x16_t, t: (uint8x16_t, uint8x16_t)) -> uint8x16_t {
        veorq_u8(vqtbl1q_u8(t.0, lo), vqtbl1q_u8(t.1, hi))
    }

    #[target_feature(enable = "neon")]
    #[inline]
    fn split(&self, x: uint8x16_t) -> (uint8x16_t, uint8x16_t) {
        (vandq_u8(x, self.low_nibble), vshrq_n_u8::<4>(x))
    }

    #[target_feature(enable = "neon")]
    #[inline]
    fn map(&self, x: uint8x16_t, t: (uint8x16_t, uint8x16_t)) -> uint8x16_t {
        let (lo, hi) = self.split(x);
        self.lookup(lo, hi, t)
    }
}

/// Counter blocks for CTR: the four words of the first one (host order; the last counts,
/// wrapping modulo 2^32).
#[derive(Clone, Copy)]
struct Counter([u32; 4]);

/// `S` sets of four blocks (`data` is 64 * S bytes), interleaved round by round. With a
/// counter, the sets are its blocks `counter + 0 .. 4 * S` instead of the data, and the data
/// is XORed with their encryption.
#[target_feature(enable = "neon,aes")]
#[inline]
fn crypt_sets<const S: usize>(
    c: &Consts,
    rk_a1: &[u32; 32],
    data: &mut [u8],
    counter: Option<Counter>,
) {
    debug_assert_eq!(data.len(), 64 * S);
    let mut y = [[vdupq_n_u8(0); 4]; S];
    for (s, (set, chunk)) in y.iter_mut().zip(data.chunks_exact(64)).enumerate() {
        let words = match counter {
            Some(Counter(w)) => {
                // SAFETY: a 16-byte load of the local array.
                let lanes = unsafe { vld1q_u32([0u32, 1, 2, 3].as_ptr()) };
                let first = vdupq_n_u32(w[3].wrapping_add(4 * s as u32));
                [
                    vdupq_n_u32(w[0]),
                    vdupq_n_u32(w[1]),
                    vdupq_n_u32(w[2]),
                    vaddq_u32(first, lanes),
                ]
            }
            None => {
                // SAFETY: a 64-byte load (LD4: word j of each of four blocks into register j).
                let w = unsafe { vld4q_u32(chunk.as_ptr().cast()) };
                let mut words = [w.0, w.1, w.2, w.3];
                for x in words.iter_mut() {
                    *x = vreinterpretq_u32_u8(vrev32q_u8(vreinterpretq_u8_u32(*x)));
                }
                words
            }
        };
        for (v, word) in set.iter_mut().zip(words) {
            *v = c.map(vreinterpretq_u8_u32(word), c.into);
        }
    }
    // Round i replaces word i % 4; four rounds at a time keep every index constant.
    macro_rules! round {
        ($i:expr, $a:literal, $b:literal, $c:literal, $d:literal) => {{
            let key = vreinterpretq_u8_u32(vdupq_n_u32(rk_a1[$i]));
            for set in y.iter_mut() {
                let t = veorq_u8(veorq_u8(set[$b], set[$c]), veorq_u8(set[$d], key));
                let u = vaeseq_u8(vqtbl1q_u8(t, c.inv_shift_rows), vdupq_n_u8(0));
                let (lo, hi) = c.split(u);
                let b = c.lookup(lo, hi, c.tb);
                let rot16 = vreinterpretq_u8_u16(vrev32q_u16(vreinterpretq_u16_u8(b)));
                let late = veorq_u8(vqtbl1q_u8(b, c.rot8), rot16);
                let early = veorq_u8(
                    c.lookup(lo, hi, c.ta),
                    vqtbl1q_u8(c.lookup(lo, hi, c.tc), c.rot24),
                );
                set[$a] = veorq_u8(set[$a], veorq_u8(early, late));
            }
        }};
    }
    for i in (0..32).step_by(4) {
        round!(i, 0, 1, 2, 3);
        round!(i + 1, 1, 2, 3, 0);
        round!(i + 2, 2, 3, 0, 1);
        round!(i + 3, 3, 0, 1, 2);
    }
    for (set, chunk) in y.iter().zip(data.chunks_exact_mut(64)) {
        // Output words X35, X34, X33, X32: the state in reverse, out of the domain.
        let mut w = [vdupq_n_u32(0); 4];
        for (o, v) in w.iter_mut().zip(set.iter().rev()) {
            *o = vreinterpretq_u32_u8(vrev32q_u8(c.map(*v, c.out_of)));
        }
        if counter.is_some() {
            // SAFETY: a 64-byte load of the data the keystream goes into.
            let d = unsafe { vld4q_u32(chunk.as_ptr().cast()) };
            for (o, x) in w.iter_mut().zip([d.0, d.1, d.2, d.3]) {
                *o = veorq_u32(*o, x);
            }
        }
        let out = uint32x4x4_t(w[0], w[1], w[2], w[3]);
        // SAFETY: a 64-byte store (ST4: the inverse of the load) into the chunk.
        unsafe { vst4q_u32(chunk.as_mut_ptr().cast(), out) };
    }
}
