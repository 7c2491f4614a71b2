//! Portable constant-time GHASH multiplication.
//!
//! A carry-less product is computed with integer multiplications on operands whose bits are
//! spread four apart: a 32 x 32-bit product of such operands sums at most eight terms in any
//! bit position, so the sum never carries into the next position of the same class, and the
//! parity in each position is the carry-less result. Integer multiplication takes the same time
//! for every operand on the CPUs this code targets, and there is no table.

const M0: u64 = 0x1111_1111_1111_1111;
const M1: u64 = M0 << 1;
const M2: u64 = M0 << 2;
const M3: u64 = M0 << 3;

/// Carry-less 32 x 32 -> 64.
#[inline(always)]
fn clmul32(x: u32, y: u32) -> u64 {
    let (x, y) = (u64::from(x), u64::from(y));
    let (x0, x1, x2, x3) = (x & M0, x & M1, x & M2, x & M3);
    let (y0, y1, y2, y3) = (y & M0, y & M1, y & M2, y & M3);
    let z0 = (x0 * y0) ^ (x1 * y3) ^ (x2 * y2) ^ (x3 * y1);
    let z1 = (x0 * y1) ^ (x1 * y0) ^ (x2 * y3) ^ (x3 * y2);
    let z2 = (x0 * y2) ^ (x1 * y1) ^ (x2 * y0) ^ (x3 * y3);
    let z3 = (x0 * y3) ^ (x1 * y2) ^ (x2 * y1) ^ (x3 * y0);
    (z0 & M0) | (z1 & M1) | (z2 & M2) | (z3 & M3)
}

/// Carry-less 64 x 64 -> 128, Karatsuba over 32-bit halves.
#[inline(always)]
fn clmul64(x: u64, y: u64) -> u128 {
    let (x0, x1, y0, y1) = (x as u32, (x >> 32) as u32, y as u32, (y >> 32) as u32);
    let lo = clmul32(x0, y0);
    let hi = clmul32(x1, y1);
    let mid = clmul32(x0 ^ x1, y0 ^ y1) ^ lo ^ hi;
    u128::from(lo) ^ (u128::from(mid) << 32) ^ (u128::from(hi) << 64)
}

/// Carry-less 128 x 128 -> 256, as (low, high).
#[inline(always)]
fn clmul128(x: u128, y: u128) -> (u128, u128) {
    let (x0, x1, y0, y1) = (x as u64, (x >> 64) as u64, y as u64, (y >> 64) as u64);
    let lo = clmul64(x0, y0);
    let hi = clmul64(x1, y1);
    let mid = clmul64(x0 ^ x1, y0 ^ y1) ^ lo ^ hi;
    (lo ^ (mid << 64), hi ^ (mid >> 64))
}

/// The reduction for `hkey`-form products (see `ghash.rs`).
#[inline(always)]
pub(crate) fn reduce(lo: u128, hi: u128) -> u128 {
    const Q: u64 = 0xc200_0000_0000_0000;
    let swap = |v: u128| v.rotate_left(64);
    let t = clmul64(lo as u64, Q);
    let lo = swap(lo) ^ t;
    let t = clmul64(lo as u64, Q);
    swap(lo) ^ t ^ hi
}

/// `x * H` for `hkey = H x^-1`, both big-endian integers of blocks.
#[inline]
pub(crate) fn mul(x: u128, hkey: u128) -> u128 {
    let (lo, hi) = clmul128(x, hkey);
    reduce(lo, hi)
}
