//! Eight fixed-base multiplications at once with AVX512-IFMA: one scalar per 64-bit lane,
//! on the lane field of `x86_ifma_field`.
//!
//! The comb is the one of `mul.rs` (37 windows of signed 7-bit digits, one mixed addition per
//! window, no doubling), read from a limb-major copy of its table: each lane's entry is taken
//! with `VPERMT2Q` register permutes indexed by that lane's digit, after loading the whole
//! window, so neither addresses nor instructions depend on the digits. The exceptional cases
//! of the mixed addition are those `mul::fixed_base` rules out for scalars in [1, n-1], and the
//! accumulator at infinity, which is a per-lane mask. Only the digits are secret; every
//! decision on them is a mask.
#![allow(unsafe_code)]
// The unit tests and the constant-time check run this on stand-ins for the instructions (see
// `x86_ifma_arch`), as plain functions whose calls need no `unsafe`.
#![cfg_attr(any(test, shangmi_ctgrind), allow(unused_unsafe))]

use super::x86_ifma_arch::*;
use std::sync::OnceLock;

use zeroize::Zeroize;

use crate::cpu::Avx512Ifma;
use crate::sm2::arithmetic::mul::{BASE_TABLE, booth};
use crate::sm2::arithmetic::x86_ifma_field::{
    F, ONE52, V, blend, from_mont256, mul, neg_canonical, shl, splat, sqr, store_mont256, sub,
};

/// Window i, limb c (x limbs 0..5, then y), entry j - 1 for j = 1..=64.
type Table52 = [[[u64; 64]; 10]; 37];

/// The base table in radix 2^52, R = 2^260, limb-major; built once from `BASE_TABLE`.
fn table52() -> &'static Table52 {
    static TABLE: OnceLock<Box<Table52>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = Box::new([[[0u64; 64]; 10]; 37]);
        for (w, window) in BASE_TABLE.iter().enumerate() {
            for (j, e) in window.iter().enumerate() {
                for (half, v) in [&e[..4], &e[4..]].into_iter().enumerate() {
                    let v = [v[0], v[1], v[2], v[3]];
                    for (c, limb) in from_mont256(&v).into_iter().enumerate() {
                        t[w][5 * half + c][j] = limb;
                    }
                }
            }
        }
        t
    })
}

/// k_l G for the eight scalars (canonical limbs, each in [1, n-1]; 0 gives infinity): Jacobian
/// (X, Y, Z) per lane in the Montgomery form of `field`, each coordinate fully reduced.
pub(crate) fn fixed_base_x8(token: Avx512Ifma, ks: &[[u64; 4]; 8]) -> [[[u64; 4]; 3]; 8] {
    let mut out = [[[0u64; 4]; 3]; 8];
    // SAFETY: the token proves AVX-512F and AVX512-IFMA, the target features of both.
    unsafe { comb_lanes(token, ks).store(&mut out) };
    out
}

/// k_l G per lane, left in the lanes (radix 2^52, R = 2^260) for more arithmetic.
#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
pub(super) fn comb_lanes(_token: Avx512Ifma, ks: &[[u64; 4]; 8]) -> Acc {
    let table = table52();
    let mut mags = [[0u64; 8]; 37];
    let mut negs = [[0u64; 8]; 37];
    for (l, k) in ks.iter().enumerate() {
        for i in 0..37 {
            let (mag, neg) = booth(k, i, 7);
            mags[i][l] = u64::from(mag);
            negs[i][l] = u64::from(neg.unwrap_u8());
        }
    }
    let acc = comb_x8(table, &mags, &negs);
    mags.zeroize();
    negs.zeroize();
    acc
}

/// Per lane, entry `idx` (0..64) of a limb row: four 16-entry permutes, then bits 4 and 5 of
/// the index choose among them.
#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
unsafe fn pick(row: &[u64; 64], idx: V, b4: __mmask8, b5: __mmask8) -> V {
    let p = row.as_ptr();
    // SAFETY: eight 64-byte loads covering the 64-entry row.
    let r: [V; 8] = core::array::from_fn(|q| unsafe { _mm512_loadu_si512(p.add(8 * q).cast()) });
    let g0 = _mm512_permutex2var_epi64(r[0], idx, r[1]);
    let g1 = _mm512_permutex2var_epi64(r[2], idx, r[3]);
    let g2 = _mm512_permutex2var_epi64(r[4], idx, r[5]);
    let g3 = _mm512_permutex2var_epi64(r[6], idx, r[7]);
    let lo = _mm512_mask_blend_epi64(b4, g0, g1);
    let hi = _mm512_mask_blend_epi64(b4, g2, g3);
    _mm512_mask_blend_epi64(b5, lo, hi)
}

/// The eight accumulators (Jacobian, per lane) and the lanes still at infinity.
pub(super) struct Acc {
    pub(super) x: F,
    pub(super) y: F,
    pub(super) z: F,
    pub(super) at_infinity: __mmask8,
}

