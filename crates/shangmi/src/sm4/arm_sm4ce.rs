//! SM4 with the Armv8.2 SM4 instruction: the `sm4-ce` implementation, with CTR, XEX (XTS)
//! and CBC decryption fused into its passes.
//!
//! SM4E runs four rounds on a block's four words held in one vector (word 0 in lane 0), with
//! four round keys in another, so a block is eight dependent SM4E. The instruction's latency
//! (several cycles on the cores that have it) is covered by keeping eight blocks in flight,
//! round-major; chained modes take the one-block path. The round keys are the portable key
//! schedule's (SM4EKEY would compute the same words; the schedule runs once per key).
//!
//! The fused modes work on the same passes: CTR makes its counter blocks in registers (the
//! counting word is lane 3 of the word vector, a vector add) and XORs the keystream into the
//! data as it leaves; XEX XORs each block's mask in on the way in and out, CBC decryption on
//! the way out. Rust has no stable intrinsic for SM4E, so it is one `asm!` instruction, in
//! functions compiled with the `sm4` feature the token proves.
#![allow(unsafe_code)]

use core::arch::aarch64::*;

use super::Block;
use crate::cpu::NeonSm;

/// Blocks in flight on the bulk path.
const WIDE: usize = 8;

/// One block, on the shortest-latency path (chained modes).
pub(crate) fn crypt_block(_token: NeonSm, rk: &[u32; 32], block: &mut Block) {
    // SAFETY: the token proves NEON and the SM4 instructions.
    unsafe { run::<{ Fused::NONE }>(rk, core::slice::from_mut(block), &[]) }
}

/// Encrypts (or, with reversed round keys, decrypts) blocks, eight in flight.
pub(crate) fn crypt_blocks(_token: NeonSm, rk: &[u32; 32], blocks: &mut [Block]) {
    // SAFETY: the token proves NEON and the SM4 instructions.
    unsafe { run::<{ Fused::NONE }>(rk, blocks, &[]) }
}

/// XORs into `blocks` the keystream of the counter blocks `counter`, `counter + 1`, ... (the
/// last 32-bit word counting, wrapping modulo 2^32).
pub(crate) fn ctr32_xor(_token: NeonSm, rk: &[u32; 32], counter: &Block, blocks: &mut [Block]) {
    // SAFETY: the token proves NEON and the SM4 instructions.
    unsafe { run::<{ Fused::CTR }>(rk, blocks, core::slice::from_ref(counter)) }
}

/// For each block, `E(block ^ mask) ^ mask` with `IN`, `E(block) ^ mask` without (the round
/// keys decide E or D); `masks[i]` for `blocks[i]`.
pub(crate) fn masked<const IN: bool>(
    _token: NeonSm,
    rk: &[u32; 32],
    masks: &[Block],
    blocks: &mut [Block],
) {
    assert_eq!(masks.len(), blocks.len(), "one mask per block");
    // SAFETY: the token proves NEON and the SM4 instructions.
    unsafe {
        if IN {
            run::<{ Fused::XEX }>(rk, blocks, masks)
        } else {
            run::<{ Fused::MASK_OUT }>(rk, blocks, masks)
        }
    }
}

/// What a pass does around the cipher (a const parameter, so each is its own straight code).
struct Fused;

impl Fused {
    const NONE: u8 = 0;
    /// Counter blocks from `extra[0]`; the data is XORed with their encryption.
    const CTR: u8 = 1;
    /// `extra[i]` XORed in before the cipher and out after it.
    const XEX: u8 = 2;
    /// `extra[i]` XORed out after the cipher.
    const MASK_OUT: u8 = 3;
}

/// Four rounds: SM4E on `x` with the four round keys in `k`.
#[inline(always)]
fn sm4e(mut x: uint32x4_t, k: uint32x4_t) -> uint32x4_t {
    // SAFETY: one register-only instruction; every caller is compiled with the `sm4` feature,
    // which the token proves the CPU has.
    unsafe {
        core::arch::asm!(
            "sm4e {x:v}.4s, {k:v}.4s",
            x = inout(vreg) x,
            k = in(vreg) k,
            options(pure, nomem, nostack, preserves_flags)
        );
    }
    x
}

