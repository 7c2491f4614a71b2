//! The field of SM2 in AVX512-IFMA lanes: eight elements at once, one per 64-bit lane.
//!
//! Field elements are 5 limbs of 52 bits (one ZMM register per limb, lane l holding the l-th
//! element) in Montgomery form with R = 2^260. `VPMADD52LUQ`/`VPMADD52HUQ` give the low and
//! high 52 bits of a 52 x 52-bit product added to a 64-bit accumulator, so a schoolbook
//! product needs no carry handling until the end. Since p = -1 mod 2^52, the Montgomery factor
//! of each reduction step is the limb itself, and three of p's five limbs are 2^52 - 1, whose
//! multiples are one subtraction and one addition: a reduction step is four multiply-adds.
//!
//! Values are kept below 2p rather than fully reduced: a Montgomery product of inputs below 4p
//! is below 2p because 4p < R, and sums and differences fold their bits above 2^256 back in
//! (`fold`). Every operation is the same instructions for every value: the comb of secret
//! nonces runs on it.
#![allow(unsafe_code)]
// The unit tests and the constant-time check run this on stand-ins for the instructions (see
// `x86_ifma_arch`), as plain functions whose calls need no `unsafe` (and whose closures clippy would shorten).
#![cfg_attr(
    any(test, shangmi_ctgrind),
    allow(unused_unsafe, clippy::redundant_closure)
)]

use super::x86_ifma_arch::*;

use zeroize::Zeroize;

use crate::sm2::arithmetic::field::{P, add_mod};

const MASK52: u64 = (1 << 52) - 1;
/// p in radix 2^52.
const P52: [u64; 5] = [
    0xf_ffff_ffff_ffff,
    0xf_f000_0000_0fff,
    0xf_ffff_ffff_ffff,
    0xf_ffff_ffff_ffff,
    0x0_ffff_fffe_ffff,
];
/// 2p in radix 2^52 (the top limb holds the rest).
const P52X2: [u64; 5] = [
    0xf_ffff_ffff_fffe,
    0xf_e000_0000_1fff,
    0xf_ffff_ffff_ffff,
    0xf_ffff_ffff_ffff,
    0x1_ffff_fffd_ffff,
];
/// 1 in this Montgomery form (2^260 mod p).
pub(super) const ONE52: [u64; 5] = [0x10, 0xffff_ffff_0000, 0, 0, 0x10_0000];
/// 2^256 mod p: a Montgomery product with it turns x 2^260 into x 2^256, the form of `field`.
const TO_R256: [u64; 5] = [0x1, 0xfff_ffff_f000, 0, 0, 0x1_0000];

fn to_radix52(v: &[u64; 4]) -> [u64; 5] {
    [
        v[0] & MASK52,
        ((v[0] >> 52) | (v[1] << 12)) & MASK52,
        ((v[1] >> 40) | (v[2] << 24)) & MASK52,
        ((v[2] >> 28) | (v[3] << 36)) & MASK52,
        v[3] >> 16,
    ]
}

/// Limbs below 2^52 and a value below 2^256.
fn from_radix52(l: &[u64; 5]) -> [u64; 4] {
    [
        l[0] | (l[1] << 52),
        (l[1] >> 12) | (l[2] << 40),
        (l[2] >> 24) | (l[3] << 28),
        (l[3] >> 36) | (l[4] << 16),
    ]
}

pub(super) type V = __m512i;

/// A field element per lane, radix 2^52.
#[derive(Clone, Copy)]
pub(super) struct F(pub(super) [V; 5]);

#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
pub(super) fn splat(c: &[u64; 5]) -> F {
    F(c.map(|v| _mm512_set1_epi64(v as i64)))
}

/// Carries every limb into the next (arithmetic shifts: limbs may be negative), leaving limbs
/// 0..4 in [0, 2^52) and the rest, with the sign, in limb 4.
#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
fn normalize(mut x: [V; 5]) -> [V; 5] {
    let mask = _mm512_set1_epi64(MASK52 as i64);
    for k in 0..4 {
        x[k + 1] = _mm512_add_epi64(x[k + 1], _mm512_srai_epi64::<52>(x[k]));
        x[k] = _mm512_and_si512(x[k], mask);
    }
    x
}

