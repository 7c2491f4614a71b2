//! Scalar multiplication: fixed-base (the generator, from the precomputed table), variable-base
//! in constant time, and the variable-time double multiplication of verification.
//!
//! Fixed base: the scalar k < n is recoded into 37 signed 7-bit digits d_i in [-64, 64]
//! (Booth: d_i = c_i + b_{7i-1} - 128 b_{7i+6}, c_i the 7-bit window), and
//! k G = sum of d_i 2^(7i) G, one mixed addition per window and no doubling. Each table entry
//! is read by scanning all 64 entries of its window with masks, so the address pattern never
//! depends on the digit. The accumulator after window i is a_i G with |a_i| < 2^(7i-1), while
//! the point added is d_i 2^(7i) G with |d_i| >= 1; for k in [1, n-1] they are never equal or
//! opposite (worked through in `fixed_base`), so the mixed addition only has to handle the
//! accumulator being at infinity (all lower digits zero), which it does by selection.

use subtle::Choice;

use crate::sm2::arithmetic::field::{Arith, Fe};
use crate::sm2::arithmetic::point::Affine;

// Natively the generator's tables are built at compile time (build.rs) and live in rodata. In
// WebAssembly their 180 KB would be most of what a page downloads, so they are built on first
// use there instead (see `tables`), from the same arithmetic the library runs.
#[cfg(not(target_family = "wasm"))]
include!(concat!(env!("OUT_DIR"), "/sm2_table.rs"));

#[cfg(any(target_family = "wasm", test))]
pub(crate) mod tables {
    use std::sync::OnceLock;

    use super::{Comb, build_comb};
    use crate::sm2::arithmetic::field::Soft;
    use crate::sm2::arithmetic::point::{Affine, Jacobian, batch_to_affine};

    /// As build.rs writes it (a test compares these tables with build.rs's).
    pub(crate) const G_WNAF_WIDTH: u32 = 11;
    const ODD: usize = 1 << (G_WNAF_WIDTH - 2);

    /// The comb table of G.
    pub(crate) fn base() -> &'static Comb {
        static T: OnceLock<Box<Comb>> = OnceLock::new();
        T.get_or_init(|| build_comb(&Affine::generator(Soft)))
    }

    /// (2j + 1) G for j below 2^(G_WNAF_WIDTH - 2), affine, Montgomery form.
    pub(crate) fn g_odd() -> &'static [[u64; 8]; ODD] {
        static T: OnceLock<Box<[[u64; 8]; ODD]>> = OnceLock::new();
        T.get_or_init(|| {
            let g = Affine::generator(Soft);
            let two = Jacobian::from_affine(&g).double();
            let mut points = vec![Jacobian::from_affine(&g); ODD];
            for j in 1..points.len() {
                points[j] = points[j - 1].add(&two);
            }
            let mut affine = vec![g; points.len()];
            batch_to_affine(&points, &mut affine);
            let mut t = Box::new([[0u64; 8]; ODD]);
            for (e, p) in t.iter_mut().zip(&affine) {
                e[..4].copy_from_slice(&p.x.mont_limbs());
                e[4..].copy_from_slice(&p.y.mont_limbs());
            }
            t
        })
    }
}
#[cfg(target_family = "wasm")]
pub(crate) use tables::G_WNAF_WIDTH;

mod comb;
mod double_base;
#[cfg(all(test, target_arch = "x86_64"))]
mod many_tests;
mod variable;

pub(crate) use comb::*;
pub(crate) use double_base::*;
pub(crate) use variable::*;

/// How many verifications make it worth filling the IFMA lanes: eight lanes cost about what
/// four verifications cost alone (a batch of three ran 0.8x the single rate in lanes, four
/// 1.1x, on Zen 4), so fewer go the scalar way. Key agreements use the same threshold: their
/// lanes are the verification's u2 P part with a scanned instead of gathered table, not yet
/// measured apart.
#[cfg(target_arch = "x86_64")]
const LANES_FROM: usize = 4;

/// The comb table of G.
#[cfg(not(target_family = "wasm"))]
pub(crate) fn base_table() -> &'static Comb {
    &BASE_TABLE
}
#[cfg(target_family = "wasm")]
pub(crate) fn base_table() -> &'static Comb {
    tables::base()
}

/// G's odd multiples for the verification's wide NAF.
#[cfg(not(target_family = "wasm"))]
fn g_odd() -> &'static [[u64; 8]] {
    &G_ODD
}
#[cfg(target_family = "wasm")]
fn g_odd() -> &'static [[u64; 8]] {
    tables::g_odd()
}

/// Bit i of a little-endian limb array (0 beyond 255).
#[inline(always)]
fn bit(k: &[u64; 4], i: i32) -> u64 {
    if !(0..256).contains(&i) {
        0
    } else {
        (k[i as usize / 64] >> (i % 64)) & 1
    }
}

/// The 64 bits of k from bit i on (i >= 0; zeros beyond bit 255), any alignment.
#[inline(always)]
fn bits64(k: &[u64; 4], i: usize) -> u64 {
    let limb = i / 64;
    let shift = i % 64;
    let lo = if limb < 4 { k[limb] >> shift } else { 0 };
    let hi = if shift != 0 && limb + 1 < 4 {
        k[limb + 1] << (64 - shift)
    } else {
        0
    };
    lo | hi
}

/// `w` bits of k starting at bit i (i >= 0, w < 64), any alignment.
#[inline(always)]
fn window(k: &[u64; 4], i: usize, w: usize) -> u64 {
    bits64(k, i) & ((1 << w) - 1)
}

/// Booth digit of width w at window i: (magnitude, negative). Constant time in k (the branches
/// above test only the public positions i and w).
#[inline(always)]
pub(crate) fn booth(k: &[u64; 4], i: usize, w: usize) -> (u32, Choice) {
    let c = window(k, w * i, w);
    let below = bit(k, (w * i) as i32 - 1);
    let top = c >> (w - 1);
    let v = c + below; // 0 ..= 2^w
    let neg_mag = (1u64 << w) - v;
    let mask = crate::ct::mask(top);
    let mag = (v & !mask) | (neg_mag & mask);
    (mag as u32, Choice::from(top as u8))
}

/// Entry `idx - 1` of a table by a full masked scan (all zero for idx = 0).
#[inline(always)]
pub(crate) fn select_portable<const N: usize>(table: &[[u64; 8]; N], idx: u32) -> [u64; 8] {
    let mut out = [0u64; 8];
    select_part_portable(table, idx, 0, N, &mut out);
    out
}

/// Entries `first..first + count` of [`select_portable`]'s scan, ORed into `out`.
#[inline(always)]
pub(crate) fn select_part_portable<const N: usize>(
    table: &[[u64; 8]; N],
    idx: u32,
    first: usize,
    count: usize,
    out: &mut [u64; 8],
) {
    for (j, e) in table.iter().enumerate().skip(first).take(count) {
        let x = u64::from((j as u32 + 1) ^ idx);
        // Opaque to the optimiser: seeing that the mask is "entry == idx", LLVM otherwise
        // rewrites the scan as a search with a branch (the valgrind check caught it).
        let mask = crate::ct::mask(x.wrapping_sub(1) >> 63);
        for k in 0..8 {
            out[k] |= e[k] & mask;
        }
    }
}

fn affine_from_entry<A: Arith>(a: A, e: &[u64; 8]) -> Affine<A> {
    Affine {
        x: Fe::from_mont(a, [e[0], e[1], e[2], e[3]]),
        y: Fe::from_mont(a, [e[4], e[5], e[6], e[7]]),
    }
}
