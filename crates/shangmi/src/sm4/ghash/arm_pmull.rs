//! GHASH with PMULL (arm64 with the AES extension): eight blocks per reduction, Karatsuba
//! products; the same algorithm as the PCLMULQDQ backend, lane 0 of a register holding the
//! low 64 bits of the big-endian-integer form. The helpers carry the kernel's features (and
//! are inlined into it), so the intrinsics inside are plain calls.
#![allow(unsafe_code)]

use core::arch::aarch64::*;

use super::Powers8;
use crate::cpu::NeonAes;
use crate::sm4::Block;

/// Absorbs `blocks` into `acc`.
pub(crate) fn update(_token: NeonAes, key: &Powers8, acc: u128, blocks: &[Block]) -> u128 {
    // SAFETY: the token proves NEON and PMULL (the `aes` feature).
    unsafe { update_pmull(&key.powers, acc, blocks) }
}

#[target_feature(enable = "neon,aes")]
#[inline]
fn load_u128(v: &u128) -> uint64x2_t {
    // SAFETY: a 16-byte load from a u128 (little-endian: lane 0 is the low half).
    unsafe { vld1q_u64((v as *const u128).cast()) }
}

#[target_feature(enable = "neon,aes")]
#[inline]
fn store_u128(v: uint64x2_t) -> u128 {
    let mut out = 0u128;
    // SAFETY: a 16-byte store into a u128.
    unsafe { vst1q_u64((&mut out as *mut u128).cast(), v) };
    out
}

/// A block as the big-endian integer: bytes reversed.
#[target_feature(enable = "neon,aes")]
#[inline]
fn load_block(b: &Block, bswap: uint8x16_t) -> uint64x2_t {
    // SAFETY: a 16-byte load from a block.
    vreinterpretq_u64_u8(vqtbl1q_u8(unsafe { vld1q_u8(b.as_ptr()) }, bswap))
}

/// The two 64-bit halves exchanged.
#[target_feature(enable = "neon,aes")]
#[inline]
fn swap(x: uint64x2_t) -> uint64x2_t {
    vextq_u64::<1>(x, x)
}

/// The carry-less product of the low halves of `a` and `b`.
#[target_feature(enable = "neon,aes")]
#[inline]
fn pmull_lo(a: uint64x2_t, b: uint64x2_t) -> uint64x2_t {
    vreinterpretq_u64_p128(vmull_p64(vgetq_lane_u64::<0>(a), vgetq_lane_u64::<0>(b)))
}

/// The carry-less product of the high halves of `a` and `b`.
#[target_feature(enable = "neon,aes")]
#[inline]
fn pmull_hi(a: uint64x2_t, b: uint64x2_t) -> uint64x2_t {
    vreinterpretq_u64_p128(vmull_high_p64(
        vreinterpretq_p64_u64(a),
        vreinterpretq_p64_u64(b),
    ))
}

/// Karatsuba pieces of one product: (low, high, middle) 128-bit parts.
#[target_feature(enable = "neon,aes")]
#[inline]
fn product(x: uint64x2_t, h: uint64x2_t) -> (uint64x2_t, uint64x2_t, uint64x2_t) {
    let xs = veorq_u64(x, swap(x));
    let hs = veorq_u64(h, swap(h));
    (pmull_lo(x, h), pmull_hi(x, h), pmull_lo(xs, hs))
}

/// Combines summed Karatsuba pieces and reduces them.
#[target_feature(enable = "neon,aes")]
#[inline]
fn reduce(lo: uint64x2_t, hi: uint64x2_t, mid: uint64x2_t) -> uint64x2_t {
    let zero = vdupq_n_u64(0);
    let mid = veorq_u64(mid, veorq_u64(lo, hi));
    let lo = veorq_u64(lo, vextq_u64::<1>(zero, mid));
    let hi = veorq_u64(hi, vextq_u64::<1>(mid, zero));
    let q = vdupq_n_u64(0xc200_0000_0000_0000);
    let lo = veorq_u64(swap(lo), pmull_lo(lo, q));
    veorq_u64(veorq_u64(swap(lo), pmull_lo(lo, q)), hi)
}

#[target_feature(enable = "neon,aes")]
fn update_pmull(powers: &[u128; 8], acc: u128, blocks: &[Block]) -> u128 {
    // SAFETY: a 16-byte load from the array.
    let bswap =
        unsafe { vld1q_u8([15u8, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0].as_ptr()) };
    let mut acc = load_u128(&acc);
    let (groups, rest) = blocks.as_chunks::<8>();
    for g in groups {
        let zero = vdupq_n_u64(0);
        let (mut lo, mut hi, mut mid) = (zero, zero, zero);
        for (i, b) in g.iter().enumerate() {
            let mut x = load_block(b, bswap);
            if i == 0 {
                x = veorq_u64(x, acc);
            }
            let (l, h, m) = product(x, load_u128(&powers[7 - i]));
            lo = veorq_u64(lo, l);
            hi = veorq_u64(hi, h);
            mid = veorq_u64(mid, m);
        }
        acc = reduce(lo, hi, mid);
    }
    let h1 = load_u128(&powers[0]);
    for b in rest {
        let (l, h, m) = product(veorq_u64(load_block(b, bswap), acc), h1);
        acc = reduce(l, h, m);
    }
    store_u128(acc)
}
