//! SM3 over 16 messages at once in AVX-512 registers: one 32-bit lane per message.
//!
//! Every SM3 operation maps to one instruction: VPROLD for the rotates, VPTERNLOGD for the
//! three-input boolean functions (0x96 XOR, 0xE8 majority, 0xCA choice) and for P0/P1. The
//! 16 input blocks are turned word-major with a 16x16 transpose (64 shuffles per 16 blocks).
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::lanes::LaneKernel;
use super::soft::T;
use crate::cpu::Avx512;

/// The 16-lane kernel; holding it proves the CPU has the AVX-512 tier.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Kernel(pub(crate) Avx512);

impl LaneKernel<16> for Kernel {
    fn compress_bytes(self, state: &mut [[u32; 16]; 8], data: &[&[u8]; 16]) {
        // SAFETY: the token in `self` proves AVX-512 F/BW/VL.
        unsafe { compress_bytes(state, data) }
    }

    fn compress_words(self, state: &mut [[u32; 16]; 8], blocks: &[[[u32; 16]; 16]]) {
        // SAFETY: the token in `self` proves AVX-512 F/BW/VL.
        unsafe { compress_words(state, blocks) }
    }
}

macro_rules! tern {
    ($imm:literal, $a:expr, $b:expr, $c:expr) => {
        _mm512_ternarylogic_epi32::<$imm>($a, $b, $c)
    };
}

#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
fn compress_bytes(state: &mut [[u32; 16]; 8], data: &[&[u8]; 16]) {
    let n = data[0].len() / 64;
    let bswap = _mm512_broadcast_i32x4(_mm_setr_epi8(
        3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12,
    ));
    let mut s = load_state(state);
    for b in 0..n {
        let mut w: [__m512i; 16] = core::array::from_fn(|lane| {
            let block = &data[lane][b * 64..][..64];
            // SAFETY: `block` is 64 readable bytes.
            unsafe { _mm512_loadu_si512(block.as_ptr().cast()) }
        });
        transpose(&mut w);
        for x in &mut w {
            *x = _mm512_shuffle_epi8(*x, bswap);
        }
        rounds(&mut s, &w);
    }
    store_state(state, &s);
}

#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
fn compress_words(state: &mut [[u32; 16]; 8], blocks: &[[[u32; 16]; 16]]) {
    let mut s = load_state(state);
    for block in blocks {
        let w: [__m512i; 16] = core::array::from_fn(|k| {
            // SAFETY: each row is 16 u32 = 64 readable bytes.
            unsafe { _mm512_loadu_si512(block[k].as_ptr().cast()) }
        });
        rounds(&mut s, &w);
    }
    store_state(state, &s);
}

#[inline]
#[target_feature(enable = "avx512f")]
fn load_state(state: &[[u32; 16]; 8]) -> [__m512i; 8] {
    // SAFETY: each row is 16 u32 = 64 readable bytes.
    core::array::from_fn(|k| unsafe { _mm512_loadu_si512(state[k].as_ptr().cast()) })
}

#[inline]
#[target_feature(enable = "avx512f")]
fn store_state(state: &mut [[u32; 16]; 8], s: &[__m512i; 8]) {
    for (row, v) in state.iter_mut().zip(s) {
        // SAFETY: each row is 16 u32 = 64 writable bytes.
        unsafe { _mm512_storeu_si512(row.as_mut_ptr().cast(), *v) }
    }
}

