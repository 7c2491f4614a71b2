//! Arithmetic modulo p = 2^256 - 2^224 - 2^96 + 2^64 - 1, the SM2 prime.
//!
//! Elements are 4 x 64-bit little-endian limbs in Montgomery form (x R mod p, R = 2^256), always
//! fully reduced (< p). Since -p^-1 = 1 mod 2^64, each Montgomery reduction step multiplies by
//! the low limb itself, and adding m p needs no multiplication at all: m p + m =
//! m (2^256 - 2^224 - 2^96 + 2^64), shifts and additions (`soft.rs` documents the limbs).
//!
//! Multiplication and squaring come from an [`Arith`] backend chosen once per operation: the
//! portable `u128` code, or MULX/ADCX/ADOX `asm!` on the AVX2 tier. [`Fe`] carries its backend
//! value (a zero-sized token), so an element can only be made by code that holds one.

pub(crate) mod limbs;
pub(crate) mod soft;
#[cfg(target_arch = "x86_64")]
pub(crate) mod x86_adx;

use subtle::{Choice, ConditionallySelectable, ConstantTimeEq, CtOption};

pub(crate) use limbs::{P, adc, add_mod, limbs_from_be, limbs_to_be, sbb, sub_if_ge, sub_mod};

/// R^2 mod p, to enter Montgomery form.
const R2: [u64; 4] = [
    0x0000_0002_0000_0003,
    0x0000_0002_ffff_ffff,
    0x0000_0001_0000_0001,
    0x0000_0004_0000_0002,
];
/// R^3 mod p, to bring an inverse of a Montgomery-form value back into Montgomery form.
const R3: [u64; 4] = [
    0x0000_0012_0000_0016,
    0x0000_000e_ffff_fff8,
    0x0000_000a_0000_000c,
    0x0000_001b_0000_0009,
];
/// R mod p: one in Montgomery form.
const ONE: [u64; 4] = [
    0x0000_0000_0000_0001,
    0x0000_0000_ffff_ffff,
    0x0000_0000_0000_0000,
    0x0000_0001_0000_0000,
];

/// An SM2 backend: field multiplication (`mul(a, b) = a b R^-1 mod p` for `a, b < p`, result
/// `< p`) and the constant-time read of a fixed-base table window.
pub(crate) trait Arith: Copy + core::fmt::Debug {
    fn mul(self, a: &[u64; 4], b: &[u64; 4]) -> [u64; 4];
    fn sqr(self, a: &[u64; 4]) -> [u64; 4];
    /// a + b mod p for a, b < p.
    #[inline(always)]
    fn add(self, a: &[u64; 4], b: &[u64; 4]) -> [u64; 4] {
        add_mod(a, b, &P)
    }
    /// a - b mod p for a, b < p.
    #[inline(always)]
    fn sub(self, a: &[u64; 4], b: &[u64; 4]) -> [u64; 4] {
        sub_mod(a, b, &P)
    }
    /// Entry `idx - 1` of a table of points (all zero for `idx = 0`), reading every entry.
    #[inline(always)]
    fn select<const N: usize>(self, table: &[[u64; 8]; N], idx: u32) -> [u64; 8] {
        crate::sm2::arithmetic::mul::select_portable(table, idx)
    }
    /// Entries `first..first + count` of [`Arith::select`]'s scan, ORed into `acc`: a scan cut
    /// into pieces, to run beside other work.
    #[inline(always)]
    fn select_part<const N: usize>(
        self,
        table: &[[u64; 8]; N],
        idx: u32,
        first: usize,
        count: usize,
        acc: &mut [u64; 8],
    ) {
        crate::sm2::arithmetic::mul::select_part_portable(table, idx, first, count, acc)
    }
    /// The IFMA token when this backend may run eight fixed-base multiplications in lanes.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn ifma(self) -> Option<crate::cpu::Avx512Ifma> {
        None
    }
}

/// Portable backend.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Soft;

impl Arith for Soft {
    #[inline(always)]
    fn mul(self, a: &[u64; 4], b: &[u64; 4]) -> [u64; 4] {
        soft::mont_mul(a, b)
    }

    #[inline(always)]
    fn sqr(self, a: &[u64; 4]) -> [u64; 4] {
        soft::mont_sqr(a)
    }
}

/// The portable field with the IFMA lanes on stand-ins for the instructions, for the unit
/// tests and the constant-time check: the lanes, and what a backend with lanes does around
/// them (groups, padding, thresholds), run on any CPU.
#[cfg(all(any(test, shangmi_ctgrind), target_arch = "x86_64"))]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SoftLanes;

#[cfg(all(any(test, shangmi_ctgrind), target_arch = "x86_64"))]
impl Arith for SoftLanes {
    fn mul(self, a: &[u64; 4], b: &[u64; 4]) -> [u64; 4] {
        soft::mont_mul(a, b)
    }