impl Acc {
    #[cfg_attr(
        not(any(test, shangmi_ctgrind)),
        target_feature(enable = "avx512f,avx512ifma")
    )]
    fn new() -> Self {
        let zero = F([_mm512_setzero_si512(); 5]);
        Acc {
            x: zero,
            y: zero,
            z: zero,
            at_infinity: 0xff,
        }
    }

    /// Adds the selected entry (x2, y2), negated where `negative`, in the lanes whose digit is
    /// not zero: a mixed addition (8M + 3S), valid when the accumulator is neither infinity
    /// (handled by selection) nor +-Q (ruled out by the callers' digit positions).
    #[cfg_attr(
        not(any(test, shangmi_ctgrind)),
        target_feature(enable = "avx512f,avx512ifma")
    )]
    fn add_entry(&mut self, x2: &F, y2: &F, negative: __mmask8, zero_digit: __mmask8) {
        let y2 = blend(negative, y2, &neg_canonical(y2));
        let (x1, y1, z1) = (&self.x, &self.y, &self.z);
        let z1z1 = sqr(z1);
        let u2 = mul(x2, &z1z1);
        let s2 = mul(&y2, &mul(z1, &z1z1));
        let h = sub(&u2, x1);
        let r = sub(&s2, y1);
        let hh = sqr(&h);
        let hhh = mul(&h, &hh);
        let v = mul(x1, &hh);
        let x3 = sub(&sub(&sqr(&r), &hhh), &shl::<1>(&v));
        let y3 = sub(&mul(&r, &sub(&v, &x3)), &mul(y1, &hhh));
        let z3 = mul(z1, &h);
        // At infinity the sum is the entry itself; a zero digit keeps the accumulator.
        let x3 = blend(self.at_infinity, &x3, x2);
        let y3 = blend(self.at_infinity, &y3, &y2);
        let z3 = blend(self.at_infinity, &z3, &splat(&ONE52));
        self.x = blend(zero_digit, &x3, &self.x);
        self.y = blend(zero_digit, &y3, &self.y);
        self.z = blend(zero_digit, &z3, &self.z);
        self.at_infinity &= zero_digit;
    }

    /// Per lane, (X, Y, Z) in the Montgomery form of `field`, fully reduced.
    #[cfg_attr(
        not(any(test, shangmi_ctgrind)),
        target_feature(enable = "avx512f,avx512ifma")
    )]
    fn store(&self, out: &mut [[[u64; 4]; 3]; 8]) {
        for (c, v) in [self.x, self.y, self.z].iter().enumerate() {
            for (o, limbs) in out.iter_mut().zip(store_mont256(v)) {
                o[c] = limbs;
            }
        }
    }
}

/// Loads the 8 lanes' digits: (magnitude vector, zero-digit mask, negative mask).
#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
fn digits(mags: &[u64; 8], negs: &[u64; 8]) -> (V, __mmask8, __mmask8) {
    // SAFETY: 64-byte loads of 8-lane arrays.
    let (mag, neg) = unsafe {
        (
            _mm512_loadu_si512(mags.as_ptr().cast()),
            _mm512_loadu_si512(negs.as_ptr().cast()),
        )
    };
    let zero = _mm512_setzero_si512();
    (
        mag,
        _mm512_cmpeq_epi64_mask(mag, zero),
        _mm512_cmpneq_epi64_mask(neg, zero),
    )
}

#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
fn comb_x8(table: &Table52, mags: &[[u64; 8]; 37], negs: &[[u64; 8]; 37]) -> Acc {
    let mut acc = Acc::new();
    for (w, window) in table.iter().enumerate() {
        let (mag, zero_digit, negative) = digits(&mags[w], &negs[w]);
        // Entry mag - 1; a zero digit reads entry 63, which `add_entry` discards.
        let idx = _mm512_and_si512(
            _mm512_sub_epi64(mag, _mm512_set1_epi64(1)),
            _mm512_set1_epi64(63),
        );
        let b4 = _mm512_test_epi64_mask(idx, _mm512_set1_epi64(16));
        let b5 = _mm512_test_epi64_mask(idx, _mm512_set1_epi64(32));
        // SAFETY: every row read is a 64-entry row of the table.
        let coord: [V; 10] = core::array::from_fn(|c| unsafe { pick(&window[c], idx, b4, b5) });
        let x2 = F([coord[0], coord[1], coord[2], coord[3], coord[4]]);
        let y2 = F([coord[5], coord[6], coord[7], coord[8], coord[9]]);
        acc.add_entry(&x2, &y2, negative, zero_digit);
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_match_the_scalar_comb() {
        use super::super::field::{Fe, Soft};
        use super::super::mul::fixed_base;
        use super::super::point::Jacobian;
        use super::super::scalar::Scalar;
        // On stand-ins for the instructions where the CPU lacks them (`x86_ifma_arch`).
        let t = crate::cpu::Avx512Ifma::emulated();
        let mut seed = [7u8; 32];
        for round in 0..20 {
            let mut ks = [[0u64; 4]; 8];
            let mut scalars = Vec::new();
            for (l, k) in ks.iter_mut().enumerate() {
                seed = crate::sm3::hash(&seed);
                let mut b = seed;
                // Some lanes with long runs of zero digits, so lanes disagree about infinity.
                if (l + round) % 3 == 0 {
                    b[..20].fill(0);
                }
                let s = Scalar::from_bytes(&b).unwrap();
                *k = s.to_canonical();
                scalars.push(s);
            }
            let got = fixed_base_x8(t, &ks);
            for (s, p) in scalars.iter().zip(&got) {
                let want = fixed_base(Soft, s).to_affine().unwrap();
                let lane = Jacobian {
                    x: Fe::from_mont(Soft, p[0]),
                    y: Fe::from_mont(Soft, p[1]),
                    z: Fe::from_mont(Soft, p[2]),
                }
                .to_affine()
                .unwrap();
                assert_eq!(
                    (lane.x.mont_limbs(), lane.y.mont_limbs()),
                    (want.x.mont_limbs(), want.y.mont_limbs())
                );
            }
        }
    }
}