/// r[lane][word] -> r[word][lane]: 4x4 transposes inside each 128-bit chunk for each group of
/// four lanes, then a 4x4 transpose of the chunks across the groups.
#[inline]
#[target_feature(enable = "avx512f")]
fn transpose(r: &mut [__m512i; 16]) {
    let mut v = [[_mm512_setzero_si512(); 4]; 4];
    for g in 0..4 {
        let u0 = _mm512_unpacklo_epi32(r[4 * g], r[4 * g + 1]);
        let u1 = _mm512_unpackhi_epi32(r[4 * g], r[4 * g + 1]);
        let u2 = _mm512_unpacklo_epi32(r[4 * g + 2], r[4 * g + 3]);
        let u3 = _mm512_unpackhi_epi32(r[4 * g + 2], r[4 * g + 3]);
        // v[g][m], chunk c: word 4c+m of lanes 4g..4g+4.
        v[g] = [
            _mm512_unpacklo_epi64(u0, u2),
            _mm512_unpackhi_epi64(u0, u2),
            _mm512_unpacklo_epi64(u1, u3),
            _mm512_unpackhi_epi64(u1, u3),
        ];
    }
    for m in 0..4 {
        let s0 = _mm512_shuffle_i32x4::<0x44>(v[0][m], v[1][m]);
        let s1 = _mm512_shuffle_i32x4::<0xee>(v[0][m], v[1][m]);
        let s2 = _mm512_shuffle_i32x4::<0x44>(v[2][m], v[3][m]);
        let s3 = _mm512_shuffle_i32x4::<0xee>(v[2][m], v[3][m]);
        r[m] = _mm512_shuffle_i32x4::<0x88>(s0, s2);
        r[4 + m] = _mm512_shuffle_i32x4::<0xdd>(s0, s2);
        r[8 + m] = _mm512_shuffle_i32x4::<0x88>(s1, s3);
        r[12 + m] = _mm512_shuffle_i32x4::<0xdd>(s1, s3);
    }
}

/// 64 rounds on 16 lanes; `w16` is the block, word-major and host order.
#[inline]
#[target_feature(enable = "avx512f")]
fn rounds(s: &mut [__m512i; 8], w16: &[__m512i; 16]) {
    let mut w = [_mm512_setzero_si512(); 68];
    w[..16].copy_from_slice(w16);
    for j in 16..68 {
        let x = tern!(0x96, w[j - 16], w[j - 9], _mm512_rol_epi32::<15>(w[j - 3]));
        let p1 = tern!(
            0x96,
            x,
            _mm512_rol_epi32::<15>(x),
            _mm512_rol_epi32::<23>(x)
        );
        w[j] = tern!(0x96, p1, _mm512_rol_epi32::<7>(w[j - 13]), w[j - 6]);
    }

    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *s;
    macro_rules! round {
        ($a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident, $h:ident,
         $j:expr, $ff:literal, $gg:literal) => {{
            let a12 = _mm512_rol_epi32::<12>($a);
            let t = _mm512_set1_epi32(T[$j] as i32);
            let ss1 = _mm512_rol_epi32::<7>(_mm512_add_epi32(_mm512_add_epi32(a12, $e), t));
            let ss2 = _mm512_xor_si512(ss1, a12);
            let wp = _mm512_xor_si512(w[$j], w[$j + 4]);
            let tt1 = _mm512_add_epi32(
                _mm512_add_epi32(tern!($ff, $a, $b, $c), $d),
                _mm512_add_epi32(ss2, wp),
            );
            let tt2 = _mm512_add_epi32(
                _mm512_add_epi32(tern!($gg, $e, $f, $g), $h),
                _mm512_add_epi32(ss1, w[$j]),
            );
            $b = _mm512_rol_epi32::<9>($b);
            $f = _mm512_rol_epi32::<19>($f);
            $d = tt1;
            $h = tern!(
                0x96,
                tt2,
                _mm512_rol_epi32::<9>(tt2),
                _mm512_rol_epi32::<17>(tt2)
            );
        }};
    }
    macro_rules! four {
        ($j:expr, $ff:literal, $gg:literal) => {
            round!(a, b, c, d, e, f, g, h, $j, $ff, $gg);
            round!(d, a, b, c, h, e, f, g, $j + 1, $ff, $gg);
            round!(c, d, a, b, g, h, e, f, $j + 2, $ff, $gg);
            round!(b, c, d, a, f, g, h, e, $j + 3, $ff, $gg);
        };
    }
    four!(0, 0x96, 0x96);
    four!(4, 0x96, 0x96);
    four!(8, 0x96, 0x96);
    four!(12, 0x96, 0x96);
    four!(16, 0xe8, 0xca);
    four!(20, 0xe8, 0xca);
    four!(24, 0xe8, 0xca);
    four!(28, 0xe8, 0xca);
    four!(32, 0xe8, 0xca);
    four!(36, 0xe8, 0xca);
    four!(40, 0xe8, 0xca);
    four!(44, 0xe8, 0xca);
    four!(48, 0xe8, 0xca);
    four!(52, 0xe8, 0xca);
    four!(56, 0xe8, 0xca);
    four!(60, 0xe8, 0xca);

    for (s, v) in s.iter_mut().zip([a, b, c, d, e, f, g, h]) {
        *s = _mm512_xor_si512(*s, v);
    }
}
