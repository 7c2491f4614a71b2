//! Eight variable-base multiplications k P at once with AVX512-IFMA, one per 64-bit lane,
//! constant time in the k's: the key agreements of many handshakes gathered together.
//!
//! Each lane follows `mul::variable_base`'s schedule: signed 5-bit windows over a table of
//! P..16P, five doublings and one addition per window whatever the digits. The P's are public
//! (peers' key shares), so their tables are built with the lanes' formulas directly; jP + P
//! for 2 <= j < 16 never meets equal or opposite points for P of order n. What is secret is
//! each lane's digit, and every use of it is a mask: the lane's entry is kept from a scan of
//! all sixteen (the verification lanes' gather would address memory by digit), a negative
//! digit negates by blend, a zero digit or an accumulator still at infinity selects.
//!
//! `mul::variable_base` shows that only the last window's addition can meet the accumulator
//! equal to the entry (k = 2 d_0 mod n); there the doubling, computed in every lane, is taken
//! by mask. Opposite points would need k = 0 mod n, which the callers rule out.
#![allow(unsafe_code)]
// The unit tests and the constant-time check run this on stand-ins for the instructions (see
// `x86_ifma_arch`), as plain functions whose calls need no `unsafe`.
#![cfg_attr(any(test, shangmi_ctgrind), allow(unused_unsafe))]

use zeroize::Zeroize;

use super::x86_ifma_arch::*;
use super::x86_ifma_field::{F, ONE52, V, blend, from_mont256, load, splat, store_mont256, sub};
use super::x86_ifma_point::{Digits, Pt, Table, add_full, double, multiples, select};
use crate::cpu::Avx512Ifma;

/// One lane's inputs: the secret scalar (canonical, in [1, n-1]) and P's affine coordinates
/// in the Montgomery form of `field`. Plain data, so that a group of them can be copied into
/// lanes; their holder wipes them.
#[derive(Clone, Copy, Zeroize)]
pub(crate) struct Job {
    pub(crate) k: [u64; 4],
    pub(crate) x: [u64; 4],
    pub(crate) y: [u64; 4],
}

/// Per lane, k P as Jacobian (X, Y, Z) in the Montgomery form of `field`, fully reduced.
pub(crate) fn variable_base_x8(token: Avx512Ifma, jobs: &[Job; 8]) -> [[[u64; 4]; 3]; 8] {
    let mut out = [[[0u64; 4]; 3]; 8];
    // SAFETY: the token proves AVX-512F and AVX512-IFMA, `lanes`' target features.
    unsafe { lanes(token, jobs, &mut out) };
    out
}

/// Per lane, entry `idx` (0..16) of that lane's table, y negated where `negative`: all sixteen
/// entries are read and the lane's own kept by mask.
#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
fn entry(table: &Table, idx: V, negative: __mmask8) -> Pt {
    let zero = _mm512_setzero_si512();
    let mut rows = [zero; 15];
    for (j, e) in table.iter().enumerate() {
        let hit = _mm512_cmpeq_epi64_mask(idx, _mm512_set1_epi64(j as i64));
        for (r, v) in rows.iter_mut().zip(e) {
            *r = _mm512_mask_blend_epi64(hit, *r, *v);
        }
    }
    let f = |c: usize| F(core::array::from_fn(|k| rows[5 * c + k]));
    let y = f(1);
    Pt {
        x: f(0),
        y: blend(negative, &y, &sub(&F([zero; 5]), &y)),
        z: f(2),
    }
}

#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
fn lanes(_token: Avx512Ifma, jobs: &[Job; 8], out: &mut [[[u64; 4]; 3]; 8]) {
    let p = Pt {
        x: load(&core::array::from_fn(|l| from_mont256(&jobs[l].x))),
        y: load(&core::array::from_fn(|l| from_mont256(&jobs[l].y))),
        z: splat(&ONE52),
    };
    let (table, _) = multiples(&p);
    let digits = Digits::new(core::array::from_fn(|l| &jobs[l].k));
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
        let (mut sum, same_x) = add_full(&acc, &e);
        if i == 0 {
            // The public loop position, not a secret: the last window's complete addition.
            sum = select(same_x, &sum, &double(&e));
        }
        let summed = !zero_digit & !at_infinity;
        acc = select(at_infinity, &select(summed, &acc, &sum), &e);
        at_infinity &= zero_digit;
    }
    drop(digits);

    let mut coordinates = [acc.x, acc.y, acc.z].map(|c| store_mont256(&c));
    for (l, o) in out.iter_mut().enumerate() {
        *o = [coordinates[0][l], coordinates[1][l], coordinates[2][l]];
    }
    coordinates.zeroize();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sm2::arithmetic::field::{Fe, Soft};
    use crate::sm2::arithmetic::mul::{fixed_base, variable_base};
    use crate::sm2::arithmetic::point::{Affine, Jacobian};
    use crate::sm2::arithmetic::scalar::Scalar;

    fn affine(p: Jacobian<Soft>) -> ([u64; 4], [u64; 4]) {
        let a = p.to_affine().unwrap();
        (a.x.mont_limbs(), a.y.mont_limbs())
    }

    /// (k, P) pairs: random ones, small k and n - k (n - 6 is the one whose last window meets
    /// the doubling case: k - d_0 = n - 3 = d_0 mod n), long runs of zero digits, and one P in
    /// several lanes.
    fn items() -> Vec<(Scalar, Affine<Soft>)> {
        let mut seed = [11u8; 32];
        let mut next = || {
            seed = crate::sm3::hash(&seed);
            Scalar::from_bytes_reduced(&seed)
        };
        let limbs = Scalar::from_canonical;
        let small = |k: u64| limbs([k, 0, 0, 0]);
        let minus = |k: u64| Scalar::ZERO.sub(&small(k));
        let point = |d: Scalar| fixed_base(Soft, &d).to_affine().unwrap();
        let shared = point(next());
        let mut v = Vec::new();
        for i in 0..10 {
            let p = if i % 3 == 0 { shared } else { point(next()) };
            v.push((next(), p));
        }
        for k in [1, 2, 3, 4, 6, 16, 30, 32, 33] {
            v.push((small(k), point(next())));
            v.push((minus(k), point(next())));
        }
        v.extend([
            (limbs([0, 0, 0, 1 << 60]), shared),
            (limbs([0, 1, 0, 0]), point(next())),
            (limbs([5, 0, 0, 1 << 62]), point(next())),
            (next(), Affine::generator(Soft)),
        ]);
        v
    }

    #[test]
    fn lanes_match_the_scalar_multiplication() {
        // On stand-ins for the instructions where the CPU lacks them (`x86_ifma_arch`).
        let t = Avx512Ifma::emulated();
        let items = items();
        for group in items.chunks(8) {
            let job = |(k, p): &(Scalar, Affine<Soft>)| Job {
                k: k.to_canonical(),
                x: p.x.mont_limbs(),
                y: p.y.mont_limbs(),
            };
            let mut jobs = [job(&group[0]); 8];
            for (slot, item) in jobs.iter_mut().zip(group) {
                *slot = job(item);
            }
            let got = variable_base_x8(t, &jobs);
            for ((k, p), [x, y, z]) in group.iter().zip(got) {
                let want = affine(variable_base(Soft, &Jacobian::from_affine(p), k));
                let lane = Jacobian {
                    x: Fe::from_mont(Soft, x),
                    y: Fe::from_mont(Soft, y),
                    z: Fe::from_mont(Soft, z),
                };
                assert_eq!(affine(lane), want, "k {:x?}", k.0);
            }
        }
    }
}
