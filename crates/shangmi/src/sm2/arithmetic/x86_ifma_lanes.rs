//! Eight fixed-base multiplications at once with AVX512-IFMA: one scalar per 64-bit lane.
//!
//! Field elements are 5 limbs of 52 bits (one ZMM register per limb, lane l holding the l-th
//! element) in Montgomery form with R = 2^260. `VPMADD52LUQ`/`VPMADD52HUQ` give the low and
//! high 52 bits of a 52 x 52-bit product added to a 64-bit accumulator, so a schoolbook
//! product needs no carry handling until the end. Since p = -1 mod 2^52, the Montgomery factor
//! of each reduction step is the limb itself, and three of p's five limbs are 2^52 - 1, whose
//! multiples are one subtraction and one addition: a reduction step is four multiply-adds.
//!
//! Values are kept below 2p rather than fully reduced: a Montgomery product of inputs below 4p
//! is below 2p because 4p < R, and additions and subtractions subtract 2p under a mask.
//!
//! The comb is the one of `mul.rs` (37 windows of signed 7-bit digits, one mixed addition per
//! window, no doubling), read from a limb-major copy of its table: each lane's entry is taken
//! with `VPERMT2Q` register permutes indexed by that lane's digit, after loading the whole
//! window, so neither addresses nor instructions depend on the digits. The exceptional cases
//! of the mixed addition are those `mul::fixed_base` rules out for scalars in [1, n-1], and the
//! accumulator at infinity, which is a per-lane mask. Only the digits are secret; every
//! decision on them is a mask.
#![allow(unsafe_code)]

use core::arch::x86_64::*;
use std::sync::OnceLock;

use zeroize::Zeroize;

use crate::cpu::Avx512Ifma;
use crate::sm2::field::{P, add_mod};
use crate::sm2::mul::{BASE_TABLE, booth};

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
const ONE52: [u64; 5] = [0x10, 0xffff_ffff_0000, 0, 0, 0x10_0000];
/// 2^256 mod p: a Montgomery product with it turns x 2^260 into x 2^256, the form of `field`.
const TO_R256: [u64; 5] = [0x1, 0xfff_ffff_f000, 0, 0, 0x1_0000];

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
                    // x 2^256 -> x 2^260: four doublings mod p.
                    let mut v = [v[0], v[1], v[2], v[3]];
                    for _ in 0..4 {
                        v = add_mod(&v, &v, &P);
                    }
                    for (c, limb) in to_radix52(&v).into_iter().enumerate() {
                        t[w][5 * half + c][j] = limb;
                    }
                }
            }
        }
        t
    })
}

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

/// k_l G for the eight scalars (canonical limbs, each in [1, n-1]; 0 gives infinity): Jacobian
/// (X, Y, Z) per lane in the Montgomery form of `field`, each coordinate fully reduced.
pub(crate) fn fixed_base_x8(_token: Avx512Ifma, ks: &[[u64; 4]; 8]) -> [[[u64; 4]; 3]; 8] {
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
    let mut out = [[[0u64; 4]; 3]; 8];
    // SAFETY: the token proves AVX-512F and AVX512-IFMA, the target features of `comb_x8`.
    unsafe { comb_x8(table, &mags, &negs, &mut out) };
    mags.zeroize();
    negs.zeroize();
    out
}

type V = __m512i;

/// A field element per lane, radix 2^52.
#[derive(Clone, Copy)]
struct F([V; 5]);

#[target_feature(enable = "avx512f,avx512ifma")]
fn splat(c: &[u64; 5]) -> F {
    F(c.map(|v| _mm512_set1_epi64(v as i64)))
}

/// Carries every limb into the next (arithmetic shifts: limbs may be negative), leaving limbs
/// 0..4 in [0, 2^52) and the rest, with the sign, in limb 4.
#[target_feature(enable = "avx512f,avx512ifma")]
fn normalize(mut x: [V; 5]) -> [V; 5] {
    let mask = _mm512_set1_epi64(MASK52 as i64);
    for k in 0..4 {
        x[k + 1] = _mm512_add_epi64(x[k + 1], _mm512_srai_epi64::<52>(x[k]));
        x[k] = _mm512_and_si512(x[k], mask);
    }
    x
}

/// x - m where that is not negative, else x, per lane (x normalized, m a constant).
#[target_feature(enable = "avx512f,avx512ifma")]
fn sub_if_ge(x: [V; 5], m: &[u64; 5]) -> F {
    let d = normalize(core::array::from_fn(|k| {
        _mm512_sub_epi64(x[k], _mm512_set1_epi64(m[k] as i64))
    }));
    let ge = _mm512_cmpge_epi64_mask(d[4], _mm512_setzero_si512());
    F(core::array::from_fn(|k| {
        _mm512_mask_blend_epi64(ge, x[k], d[k])
    }))
}

