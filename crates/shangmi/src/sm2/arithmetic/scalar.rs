//! Arithmetic modulo n, the order of the SM2 base point, in Montgomery form (portable: a
//! signature needs only a handful of these operations).

use subtle::{Choice, ConditionallySelectable, ConstantTimeEq, CtOption};
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::sm2::arithmetic::field::{
    adc, add_mod, limbs_from_be, limbs_to_be, lt, soft, sub_if_ge, sub_mod,
};

/// n, little-endian limbs.
pub(crate) const N: [u64; 4] = [
    0x53bb_f409_39d5_4123,
    0x7203_df6b_21c6_052b,
    0xffff_ffff_ffff_ffff,
    0xffff_fffe_ffff_ffff,
];
/// -n^-1 mod 2^64.
const N0: u64 = 0x327f_9e88_7235_0975;
/// R^2 mod n.
const R2: [u64; 4] = [
    0x9011_92af_7c11_4f20,
    0x3464_504a_de6f_a2fa,
    0x620f_c84c_3aff_e0d4,
    0x1eb5_e412_a22b_3d3b,
];
/// R^3 mod n, to bring an inverse of a Montgomery-form value back into Montgomery form.
const R3: [u64; 4] = [
    0x6ff8_74c7_0eaa_0b85,
    0x87d0_c315_aabe_8d32,
    0x4c4f_bbb3_9718_5afc,
    0xc813_249c_d574_ea14,
];
/// n - 2, the exponent of the reference inversion.
#[cfg(test)]
const N_MINUS_2: [u64; 4] = [
    0x53bb_f409_39d5_4121,
    0x7203_df6b_21c6_052b,
    0xffff_ffff_ffff_ffff,
    0xffff_fffe_ffff_ffff,
];
/// R mod n.
const ONE: [u64; 4] = [
    0xac44_0bf6_c62a_bedd,
    0x8dfc_2094_de39_fad4,
    0x0000_0000_0000_0000,
    0x0000_0001_0000_0000,
];

/// An integer mod n in Montgomery form: the value arithmetic works on, `Copy` so that
/// formulas read as formulas. A `Scalar` is not wiped: anything secret that outlives an
/// expression (a private key, a nonce, an ephemeral key, (1 + d)^-1, t in key exchange) is
/// held in a [`SecretScalar`]. Stack temporaries of a computation are not wiped by any type;
/// see SECURITY.md.
#[derive(Clone, Copy)]
pub(crate) struct Scalar(pub(crate) [u64; 4]);

/// A secret integer mod n: not `Copy`, not `Debug`, wiped when dropped. Arithmetic reads it
/// through `Deref` as a [`Scalar`].
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub(crate) struct SecretScalar(Scalar);

/// A public integer mod n: a signature's s and t, a peer's x̄. The variable-time
/// multiplications take only this type, so a secret cannot reach them without a call that
/// says it is public.
#[derive(Clone, Copy)]
pub(crate) struct PublicScalar(Scalar);

impl PublicScalar {
    pub(crate) const ZERO: PublicScalar = PublicScalar(Scalar::ZERO);

    /// Declares `s` public: only for values anyone may know.
    pub(crate) fn declassify(s: Scalar) -> Self {
        PublicScalar(s)
    }

    /// Canonical limbs, for recoding into digits (which then drive branches and addresses).
    pub(crate) fn to_canonical(self) -> [u64; 4] {
        self.0.to_canonical()
    }
}

impl SecretScalar {
    /// Takes ownership of `s` (the caller's copy, if it is a named variable, is the caller's
    /// to wipe).
    pub(crate) fn new(s: Scalar) -> Self {
        SecretScalar(s)
    }
}

impl core::ops::Deref for SecretScalar {
    type Target = Scalar;

    fn deref(&self) -> &Scalar {
        &self.0
    }
}

fn reduce(t: [u64; 8]) -> [u64; 4] {
    let mut t = [t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], 0];
    for i in 0..4 {
        let m = t[i].wrapping_mul(N0);
        let mut c = 0u64;
        for j in 0..4 {
            let x = u128::from(m) * u128::from(N[j]) + u128::from(t[i + j]) + u128::from(c);
            t[i + j] = x as u64;
            c = (x >> 64) as u64;
        }
        for limb in t.iter_mut().skip(i + 4) {
            (*limb, c) = adc(*limb, c, 0);
        }
    }
    sub_if_ge([t[4], t[5], t[6], t[7]], t[8], &N)
}

impl Scalar {
    pub(crate) const ZERO: Scalar = Scalar([0; 4]);
    pub(crate) const ONE: Scalar = Scalar(ONE);

    fn mont(v: &[u64; 4]) -> Self {
        Scalar(reduce(soft::mul_wide(v, &R2)))
    }

