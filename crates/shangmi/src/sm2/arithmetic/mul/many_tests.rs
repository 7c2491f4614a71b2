//! The many-item multiplications with lanes (on stand-ins, `field::SoftLanes`) against
//! the same work item by item, for every group shape: under the lanes' threshold, one
//! full group, full groups and a remainder on either side of the threshold.

use super::*;
use crate::sm2::arithmetic::field::Arith;
use crate::sm2::arithmetic::field::{Soft, SoftLanes};
use crate::sm2::arithmetic::point::{Affine, Jacobian};
use crate::sm2::arithmetic::scalar::Scalar;

const LENGTHS: [usize; 6] = [1, 3, 4, 8, 11, 13];

fn scalars(n: usize, seed: u8) -> Vec<Scalar> {
    let mut s = [seed; 32];
    (0..n)
        .map(|_| {
            s = crate::sm3::hash(&s);
            Scalar::from_bytes_reduced(&s)
        })
        .collect()
}

fn affine_limbs<A: Arith>(p: &Jacobian<A>) -> ([u64; 4], [u64; 4]) {
    let a = p.to_affine().unwrap();
    (a.x.mont_limbs(), a.y.mont_limbs())
}

#[test]
fn variable_base_many_matches_each_alone() {
    let ks = scalars(13, 1);
    let ds = scalars(13, 2);
    for n in LENGTHS {
        let points: Vec<Affine<SoftLanes>> = ds[..n]
            .iter()
            .map(|d| fixed_base(SoftLanes, d).to_affine().unwrap())
            .collect();
        let jobs: Vec<(Affine<SoftLanes>, &Scalar)> =
            points.iter().copied().zip(&ks[..n]).collect();
        let got = variable_base_many(SoftLanes, &jobs);
        assert_eq!(got.len(), n);
        for ((p, k), q) in jobs.iter().zip(&got) {
            let p = Affine {
                x: Fe::from_mont(Soft, p.x.mont_limbs()),
                y: Fe::from_mont(Soft, p.y.mont_limbs()),
            };
            let want = variable_base(Soft, &Jacobian::from_affine(&p), k);
            assert_eq!(affine_limbs(q), affine_limbs(&want), "{n} items");
        }
    }
}

#[test]
fn fixed_base_many_matches_each_alone() {
    let ks = scalars(13, 3);
    for n in LENGTHS {
        let got = fixed_base_many(SoftLanes, &ks[..n]);
        assert_eq!(got.len(), n);
        for (k, q) in ks.iter().zip(&got) {
            assert_eq!(
                affine_limbs(q),
                affine_limbs(&fixed_base(Soft, k)),
                "{n} items"
            );
        }
    }
}