/// A block's bytes as its four big-endian words, and back.
#[target_feature(enable = "neon")]
#[inline]
fn to_words(b: uint8x16_t) -> uint32x4_t {
    vreinterpretq_u32_u8(vrev32q_u8(b))
}

/// The cipher's output words (the last four, newest in lane 3) as the output block's bytes:
/// lanes reversed, then each word big-endian.
#[target_feature(enable = "neon")]
#[inline]
fn output_bytes(x: uint32x4_t) -> uint8x16_t {
    let r = vrev64q_u32(x);
    vrev32q_u8(vreinterpretq_u8_u32(vextq_u32::<2>(r, r)))
}

#[target_feature(enable = "neon")]
#[inline]
fn load(b: &Block) -> uint8x16_t {
    // SAFETY: a 16-byte load of a block.
    unsafe { vld1q_u8(b.as_ptr()) }
}

/// Every pass of a call: whole passes of eight blocks, then the rest one block at a time.
#[target_feature(enable = "neon,sm4")]
fn run<const F: u8>(rk: &[u32; 32], blocks: &mut [Block], extra: &[Block]) {
    let mut keys = [vdupq_n_u32(0); 8];
    for (k, group) in keys.iter_mut().zip(rk.chunks_exact(4)) {
        // SAFETY: a 16-byte load of four round keys.
        *k = unsafe { vld1q_u32(group.as_ptr()) };
    }
    let counter = if F == Fused::CTR {
        to_words(load(&extra[0]))
    } else {
        vdupq_n_u32(0)
    };
    // The masks of the blocks from `at` on (none outside XEX and CBC decryption).
    let masks = |at: usize| -> &[Block] {
        if F == Fused::XEX || F == Fused::MASK_OUT {
            &extra[at..]
        } else {
            &[]
        }
    };
    let mut at = 0;
    let mut passes = blocks.chunks_exact_mut(WIDE);
    for pass in &mut passes {
        pass_n::<WIDE, F>(&keys, pass, masks(at), counter, at as u32);
        at += WIDE;
    }
    for block in passes.into_remainder() {
        pass_n::<1, F>(
            &keys,
            core::slice::from_mut(block),
            masks(at),
            counter,
            at as u32,
        );
        at += 1;
    }
}

/// `N` blocks (exactly `N`), their rounds interleaved; `index` is the first one's offset from
/// the counter (CTR; block counts fit in 32 bits, and the counter word wraps).
#[target_feature(enable = "neon,sm4")]
#[inline]
fn pass_n<const N: usize, const F: u8>(
    keys: &[uint32x4_t; 8],
    blocks: &mut [Block],
    masks: &[Block],
    counter: uint32x4_t,
    index: u32,
) {
    debug_assert_eq!(blocks.len(), N);
    let mut x = [vdupq_n_u32(0); N];
    for (j, v) in x.iter_mut().enumerate() {
        *v = match F {
            Fused::CTR => {
                let step = vsetq_lane_u32::<3>(index.wrapping_add(j as u32), vdupq_n_u32(0));
                vaddq_u32(counter, step)
            }
            Fused::XEX => to_words(veorq_u8(load(&blocks[j]), load(&masks[j]))),
            _ => to_words(load(&blocks[j])),
        };
    }
    for k in keys {
        for v in x.iter_mut() {
            *v = sm4e(*v, *k);
        }
    }
    for (j, v) in x.into_iter().enumerate() {
        let out = output_bytes(v);
        let out = match F {
            Fused::CTR => veorq_u8(out, load(&blocks[j])),
            Fused::XEX | Fused::MASK_OUT => veorq_u8(out, load(&masks[j])),
            _ => out,
        };
        // SAFETY: a 16-byte store into the block.
        unsafe { vst1q_u8(blocks[j].as_mut_ptr(), out) };
    }
}