    fn sqr(self, a: &[u64; 4]) -> [u64; 4] {
        soft::mont_sqr(a)
    }

    fn ifma(self) -> Option<crate::cpu::Avx512Ifma> {
        Some(crate::cpu::Avx512Ifma::emulated())
    }
}

/// An element of GF(p), always in Montgomery form (x R mod p), with its arithmetic backend.
/// The limbs are private: values enter through `from_canonical`/`from_bytes` (converted) or
/// `from_mont` (already converted, e.g. a table entry), and leave through `to_canonical`/
/// `to_bytes` or `mont_limbs`, so every crossing names the form it carries.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fe<A: Arith> {
    v: [u64; 4],
    pub(crate) a: A,
}

/// Values derived from secrets (a shared point, its Z) are wiped where they are kept in
/// memory that outlives the computation.
impl<A: Arith> zeroize::Zeroize for Fe<A> {
    fn zeroize(&mut self) {
        self.v.zeroize();
    }
}

/// Whether `x < m`, constant time.
pub(crate) fn lt(x: &[u64; 4], m: &[u64; 4]) -> Choice {
    let mut b = 0;
    for i in 0..4 {
        (_, b) = sbb(x[i], m[i], b);
    }
    Choice::from(b as u8)
}

impl<A: Arith> Fe<A> {
    #[inline(always)]
    pub(crate) fn zero(a: A) -> Self {
        Fe { v: [0; 4], a }
    }

    #[inline(always)]
    pub(crate) fn one(a: A) -> Self {
        Fe { v: ONE, a }
    }

    /// From Montgomery-form limbs (already `< p`), e.g. a precomputed table entry.
    #[inline(always)]
    pub(crate) fn from_mont(a: A, v: [u64; 4]) -> Self {
        Fe { v, a }
    }

    /// From canonical limbs `< p` (not checked).
    #[inline(always)]
    pub(crate) fn from_canonical(a: A, v: [u64; 4]) -> Self {
        Fe {
            v: a.mul(&v, &R2),
            a,
        }
    }

    /// From 32 big-endian bytes; `None` when the value is `>= p` (never reduced silently).
    pub(crate) fn from_bytes(a: A, b: &[u8; 32]) -> CtOption<Self> {
        let l = limbs_from_be(b);
        CtOption::new(Self::from_canonical(a, l), lt(&l, &P))
    }

    /// The Montgomery-form limbs, as `from_mont` takes them (for tables).
    #[inline(always)]
    pub(crate) fn mont_limbs(self) -> [u64; 4] {
        self.v
    }

    /// Canonical limbs (out of Montgomery form).
    #[inline]
    pub(crate) fn to_canonical(self) -> [u64; 4] {
        self.a.mul(&self.v, &[1, 0, 0, 0])
    }

    /// 32 big-endian bytes.
    pub(crate) fn to_bytes(self) -> [u8; 32] {
        limbs_to_be(&self.to_canonical())
    }

    #[inline(always)]
    pub(crate) fn add(self, o: Self) -> Self {
        Fe {
            v: self.a.add(&self.v, &o.v),
            a: self.a,
        }
    }

    #[inline(always)]
    pub(crate) fn sub(self, o: Self) -> Self {
        Fe {
            v: self.a.sub(&self.v, &o.v),
            a: self.a,
        }
    }

    #[inline(always)]
    pub(crate) fn double(self) -> Self {
        self.add(self)
    }

    #[inline(always)]
    pub(crate) fn neg(self) -> Self {
        Fe::zero(self.a).sub(self)
    }

    #[inline(always)]
    pub(crate) fn mul(self, o: Self) -> Self {
        Fe {
            v: self.a.mul(&self.v, &o.v),
            a: self.a,
        }
    }

    #[inline(always)]
    pub(crate) fn square(self) -> Self {
        Fe {
            v: self.a.sqr(&self.v),
            a: self.a,
        }
    }

    #[inline(always)]
    fn sqn(mut self, n: usize) -> Self {
        for _ in 0..n {
            self = self.square();
        }
        self
    }

    pub(crate) fn is_zero(&self) -> Choice {
        self.v.ct_eq(&[0; 4])
    }

    /// x^(2^k - 1) for the exponent chains.
    fn chain(self) -> Chain<A> {
        let x = self;
        let e2 = x.square().mul(x);
        let e3 = e2.square().mul(x);
        let e6 = e3.sqn(3).mul(e3);
        let e12 = e6.sqn(6).mul(e6);
        let e24 = e12.sqn(12).mul(e12);
        let e30 = e24.sqn(6).mul(e6);
        let e31 = e30.square().mul(x);
        let e32 = e31.square().mul(x);
        Chain { x, e30, e31, e32 }
    }

