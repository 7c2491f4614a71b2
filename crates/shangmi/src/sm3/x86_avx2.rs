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
//!
//! The `avx2` kernel also writes each round itself (`round_asm!`), in an order LLVM does not
//! keep: the round's two additions of W and W' first, straight from the schedule in memory
//! (LLVM held the words in XMM registers and moved each to the integer side with a VPEXTRD),
//! then FF and the A path, then the E path that the next round waits for. Out-of-order cores
//! give the oldest ready instruction a free ALU, so this puts the next round's independent
//! work behind the chain instead of in front of it. On Zen 3, in alternating runs of the same
//! process, 496-513 cycles a block against 573-590 (the quiet rounds; with the sibling thread
//! busy both run at about the same rate). The chain itself (E to SS1, two additions, P0) is
//! seven operations a round from round 16 and six before it: 432 cycles a block.
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

/// One round in source order (see the module's note), W[J] and W'[J] read from `Schedule` by
/// address. Eight state words, the schedule's address and four temporaries: thirteen general
/// registers, so the compressing loop keeps its own few values on the stack.
macro_rules! round_asm {
    ($s:expr, $j:expr, $a:expr, $b:expr, $c:expr, $d:expr, $e:expr, $f:expr, $g:expr, $h:expr,
     $fg:ident) => {
        // SAFETY: the two loads read `w[J]` and `wp[J]` (J < 64) inside the `Schedule` that
        // `s` points to; everything else is register arithmetic on the operands declared
        // here. No stack is used.
        unsafe {
            core::arch::asm!(
                "add {h:e}, dword ptr [{s} + {ow}]",
                "add {d:e}, dword ptr [{s} + {owp}]",
                "rorx {t1:e}, {a:e}, 20",
                $fg!(ff),
                "add {d:e}, {t2:e}",
                "lea {t4:e}, [{t1:r} + {e:r} + {t}]",
                $fg!(gg),
                "rorx {t4:e}, {t4:e}, 25",
                "add {h:e}, {t2:e}",
                "add {h:e}, {t4:e}",
                "xor {t1:e}, {t4:e}",
                "rorx {t2:e}, {h:e}, 23",
                "rorx {t3:e}, {h:e}, 15",
                "xor {h:e}, {t2:e}",
                "xor {h:e}, {t3:e}",
                "add {d:e}, {t1:e}",
                "rorx {b:e}, {b:e}, 23",
                "rorx {f:e}, {f:e}, 13",
                s = in(reg) core::ptr::from_ref($s),
                ow = const core::mem::offset_of!(Schedule, w) + 4 * $j,
                owp = const core::mem::offset_of!(Schedule, wp) + 4 * $j,
                t = const T[$j] as i32,
                a = in(reg) $a,
                b = inout(reg) *$b,
                c = in(reg) $c,
                d = inout(reg) *$d,
                e = in(reg) $e,
                f = inout(reg) *$f,
                g = in(reg) $g,
                h = inout(reg) *$h,
                t1 = out(reg) _,
                t2 = out(reg) _,
                t3 = out(reg) _,
                t4 = out(reg) _,
                options(pure, readonly, nostack),
            );
        }
    };
}

/// FF and GG of rounds 0..16 into t2 (three-way XORs), this round's A or E taken last so each
/// is one operation behind it.
macro_rules! ff_gg_xor {
    (ff) => {
        "mov {t2:e}, {b:e}\n xor {t2:e}, {c:e}\n xor {t2:e}, {a:e}"
    };
    (gg) => {
        "mov {t2:e}, {f:e}\n xor {t2:e}, {g:e}\n xor {t2:e}, {e:e}"
    };
}

/// FF (majority) and GG (choice) of rounds 16..64 into t2, t3 a scratch; FF as
/// `(a & (b | c)) | (b & c)`, two operations behind A.
macro_rules! ff_gg_maj_ch {
    (ff) => {
        "mov {t2:e}, {b:e}\n or {t2:e}, {c:e}\n and {t2:e}, {a:e}\n \
         mov {t3:e}, {b:e}\n and {t3:e}, {c:e}\n or {t2:e}, {t3:e}"
    };
    (gg) => {
        "andn {t3:e}, {e:e}, {g:e}\n mov {t2:e}, {e:e}\n and {t2:e}, {f:e}\n \
         or {t2:e}, {t3:e}"
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

    #[inline(always)]
    fn round<const J: usize>(
        s: &Schedule,
        a: u32,
        b: &mut u32,
        c: u32,
        d: &mut u32,
        e: u32,
        f: &mut u32,
        g: u32,
        h: &mut u32,
    ) {
        if J < 16 {
            round_asm!(s, J, a, b, c, d, e, f, g, h, ff_gg_xor);
        } else {
            round_asm!(s, J, a, b, c, d, e, f, g, h, ff_gg_maj_ch);
        }
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
