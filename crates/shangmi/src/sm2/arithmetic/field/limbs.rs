//! Multi-limb helpers shared by the field and scalar code (and by the build script that
//! computes the base-point table, which includes this file): no dependencies, constant time.

/// p, little-endian limbs.
pub(crate) const P: [u64; 4] = [
    0xffff_ffff_ffff_ffff,
    0xffff_ffff_0000_0000,
    0xffff_ffff_ffff_ffff,
    0xffff_fffe_ffff_ffff,
];

/// a + b + c (c is 0 or 1): sum and carry. Written as two overflowing additions, the shape
/// LLVM turns into ADC chains.
#[inline(always)]
pub(crate) fn adc(a: u64, b: u64, c: u64) -> (u64, u64) {
    let (s1, o1) = a.overflowing_add(b);
    let (s2, o2) = s1.overflowing_add(c);
    (s2, u64::from(o1 | o2))
}

/// a - b - borrow (borrow is 0 or 1): difference and borrow, the shape of SBB chains.
#[inline(always)]
pub(crate) fn sbb(a: u64, b: u64, borrow: u64) -> (u64, u64) {
    let (d1, o1) = a.overflowing_sub(b);
    let (d2, o2) = d1.overflowing_sub(borrow);
    (d2, u64::from(o1 | o2))
}

/// `x - m` if `x >= m` (with `top` an extra high bit of x), else `x`; constant time.
#[inline(always)]
pub(crate) fn sub_if_ge(x: [u64; 4], top: u64, m: &[u64; 4]) -> [u64; 4] {
    let mut d = [0u64; 4];
    let mut b = 0;
    for i in 0..4 {
        (d[i], b) = sbb(x[i], m[i], b);
    }
    let (_, b) = sbb(top, 0, b);
    // b = 1: x < m, keep x.
    let keep = crate::ct::mask(b);
    core::array::from_fn(|i| (x[i] & keep) | (d[i] & !keep))
}

/// `a + b mod m` for `a, b < m`.
#[inline(always)]
pub(crate) fn add_mod(a: &[u64; 4], b: &[u64; 4], m: &[u64; 4]) -> [u64; 4] {
    let mut s = [0u64; 4];
    let mut c = 0;
    for i in 0..4 {
        (s[i], c) = adc(a[i], b[i], c);
    }
    sub_if_ge(s, c, m)
}

/// `a - b mod m` for `a, b < m`.
#[inline(always)]
pub(crate) fn sub_mod(a: &[u64; 4], b: &[u64; 4], m: &[u64; 4]) -> [u64; 4] {
    let mut d = [0u64; 4];
    let mut bw = 0;
    for i in 0..4 {
        (d[i], bw) = sbb(a[i], b[i], bw);
    }
    // On borrow add m back.
    let mask = crate::ct::mask(bw);
    let mut c = 0;
    for i in 0..4 {
        (d[i], c) = adc(d[i], m[i] & mask, c);
    }
    d
}

/// Big-endian bytes to limbs.
pub(crate) fn limbs_from_be(b: &[u8; 32]) -> [u64; 4] {
    core::array::from_fn(|i| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[24 - 8 * i..32 - 8 * i]);
        u64::from_be_bytes(w)
    })
}

/// Limbs to big-endian bytes.
pub(crate) fn limbs_to_be(l: &[u64; 4]) -> [u8; 32] {
    let mut out = [0u8; 32];
    for i in 0..4 {
        out[24 - 8 * i..32 - 8 * i].copy_from_slice(&l[i].to_be_bytes());
    }
    out
}
