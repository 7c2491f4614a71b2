//! Points of the SM2 curve y^2 = x^3 - 3x + b over GF(p), in Jacobian coordinates
//! (x = X/Z^2, y = Y/Z^3, Z = 0 the point at infinity) and affine ones.
//!
//! Formulas (Explicit-Formulas Database, a = -3): doubling dbl-2001-b (3M + 5S), mixed
//! addition madd-2007-bl (7M + 4S), addition add-2007-bl (11M + 5S). [`Jacobian::add`] handles
//! every exceptional case in constant time (either input at infinity, P = Q, P = -Q) by
//! computing the doubling alongside and selecting; the mixed addition handles infinity only,
//! which is all the fixed-base comb can meet (see `mul.rs`).

use subtle::{Choice, ConditionallySelectable, ConstantTimeEq, CtOption};

use crate::sm2::arithmetic::field::{Arith, Fe};

/// b in Montgomery form.
const B: [u64; 4] = [
    0x90d2_3063_2bc0_dd42,
    0x71cf_379a_e9b5_37ab,
    0x5279_8150_5ea5_1c3c,
    0x240f_e188_ba20_e2c8,
];
/// The base point G, Montgomery form.
pub(crate) const GX: [u64; 4] = [
    0x6132_8990_f418_029e,
    0x3e79_81ed_dca6_c050,
    0xd6a1_ed99_ac24_c3c3,
    0x9116_7a5e_e1c1_3b05,
];
pub(crate) const GY: [u64; 4] = [
    0xc135_4e59_3c2d_0ddd,
    0xc1f5_e578_8d32_95fa,
    0x8d4c_fb06_6e2a_48f8,
    0x63cd_65d4_81d7_35bd,
];

/// An affine point other than infinity.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Affine<A: Arith> {
    pub(crate) x: Fe<A>,
    pub(crate) y: Fe<A>,
}

/// A point in Jacobian coordinates.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Jacobian<A: Arith> {
    pub(crate) x: Fe<A>,
    pub(crate) y: Fe<A>,
    pub(crate) z: Fe<A>,
}

impl<A: Arith> zeroize::Zeroize for Affine<A> {
    fn zeroize(&mut self) {
        self.x.zeroize();
        self.y.zeroize();
    }
}

impl<A: Arith> zeroize::Zeroize for Jacobian<A> {
    fn zeroize(&mut self) {
        self.x.zeroize();
        self.y.zeroize();
        self.z.zeroize();
    }
}

impl<A: Arith> Affine<A> {
    pub(crate) fn generator(a: A) -> Self {
        Affine {
            x: Fe::from_mont(a, GX),
            y: Fe::from_mont(a, GY),
        }
    }

    /// Whether y^2 = x^3 - 3x + b.
    pub(crate) fn is_on_curve(&self) -> Choice {
        let a = self.x.a;
        let x3 = self.x.square() * self.x;
        let three_x = self.x.double() + self.x;
        let rhs = x3 - three_x + Fe::from_mont(a, B);
        self.y.square().ct_eq(&rhs)
    }

    /// The point with this x and the y of the given parity (for compressed encodings).
    pub(crate) fn decompress(x: Fe<A>, y_odd: Choice) -> CtOption<Self> {
        let a = x.a;
        let rhs = x.square() * x - (x.double() + x) + Fe::from_mont(a, B);
        let root = rhs.sqrt();
        let found = root.is_some();
        let y = root.unwrap_or(Fe::zero(a));
        let flip = y.is_odd() ^ y_odd;
        CtOption::new(
            Affine {
                x,
                y: Fe::conditional_select(&y, &-y, flip),
            },
            found,
        )
    }

    pub(crate) fn neg(&self) -> Self {
        Affine {
            x: self.x,
            y: -self.y,
        }
    }

    /// Decodes a SEC1 point, public data: `04 || x || y` (65 bytes) or `02/03 || x` (33
    /// bytes). `None` for any other length or prefix (including `00`, infinity, and the hybrid
    /// `06/07`), coordinates `>= p`, points off the curve and x with no square root.
    pub(crate) fn from_sec1_vartime(a: A, bytes: &[u8]) -> Option<Self> {
        let coordinate =
            |b: &[u8]| -> Option<Fe<A>> { Option::from(Fe::from_bytes(a, b.try_into().ok()?)) };
        match (bytes.len(), bytes.first()) {
            (65, Some(4)) => {
                let p = Affine {
                    x: coordinate(&bytes[1..33])?,
                    y: coordinate(&bytes[33..65])?,
                };
                bool::from(p.is_on_curve()).then_some(p)
            }
            (33, Some(&prefix @ (2 | 3))) => Option::from(Affine::decompress(
                coordinate(&bytes[1..33])?,
                Choice::from(prefix & 1),
            )),
            _ => None,
        }
    }
}

