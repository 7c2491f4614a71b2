//! SM3 over 4 messages at once in NEON registers: one 32-bit lane per message.
//!
//! The same round structure as the AVX2 lanes (`x86_avx2_lanes`), in NEON's forms: a rotation
//! is a shift and a shift-right-insert (SRI), the 16-bit one a REV32 of halfwords, the 8-bit
//! one a TBL; choice is BSL. Each lane's block is four 128-bit rows; 4x4 transposes (TRN1/TRN2
//! on words, then on doublewords) make them word-major.
#![allow(unsafe_code)]

use core::arch::aarch64::*;

use super::lanes::LaneKernel;
use super::soft::T;
use crate::cpu::NeonAes;

/// The 4-lane kernel; holding it proves the CPU has NEON (the token is the `neon` profile's).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Kernel(pub(crate) NeonAes);

impl LaneKernel<4> for Kernel {
    fn compress_bytes(self, state: &mut [[u32; 4]; 8], data: &[&[u8]; 4]) {
        // SAFETY: the token in `self` proves NEON.
        unsafe { compress_bytes(state, data) }
    }

    fn compress_words(self, state: &mut [[u32; 4]; 8], blocks: &[[[u32; 4]; 16]]) {
        // SAFETY: the token in `self` proves NEON.
        unsafe { compress_words(state, blocks) }
    }
}

macro_rules! rotl {
    ($x:expr, $n:literal) => {{
        let x = $x;
        vsriq_n_u32::<{ 32 - $n }>(vshlq_n_u32::<$n>(x), x)
    }};
}

macro_rules! xor {
    ($a:expr, $b:expr) => {
        veorq_u32($a, $b)
    };
    ($a:expr, $b:expr, $c:expr) => {
        veorq_u32(veorq_u32($a, $b), $c)
    };
}

macro_rules! add {
    ($a:expr, $b:expr) => {
        vaddq_u32($a, $b)
    };
}

#[target_feature(enable = "neon")]
fn compress_bytes(state: &mut [[u32; 4]; 8], data: &[&[u8]; 4]) {
    let n = data[0].len() / 64;
    let mut s = load_state(state);
    for b in 0..n {
        let mut w = [vdupq_n_u32(0); 16];
        for c in 0..4 {
            let mut rows = [vdupq_n_u32(0); 4];
            for (row, lane) in rows.iter_mut().zip(data) {
                let chunk = &lane[b * 64 + c * 16..][..16];
                // SAFETY: `chunk` is 16 readable bytes.
                let bytes = unsafe { vld1q_u8(chunk.as_ptr()) };
                *row = vreinterpretq_u32_u8(vrev32q_u8(bytes));
            }
            w[4 * c..4 * c + 4].copy_from_slice(&transpose(rows));
        }
        rounds(&mut s, &w);
    }
    store_state(state, &s);
}

#[target_feature(enable = "neon")]
fn compress_words(state: &mut [[u32; 4]; 8], blocks: &[[[u32; 4]; 16]]) {
    let mut s = load_state(state);
    for block in blocks {
        let mut w = [vdupq_n_u32(0); 16];
        for (v, row) in w.iter_mut().zip(block) {
            // SAFETY: each row is 4 u32 = 16 readable bytes.
            *v = unsafe { vld1q_u32(row.as_ptr()) };
        }
        rounds(&mut s, &w);
    }
    store_state(state, &s);
}

#[target_feature(enable = "neon")]
#[inline]
fn load_state(state: &[[u32; 4]; 8]) -> [uint32x4_t; 8] {
    let mut s = [vdupq_n_u32(0); 8];
    for (v, row) in s.iter_mut().zip(state) {
        // SAFETY: each row is 4 u32 = 16 readable bytes.
        *v = unsafe { vld1q_u32(row.as_ptr()) };
    }
    s
}

#[target_feature(enable = "neon")]
#[inline]
fn store_state(state: &mut [[u32; 4]; 8], s: &[uint32x4_t; 8]) {
    for (row, v) in state.iter_mut().zip(s) {
        // SAFETY: each row is 4 u32 = 16 writable bytes.
        unsafe { vst1q_u32(row.as_mut_ptr(), *v) }
    }
}

