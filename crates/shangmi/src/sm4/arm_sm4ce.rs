//! SM4 with the Armv8.2 SM4 instruction: the `sm4-ce` implementation.
//!
//! SM4E runs four rounds on a block's four words held in one vector (word 0 in lane 0), with
//! four round keys in another, so a block is eight dependent SM4E. The instruction's latency
//! (several cycles on the cores that have it) is covered by keeping eight blocks in flight,
//! round-major, as the bulk path; chained modes take the one-block path. The round keys are
//! the portable key schedule's (SM4EKEY would compute the same words; the schedule runs once
//! per key). Rust has no stable intrinsic for SM4E, so it is one `asm!` instruction, in
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
    unsafe { crypt_n::<1>(rk, core::slice::from_mut(block)) }
}

/// Encrypts (or, with reversed round keys, decrypts) blocks, eight in flight.
pub(crate) fn crypt_blocks(_token: NeonSm, rk: &[u32; 32], blocks: &mut [Block]) {
    let mut chunks = blocks.chunks_exact_mut(WIDE);
    for chunk in &mut chunks {
        // SAFETY: the token proves NEON and the SM4 instructions.
        unsafe { crypt_n::<WIDE>(rk, chunk) }
    }
    for block in chunks.into_remainder() {
        // SAFETY: as above.
        unsafe { crypt_n::<1>(rk, core::slice::from_mut(block)) }
    }
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

/// `N` blocks (exactly `N`), their rounds interleaved.
#[target_feature(enable = "neon,sm4")]
fn crypt_n<const N: usize>(rk: &[u32; 32], blocks: &mut [Block]) {
    debug_assert_eq!(blocks.len(), N);
    let mut keys = [vdupq_n_u32(0); 8];
    for (k, group) in keys.iter_mut().zip(rk.chunks_exact(4)) {
        // SAFETY: a 16-byte load of four round keys.
        *k = unsafe { vld1q_u32(group.as_ptr()) };
    }
    let mut x = [vdupq_n_u32(0); N];
    for (v, block) in x.iter_mut().zip(blocks.iter()) {
        // SAFETY: a 16-byte load of a block.
        *v = vreinterpretq_u32_u8(vrev32q_u8(unsafe { vld1q_u8(block.as_ptr()) }));
    }
    for k in keys {
        for v in x.iter_mut() {
            *v = sm4e(*v, k);
        }
    }
    for (block, v) in blocks.iter_mut().zip(x) {
        // The output is the last four words, newest first: lanes 3, 2, 1, 0.
        let r = vrev64q_u32(v);
        let out = vrev32q_u8(vreinterpretq_u8_u32(vextq_u32::<2>(r, r)));
        // SAFETY: a 16-byte store into the block.
        unsafe { vst1q_u8(block.as_mut_ptr(), out) };
    }
}