impl<A: Arith> ConditionallySelectable for Affine<A> {
    fn conditional_select(p: &Self, q: &Self, c: Choice) -> Self {
        Affine {
            x: Fe::conditional_select(&p.x, &q.x, c),
            y: Fe::conditional_select(&p.y, &q.y, c),
        }
    }
}

impl<A: Arith> ConditionallySelectable for Jacobian<A> {
    fn conditional_select(p: &Self, q: &Self, c: Choice) -> Self {
        Jacobian {
            x: Fe::conditional_select(&p.x, &q.x, c),
            y: Fe::conditional_select(&p.y, &q.y, c),
            z: Fe::conditional_select(&p.z, &q.z, c),
        }
    }
}

impl<A: Arith> Jacobian<A> {
    pub(crate) fn identity(a: A) -> Self {
        Jacobian {
            x: Fe::one(a),
            y: Fe::one(a),
            z: Fe::zero(a),
        }
    }

    pub(crate) fn from_affine(p: &Affine<A>) -> Self {
        Jacobian {
            x: p.x,
            y: p.y,
            z: Fe::one(p.x.a),
        }
    }

    pub(crate) fn is_identity(&self) -> Choice {
        self.z.is_zero()
    }

    #[cfg(test)]
    pub(crate) fn neg(&self) -> Self {
        Jacobian {
            x: self.x,
            y: -self.y,
            z: self.z,
        }
    }

    /// 2P; infinity stays infinity (Z3 = 2 Y1 Z1 = 0).
    #[inline]
    pub(crate) fn double(&self) -> Self {
        self.double_coz().0
    }

    /// 2P, and P again with the Z of 2P: (X l^2, Y l^3, Z l) for l = 2Y, whose coordinates
    /// the doubling computes anyway (4 beta and 8 gamma^2). The pair starts a chain of
    /// `add_coz`.
    #[inline(always)]
    pub(crate) fn double_coz(&self) -> (Self, Self) {
        // The order of the products matters to how much of the formula the core overlaps
        // (measured: the compiler largely keeps the asm blocks in source order). The critical
        // path delta, t, alpha^2, y3 goes first; beta, Z3 and gamma^2 fill in between.
        let delta = self.z.square();
        let gamma = self.y.square();
        let t = (self.x - delta) * (self.x + delta);
        let beta = self.x * gamma;
        let z3 = (self.y + self.z).square() - gamma - delta;
        let alpha = t.double() + t;
        let beta4 = beta.double().double();
        let x3 = alpha.square() - beta4.double();
        let gamma2_8 = gamma.square().double().double().double();
        let y3 = alpha * (beta4 - x3) - gamma2_8;
        let twice = Jacobian {
            x: x3,
            y: y3,
            z: z3,
        };
        let same = Jacobian {
            x: beta4,
            y: gamma2_8,
            z: z3,
        };
        (twice, same)
    }

    /// P + Q for P and Q with the same Z (and P != +-Q, neither at infinity), and P again with
    /// the Z of the sum: Meloni's co-Z addition, 5M + 2S against 11M + 5S for two Z's. Each
    /// call leaves the pair for the next, so a run of multiples costs one of these apiece.
    /// The third value is the factor the Z grew by: the pair's Z is the inputs' times it.
    #[inline]
    pub(crate) fn add_coz(&self, q: &Self) -> (Self, Self, Fe<A>) {
        let dx = self.x - q.x;
        let dy = self.y - q.y;
        let c = dx.square();
        let w1 = self.x * c;
        let w2 = q.x * c;
        let a1 = self.y * (w1 - w2);
        let x3 = dy.square() - w1 - w2;
        let y3 = dy * (w1 - x3) - a1;
        let z3 = self.z * dx;
        let sum = Jacobian {
            x: x3,
            y: y3,
            z: z3,
        };
        let same = Jacobian {
            x: w1,
            y: a1,
            z: z3,
        };
        (sum, same, dx)
    }

