//! Constant-time reads of a table of points (a 64-entry fixed-base window, a 16-entry
//! variable-base table) with SIMD masks: every entry is loaded and combined under a mask that
//! is all ones for the wanted entry only, so neither the addresses touched nor the
//! instructions run depend on the (secret) index.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use crate::cpu::{Avx2, Avx512};

/// AVX2: two YMM loads per 64-byte entry.
#[inline(always)]
pub(crate) fn select_avx2<const N: usize>(
    _token: Avx2,
    table: &[[u64; 8]; N],
    idx: u32,
) -> [u64; 8] {
    // SAFETY: the token proves AVX2; every load reads 32 bytes inside `table`, the stores
    // write the 64-byte output array.
    unsafe { scan_avx2(table, idx) }
}

#[target_feature(enable = "avx2")]
fn scan_avx2<const N: usize>(table: &[[u64; 8]; N], idx: u32) -> [u64; 8] {
    let mut out = [0u64; 8];
    scan_part_avx2(table, idx, 0, N, &mut out);
    out
}

/// Entries `first..first + count` of the scan, ORed into `acc`.
#[target_feature(enable = "avx2")]
fn scan_part_avx2<const N: usize>(
    table: &[[u64; 8]; N],
    idx: u32,
    first: usize,
    count: usize,
    acc: &mut [u64; 8],
) {
    let want = _mm256_set1_epi64x(i64::from(idx));
    let one = _mm256_set1_epi64x(1);
    let mut j = _mm256_set1_epi64x(first as i64 + 1);
    // SAFETY: two 32-byte loads of the 64-byte accumulator.
    let (mut lo, mut hi) = unsafe {
        (
            _mm256_loadu_si256(acc.as_ptr().cast()),
            _mm256_loadu_si256(acc.as_ptr().add(4).cast()),
        )
    };
    for e in &table[first..first + count] {
        let mask = _mm256_cmpeq_epi64(j, want);
        // SAFETY: each entry is 64 bytes; two 32-byte unaligned loads.
        let (a, b) = unsafe {
            (
                _mm256_loadu_si256(e.as_ptr().cast()),
                _mm256_loadu_si256(e.as_ptr().add(4).cast()),
            )
        };
        lo = _mm256_or_si256(lo, _mm256_and_si256(a, mask));
        hi = _mm256_or_si256(hi, _mm256_and_si256(b, mask));
        j = _mm256_add_epi64(j, one);
    }
    // SAFETY: two 32-byte stores into the 64-byte accumulator.
    unsafe {
        _mm256_storeu_si256(acc.as_mut_ptr().cast(), lo);
        _mm256_storeu_si256(acc.as_mut_ptr().add(4).cast(), hi);
    }
}

/// A slice of [`select_avx2`]: entries `first..first + count`, ORed into `acc`.
#[inline(always)]
pub(crate) fn select_part_avx2<const N: usize>(
    _token: Avx2,
    table: &[[u64; 8]; N],
    idx: u32,
    first: usize,
    count: usize,
    acc: &mut [u64; 8],
) {
    // SAFETY: the token proves AVX2; the slice bounds are checked by the indexing inside.
    unsafe { scan_part_avx2(table, idx, first, count, acc) }
}

/// AVX-512: one ZMM load per entry, merged under a mask register.
#[inline(always)]
pub(crate) fn select_avx512<const N: usize>(
    _token: Avx512,
    table: &[[u64; 8]; N],
    idx: u32,
) -> [u64; 8] {
    // SAFETY: the token proves AVX-512F; loads read 64 bytes per entry inside `table`, the store
    // writes the 64-byte output array.
    unsafe { scan_avx512(table, idx) }
}

#[target_feature(enable = "avx512f")]
fn scan_avx512<const N: usize>(table: &[[u64; 8]; N], idx: u32) -> [u64; 8] {
    let mut out = [0u64; 8];
    scan_part_avx512(table, idx, 0, N, &mut out);
    out
}

/// Entries `first..first + count` of the scan, merged into `acc`.
#[target_feature(enable = "avx512f")]
fn scan_part_avx512<const N: usize>(
    table: &[[u64; 8]; N],
    idx: u32,
    first: usize,
    count: usize,
    acc: &mut [u64; 8],
) {
    let want = _mm512_set1_epi64(i64::from(idx));
    let one = _mm512_set1_epi64(1);
    let mut j = _mm512_set1_epi64(first as i64 + 1);
    // SAFETY: one 64-byte load of the accumulator.
    let mut v_acc = unsafe { _mm512_loadu_si512(acc.as_ptr().cast()) };
    for e in &table[first..first + count] {
        let k = _mm512_cmpeq_epi64_mask(j, want);
        // SAFETY: each entry is 64 bytes.
        let v = unsafe { _mm512_loadu_si512(e.as_ptr().cast()) };
        v_acc = _mm512_or_si512(v_acc, _mm512_maskz_mov_epi64(k, v));
        j = _mm512_add_epi64(j, one);
    }
    // SAFETY: one 64-byte store into the accumulator.
    unsafe { _mm512_storeu_si512(acc.as_mut_ptr().cast(), v_acc) };
}

/// A slice of [`select_avx512`]: entries `first..first + count`, merged into `acc`.
#[inline(always)]
pub(crate) fn select_part_avx512<const N: usize>(
    _token: Avx512,
    table: &[[u64; 8]; N],
    idx: u32,
    first: usize,
    count: usize,
    acc: &mut [u64; 8],
) {
    // SAFETY: the token proves AVX-512F; the slice bounds are checked by the indexing inside.
    unsafe { scan_part_avx512(table, idx, first, count, acc) }
}
