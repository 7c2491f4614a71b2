//! Portable Montgomery multiplication and squaring mod p with `u128` products.
//!
//! Reduction: for each low limb m, t + m p = t - m + m (2^256 - 2^224 - 2^96 + 2^64): the `- m`
//! clears the limb and the rest is shifts and additions, no multiplication (see [`step`]).

use super::limbs::{P, adc, sbb, sub_if_ge};

/// The 512-bit product.
#[inline(always)]
pub(crate) fn mul_wide(a: &[u64; 4], b: &[u64; 4]) -> [u64; 8] {
    let mut t = [0u64; 8];
    for i in 0..4 {
        let mut c = 0u64;
        for j in 0..4 {
            let x = u128::from(a[i]) * u128::from(b[j]) + u128::from(t[i + j]) + u128::from(c);
            t[i + j] = x as u64;
            c = (x >> 64) as u64;
        }
        t[i + 4] = c;
    }
    t
}

/// The 512-bit square: cross products once, doubled, plus the diagonal.
#[inline(always)]
pub(crate) fn sqr_wide(a: &[u64; 4]) -> [u64; 8] {
    let mut t = [0u64; 8];
    for i in 0..3 {
        let mut c = 0u64;
        for j in i + 1..4 {
            let x = u128::from(a[i]) * u128::from(a[j]) + u128::from(t[i + j]) + u128::from(c);
            t[i + j] = x as u64;
            c = (x >> 64) as u64;
        }
        t[i + 4] = c;
    }
    let mut c = 0u64;
    for limb in t.iter_mut() {
        let top = *limb >> 63;
        *limb = (*limb << 1) | c;
        c = top;
    }
    let mut carry = 0u64;
    for i in 0..4 {
        let d = u128::from(a[i]) * u128::from(a[i]);
        let (lo, c1) = adc(t[2 * i], d as u64, carry);
        let (hi, c2) = adc(t[2 * i + 1], (d >> 64) as u64, c1);
        t[2 * i] = lo;
        t[2 * i + 1] = hi;
        carry = c2;
    }
    t
}

/// One reduction step on the 4-limb window [x0, x1, x2, x3] with m = x0:
/// (X + m p) / 2^64 = [x1, x2, x3, 0] + m (2^192 - 2^160 - 2^32 + 1), i.e. subtract
/// [lo, hi, lo, hi] (lo, hi the halves of m 2^32) from [x1, x2, x3, m], then add m at the bottom.
/// The window stays below 2^256, so nothing carries out.
#[inline(always)]
fn step(x: [u64; 4]) -> [u64; 4] {
    let m = x[0];
    let (lo, hi) = (m << 32, m >> 32);
    let (y0, b) = sbb(x[1], lo, 0);
    let (y1, b) = sbb(x[2], hi, b);
    let (y2, b) = sbb(x[3], lo, b);
    let (y3, _) = sbb(m, hi, b);
    let (y0, c) = adc(y0, m, 0);
    let (y1, c) = adc(y1, 0, c);
    let (y2, c) = adc(y2, 0, c);
    let (y3, _) = adc(y3, 0, c);
    [y0, y1, y2, y3]
}

/// Montgomery reduction of a 512-bit value below p 2^256: t R^-1 mod p, fully reduced. Four
/// steps on the low half, then the high half added once (Montgomery keeps the sum below 2p).
#[inline(always)]
pub(crate) fn reduce(t: [u64; 8]) -> [u64; 4] {
    let x = step(step(step(step([t[0], t[1], t[2], t[3]]))));
    let (r0, c) = adc(x[0], t[4], 0);
    let (r1, c) = adc(x[1], t[5], c);
    let (r2, c) = adc(x[2], t[6], c);
    let (r3, c) = adc(x[3], t[7], c);
    sub_if_ge([r0, r1, r2, r3], c, &P)
}

#[inline(always)]
pub(crate) fn mont_mul(a: &[u64; 4], b: &[u64; 4]) -> [u64; 4] {
    reduce(mul_wide(a, b))
}

#[inline(always)]
pub(crate) fn mont_sqr(a: &[u64; 4]) -> [u64; 4] {
    reduce(sqr_wide(a))
}