    /// P + Q for an affine Q. Correct when P is infinity (selected) and whenever P != +-Q; the
    /// callers guarantee the latter (the result for P = +-Q is unspecified).
    #[inline]
    pub(crate) fn add_mixed(&self, q: &Affine<A>) -> Self {
        self.add_mixed_beside(q, |_| {})
    }

    /// [`Jacobian::add_mixed`], calling `beside(0)` to `beside(7)` between its products: work
    /// that does not wait on the addition (the next window's table scan, on the vector units
    /// and load ports) runs while the multiplications hold the integer ones.
    #[inline(always)]
    pub(crate) fn add_mixed_beside(&self, q: &Affine<A>, mut beside: impl FnMut(usize)) -> Self {
        let z1z1 = self.z.square();
        beside(0);
        let yz = q.y * self.z;
        let u2 = q.x * z1z1;
        beside(1);
        let s2 = yz * z1z1;
        let h = u2 - self.x;
        let r = (s2 - self.y).double();
        beside(2);
        let hh = h.square();
        let rr = r.square();
        beside(3);
        let i = hh.double().double();
        let j = h * i;
        beside(4);
        let v = self.x * i;
        let z3 = (self.z + h).square() - z1z1 - hh;
        beside(5);
        let x3 = rr - j - v.double();
        let yj = self.y * j;
        beside(6);
        let y3 = r * (v - x3) - yj.double();
        beside(7);
        let sum = Jacobian {
            x: x3,
            y: y3,
            z: z3,
        };
        Jacobian::conditional_select(&sum, &Jacobian::from_affine(q), self.is_identity())
    }

    /// P + Q for public points, Q affine: the mixed formula, with the cases it cannot take (P
    /// at infinity, P = +-Q) found by branching on the values it computes anyway.
    pub(crate) fn add_mixed_vartime(&self, q: &Affine<A>) -> Self {
        if bool::from(self.is_identity()) {
            return Jacobian::from_affine(q);
        }
        let z1z1 = self.z.square();
        let yz = q.y * self.z;
        let u2 = q.x * z1z1;
        let s2 = yz * z1z1;
        let h = u2 - self.x;
        let r = (s2 - self.y).double();
        if bool::from(h.is_zero()) {
            return if bool::from(r.is_zero()) {
                self.double()
            } else {
                Jacobian::identity(self.x.a)
            };
        }
        let hh = h.square();
        let rr = r.square();
        let i = hh.double().double();
        let j = h * i;
        let v = self.x * i;
        let z3 = (self.z + h).square() - z1z1 - hh;
        let x3 = rr - j - v.double();
        let y3 = r * (v - x3) - (self.y * j).double();
        Jacobian {
            x: x3,
            y: y3,
            z: z3,
        }
    }

    /// P + Q for public points: the complete formula's cases by branching, so the doubling is
    /// only computed when it is the answer.
    pub(crate) fn add_vartime(&self, q: &Self) -> Self {
        if bool::from(self.is_identity()) {
            return *q;
        }
        if bool::from(q.is_identity()) {
            return *self;
        }
        let (sum, h, r) = self.add_formula(q);
        if bool::from(h.is_zero() & r.is_zero()) {
            return self.double();
        }
        sum
    }

    /// add-2007-bl without its exceptional cases: correct unless P or Q is infinity or P = Q
    /// (P = -Q gives Z3 = 0, infinity). Also returns h and r, which are both zero when P = Q.
    #[inline(always)]
    fn add_formula(&self, q: &Self) -> (Self, Fe<A>, Fe<A>) {
        let z1z1 = self.z.square();
        let z2z2 = q.z.square();
        let u1 = self.x * z2z2;
        let u2 = q.x * z1z1;
        let s1 = self.y * q.z * z2z2;
        let s2 = q.y * self.z * z1z1;
        let h = u2 - u1;
        let i = h.double().square();
        let j = h * i;
        let r = (s2 - s1).double();
        let v = u1 * i;
        let x3 = r.square() - j - v.double();
        let y3 = r * (v - x3) - (s1 * j).double();
        let z3 = ((self.z + q.z).square() - z1z1 - z2z2) * h;
        let sum = Jacobian {
            x: x3,
            y: y3,
            z: z3,
        };
        (sum, h, r)
    }

