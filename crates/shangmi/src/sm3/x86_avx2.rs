//! SM3 single-stream compression for the AVX2 profiles: the portable round structure compiled
//! with BMI2 (RORX rotates without a register copy) and with `rotl(A, 12) + E + T_j` summed by
//! one three-operand LEA, which LLVM's generic tuning splits into two instructions.
//!
//! Two message expansions, chosen by vendor because they measure differently:
//! - `bmi2`, scalar: interleaved with the rounds it fills issue slots the rounds leave idle;
//!   measured faster than the vector one on Intel (Sapphire Rapids, forced to the `avx2`
//!   profile).
//! - `avx2`, four words at a time in an XMM register as the AVX-512 kernel does it
//!   (`x86_avx512.rs` explains the lane-3 correction), each rotate a shift pair and an OR: on
//!   AMD Zen 3 the rounds alone fill the four integer ALUs (about 29 operations a round), and
//!   moving the expansion's ~11 per round to the vector unit measured 15% faster (348 against
//!   302 MB/s).
#![allow(unsafe_code)]

use core::arch::x86_64::*;

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

/// Compresses whole blocks with the vector expansion. The tokens prove AVX2 (with SSSE3) and
/// BMI1/BMI2.
#[inline]
pub(crate) fn compress_vector_schedule(
    _avx2: cpu::Avx2,
    _bmi: cpu::Bmi2,
    state: &mut [u32; 8],
    blocks: &[[u8; 64]],
) {
    // SAFETY: the tokens exist only when the CPU has AVX2, SSSE3, BMI1 and BMI2.
    unsafe { compress_avx2(state, blocks) }
}

#[target_feature(enable = "avx2,ssse3,bmi1,bmi2")]
fn compress_avx2(state: &mut [u32; 8], blocks: &[[u8; 64]]) {
    for block in blocks {
        soft::compress_block::<Xmm>(state, block);
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

/// W[0..68] and W'[0..64] in memory (the rounds read single words), and the last sixteen words
/// in registers for the next group.
#[repr(C, align(64))]
struct Schedule {
    w: [u32; 68],
    wp: [u32; 64],
    g: [__m128i; 4],
}

/// A rotate without AVX-512: two shifts and an OR.
macro_rules! rol {
    ($x:expr, $n:literal) => {
        _mm_or_si128(_mm_slli_epi32::<$n>($x), _mm_srli_epi32::<{ 32 - $n }>($x))
    };
}

macro_rules! xor3 {
    ($a:expr, $b:expr, $c:expr) => {
        _mm_xor_si128(_mm_xor_si128($a, $b), $c)
    };
}

struct Xmm;

// SAFETY (for every `unsafe` block in this impl): its methods are only inlined into
// `compress_avx2`, whose target features (AVX2, SSSE3) the tokens guarantee; the stores write
// inside `Schedule`'s arrays (offsets below). No closures: they would not get the features.
impl Kernel for Xmm {
    type Schedule = Schedule;

    #[inline(always)]
    fn load(block: &[u8; 64]) -> Schedule {
        // SAFETY: see the impl; four 16-byte loads from the 64-byte block, stores at words 0..16
        // of `w` and 0..12 of `wp`.
        unsafe {
            let bswap = _mm_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
            let src = block.as_ptr().cast::<__m128i>();
            let mut g = [_mm_setzero_si128(); 4];
            for (i, v) in g.iter_mut().enumerate() {
                *v = _mm_shuffle_epi8(_mm_loadu_si128(src.add(i)), bswap);
            }
            let mut s = Schedule {
                w: [0; 68],
                wp: [0; 64],
                g,
            };
            let w = s.w.as_mut_ptr().cast::<__m128i>();
            let wp = s.wp.as_mut_ptr().cast::<__m128i>();
            for (i, v) in g.iter().enumerate() {
                _mm_store_si128(w.add(i), *v);
            }
            for i in 0..3 {
                _mm_store_si128(wp.add(i), _mm_xor_si128(g[i], g[i + 1]));
            }
            s
        }
    }

    #[inline(always)]
    fn expand(s: &mut Schedule, k: usize) {
        let [g0, g1, g2, g3] = s.g;
        // SAFETY: see the impl; k is 4..=16, so the stores are at words 4k..4k+4 <= 68 of `w`
        // and 4k-4..4k <= 64 of `wp`, 16-byte aligned.
        unsafe {
            let w9 = _mm_alignr_epi8::<12>(g2, g1); // W[j-9..j-5]
            let w13 = _mm_alignr_epi8::<12>(g1, g0); // W[j-13..j-9]
            let w6 = _mm_alignr_epi8::<8>(g3, g2); // W[j-6..j-2]
            let w3 = _mm_srli_si128::<4>(g3); // W[j-3..j], W[j] as 0
            let x = xor3!(g0, w9, rol!(w3, 15));
            let p1 = xor3!(x, rol!(x, 15), rol!(x, 23));
            let r = xor3!(p1, rol!(w13, 7), w6);
            let t = _mm_slli_si128::<12>(r); // W[j] moved to lane 3
            let fix = xor3!(rol!(t, 15), rol!(t, 30), rol!(t, 6));
            let r = _mm_xor_si128(r, fix);
            _mm_store_si128(s.w.as_mut_ptr().add(4 * k).cast(), r);
            _mm_store_si128(
                s.wp.as_mut_ptr().add(4 * k - 4).cast(),
                _mm_xor_si128(g3, r),
            );
            s.g = [g1, g2, g3, r];
        }
    }

    #[inline(always)]
    fn w(s: &Schedule, j: usize) -> u32 {
        s.w[j]
    }

    #[inline(always)]
    fn wp(s: &Schedule, j: usize) -> u32 {
        s.wp[j]
    }

    #[inline(always)]
    fn ss1_input<const J: usize>(a12: u32, e: u32) -> u32 {
        ss1_input_lea::<J>(a12, e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngCore, SeedableRng, rngs::StdRng};

    /// Both expansions against the portable compression, whichever this CPU's vendor selects.
    #[test]
    fn both_expansions_match_portable() {
        let (Some(avx2), Some(bmi)) = (cpu::Avx2::get(), cpu::Bmi2::get()) else {
            return;
        };
        let mut rng = StdRng::seed_from_u64(5);
        for n in 0..9 {
            let mut blocks = vec![[0u8; 64]; n];
            for b in &mut blocks {
                rng.fill_bytes(b);
            }
            let mut want = soft::IV;
            soft::compress(&mut want, &blocks);
            let (mut x, mut y) = (soft::IV, soft::IV);
            compress(bmi, &mut x, &blocks);
            compress_vector_schedule(avx2, bmi, &mut y, &blocks);
            assert_eq!(x, want, "scalar expansion, {n} blocks");
            assert_eq!(y, want, "vector expansion, {n} blocks");
        }
    }
}
