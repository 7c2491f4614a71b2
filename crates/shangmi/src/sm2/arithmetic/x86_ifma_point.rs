//! Points of the SM2 curve in AVX512-IFMA lanes, Jacobian, one per 64-bit lane, on the lane
//! field of `x86_ifma_field`: the doubling and addition formulas the verification and the
//! key-agreement lanes share, and their tables' layout. Every formula is the same
//! instructions for every value; the cases a formula cannot take are reported as masks.
#![allow(unsafe_code)]
// The unit tests and the constant-time check run this on stand-ins for the instructions (see
// `x86_ifma_arch`), as plain functions whose calls need no `unsafe`.
#![cfg_attr(any(test, shangmi_ctgrind), allow(unused_unsafe))]

use zeroize::Zeroize;

use super::x86_ifma_arch::*;
use super::x86_ifma_field::{F, V, add_lazy, blend, is_zero, mul, shl, sqr, sub, sub_lazy, times3};
use crate::sm2::arithmetic::mul::booth;

/// A Jacobian point per lane.
#[derive(Clone, Copy)]
pub(super) struct Pt {
    pub(super) x: F,
    pub(super) y: F,
    pub(super) z: F,
}

/// 2P with a = -3: 4M + 4S (Z3 = 2 Y Z, a product where (Y + Z)^2 - gamma - delta would take a
/// square and two subtractions).
#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
pub(super) fn double(p: &Pt) -> Pt {
    let delta = sqr(&p.z);
    let gamma = sqr(&p.y);
    let beta = mul(&p.x, &gamma);
    let alpha = times3(&mul(&sub_lazy(&p.x, &delta), &add_lazy(&p.x, &delta)));
    let x3 = sub(&sqr(&alpha), &shl::<3>(&beta));
    let z3 = shl::<1>(&mul(&p.y, &p.z));
    let gamma8 = shl::<3>(&sqr(&gamma));
    let y3 = sub(&mul(&alpha, &sub_lazy(&shl::<2>(&beta), &x3)), &gamma8);
    Pt {
        x: x3,
        y: y3,
        z: z3,
    }
}

/// p + q (12M + 4S) for p, q not at infinity, and the lanes where their x's agree (p = +-q),
/// whose result is not the sum.
#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
pub(super) fn add_full(p: &Pt, q: &Pt) -> (Pt, __mmask8) {
    let z1z1 = sqr(&p.z);
    let z2z2 = sqr(&q.z);
    let u1 = mul(&p.x, &z2z2);
    let u2 = mul(&q.x, &z1z1);
    let s1 = mul(&p.y, &mul(&q.z, &z2z2));
    let s2 = mul(&q.y, &mul(&p.z, &z1z1));
    let h = sub(&u2, &u1);
    let r = sub(&s2, &s1);
    let hh = sqr(&h);
    let hhh = mul(&h, &hh);
    let v = mul(&u1, &hh);
    let x3 = sub(&sub(&sqr(&r), &hhh), &shl::<1>(&v));
    let y3 = sub(&mul(&r, &sub_lazy(&v, &x3)), &mul(&s1, &hhh));
    let z3 = mul(&mul(&p.z, &q.z), &h);
    let sum = Pt {
        x: x3,
        y: y3,
        z: z3,
    };
    (sum, is_zero(&h))
}

#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
pub(super) fn select(k: __mmask8, a: &Pt, b: &Pt) -> Pt {
    Pt {
        x: blend(k, &a.x, &b.x),
        y: blend(k, &a.y, &b.y),
        z: blend(k, &a.z, &b.z),
    }
}

/// P..16P per lane, each as 15 limb rows (X, Y, Z) of eight lanes.
pub(super) type Table = [[V; 15]; 16];

#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
pub(super) fn store_entry(row: &mut [V; 15], p: &Pt) {
    for (c, v) in [p.x, p.y, p.z].iter().enumerate() {
        row[5 * c..5 * c + 5].copy_from_slice(&v.0);
    }
}

/// P..16P per lane, and the lanes where a step met equal or opposite points (none, for P of
/// order n: jP + P for 2 <= j < 16).
#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
pub(super) fn multiples(p: &Pt) -> (Table, __mmask8) {
    let mut bad: __mmask8 = 0;
    let mut table: Table = [[_mm512_setzero_si512(); 15]; 16];
    store_entry(&mut table[0], p);
    let mut last = double(p);
    store_entry(&mut table[1], &last);
    for row in table.iter_mut().skip(2) {
        let h0;
        (last, h0) = add_full(&last, p);
        bad |= h0;
        store_entry(row, &last);
    }
    (table, bad)
}

/// The eight lanes' scalars as 52 signed 5-bit Booth digits each: per window, the magnitudes
/// by lane and the negative ones as a mask. Wiped on drop (the key agreements' are secret).
pub(super) struct Digits {
    mags: [[u64; 8]; 52],
    negs: [u8; 52],
}

impl Digits {
    /// The digits of canonical scalars below n.
    pub(super) fn new(ks: [&[u64; 4]; 8]) -> Self {
        let mut d = Digits {
            mags: [[0; 8]; 52],
            negs: [0; 52],
        };
        for (l, k) in ks.iter().enumerate() {
            for i in 0..52 {
                let (mag, neg) = booth(k, i, 5);
                d.mags[i][l] = u64::from(mag);
                d.negs[i] |= neg.unwrap_u8() << l;
            }
        }
        d
    }

    /// Window i: each lane's table index (magnitude - 1; 0 for a zero digit, whose entry the
    /// caller discards), the zero digits and the negative ones, as masks.
    #[cfg_attr(
        not(any(test, shangmi_ctgrind)),
        target_feature(enable = "avx512f,avx512ifma")
    )]
    pub(super) fn window(&self, i: usize) -> (V, __mmask8, __mmask8) {
        // SAFETY: a 64-byte load of an 8-lane array.
        let mag = unsafe { _mm512_loadu_si512(self.mags[i].as_ptr().cast()) };
        let zero_digit = _mm512_cmpeq_epi64_mask(mag, _mm512_setzero_si512());
        let idx = _mm512_maskz_sub_epi64(!zero_digit, mag, _mm512_set1_epi64(1));
        (idx, zero_digit, self.negs[i])
    }
}

impl Drop for Digits {
    fn drop(&mut self) {
        self.mags.zeroize();
        self.negs.zeroize();
    }
}