    /// P + Q, complete: every input, in constant time.
    pub(crate) fn add(&self, q: &Self) -> Self {
        let (mut sum, h, r) = self.add_formula(q);
        // P = Q: h = 0 and r = 0 (with neither at infinity). P = -Q gives z3 = 0 by itself.
        let same = h.is_zero() & r.is_zero() & !self.is_identity() & !q.is_identity();
        sum = Jacobian::conditional_select(&sum, &self.double(), same);
        sum = Jacobian::conditional_select(&sum, q, self.is_identity());
        Jacobian::conditional_select(&sum, self, q.is_identity())
    }

    /// The affine point, or `None` at infinity.
    pub(crate) fn to_affine(self) -> CtOption<Affine<A>> {
        self.to_affine_blinded(None)
    }

    /// Z^-1: through [`Fe::invert_blinded`] with `blind` (32 fresh random bytes), or the
    /// constant-time inversion for `None`.
    fn z_inverse(&self, blind: Option<&[u8; 32]>) -> Fe<A> {
        match blind {
            Some(b) => self.z.invert_blinded(b),
            None => self.z.invert(),
        }
    }

    /// [`Jacobian::to_affine`], Z inverted as [`Jacobian::z_inverse`] does.
    pub(crate) fn to_affine_blinded(self, blind: Option<&[u8; 32]>) -> CtOption<Affine<A>> {
        let zi = self.z_inverse(blind);
        let zi2 = zi.square();
        let p = Affine {
            x: self.x * zi2,
            y: self.y * zi2 * zi,
        };
        CtOption::new(p, !self.is_identity())
    }

    /// Only the affine x (what signing needs, one multiplication fewer), Z inverted as
    /// [`Jacobian::z_inverse`] does.
    pub(crate) fn affine_x_blinded(&self, blind: Option<&[u8; 32]>) -> Fe<A> {
        self.x * self.z_inverse(blind).square()
    }
}

/// Affine forms of public points whose Z's form a chain, as runs of co-Z additions leave
/// them: point j's Z is point j - 1's times `grow[j]`, or the same Z where that is `None`
/// (as `grow[0]` is). Given the last Z's inverse, each Z^-1 is the next one's times its
/// factor: 4M + 1S a point, against 6M + 1S for [`batch_to_affine`]'s prefix products. No
/// point may be at infinity.
pub(crate) fn chain_to_affine<A: Arith>(
    points: &[Jacobian<A>],
    grow: &[Option<Fe<A>>],
    last_z_inverse: Fe<A>,
    out: &mut [Affine<A>],
) {
    debug_assert!(points.len() == grow.len() && points.len() == out.len());
    let mut zi = last_z_inverse;
    for j in (0..points.len()).rev() {
        let p = &points[j];
        let zi2 = zi.square();
        out[j] = Affine {
            x: p.x * zi2,
            y: p.y * zi2 * zi,
        };
        if let Some(f) = grow[j] {
            zi = zi * f;
        }
    }
}

/// Converts many points to affine with one inversion (Montgomery's trick). Points at infinity
/// come out as (0, 0).
pub(crate) fn batch_to_affine<A: Arith>(points: &[Jacobian<A>], out: &mut [Affine<A>]) {
    debug_assert_eq!(points.len(), out.len());
    let Some(first) = points.first() else { return };
    let a = first.x.a;
    let one = Fe::one(a);
    // Prefix products of the Z's (infinity contributes 1 so it does not zero the rest).
    let mut prefix = Vec::with_capacity(points.len());
    let mut acc = one;
    for p in points {
        let z = Fe::conditional_select(&p.z, &one, p.is_identity());
        acc = acc * z;
        prefix.push(acc);
    }
    let mut inv = acc.invert();
    for i in (0..points.len()).rev() {
        let p = &points[i];
        let z = Fe::conditional_select(&p.z, &one, p.is_identity());
        let zi = if i == 0 { inv } else { inv * prefix[i - 1] };
        inv = inv * z;
        let zi2 = zi.square();
        let aff = Affine {
            x: p.x * zi2,
            y: p.y * zi2 * zi,
        };
        let zero = Affine {
            x: Fe::zero(a),
            y: Fe::zero(a),
        };
        out[i] = Affine::conditional_select(&aff, &zero, p.is_identity());
    }
    zeroize::Zeroize::zeroize(&mut prefix);
}