/// `r[lane][word]` -> `[word][lane]` for 4 lanes of 4 words.
#[target_feature(enable = "neon")]
#[inline]
fn transpose(r: [uint32x4_t; 4]) -> [uint32x4_t; 4] {
    let t0 = vreinterpretq_u64_u32(vtrn1q_u32(r[0], r[1]));
    let t1 = vreinterpretq_u64_u32(vtrn2q_u32(r[0], r[1]));
    let t2 = vreinterpretq_u64_u32(vtrn1q_u32(r[2], r[3]));
    let t3 = vreinterpretq_u64_u32(vtrn2q_u32(r[2], r[3]));
    [
        vreinterpretq_u32_u64(vtrn1q_u64(t0, t2)),
        vreinterpretq_u32_u64(vtrn1q_u64(t1, t3)),
        vreinterpretq_u32_u64(vtrn2q_u64(t0, t2)),
        vreinterpretq_u32_u64(vtrn2q_u64(t1, t3)),
    ]
}

/// 64 rounds on 4 lanes; `w16` is the block, word-major and host order.
#[target_feature(enable = "neon")]
#[inline]
fn rounds(s: &mut [uint32x4_t; 8], w16: &[uint32x4_t; 16]) {
    // SAFETY: a 16-byte load from the array.
    let rot8 =
        unsafe { vld1q_u8([3u8, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14].as_ptr()) };
    // P0 and P1 as x ^ rotl_k(x ^ rotl8(x)): the 8-bit rotation is one TBL.
    macro_rules! p {
        ($x:expr, $k:literal) => {{
            let x = $x;
            let r8 = vreinterpretq_u32_u8(vqtbl1q_u8(vreinterpretq_u8_u32(x), rot8));
            xor!(x, rotl!(xor!(x, r8), $k))
        }};
    }
    let mut w = [vdupq_n_u32(0); 68];
    w[..16].copy_from_slice(w16);
    // W[4k..4k+4], computed just before round 4k - 16, as in the AVX2 kernel.
    macro_rules! expand {
        ($k:expr) => {
            for j in 4 * $k..4 * $k + 4 {
                let x = xor!(w[j - 16], w[j - 9], rotl!(w[j - 3], 15));
                w[j] = xor!(p!(x, 15), rotl!(w[j - 13], 7), w[j - 6]);
            }
        };
    }
    macro_rules! xor3 {
        ($x:expr, $y:expr, $z:expr) => {
            xor!($x, $y, $z)
        };
    }
    // Majority as a select: where x and y differ, z decides.
    macro_rules! maj {
        ($x:expr, $y:expr, $z:expr) => {
            vbslq_u32(veorq_u32($x, $y), $z, $x)
        };
    }
    macro_rules! ch {
        ($x:expr, $y:expr, $z:expr) => {
            vbslq_u32($x, $y, $z)
        };
    }

    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *s;
    macro_rules! round {
        ($a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident, $h:ident,
         $j:expr, $ff:ident, $gg:ident) => {{
            let a12 = rotl!($a, 12);
            let t = vdupq_n_u32(T[$j]);
            let ss1 = rotl!(add!(add!(a12, $e), t), 7);
            let ss2 = xor!(ss1, a12);
            let tt1 = add!(
                add!($ff!($a, $b, $c), $d),
                add!(ss2, xor!(w[$j], w[$j + 4]))
            );
            let tt2 = add!(add!($gg!($e, $f, $g), $h), add!(ss1, w[$j]));
            $b = rotl!($b, 9);
            $f = rotl!($f, 19);
            $d = tt1;
            $h = p!(tt2, 9);
        }};
    }
    macro_rules! four {
        ($j:expr, $ff:ident, $gg:ident) => {
            if $j / 4 + 4 <= 16 {
                expand!($j / 4 + 4);
            }
            round!(a, b, c, d, e, f, g, h, $j, $ff, $gg);
            round!(d, a, b, c, h, e, f, g, $j + 1, $ff, $gg);
            round!(c, d, a, b, g, h, e, f, $j + 2, $ff, $gg);
            round!(b, c, d, a, f, g, h, e, $j + 3, $ff, $gg);
        };
    }
    for j in (0..16).step_by(4) {
        four!(j, xor3, xor3);
    }
    for j in (16..64).step_by(4) {
        four!(j, maj, ch);
    }

    for (s, v) in s.iter_mut().zip([a, b, c, d, e, f, g, h]) {
        *s = veorq_u32(*s, v);
    }
}