/// x - m where that is not negative, else x, per lane (x normalized, m a constant).
#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
fn sub_if_ge(x: [V; 5], m: &[u64; 5]) -> F {
    let d = normalize(core::array::from_fn(|k| {
        _mm512_sub_epi64(x[k], _mm512_set1_epi64(m[k] as i64))
    }));
    let ge = _mm512_cmpge_epi64_mask(d[4], _mm512_setzero_si512());
    F(core::array::from_fn(|k| {
        _mm512_mask_blend_epi64(ge, x[k], d[k])
    }))
}

/// A normalized value below 2p congruent to v, for limbs summing to v with 0 < v < 2^261 and
/// limbs 0..3 below 2^56 in size (sums, differences plus 2p, shifts by up to 3 bits of values
/// below 2p). With h = floor(limb 4 / 2^48), in [-1, 32], v = h 2^256 + l with l in
/// (-2^212, 2^256 + 2^212), and 2^256 = c = 2^224 + 2^96 - 2^64 + 1 mod p, so v = l + h c:
/// below 2^256 + 2^230 < 2p, and positive (v itself for h = 0; for h = -1, v < 2^212 and the
/// sum is v + p). No comparison: a shift, a mask, four shifted additions and one carry pass.
#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
fn fold(mut x: [V; 5]) -> F {
    let h = _mm512_srai_epi64::<48>(x[4]);
    x[4] = _mm512_and_si512(x[4], _mm512_set1_epi64((1 << 48) - 1));
    x[4] = _mm512_add_epi64(x[4], _mm512_slli_epi64::<16>(h));
    x[1] = _mm512_add_epi64(x[1], _mm512_slli_epi64::<44>(h));
    x[1] = _mm512_sub_epi64(x[1], _mm512_slli_epi64::<12>(h));
    x[0] = _mm512_add_epi64(x[0], h);
    F(normalize(x))
}

#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
pub(super) fn sub(a: &F, b: &F) -> F {
    fold(core::array::from_fn(|k| {
        let t = _mm512_sub_epi64(a.0[k], b.0[k]);
        _mm512_add_epi64(t, _mm512_set1_epi64(P52X2[k] as i64))
    }))
}

/// 3a for a below 2p, below 2p.
#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
pub(super) fn times3(a: &F) -> F {
    fold(a.0.map(|l| _mm512_add_epi64(l, _mm512_slli_epi64::<1>(l))))
}

/// 2^S a for a below 2p (S <= 3: below 16p < 2^261), below 2p.
#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
pub(super) fn shl<const S: u32>(a: &F) -> F {
    fold(a.0.map(|l| _mm512_slli_epi64::<S>(l)))
}

/// a b 2^-260 mod p, below 2p, for a, b below 4p.
#[inline]
#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
pub(super) fn mul(a: &F, b: &F) -> F {
    let z = _mm512_setzero_si512();
    let mut t = [z; 10];
    for i in 0..5 {
        for j in 0..5 {
            t[i + j] = _mm512_madd52lo_epu64(t[i + j], a.0[i], b.0[j]);
            t[i + j + 1] = _mm512_madd52hi_epu64(t[i + j + 1], a.0[i], b.0[j]);
        }
    }
    redc(t)
}

/// a^2 2^-260 mod p, below 2p, for a below 4p: each cross product once, doubled by a shift
/// of the partial sums (a limb doubled first would lose its top bit to the 52-bit inputs).
#[inline]
#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
pub(super) fn sqr(a: &F) -> F {
    let z = _mm512_setzero_si512();
    let mut t = [z; 10];
    for i in 0..5 {
        for j in i + 1..5 {
            t[i + j] = _mm512_madd52lo_epu64(t[i + j], a.0[i], a.0[j]);
            t[i + j + 1] = _mm512_madd52hi_epu64(t[i + j + 1], a.0[i], a.0[j]);
        }
    }
    let mut t = t.map(|v| _mm512_slli_epi64::<1>(v));
    for i in 0..5 {
        t[2 * i] = _mm512_madd52lo_epu64(t[2 * i], a.0[i], a.0[i]);
        t[2 * i + 1] = _mm512_madd52hi_epu64(t[2 * i + 1], a.0[i], a.0[i]);
    }
    redc(t)
}

