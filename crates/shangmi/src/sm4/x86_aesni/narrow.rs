//! One to four SM4 blocks in the lanes of four XMM registers, with AESENCLAST on 128 bits: the
//! low-latency path of the chained modes (a single block replicated across lanes, so ShiftRows
//! is a no-op) and of short inputs.

use core::arch::x86_64::*;

use crate::sm4::Block;
use crate::sm4::a1_domain::{INTO, OUT_OF, TA, TB, TC};

/// A 4x4 transpose of 32-bit words: lane j of output k is lane k of input j (SSE2, so any
/// x86-64 has it).
#[inline(always)]
pub(crate) fn transpose4(b: [__m128i; 4]) -> [__m128i; 4] {
    // SAFETY: register-only SSE2 shuffles; SSE2 is part of x86-64.
    unsafe {
        let t0 = _mm_unpacklo_epi32(b[0], b[1]);
        let t1 = _mm_unpackhi_epi32(b[0], b[1]);
        let t2 = _mm_unpacklo_epi32(b[2], b[3]);
        let t3 = _mm_unpackhi_epi32(b[2], b[3]);
        [
            _mm_unpacklo_epi64(t0, t2),
            _mm_unpackhi_epi64(t0, t2),
            _mm_unpacklo_epi64(t1, t3),
            _mm_unpackhi_epi64(t1, t3),
        ]
    }
}

/// One to four blocks, block j in lane j of four XMM registers (one word each): the path for
/// chained modes' neighbours and short messages. XMM-wide, AESENCLAST needs no split of its
/// operand, which takes about a third off the latency of a round against the YMM pass.
#[target_feature(enable = "avx2,aes")]
pub(super) fn crypt_lanes4(rk_a1: &[u32; 32], blocks: &mut [Block]) {
    debug_assert!((1..=4).contains(&blocks.len()));
    let bswap = _mm_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
    let b: [__m128i; 4] = core::array::from_fn(|j| match blocks.get(j) {
        // SAFETY: a 16-byte load of a block.
        Some(blk) => unsafe { _mm_shuffle_epi8(_mm_loadu_si128(blk.as_ptr().cast()), bswap) },
        None => _mm_setzero_si128(),
    });
    let out = transpose4(rounds_a1::<false>(rk_a1, transpose4(b)));
    for (blk, v) in blocks.iter_mut().zip(out) {
        // SAFETY: a 16-byte store into the block.
        unsafe { _mm_storeu_si128(blk.as_mut_ptr().cast(), _mm_shuffle_epi8(v, bswap)) };
    }
}

/// One block at the shortest latency (CBC encryption, CMAC: every block waits for the last).
/// Each word is copied into all four lanes: then AESENCLAST's ShiftRows, which moves bytes
/// only between lanes, changes nothing, and no shuffle has to undo it.
#[target_feature(enable = "avx2,aes")]
pub(super) fn crypt_one(rk_a1: &[u32; 32], block: &mut Block) {
    let w: [__m128i; 4] = core::array::from_fn(|j| {
        let word = u32::from_be_bytes(block[4 * j..4 * j + 4].try_into().expect("4 bytes"));
        _mm_set1_epi32(word as i32)
    });
    for (j, v) in rounds_a1::<true>(rk_a1, w).iter().enumerate() {
        let word = _mm_cvtsi128_si32(*v) as u32;
        block[4 * j..4 * j + 4].copy_from_slice(&word.to_be_bytes());
    }
}

/// `x`, opaque to the optimiser: an empty instruction on its register, so that a sum computed
/// as a tree (for latency) is not re-associated into a chain.
#[inline(always)]
pub(super) fn keep(mut x: __m128i) -> __m128i {
    // SAFETY: the assembly is empty; it reads and writes only the register it is given.
    unsafe {
        core::arch::asm!(
            "/* {0} */",
            inout(xmm_reg) x,
            options(pure, nomem, nostack, preserves_flags)
        );
    }
    x
}

