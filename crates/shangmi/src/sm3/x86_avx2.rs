//! SM3 single-stream compression with BMI1/BMI2 (any AVX2 profile): the portable round structure compiled with
//! BMI2 (RORX rotates without a register copy) and with `rotl(A, 12) + E + T_j` summed by one
//! three-operand LEA, which LLVM's generic tuning splits into two instructions.
//!
//! The message expansion stays scalar here: interleaved with the rounds it fills issue slots
//! the rounds leave idle, and measured faster than an SSE expansion (which costs three
//! instructions per rotate without AVX-512).
#![allow(unsafe_code)]

use super::soft::{self, Kernel, T, Words};
use crate::cpu;

/// Compresses whole blocks. The token proves the CPU has BMI1 and BMI2.
#[inline]
pub(crate) fn compress(_token: cpu::Bmi2, state: &mut [u32; 8], blocks: &[[u8; 64]]) {
    // SAFETY: the token exists only when the CPU has BMI1 and BMI2.
    unsafe { compress_bmi2(state, blocks) }
}

#[target_feature(enable = "bmi1,bmi2")]
fn compress_bmi2(state: &mut [u32; 8], blocks: &[[u8; 64]]) {
    for block in blocks {
        soft::compress_block::<Rorx>(state, block);
    }
}

/// `a12 + e + T[J]` in one LEA (base + index + 32-bit displacement): one cycle on current
/// Intel and AMD cores, and one instruction fewer per round.
#[inline(always)]
pub(super) fn ss1_input_lea<const J: usize>(a12: u32, e: u32) -> u32 {
    let out: u32;
    // SAFETY: register-only arithmetic; no memory, stack or flags are touched.
    unsafe {
        core::arch::asm!(
            "lea {o:e}, [{x:r} + {y:r} + {t}]",
            o = lateout(reg) out,
            x = in(reg) a12,
            y = in(reg) e,
            t = const T[J] as i32,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    out
}

struct Rorx;

impl Kernel for Rorx {
    type Schedule = Words;

    #[inline(always)]
    fn load(block: &[u8; 64]) -> Words {
        Words::load(block)
    }

    #[inline(always)]
    fn expand(s: &mut Words, k: usize) {
        s.expand(k);
    }

    #[inline(always)]
    fn w(s: &Words, j: usize) -> u32 {
        s.0[j]
    }

    #[inline(always)]
    fn wp(s: &Words, j: usize) -> u32 {
        s.0[j] ^ s.0[j + 4]
    }

    #[inline(always)]
    fn ss1_input<const J: usize>(a12: u32, e: u32) -> u32 {
        ss1_input_lea::<J>(a12, e)
    }
}
