//! Eight verifications' double multiplications u1 G + u2 P at once with AVX512-IFMA, one per
//! 64-bit lane, on the lane field of `x86_ifma_field` (batch verification).
//!
//! Lanes run the same instructions, so each lane's u2 P takes the regular schedule of the
//! constant-time variable-base multiplication: signed 5-bit windows over a table of P..16P,
//! five doublings and one addition per window, whatever the digits; the table is built in the
//! lanes and each lane reads its own entry with a gather (everything here is public, and the
//! gather's addresses depend only on the public digits). u1 G is the comb of the fixed-base
//! lanes (37 mixed additions, no doubling), and one full addition joins the two.
//!
//! The addition formulas are incomplete. A lane whose addition met equal or opposite points
//! (a zero x difference: u2's last window, or u1 G = +-u2 P at the end, both reachable only by
//! signatures built for it) is reported rather than computed, and its caller takes the
//! single-verification path for it; every other lane is exact.
#![allow(unsafe_code)]
// The unit tests and the constant-time check run this on stand-ins for the instructions (see
// `x86_ifma_arch`), as plain functions whose calls need no `unsafe`.
#![cfg_attr(any(test, shangmi_ctgrind), allow(unused_unsafe))]

use super::x86_ifma_arch::*;
use super::x86_ifma_field::{F, ONE52, V, blend, from_mont256, load, splat, store_mont256, sub};
use super::x86_ifma_lanes::comb_lanes;
use super::x86_ifma_point::{Digits, Pt, Table, add_full, double, multiples, select};
use crate::cpu::Avx512Ifma;

/// One lane's inputs: the public scalars (canonical, in [1, n-1]) and P's affine coordinates
/// in the Montgomery form of `field`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Job {
    pub(crate) u1: [u64; 4],
    pub(crate) u2: [u64; 4],
    pub(crate) x: [u64; 4],
    pub(crate) y: [u64; 4],
}

/// Per lane, u1 G + u2 P as Jacobian (X, Y, Z) in the Montgomery form of `field`, or `None`
/// where the lane met an exceptional addition (see the module's documentation).
pub(crate) fn double_base_x8_vartime(
    token: Avx512Ifma,
    jobs: &[Job; 8],
) -> [Option<[[u64; 4]; 3]>; 8] {
    // SAFETY: the token proves AVX-512F and AVX512-IFMA, `lanes`' target features.
    let ([x, y, z], bad) = unsafe { lanes(token, jobs) };
    core::array::from_fn(|l| ((bad >> l) & 1 == 0).then_some([x[l], y[l], z[l]]))
}

/// Per lane, entry `idx` (0..16) of that lane's table, its y negated where `negative`.
#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
fn entry(table: &Table, idx: V, negative: __mmask8) -> Pt {
    // Lane l of row c of entry j is the u64 at (15 j + c) 8 + l.
    let row = _mm512_sub_epi64(_mm512_slli_epi64::<7>(idx), _mm512_slli_epi64::<3>(idx));
    let at = _mm512_add_epi64(row, _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0));
    let base = table.as_ptr().cast::<i64>();
    let limbs: [V; 15] = core::array::from_fn(|c| {
        // SAFETY: idx < 16, so every offset lies inside the table's 16 x 15 x 8 words.
        unsafe { _mm512_i64gather_epi64::<8>(at, base.add(8 * c)) }
    });
    let f = |c: usize| F(core::array::from_fn(|k| limbs[5 * c + k]));
    let y = f(1);
    let zero = F([_mm512_setzero_si512(); 5]);
    Pt {
        x: f(0),
        y: blend(negative, &y, &sub(&zero, &y)),
        z: f(2),
    }
}

/// One coordinate of the eight lanes' points, in the Montgomery form of `field`.
type Coordinate = [[u64; 4]; 8];