/// The 32 rounds on four state words in XMM registers (word j of one to four blocks, one per
/// lane; or with `REPLICATED`, of one block in every lane), in the A1 domain (see
/// `a1_domain`): the words go in and out of the domain here. Returns the output words X35,
/// X34, X33, X32 in that order.
///
/// A target-feature function (inlined into its callers, which have the same features) rather
/// than `inline(always)`: its closures then get the features too and inline the intrinsics.
#[target_feature(enable = "avx2,aes")]
#[inline]
fn rounds_a1<const REPLICATED: bool>(rk_a1: &[u32; 32], x: [__m128i; 4]) -> [__m128i; 4] {
    // SAFETY: register-only SSE/SSSE3/AES operations and loads of 16-byte arrays; every caller
    // enables AVX2 and AES-NI.
    unsafe {
        let table = |t: &[u8; 16]| _mm_loadu_si128(t.as_ptr().cast());
        let pair = |t: &([u8; 16], [u8; 16])| (table(&t.0), table(&t.1));
        let (into, out_of, ta, tb, tc) =
            (pair(&INTO), pair(&OUT_OF), pair(&TA), pair(&TB), pair(&TC));
        let mask = _mm_set1_epi8(0x0f);
        let shift_rows = _mm_setr_epi8(0, 13, 10, 7, 4, 1, 14, 11, 8, 5, 2, 15, 12, 9, 6, 3);
        let rot8 = _mm_setr_epi8(3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14);
        // Opaque, so that LLVM keeps one VPSHUFB (one cycle) for the 16-bit rotation rather
        // than the two-instruction word shuffle it prefers.
        let rot16 = core::hint::black_box(_mm_setr_epi8(
            2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
        ));
        let rot24 = _mm_setr_epi8(1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12);
        let lookup = |lo: __m128i, hi: __m128i, t: (__m128i, __m128i)| {
            _mm_xor_si128(_mm_shuffle_epi8(t.0, lo), _mm_shuffle_epi8(t.1, hi))
        };
        let split = |v: __m128i| {
            (
                _mm_and_si128(v, mask),
                _mm_and_si128(_mm_srli_epi16::<4>(v), mask),
            )
        };
        let [mut y0, mut y1, mut y2, mut y3] = x.map(|w| {
            let (lo, hi) = split(w);
            lookup(lo, hi, into)
        });
        // F(t) = Ta(u) ^ rotl8 Tb(u) ^ rotl16 Tb(u) ^ rotl24 Tc(u), u the AESENCLAST of t, as
        // (Ta ^ rotl24 Tc, rotl8 Tb ^ rotl16 Tb): the second pair is the longer path.
        let f = |t: __m128i| {
            let t = if REPLICATED {
                t
            } else {
                _mm_shuffle_epi8(t, shift_rows)
            };
            let (lo, hi) = split(_mm_aesenclast_si128(t, _mm_setzero_si128()));
            let b = lookup(lo, hi, tb);
            let late = keep(_mm_xor_si128(
                _mm_shuffle_epi8(b, rot8),
                _mm_shuffle_epi8(b, rot16),
            ));
            let c = _mm_shuffle_epi8(keep(lookup(lo, hi, tc)), rot24);
            (_mm_xor_si128(keep(lookup(lo, hi, ta)), c), late)
        };
        let key = |i: usize| _mm_set1_epi32(rk_a1[i % 32] as i32);
        // Round i makes Y_{i+4} = Y_i ^ F(input_i). The next input, Y_{i+2} ^ Y_{i+3} ^
        // Y_{i+4} ^ rk_{i+1}, is formed apart from Y_{i+4}: its part known before the S-box
        // (Y_i ^ Y_{i+2} ^ Y_{i+3} ^ rk_{i+1}) meets F's terms directly, one XOR shorter.
        let mut input = _mm_xor_si128(_mm_xor_si128(_mm_xor_si128(y1, y2), key(0)), y3);
        macro_rules! round {
            ($i:expr, $old:ident, $n2:ident, $n3:ident) => {{
                let early = keep(_mm_xor_si128(
                    _mm_xor_si128($old, $n2),
                    _mm_xor_si128($n3, key($i + 1)),
                ));
                let (ac, late) = f(input);
                input = _mm_xor_si128(keep(_mm_xor_si128(early, ac)), late);
                $old = _mm_xor_si128(keep(_mm_xor_si128($old, ac)), late);
            }};
        }
        for i in (0..32).step_by(4) {
            round!(i, y0, y2, y3);
            round!(i + 1, y1, y3, y0);
            round!(i + 2, y2, y0, y1);
            round!(i + 3, y3, y1, y2);
        }
        [y3, y2, y1, y0].map(|y| {
            let (lo, hi) = split(y);
            lookup(lo, hi, out_of)
        })
    }
}