/// Montgomery reduction of a product's ten partial sums: t 2^-260 mod p, below 2p.
#[inline]
#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
fn redc(mut t: [V; 10]) -> F {
    let mask = _mm512_set1_epi64(MASK52 as i64);
    let p1 = _mm512_set1_epi64(P52[1] as i64);
    let p4 = _mm512_set1_epi64(P52[4] as i64);
    for i in 0..5 {
        // Add m p 2^(52 i) with m = t_i mod 2^52, which clears limb i. With p's limbs 0, 2, 3
        // equal to 2^52 - 1: limb i loses m (exactly its low bits, leaving the carry), limb
        // i + 1 gains m, limb i + 2 loses m and limb i + 4 gains m (limb 3's -m and limb 2's +m
        // cancel); limbs 1 and 4 of p are true products.
        let m = _mm512_and_si512(t[i], mask);
        let carry = _mm512_srai_epi64::<52>(t[i]);
        t[i + 1] = _mm512_add_epi64(t[i + 1], _mm512_add_epi64(m, carry));
        t[i + 1] = _mm512_madd52lo_epu64(t[i + 1], m, p1);
        t[i + 2] = _mm512_madd52hi_epu64(t[i + 2], m, p1);
        t[i + 2] = _mm512_sub_epi64(t[i + 2], m);
        t[i + 4] = _mm512_add_epi64(t[i + 4], m);
        t[i + 4] = _mm512_madd52lo_epu64(t[i + 4], m, p4);
        t[i + 5] = _mm512_madd52hi_epu64(t[i + 5], m, p4);
    }
    F(normalize([t[5], t[6], t[7], t[8], t[9]]))
}

/// p - y for y below p (the negation of a table coordinate).
#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
pub(super) fn neg_canonical(y: &F) -> F {
    F(normalize(core::array::from_fn(|k| {
        _mm512_sub_epi64(_mm512_set1_epi64(P52[k] as i64), y.0[k])
    })))
}

/// The normalized value below 2p, reduced below p.
#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
fn canonical(x: &F) -> F {
    sub_if_ge(x.0, &P52)
}

#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
pub(super) fn blend(k: __mmask8, a: &F, b: &F) -> F {
    F(core::array::from_fn(|c| {
        _mm512_mask_blend_epi64(k, a.0[c], b.0[c])
    }))
}

/// x 2^256 (the Montgomery form of `field`, below p) as x 2^260 in radix 2^52.
pub(super) fn from_mont256(v: &[u64; 4]) -> [u64; 5] {
    let mut v = *v;
    for _ in 0..4 {
        v = add_mod(&v, &v, &P);
    }
    to_radix52(&v)
}

/// Lane l holds `limbs[l]`.
#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
pub(super) fn load(limbs: &[[u64; 5]; 8]) -> F {
    F(core::array::from_fn(|k| {
        let column: [u64; 8] = core::array::from_fn(|l| limbs[l][k]);
        // SAFETY: a 64-byte load of an 8-lane array.
        unsafe { _mm512_loadu_si512(column.as_ptr().cast()) }
    }))
}

/// Per lane, the value in the Montgomery form of `field` (x 2^256), fully reduced.
#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
pub(super) fn store_mont256(v: &F) -> [[u64; 4]; 8] {
    let v = canonical(&mul(v, &splat(&TO_R256)));
    let mut limbs = [[0u64; 8]; 5];
    for (k, l) in limbs.iter_mut().enumerate() {
        // SAFETY: a 64-byte store into an 8-lane array.
        unsafe { _mm512_storeu_si512(l.as_mut_ptr().cast(), v.0[k]) };
    }
    let out = core::array::from_fn(|lane| from_radix52(&core::array::from_fn(|k| limbs[k][lane])));
    limbs.zeroize();
    out
}

/// a + b below 4p with normalized limbs: fit for a product's input, not for another sum.
#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
pub(super) fn add_lazy(a: &F, b: &F) -> F {
    F(normalize(core::array::from_fn(|k| {
        _mm512_add_epi64(a.0[k], b.0[k])
    })))
}

/// a - b + 2p, below 4p with normalized limbs: as [`add_lazy`].
#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
pub(super) fn sub_lazy(a: &F, b: &F) -> F {
    F(normalize(core::array::from_fn(|k| {
        let t = _mm512_sub_epi64(a.0[k], b.0[k]);
        _mm512_add_epi64(t, _mm512_set1_epi64(P52X2[k] as i64))
    })))
}