    /// From 32 big-endian bytes; `None` when `>= n`.
    pub(crate) fn from_bytes(b: &[u8; 32]) -> CtOption<Self> {
        let l = limbs_from_be(b);
        CtOption::new(Self::mont(&l), lt(&l, &N))
    }

    /// From 32 big-endian bytes reduced mod n (for hash outputs: any 256-bit value is < 2n).
    pub(crate) fn from_bytes_reduced(b: &[u8; 32]) -> Self {
        let l = sub_if_ge(limbs_from_be(b), 0, &N);
        Self::mont(&l)
    }

    /// From canonical limbs below n: the lane tests name scalars by their values (`Scalar(l)`
    /// would take l as the Montgomery form).
    #[cfg(all(test, target_arch = "x86_64"))]
    pub(crate) fn from_canonical(l: [u64; 4]) -> Self {
        Self::mont(&l)
    }

    /// Canonical limbs.
    pub(crate) fn to_canonical(self) -> [u64; 4] {
        reduce(soft::mul_wide(&self.0, &[1, 0, 0, 0]))
    }

    /// 32 big-endian bytes.
    pub(crate) fn to_bytes(self) -> [u8; 32] {
        limbs_to_be(&self.to_canonical())
    }

    pub(crate) fn add(&self, o: &Self) -> Self {
        Scalar(add_mod(&self.0, &o.0, &N))
    }

    pub(crate) fn sub(&self, o: &Self) -> Self {
        Scalar(sub_mod(&self.0, &o.0, &N))
    }

    pub(crate) fn mul(&self, o: &Self) -> Self {
        Scalar(reduce(soft::mul_wide(&self.0, &o.0)))
    }

    pub(crate) fn is_zero(&self) -> Choice {
        self.0.ct_eq(&[0; 4])
    }

    /// x^-1 (0 for 0) in constant time, by division steps on the stored x R.
    pub(crate) fn invert(&self) -> Self {
        const MODULUS: crate::sm2::arithmetic::safegcd::Modulus =
            crate::sm2::arithmetic::safegcd::Modulus::new(&N);
        let mut y = crate::sm2::arithmetic::safegcd::invert(&self.0, &MODULUS);
        let r = Scalar(reduce(soft::mul_wide(&y, &R3)));
        y.zeroize();
        r
    }

    /// x^-1 = x^(n-2) (0 for 0), 4-bit fixed windows over the public exponent: the tests'
    /// reference for `invert`.
    #[cfg(test)]
    pub(crate) fn invert_fermat(&self) -> Self {
        let mut table = [Scalar::ONE; 16];
        for i in 1..16 {
            table[i] = table[i - 1].mul(self);
        }
        let e = limbs_to_be(&N_MINUS_2);
        let mut r = Scalar::ONE;
        for byte in e {
            for nibble in [byte >> 4, byte & 15] {
                for _ in 0..4 {
                    r = r.mul(&r);
                }
                // The exponent is public: indexing by its digits leaks nothing.
                r = r.mul(&table[usize::from(nibble)]);
            }
        }
        table.zeroize();
        r
    }
}

impl ConstantTimeEq for Scalar {
    fn ct_eq(&self, o: &Self) -> Choice {
        self.0.ct_eq(&o.0)
    }
}

impl ConditionallySelectable for Scalar {
    fn conditional_select(x: &Self, y: &Self, c: Choice) -> Self {
        Scalar(core::array::from_fn(|i| {
            u64::conditional_select(&x.0[i], &y.0[i], c)
        }))
    }
}

impl Zeroize for Scalar {
    fn zeroize(&mut self) {
        self.0.zeroize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Resolves only for types that are not `Copy`: with a `Copy` type both impls apply and
    /// the call below is ambiguous, so the crate's tests stop compiling.
    trait AmbiguousIfCopy<A> {
        fn check() {}
    }
    impl<T: ?Sized> AmbiguousIfCopy<()> for T {}
    impl<T: Copy> AmbiguousIfCopy<u8> for T {}

    fn wiped_on_drop<T: ZeroizeOnDrop>() {}

    #[test]
    fn secret_scalars_are_not_copied_and_are_wiped() {
        <SecretScalar as AmbiguousIfCopy<_>>::check();
        <crate::sm2::SigningKey as AmbiguousIfCopy<_>>::check();
        <crate::sm2::EphemeralSecret as AmbiguousIfCopy<_>>::check();
        wiped_on_drop::<SecretScalar>();
        let mut s = SecretScalar::new(Scalar::from_bytes_reduced(&[0x5a; 32]));
        assert_ne!(s.0.0, [0; 4]);
        s.zeroize();
        assert_eq!(s.0.0, [0; 4]);
    }
}
