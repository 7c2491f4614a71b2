//! Variable-base multiplication in constant time, one point or many (lanes where the CPU has them).

use subtle::{ConditionallySelectable, ConstantTimeEq};

use super::{affine_from_entry, booth};
use crate::sm2::arithmetic::field::{Arith, Fe};
use crate::sm2::arithmetic::point::{Affine, Jacobian};
use crate::sm2::arithmetic::scalar::Scalar;

/// k P in constant time for a public point P and a secret scalar k: signed 5-bit windows
/// over a table of P..16P, 5 doublings and one addition per window. P is public and so are its
/// multiples: one inversion puts the table in affine form, for mixed additions (7M + 4S
/// instead of 11M + 5S) and a scan of two coordinates instead of three.
///
/// Only the last window can meet the doubling case: before window i >= 1 the accumulator is
/// A P with A = 32 a, |A| < 2^252 < n/2, and the added d P has |d| <= 16, so A = +-d mod n
/// would mean A = +-d as integers, impossible for nonzero d (32 does not divide it) and
/// handled by selection for d = 0 or A = 0. At the last window A = k - d_0 can be d_0 + n (for
/// k = n - 6, say), so that addition is the complete one.
pub(crate) fn variable_base<A: Arith>(a: A, p: &Jacobian<A>, k: &Scalar) -> Jacobian<A> {
    if bool::from(p.is_identity()) {
        return *p;
    }
    let mut kc = k.to_canonical();
    // P is public (its multiples may be built with branches). Co-Z: P rides along with each
    // multiple, so each step is one co-Z addition; it adds P to jP, never +-P for 2 <= j < 16.
    // P (rescaled) and 2P share a Z; each later multiple's Z is the last one's times a factor
    // the addition returns, which the affine conversion follows back down.
    let mut table = [*p; 16];
    let mut grow = [None; 16];
    let (two, mut same) = p.double_coz();
    table[1] = two;
    table[0] = same;
    for j in 2..16 {
        let f;
        (table[j], same, f) = same.add_coz(&table[j - 1]);
        grow[j] = Some(f);
    }
    let zero = Affine {
        x: Fe::zero(a),
        y: Fe::zero(a),
    };
    let mut affine = [zero; 16];
    let last = table[15].z.invert_vartime();
    crate::sm2::arithmetic::point::chain_to_affine(&table, &grow, last, &mut affine);
    // As raw limbs, so the backend's SIMD scan reads them (the fixed-base windows' layout).
    let mut rows = [[0u64; 8]; 16];
    for (row, e) in rows.iter_mut().zip(&affine) {
        row[..4].copy_from_slice(&e.x.mont_limbs());
        row[4..].copy_from_slice(&e.y.mont_limbs());
    }
    let mut acc = Jacobian::identity(a);
    for i in (0..52).rev() {
        // Until the top window's digit the accumulator is at infinity whatever k is: no
        // doublings, and the digit's entry is the sum (public loop positions, not secrets).
        if i < 51 {
            for _ in 0..5 {
                acc = acc.double();
            }
        }
        let (mag, neg) = booth(&kc, i, 5);
        // Digit 0 reads all zeros and discards the sum: the same work for every digit.
        let mut e = affine_from_entry(a, &a.select(&rows, mag));
        e.y = Fe::conditional_select(&e.y, &-e.y, neg);
        let sum = match i {
            0 => acc.add(&Jacobian::from_affine(&e)),
            51 => Jacobian::from_affine(&e),
            _ => acc.add_mixed(&e),
        };
        acc = Jacobian::conditional_select(&sum, &acc, mag.ct_eq(&0));
    }
    zeroize::Zeroize::zeroize(&mut kc);
    acc
}

/// [`variable_base`] for many (P, k) at once (P public and not at infinity, k in [1, n-1]),
/// constant time in the k's: eight at a time in IFMA lanes where the backend has them, the
/// rest one by one. A group of fewer than `LANES_FROM` goes the scalar way; spare lanes
/// repeat the group's first job and are discarded.
pub(crate) fn variable_base_many<A: Arith>(
    a: A,
    jobs: &[(Affine<A>, &Scalar)],
) -> Vec<Jacobian<A>> {
    let alone = |(p, k): &(Affine<A>, &Scalar)| variable_base(a, &Jacobian::from_affine(p), k);
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = a.ifma() {
        use crate::sm2::arithmetic::x86_ifma_ecdh::{Job, variable_base_x8};
        let mut out = Vec::with_capacity(jobs.len());
        for group in jobs.chunks(8) {
            if group.len() < super::LANES_FROM {
                out.extend(group.iter().map(alone));
                continue;
            }
            let lane = |(p, k): &(Affine<A>, &Scalar)| Job {
                k: k.to_canonical(),
                x: p.x.mont_limbs(),
                y: p.y.mont_limbs(),
            };
            let mut lanes = [lane(&group[0]); 8];
            for (slot, job) in lanes.iter_mut().zip(group) {
                *slot = lane(job);
            }
            let mut done = variable_base_x8(t, &lanes);
            zeroize::Zeroize::zeroize(&mut lanes);
            out.extend(done[..group.len()].iter().map(|q| Jacobian {
                x: Fe::from_mont(a, q[0]),
                y: Fe::from_mont(a, q[1]),
                z: Fe::from_mont(a, q[2]),
            }));
            zeroize::Zeroize::zeroize(&mut done);
        }
        return out;
    }
    jobs.iter().map(alone).collect()
}