/// For limbs summing to a value in [0, 4p), the normalized value below 2p.
#[target_feature(enable = "avx512f,avx512ifma")]
fn reduce_2p(x: [V; 5]) -> F {
    sub_if_ge(normalize(x), &P52X2)
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn add(a: &F, b: &F) -> F {
    reduce_2p(core::array::from_fn(|k| _mm512_add_epi64(a.0[k], b.0[k])))
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn sub(a: &F, b: &F) -> F {
    reduce_2p(core::array::from_fn(|k| {
        let t = _mm512_sub_epi64(a.0[k], b.0[k]);
        _mm512_add_epi64(t, _mm512_set1_epi64(P52X2[k] as i64))
    }))
}

/// a b 2^-260 mod p, below 2p, for a, b below 4p.
#[target_feature(enable = "avx512f,avx512ifma")]
fn mul(a: &F, b: &F) -> F {
    let z = _mm512_setzero_si512();
    let mut t = [z; 10];
    for i in 0..5 {
        for j in 0..5 {
            t[i + j] = _mm512_madd52lo_epu64(t[i + j], a.0[i], b.0[j]);
            t[i + j + 1] = _mm512_madd52hi_epu64(t[i + j + 1], a.0[i], b.0[j]);
        }
    }
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
#[target_feature(enable = "avx512f,avx512ifma")]
fn neg_canonical(y: &F) -> F {
    F(normalize(core::array::from_fn(|k| {
        _mm512_sub_epi64(_mm512_set1_epi64(P52[k] as i64), y.0[k])
    })))
}

/// The normalized value below 2p, reduced below p.
#[target_feature(enable = "avx512f,avx512ifma")]
fn canonical(x: &F) -> F {
    sub_if_ge(x.0, &P52)
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn blend(k: __mmask8, a: &F, b: &F) -> F {
    F(core::array::from_fn(|c| {
        _mm512_mask_blend_epi64(k, a.0[c], b.0[c])
    }))
}

/// Per lane, entry `idx` (0..64) of a limb row: four 16-entry permutes, then bits 4 and 5 of
/// the index choose among them.
#[target_feature(enable = "avx512f,avx512ifma")]
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
struct Acc {
    x: F,
    y: F,
    z: F,
    at_infinity: __mmask8,
}

impl Acc {
    #[target_feature(enable = "avx512f,avx512ifma")]
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
    #[target_feature(enable = "avx512f,avx512ifma")]
    fn add_entry(&mut self, x2: &F, y2: &F, negative: __mmask8, zero_digit: __mmask8) {
        let y2 = blend(negative, y2, &neg_canonical(y2));
        let (x1, y1, z1) = (&self.x, &self.y, &self.z);
        let z1z1 = mul(z1, z1);
        let u2 = mul(x2, &z1z1);
        let s2 = mul(&y2, &mul(z1, &z1z1));
        let h = sub(&u2, x1);
        let r = sub(&s2, y1);
        let hh = mul(&h, &h);
        let hhh = mul(&h, &hh);
        let v = mul(x1, &hh);
        let x3 = sub(&sub(&mul(&r, &r), &hhh), &add(&v, &v));
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
    #[target_feature(enable = "avx512f,avx512ifma")]
    fn store(&self, out: &mut [[[u64; 4]; 3]; 8]) {
        let to_r256 = splat(&TO_R256);
        for (c, v) in [self.x, self.y, self.z].iter().enumerate() {
            let v = canonical(&mul(v, &to_r256));
            let mut limbs = [[0u64; 8]; 5];
            for (k, l) in limbs.iter_mut().enumerate() {
                // SAFETY: a 64-byte store into an 8-lane array.
                unsafe { _mm512_storeu_si512(l.as_mut_ptr().cast(), v.0[k]) };
            }
            for (lane, o) in out.iter_mut().enumerate() {
                o[c] = from_radix52(&core::array::from_fn(|k| limbs[k][lane]));
            }
            limbs.zeroize();
        }
    }
}

/// Loads the 8 lanes' digits: (magnitude vector, zero-digit mask, negative mask).
#[target_feature(enable = "avx512f,avx512ifma")]
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

#[target_feature(enable = "avx512f,avx512ifma")]
fn comb_x8(
    table: &Table52,
    mags: &[[u64; 8]; 37],
    negs: &[[u64; 8]; 37],
    out: &mut [[[u64; 4]; 3]; 8],
) {
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
    acc.store(out);
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn lanes_match_the_scalar_comb() {
        use super::super::field::{Fe, Soft};
        use super::super::mul::fixed_base;
        use super::super::point::Jacobian;
        use super::super::scalar::Scalar;
        let Some(t) = crate::cpu::Avx512::get().and_then(|t| t.with_ifma()) else {
            eprintln!("no AVX512-IFMA here: lanes not tested");
            return;
        };
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