/// The lanes whose value (normalized, below 2p) is 0 mod p.
#[cfg_attr(
    not(any(test, shangmi_ctgrind)),
    target_feature(enable = "avx512f,avx512ifma")
)]
pub(super) fn is_zero(x: &F) -> __mmask8 {
    let c = canonical(x);
    let any =
        c.0.iter()
            .fold(_mm512_setzero_si512(), |acc, l| _mm512_or_si512(acc, *l));
    _mm512_cmpeq_epi64_mask(any, _mm512_setzero_si512())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sm2::arithmetic::field::{Fe, Soft};

    #[test]
    fn radix52_round_trips_and_constants_agree() {
        let v = [
            0x0123_4567_89ab_cdef,
            0xfedc_ba98_7654_3210,
            0xdead_beef_0bad_f00d,
            0x7fff_ffff_ffff_fff1,
        ];
        assert_eq!(from_radix52(&to_radix52(&v)), v);
        assert_eq!(to_radix52(&P), P52);
        let mut two_p = [0u64; 5];
        let mut carry = 0;
        for k in 0..5 {
            let s = 2 * P52[k] + carry;
            two_p[k] = if k < 4 { s & MASK52 } else { s };
            carry = s >> 52;
        }
        assert_eq!(two_p, P52X2);
    }

    /// Every lane operation against the portable field, on random values and the edges
    /// (0, 1, p - 1), through the conversions in and out of the lanes.
    #[test]
    fn lanes_match_the_portable_field() {
        let soft = |v: [u64; 4]| Fe::from_canonical(Soft, v);
        let p1 = [P[0] - 1, P[1], P[2], P[3]];
        let mut seed = [1u8; 32];
        for round in 0..64 {
            let mut vals = [[0u64; 4]; 16];
            for (i, v) in vals.iter_mut().enumerate() {
                seed = crate::sm3::hash(&seed);
                let w: [u64; 4] = core::array::from_fn(|k| {
                    u64::from_le_bytes(seed[8 * k..8 * k + 8].try_into().unwrap())
                });
                let w = [w[0], w[1], w[2], w[3] >> 1]; // below p
                *v = match (round + i) % 7 {
                    0 => [0; 4],
                    1 => [1, 0, 0, 0],
                    2 => p1,
                    _ => w,
                };
            }
            if round % 2 == 0 {
                (vals[8], vals[11]) = (vals[0], vals[3]);
            }
            let a: [Fe<Soft>; 8] = core::array::from_fn(|l| soft(vals[l]));
            let b: [Fe<Soft>; 8] = core::array::from_fn(|l| soft(vals[8 + l]));
            // SAFETY: in the unit tests these are plain functions on stand-ins (`x86_ifma_arch`).
            let got = unsafe {
                let la = load(&core::array::from_fn(|l| from_mont256(&a[l].mont_limbs())));
                let lb = load(&core::array::from_fn(|l| from_mont256(&b[l].mont_limbs())));
                [
                    store_mont256(&mul(&la, &lb)),
                    store_mont256(&sqr(&sub_lazy(&la, &lb))),
                    store_mont256(&sub(&la, &lb)),
                    store_mont256(&mul(&add_lazy(&la, &lb), &sub_lazy(&la, &lb))),
                    store_mont256(&neg_canonical(&canonical(&la))),
                    store_mont256(&shl::<3>(&la)),
                    store_mont256(&times3(&lb)),
                    // Products are below 2p, not below p: the operations on such values.
                    {
                        let c = mul(&la, &lb);
                        let d = sub(&shl::<3>(&c), &times3(&c));
                        store_mont256(&sub(&sub(&d, &c), &sqr(&c)))
                    },
                ]
            };
            // SAFETY: as above.
            let zero = unsafe {
                is_zero(&sub(
                    &load(&core::array::from_fn(|l| from_mont256(&a[l].mont_limbs()))),
                    &load(&core::array::from_fn(|l| from_mont256(&b[l].mont_limbs()))),
                ))
            };
            for l in 0..8 {
                let (x, y) = (a[l], b[l]);
                assert_eq!(got[0][l], (x * y).mont_limbs());
                assert_eq!(got[1][l], ((x - y) * (x - y)).mont_limbs());
                assert_eq!(got[2][l], (x - y).mont_limbs());
                assert_eq!(got[3][l], ((x + y) * (x - y)).mont_limbs());
                assert_eq!(got[4][l], (-x).mont_limbs());
                let x8 = x + x + x + x + x + x + x + x;
                assert_eq!(got[5][l], x8.mont_limbs());
                assert_eq!(got[6][l], (y + y + y).mont_limbs());
                let c = x * y;
                let d = (c + c + c + c + c + c + c + c) - (c + c + c);
                assert_eq!(got[7][l], ((d - c) - c * c).mont_limbs());
                assert_eq!((zero >> l) & 1 == 1, vals[l] == vals[8 + l]);
            }
        }
    }
}
