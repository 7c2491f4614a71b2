//! SM3 single-stream compression for the AVX-512 tier: the rounds as in `x86_avx2.rs`, and the
//! message expansion four words at a time in an XMM register with AVX-512VL's VPROLD (one
//! instruction per rotate) and VPTERNLOGD (a three-way XOR in one). Fewer instructions than the
//! scalar expansion, which keeps the rounds' chain fed when the core is shared (measured ~10-20%
//! faster than scalar expansion with a busy sibling thread, equal on an idle core).
//!
//! W[j..j+4] needs W[j-3..j+1], and the last of those is W[j] itself, so the group is computed
//! with W[j] taken as zero and then corrected: P1 is linear over XOR, so lane 3 gets
//! P1(W[j] <<< 15) = (W[j] <<< 15) ^ (W[j] <<< 30) ^ (W[j] <<< 6) added afterwards.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::soft::{self, Kernel};
use super::x86_avx2::ss1_input_lea;
use crate::cpu::Avx512;

/// Compresses whole blocks. The token proves the CPU has the AVX-512 tier.
#[inline]
pub(crate) fn compress(_token: Avx512, state: &mut [u32; 8], blocks: &[[u8; 64]]) {
    // SAFETY: the token exists only when the CPU has AVX-512 F/VL and the AVX2 tier (BMI2).
    unsafe { compress_avx512(state, blocks) }
}

#[target_feature(enable = "avx512f,avx512vl,avx2,bmi1,bmi2,ssse3")]
fn compress_avx512(state: &mut [u32; 8], blocks: &[[u8; 64]]) {
    for block in blocks {
        soft::compress_block::<Vl>(state, block);
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

macro_rules! xor3 {
    ($a:expr, $b:expr, $c:expr) => {
        _mm_ternarylogic_epi32::<0x96>($a, $b, $c)
    };
}

struct Vl;

// SAFETY (for every `unsafe` block in this impl): its methods are only inlined into
// `compress_avx512`, whose target features (AVX-512 F/VL, SSSE3) the token guarantees; the
// stores write inside `Schedule`'s arrays (offsets below).
impl Kernel for Vl {
    type Schedule = Schedule;

    #[inline(always)]
    fn load(block: &[u8; 64]) -> Schedule {
        // SAFETY: see the impl; four 16-byte loads from the 64-byte block, stores at words 0..16
        // of `w` and 0..12 of `wp`.
        unsafe {
            let bswap = _mm_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
            let src = block.as_ptr().cast::<__m128i>();
            let g: [__m128i; 4] =
                core::array::from_fn(|i| _mm_shuffle_epi8(_mm_loadu_si128(src.add(i)), bswap));
            let mut s = Schedule {
                w: [0; 68],
                wp: [0; 64],
                g,
            };
            let w = s.w.as_mut_ptr().cast::<__m128i>();
            let wp = s.wp.as_mut_ptr().cast::<__m128i>();
            for i in 0..4 {
                _mm_store_si128(w.add(i), g[i]);
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
            let x = xor3!(g0, w9, _mm_rol_epi32::<15>(w3));
            let p1 = xor3!(x, _mm_rol_epi32::<15>(x), _mm_rol_epi32::<23>(x));
            let r = xor3!(p1, _mm_rol_epi32::<7>(w13), w6);
            let t = _mm_slli_si128::<12>(r); // W[j] moved to lane 3
            let fix = xor3!(
                _mm_rol_epi32::<15>(t),
                _mm_rol_epi32::<30>(t),
                _mm_rol_epi32::<6>(t)
            );
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