/// Lanes' results (X, Y, Z) and the lanes to redo alone.
#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
fn lanes(token: Avx512Ifma, jobs: &[Job; 8]) -> ([Coordinate; 3], u8) {
    let p = Pt {
        x: load(&core::array::from_fn(|l| from_mont256(&jobs[l].x))),
        y: load(&core::array::from_fn(|l| from_mont256(&jobs[l].y))),
        z: splat(&ONE52),
    };
    // jP for j = 2..16 adds P to (j - 1)P, never +-P; the flags are kept regardless.
    let (table, mut bad) = multiples(&p);
    let digits = Digits::new(core::array::from_fn(|l| &jobs[l].u2));
    let digit = |i: usize| {
        let (idx, zero_digit, negative) = digits.window(i);
        (entry(&table, idx, negative), zero_digit)
    };
    // The top window meets the accumulator at infinity: its entry is the accumulator.
    let (mut acc, mut at_infinity) = digit(51);
    for i in (0..51).rev() {
        for _ in 0..5 {
            acc = double(&acc);
        }
        let (e, zero_digit) = digit(i);
        let (sum, h0) = add_full(&acc, &e);
        let summed = !zero_digit & !at_infinity;
        bad |= h0 & summed;
        acc = select(at_infinity, &select(summed, &acc, &sum), &e);
        at_infinity &= zero_digit;
    }

    let g = comb_lanes(token, &core::array::from_fn(|l| jobs[l].u1));
    let g_pt = Pt {
        x: g.x,
        y: g.y,
        z: g.z,
    };
    let (sum, h0) = add_full(&acc, &g_pt);
    bad |= h0 | at_infinity | g.at_infinity;
    let coordinates = [sum.x, sum.y, sum.z].map(|c| store_mont256(&c));
    (coordinates, bad)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sm2::arithmetic::field::Soft;
    use crate::sm2::arithmetic::field::SoftLanes;
    use crate::sm2::arithmetic::mul::{double_base_many_vartime, double_base_vartime, fixed_base};
    use crate::sm2::arithmetic::point::{Affine, Jacobian};
    use crate::sm2::arithmetic::scalar::{PublicScalar, Scalar};

    type Limbs = ([u64; 4], [u64; 4]);

    fn affine_limbs<A: crate::sm2::arithmetic::field::Arith>(p: Jacobian<A>) -> Option<Limbs> {
        Option::<Affine<A>>::from(p.to_affine()).map(|a| (a.x.mont_limbs(), a.y.mont_limbs()))
    }

    /// (u1, u2, d, may be exceptional): random items, the scalars' edges, one key many times,
    /// the generator as a key, u2 whose last window meets the doubling case, and u1 G = +-u2 P.
    fn items() -> Vec<(Scalar, Scalar, Scalar, bool)> {
        let mut seed = [3u8; 32];
        let mut next = || {
            seed = crate::sm3::hash(&seed);
            Scalar::from_bytes_reduced(&seed)
        };
        let minus = |k: u64| Scalar::ZERO.sub(&Scalar::from_canonical([k, 0, 0, 0]));
        let one = Scalar::ONE;
        let d = next();
        let mut v = Vec::new();
        for _ in 0..12 {
            v.push((next(), next(), next(), false));
        }
        let u = next();
        v.extend([
            (one, one, d, false),
            (minus(1), minus(1), d, false),
            (one, minus(1), next(), false),
            (next(), Scalar::from_canonical([5, 0, 0, 0]), d, false),
            (next(), Scalar::from_canonical([0, 0, 0, 1 << 60]), d, false),
            (next(), Scalar::from_canonical([0, 1, 0, 0]), one, false),
            (next(), next(), one, false),
            (next(), minus(6), d, true),
            (next(), minus(16), d, true),
            (u.mul(&d), u, d, true),
            (Scalar::ZERO.sub(&u.mul(&d)), u, d, true),
            (next(), next(), d, false),
        ]);
        for k in 1..=16 {
            v.push((next(), minus(k), next(), true));
        }
        v
    }

    fn reference(u1: &Scalar, u2: &Scalar, d: &Scalar) -> (Affine<Soft>, Option<Limbs>) {
        let p = fixed_base(Soft, d).to_affine().unwrap();
        let (u1, u2) = (PublicScalar::declassify(*u1), PublicScalar::declassify(*u2));
        let want = affine_limbs(double_base_vartime(
            Soft,
            &u1,
            &u2,
            &Jacobian::from_affine(&p),
        ));
        (p, want)
    }

    #[test]
    fn lanes_match_the_single_double_multiplication() {
        // On stand-ins for the instructions where the CPU lacks them (`x86_ifma_arch`).
        let t = crate::cpu::Avx512Ifma::emulated();
        let items = items();
        let mut reported = 0;
        for group in items.chunks(8) {
            let mut jobs = Vec::new();
            let mut wants = Vec::new();
            for (u1, u2, d, _) in group {
                let (p, want) = reference(u1, u2, d);
                jobs.push(Job {
                    u1: u1.to_canonical(),
                    u2: u2.to_canonical(),
                    x: p.x.mont_limbs(),
                    y: p.y.mont_limbs(),
                });
                wants.push(want);
            }
            while jobs.len() < 8 {
                jobs.push(jobs[0]);
            }
            let got = double_base_x8_vartime(t, &jobs.try_into().unwrap());
            for ((item, want), got) in group.iter().zip(&wants).zip(got) {
                match got {
                    Some([x, y, z]) => {
                        let lane = Jacobian {
                            x: crate::sm2::arithmetic::field::Fe::from_mont(Soft, x),
                            y: crate::sm2::arithmetic::field::Fe::from_mont(Soft, y),
                            z: crate::sm2::arithmetic::field::Fe::from_mont(Soft, z),
                        };
                        assert_eq!(affine_limbs(lane), *want, "u2 {:x?}", item.1.0);
                    }
                    None => {
                        assert!(
                            item.3,
                            "lane reported for an ordinary item, u2 {:x?}",
                            item.1.0
                        );
                        reported += 1;
                    }
                }
            }
        }
        // u1 G = u2 P and u1 G = -u2 P at least, whose sums the formula cannot make.
        assert!(reported >= 2, "{reported} lanes reported");
    }

    #[test]
    fn many_in_lanes_match_each_alone() {
        // The portable field with the lanes on stand-ins (`field::SoftLanes`).
        let a = SoftLanes;
        let items = items();
        let mut jobs = Vec::new();
        let mut wants = Vec::new();
        for (u1, u2, d, _) in &items {
            let (_, want) = reference(u1, u2, d);
            let p = fixed_base(a, d).to_affine().unwrap();
            let (u1, u2) = (PublicScalar::declassify(*u1), PublicScalar::declassify(*u2));
            jobs.push((u1, u2, p));
            wants.push(want);
        }
        // The scalar path (under four items), full and partial passes of lanes, and a pass
        // of lanes followed by a remainder too short for them.
        for len in [1, 3, 4, 8, 11, 12, items.len() - 1, items.len()] {
            let got = double_base_many_vartime(a, &jobs[..len]);
            assert_eq!(got.len(), len);
            for (i, q) in got.into_iter().enumerate() {
                assert_eq!(affine_limbs(q), wants[i], "item {i} of {len}");
            }
        }
    }
}
