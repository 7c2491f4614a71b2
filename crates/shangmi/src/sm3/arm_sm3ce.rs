//! SM3 with the Armv8.2 SM3 instructions: the `sm3-ce` compressor.
//!
//! The state lives in two registers, `[D, C, B, A]` and `[H, G, F, E]` (lane 3 the newest
//! word), the layout the round instructions update in place: per round, SM3SS1 makes SS1 from
//! A, E and the rotated constant; SM3TT1A/B then gives the new A (with C = B <<< 9 and the
//! shift of the others) and SM3TT2A/B the new E (with G = F <<< 19), each taking its message
//! word (W'_j or W_j) by lane index from a register of four. The message expansion makes four
//! words at a time with SM3PARTW1 (the P1 term, lane 3 from a provisional W_j) and SM3PARTW2
//! (the other terms, and lane 3's correction). Rust has no stable intrinsics for these
//! instructions, so each is one `asm!` instruction, in functions compiled with the `sm4`
//! feature (Rust's name for FEAT_SM3 with FEAT_SM4) that the token proves.
#![allow(unsafe_code)]

use core::arch::aarch64::*;

use super::soft::T;
use crate::cpu::NeonSm;

/// Compresses `blocks` into `state`.
pub(crate) fn compress(_token: NeonSm, state: &mut [u32; 8], blocks: &[[u8; 64]]) {
    // SAFETY: the token proves NEON and the SM3/SM4 instructions.
    unsafe { compress_ce(state, blocks) }
}

macro_rules! three_op {
    ($name:ident, $insn:literal) => {
        /// One instruction on `d` with `n` and `m` (see the module documentation).
        #[inline(always)]
        fn $name(mut d: uint32x4_t, n: uint32x4_t, m: uint32x4_t) -> uint32x4_t {
            // SAFETY: one register-only instruction; every caller is compiled with the `sm4`
            // feature, which the token proves the CPU has.
            unsafe {
                core::arch::asm!(
                    concat!($insn, " {d:v}.4s, {n:v}.4s, {m:v}.4s"),
                    d = inout(vreg) d,
                    n = in(vreg) n,
                    m = in(vreg) m,
                    options(pure, nomem, nostack, preserves_flags)
                );
            }
            d
        }
    };
}

three_op!(partw1, "sm3partw1");
three_op!(partw2, "sm3partw2");

/// SS1 of a round, in lane 3: `((A <<< 12) + E + T'_j) <<< 7`.
#[inline(always)]
fn ss1(abcd: uint32x4_t, efgh: uint32x4_t, t: uint32x4_t) -> uint32x4_t {
    let out: uint32x4_t;
    // SAFETY: one register-only instruction; every caller is compiled with the `sm4` feature.
    unsafe {
        core::arch::asm!(
            "sm3ss1 {d:v}.4s, {n:v}.4s, {m:v}.4s, {a:v}.4s",
            d = lateout(vreg) out,
            n = in(vreg) abcd,
            m = in(vreg) efgh,
            a = in(vreg) t,
            options(pure, nomem, nostack, preserves_flags)
        );
    }
    out
}

macro_rules! round_op {
    ($name:ident, $insn:literal) => {
        /// One round's half on `d`, with SS1 in `ss1` and the message word in lane `L` of `w`.
        #[inline(always)]
        fn $name<const L: u32>(mut d: uint32x4_t, ss1: uint32x4_t, w: uint32x4_t) -> uint32x4_t {
            // SAFETY: one register-only instruction; every caller is compiled with the `sm4`
            // feature, which the token proves the CPU has.
            unsafe {
                core::arch::asm!(
                    concat!($insn, " {d:v}.4s, {n:v}.4s, {m:v}.s[{l}]"),
                    d = inout(vreg) d,
                    n = in(vreg) ss1,
                    m = in(vreg) w,
                    l = const L,
                    options(pure, nomem, nostack, preserves_flags)
                );
            }
            d
        }
    };
}

round_op!(tt1a, "sm3tt1a");
round_op!(tt1b, "sm3tt1b");
round_op!(tt2a, "sm3tt2a");
round_op!(tt2b, "sm3tt2b");

/// Lanes reversed: memory order `[A, B, C, D]` to the register layout `[D, C, B, A]` and back.
#[target_feature(enable = "neon")]
#[inline]
fn reverse(x: uint32x4_t) -> uint32x4_t {
    let r = vrev64q_u32(x);
    vextq_u32::<2>(r, r)
}

#[target_feature(enable = "neon,sm4")]
fn compress_ce(state: &mut [u32; 8], blocks: &[[u8; 64]]) {
    // SAFETY: 16-byte loads from the state's two halves.
    let (mut abcd, mut efgh) = unsafe {
        (
            reverse(vld1q_u32(state.as_ptr())),
            reverse(vld1q_u32(state[4..].as_ptr())),
        )
    };
    for block in blocks {
        let (a0, e0) = (abcd, efgh);
        let mut w = [vdupq_n_u32(0); 4];
        for (v, chunk) in w.iter_mut().zip(block.chunks_exact(16)) {
            // SAFETY: a 16-byte load of four message words.
            *v = vreinterpretq_u32_u8(vrev32q_u8(unsafe { vld1q_u8(chunk.as_ptr()) }));
        }
        // Four rounds on W[4k..4k+4] (`w[0]`), with W' from the next four (`w[1]`).
        macro_rules! four_rounds {
            ($k:expr, $tt1:ident, $tt2:ident) => {{
                let wp = veorq_u32(w[0], w[1]);
                macro_rules! round {
                    ($l:literal) => {{
                        let s = ss1(abcd, efgh, vdupq_n_u32(T[4 * $k + $l]));
                        abcd = $tt1::<$l>(abcd, s, wp);
                        efgh = $tt2::<$l>(efgh, s, w[0]);
                    }};
                }
                round!(0);
                round!(1);
                round!(2);
                round!(3);
            }};
        }
        // W[16..] four at a time from the sixteen before (the window `w` holds W[4k..4k+16]
        // at group k); the last expansion, after group 12, makes W[64..68].
        macro_rules! expand {
            () => {{
                let p = partw1(w[0], vextq_u32::<3>(w[1], w[2]), w[3]);
                let next = partw2(p, vextq_u32::<2>(w[2], w[3]), vextq_u32::<3>(w[0], w[1]));
                w = [w[1], w[2], w[3], next];
            }};
        }
        for k in 0..4 {
            four_rounds!(k, tt1a, tt2a);
            expand!();
        }
        for k in 4..13 {
            four_rounds!(k, tt1b, tt2b);
            expand!();
        }
        for k in 13..16 {
            four_rounds!(k, tt1b, tt2b);
            w = [w[1], w[2], w[3], w[3]];
        }
        abcd = veorq_u32(abcd, a0);
        efgh = veorq_u32(efgh, e0);
    }
    // SAFETY: 16-byte stores into the state's two halves.
    unsafe {
        vst1q_u32(state.as_mut_ptr(), reverse(abcd));
        vst1q_u32(state[4..].as_mut_ptr(), reverse(efgh));
    }
}