    /// x^-1 (0 for 0) in constant time, by division steps on the stored x R: (x R)^-1 R^3 R^-1
    /// = x^-1 R.
    pub(crate) fn invert(self) -> Self {
        const MODULUS: crate::sm2::arithmetic::safegcd::Modulus =
            crate::sm2::arithmetic::safegcd::Modulus::new(&P);
        let y = crate::sm2::arithmetic::safegcd::invert(&self.v, &MODULUS);
        Fe {
            v: self.a.mul(&y, &R3),
            a: self.a,
        }
    }

    /// x^-1 (0 for 0) for a secret x, through the variable-time inversion: with b a secret,
    /// uniformly random nonzero element, x b is uniform and independent of a nonzero x, so
    /// inverting it in variable time publishes nothing about x (only whether x is zero, which
    /// for a point's Z is whether it is infinity: public), and x^-1 = b (x b)^-1. About 80% of
    /// the constant-time inversion's cycles on Zen 3.
    ///
    /// `blind` must be 32 fresh random bytes used for nothing else. When they are not an
    /// element of [1, p-1] (about 2^-32) the constant-time inversion runs instead: whether
    /// they are depends on the random bytes alone.
    pub(crate) fn invert_blinded(self, blind: &[u8; 32]) -> Self {
        let b = Fe::from_bytes(self.a, blind);
        let b = b.unwrap_or(Fe::zero(self.a));
        if !crate::ct::public_choice(!b.is_zero()) {
            return self.invert();
        }
        let xb = crate::ct::public(self * b);
        b * xb.invert_vartime()
    }

    /// x^-1 (0 for 0) for a public x: the division steps of `invert`, in variable time.
    pub(crate) fn invert_vartime(self) -> Self {
        const MODULUS: crate::sm2::arithmetic::safegcd::Modulus =
            crate::sm2::arithmetic::safegcd::Modulus::new(&P);
        let y = crate::sm2::arithmetic::safegcd::invert_vartime(&self.v, &MODULUS);
        Fe {
            v: self.a.mul(&y, &R3),
            a: self.a,
        }
    }

    /// x^-1 = x^(p-2) (0 for 0): a fixed addition chain, 256 squarings and 15 multiplications.
    /// p - 2 is, from the top: 31 ones, a zero, 128 ones, 32 zeros, 32 ones, 30 ones, 0, 1.
    /// The tests' reference for `invert`.
    #[cfg(test)]
    pub(crate) fn invert_fermat(self) -> Self {
        let c = self.chain();
        let mut r = c.e31.square();
        for _ in 0..4 {
            r = r.sqn(32).mul(c.e32);
        }
        r = r.sqn(32);
        r = r.sqn(32).mul(c.e32);
        r = r.sqn(30).mul(c.e30);
        r.sqn(2).mul(c.x)
    }

    /// A square root if one exists: x^((p+1)/4) (p = 3 mod 4), checked by squaring.
    /// (p+1)/4 is, from the top: 31 ones, a zero, 128 ones, 31 zeros, a one, 62 zeros.
    pub(crate) fn sqrt(self) -> CtOption<Self> {
        let c = self.chain();
        let mut r = c.e31.square();
        for _ in 0..4 {
            r = r.sqn(32).mul(c.e32);
        }
        r = r.sqn(32).mul(c.x).sqn(62);
        CtOption::new(r, r.square().ct_eq(&self))
    }

    /// Whether the canonical value is odd.
    pub(crate) fn is_odd(&self) -> Choice {
        Choice::from((self.to_canonical()[0] & 1) as u8)
    }
}

struct Chain<A: Arith> {
    x: Fe<A>,
    #[cfg_attr(not(test), allow(dead_code))]
    e30: Fe<A>,
    e31: Fe<A>,
    e32: Fe<A>,
}

impl<A: Arith> ConstantTimeEq for Fe<A> {
    fn ct_eq(&self, o: &Self) -> Choice {
        self.v.ct_eq(&o.v)
    }
}

impl<A: Arith> ConditionallySelectable for Fe<A> {
    #[inline(always)]
    fn conditional_select(x: &Self, y: &Self, c: Choice) -> Self {
        Fe {
            v: core::array::from_fn(|i| u64::conditional_select(&x.v[i], &y.v[i], c)),
            a: x.a,
        }
    }
}

impl<A: Arith> core::ops::Add for Fe<A> {
    type Output = Self;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Fe::add(self, o)
    }
}

impl<A: Arith> core::ops::Sub for Fe<A> {
    type Output = Self;
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        Fe::sub(self, o)
    }
}

impl<A: Arith> core::ops::Mul for Fe<A> {
    type Output = Self;
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        Fe::mul(self, o)
    }
}

impl<A: Arith> core::ops::Neg for Fe<A> {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        Fe::neg(self)
    }
}
