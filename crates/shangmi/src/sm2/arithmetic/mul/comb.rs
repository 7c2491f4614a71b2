//! Fixed-base multiplication by comb tables: the generator's, and any point's that is used often.

use subtle::{Choice, ConditionallySelectable, ConstantTimeEq};

use super::{affine_from_entry, base_table, booth};
use crate::sm2::arithmetic::field::{Arith, Fe};
use crate::sm2::arithmetic::point::{Affine, Jacobian};
use crate::sm2::arithmetic::scalar::{PublicScalar, Scalar};

/// A comb table: window i holds j 2^(7i) Q for j = 1..=64, affine, Montgomery form.
pub(crate) type Comb = [[[u64; 8]; 64]; 37];

/// k G in constant time, for k in [1, n-1] (k = 0 gives infinity).
///
/// Why no addition meets P = +-Q: with a_i the accumulated multiple, |a_i| < 2^(7i-1) while
/// the added multiple is d_i 2^(7i), |d_i| >= 1. For i < 36 both are below n/2 in size, so
/// equality mod n would be equality of integers, impossible. For the top window (i = 36,
/// |d_36| <= 16) equality would need a_36 = d_36 2^252 - n, i.e. k = 2 d_36 2^252 - n, which
/// forces d_36 = 8 and a_36 = 2^255 - n, too large in size; opposition would need k = 0 mod n.
pub(crate) fn fixed_base<A: Arith>(a: A, k: &Scalar) -> Jacobian<A> {
    fixed_base_with(a, base_table(), k)
}

/// k G for many scalars (each in [1, n-1]), in constant time: eight at a time in IFMA lanes
/// where the backend has them (a last partial group is padded with the scalar 1, discarded).
pub(crate) fn fixed_base_many<A: Arith>(a: A, ks: &[Scalar]) -> Vec<Jacobian<A>> {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = a.ifma() {
        let mut out = Vec::with_capacity(ks.len());
        for group in ks.chunks(8) {
            let mut kc = [[1u64, 0, 0, 0]; 8];
            for (slot, k) in kc.iter_mut().zip(group) {
                *slot = k.to_canonical();
            }
            let points = crate::sm2::arithmetic::x86_ifma_lanes::fixed_base_x8(t, &kc);
            zeroize::Zeroize::zeroize(&mut kc);
            out.extend(points[..group.len()].iter().map(|p| Jacobian {
                x: Fe::from_mont(a, p[0]),
                y: Fe::from_mont(a, p[1]),
                z: Fe::from_mont(a, p[2]),
            }));
        }
        return out;
    }
    ks.iter().map(|k| fixed_base(a, k)).collect()
}

/// k Q in constant time from Q's comb table, for k in [1, n-1]: as [`fixed_base`], whose
/// argument holds for any point of order n.
pub(crate) fn fixed_base_with<A: Arith>(a: A, table: &Comb, k: &Scalar) -> Jacobian<A> {
    let mut kc = k.to_canonical();
    let signed = |e: &[u64; 8], neg: Choice| {
        let mut p = affine_from_entry(a, e);
        p.y = Fe::conditional_select(&p.y, &-p.y, neg);
        p
    };
    // Window 0 meets an accumulator at infinity whatever k is: its entry becomes the
    // accumulator (infinity for a zero digit) with no addition.
    let (mag, neg) = booth(&kc, 0, 7);
    let mut e = a.select(&table[0], mag);
    let mut acc = Jacobian::conditional_select(
        &Jacobian::from_affine(&signed(&e, neg)),
        &Jacobian::identity(a),
        mag.ct_eq(&0),
    );
    // Window i + 1's scan is cut in eight and run between the products of window i's
    // addition: the scan streams 4 KiB through the vector units while the field
    // multiplications hold the integer ones.
    let (mut mag, mut neg) = booth(&kc, 1, 7);
    e = a.select(&table[1], mag);
    for i in 1..table.len() {
        let p = signed(&e, neg);
        e = [0; 8];
        let (next_mag, next_neg) = booth(&kc, i + 1, 7);
        let sum = match table.get(i + 1) {
            Some(next) => acc.add_mixed_beside(&p, |part| {
                a.select_part(next, next_mag, 8 * part, 8, &mut e)
            }),
            None => acc.add_mixed(&p),
        };
        acc = Jacobian::conditional_select(&sum, &acc, mag.ct_eq(&0));
        (mag, neg) = (next_mag, next_neg);
    }
    zeroize::Zeroize::zeroize(&mut kc);
    zeroize::Zeroize::zeroize(&mut e);
    acc
}

/// k Q for public k from a comb table, reading entries directly (variable time).
pub(crate) fn comb_vartime<A: Arith>(a: A, table: &Comb, k: &PublicScalar) -> Jacobian<A> {
    let kc = k.to_canonical();
    let mut acc = Jacobian::identity(a);
    for (i, window) in table.iter().enumerate() {
        let (mag, neg) = booth(&kc, i, 7);
        if mag == 0 {
            continue;
        }
        let p = affine_from_entry(a, &window[mag as usize - 1]);
        let p = if bool::from(neg) { p.neg() } else { p };
        acc = acc.add_mixed_vartime(&p);
    }
    acc
}

/// Builds the comb table of a point (about 2,400 additions and one batched inversion).
pub(crate) fn build_comb<A: Arith>(q: &Affine<A>) -> Box<Comb> {
    let mut table = Box::new([[[0u64; 8]; 64]; 37]);
    let mut base = Jacobian::from_affine(q);
    let mut points = vec![base; 64 * 37];
    for i in 0..37 {
        let w = &mut points[64 * i..64 * (i + 1)];
        w[0] = base;
        w[1] = base.double();
        for j in 2..64 {
            w[j] = w[j - 1].add(&base);
        }
        for _ in 0..7 {
            base = base.double();
        }
    }
    let mut affine = vec![*q; points.len()];
    crate::sm2::arithmetic::point::batch_to_affine(&points, &mut affine);
    for (i, window) in table.iter_mut().enumerate() {
        for (j, e) in window.iter_mut().enumerate() {
            let p = &affine[64 * i + j];
            e[..4].copy_from_slice(&p.x.mont_limbs());
            e[4..].copy_from_slice(&p.y.mont_limbs());
        }
    }
    table
}
