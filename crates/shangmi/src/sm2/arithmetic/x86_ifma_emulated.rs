//! Scalar stand-ins for the AVX-512 instructions the IFMA lanes use, with the intrinsics'
//! names and signatures, so that the unit tests run the lane code on every x86-64 CPU (most of
//! the machines the project is tested on have no AVX512-IFMA), and the constant-time check
//! runs it under valgrind, which has no AVX-512. A test on CPUs that have the instructions
//! holds every stand-in against the one it replaces, on random and edge inputs.
//!
//! The stand-ins are constant time as the instructions are: no branch on a lane's value and
//! no address computed from one (the permute scans all eight sources with masks), so that
//! valgrind's verdict on the lanes is about the lanes. The gather reads by its offsets, as the
//! instruction does; the lanes gather only public data.
//!
//! Only the unit tests and the constant-time check's build use these; the library and the
//! integration tests run the real instructions.
#![allow(unsafe_code, non_camel_case_types)]

pub(super) use core::arch::x86_64::{__m512i, __mmask8};

const M52: u64 = (1 << 52) - 1;

fn lanes(v: __m512i) -> [u64; 8] {
    // SAFETY: __m512i is 64 bytes of plain data, as is [u64; 8].
    unsafe { core::mem::transmute::<__m512i, [u64; 8]>(v) }
}

fn vector(l: [u64; 8]) -> __m512i {
    // SAFETY: as in `lanes`.
    unsafe { core::mem::transmute::<[u64; 8], __m512i>(l) }
}

fn map(a: __m512i, f: impl Fn(u64) -> u64) -> __m512i {
    vector(lanes(a).map(f))
}

fn zip(a: __m512i, b: __m512i, f: impl Fn(u64, u64) -> u64) -> __m512i {
    let (a, b) = (lanes(a), lanes(b));
    vector(core::array::from_fn(|i| f(a[i], b[i])))
}

/// Bit i set where `f` holds for lane i. The mask passes through `ct::barrier`, and so do the
/// lane masks made from it (`bit`): otherwise the compiler sees through compare-and-blend and
/// turns a scan of a table into a branch or a load at the matching index, as valgrind showed.
fn mask(a: __m512i, b: __m512i, f: impl Fn(u64, u64) -> bool) -> __mmask8 {
    let (a, b) = (lanes(a), lanes(b));
    let k = (0..8).fold(0u64, |k, i| k | (u64::from(f(a[i], b[i])) << i));
    crate::ct::barrier(k) as u8
}

/// All ones where bit i of k is set.
fn bit(k: __mmask8, i: usize) -> u64 {
    crate::ct::mask(u64::from((k >> i) & 1))
}

pub(super) fn _mm512_setzero_si512() -> __m512i {
    vector([0; 8])
}

pub(super) fn _mm512_set1_epi64(a: i64) -> __m512i {
    vector([a as u64; 8])
}

/// The first argument is the highest lane, as in the instruction set's `_mm512_set_epi64`.
#[allow(clippy::too_many_arguments)]
pub(super) fn _mm512_set_epi64(
    e7: i64,
    e6: i64,
    e5: i64,
    e4: i64,
    e3: i64,
    e2: i64,
    e1: i64,
    e0: i64,
) -> __m512i {
    vector([e0, e1, e2, e3, e4, e5, e6, e7].map(|e| e as u64))
}

pub(super) fn _mm512_add_epi64(a: __m512i, b: __m512i) -> __m512i {
    zip(a, b, u64::wrapping_add)
}

pub(super) fn _mm512_sub_epi64(a: __m512i, b: __m512i) -> __m512i {
    zip(a, b, u64::wrapping_sub)
}

pub(super) fn _mm512_maskz_sub_epi64(k: __mmask8, a: __m512i, b: __m512i) -> __m512i {
    let d = lanes(_mm512_sub_epi64(a, b));
    vector(core::array::from_fn(|i| d[i] & bit(k, i)))
}

pub(super) fn _mm512_and_si512(a: __m512i, b: __m512i) -> __m512i {
    zip(a, b, |x, y| x & y)
}

pub(super) fn _mm512_or_si512(a: __m512i, b: __m512i) -> __m512i {
    zip(a, b, |x, y| x | y)
}

pub(super) fn _mm512_slli_epi64<const IMM8: u32>(a: __m512i) -> __m512i {
    map(a, |x| if IMM8 > 63 { 0 } else { x << IMM8 })
}

pub(super) fn _mm512_srai_epi64<const IMM8: u32>(a: __m512i) -> __m512i {
    map(a, |x| ((x as i64) >> IMM8.min(63)) as u64)
}

/// a + the low 52 bits of the 104-bit product of b's and c's low 52 bits.
pub(super) fn _mm512_madd52lo_epu64(a: __m512i, b: __m512i, c: __m512i) -> __m512i {
    let p = zip(b, c, |x, y| {
        ((u128::from(x & M52) * u128::from(y & M52)) as u64) & M52
    });
    _mm512_add_epi64(a, p)
}

/// a + the high 52 bits of the 104-bit product of b's and c's low 52 bits.
pub(super) fn _mm512_madd52hi_epu64(a: __m512i, b: __m512i, c: __m512i) -> __m512i {
    let p = zip(b, c, |x, y| {
        ((u128::from(x & M52) * u128::from(y & M52)) >> 52) as u64
    });
    _mm512_add_epi64(a, p)
}

/// Lane i from b where bit i of k is set, else from a.
pub(super) fn _mm512_mask_blend_epi64(k: __mmask8, a: __m512i, b: __m512i) -> __m512i {
    let (a, b) = (lanes(a), lanes(b));
    vector(core::array::from_fn(|i| {
        (a[i] & !bit(k, i)) | (b[i] & bit(k, i))
    }))
}

/// Lane i: lane (idx_i & 7) of a, or of b where bit 3 of idx_i is set; every source lane is
/// read and the one named kept by mask.
pub(super) fn _mm512_permutex2var_epi64(a: __m512i, idx: __m512i, b: __m512i) -> __m512i {
    let (a, idx, b) = (lanes(a), lanes(idx), lanes(b));
    vector(core::array::from_fn(|i| {
        let from_b = crate::ct::mask((idx[i] >> 3) & 1);
        (0..8).fold(0, |acc, j| {
            let hit = crate::ct::mask(u64::from((idx[i] & 7) == j as u64));
            acc | (((a[j] & !from_b) | (b[j] & from_b)) & hit)
        })
    }))
}

pub(super) fn _mm512_cmpeq_epi64_mask(a: __m512i, b: __m512i) -> __mmask8 {
    mask(a, b, |x, y| x == y)
}

pub(super) fn _mm512_cmpneq_epi64_mask(a: __m512i, b: __m512i) -> __mmask8 {
    mask(a, b, |x, y| x != y)
}

/// Signed comparison, as the instruction's.
pub(super) fn _mm512_cmpge_epi64_mask(a: __m512i, b: __m512i) -> __mmask8 {
    mask(a, b, |x, y| x as i64 >= y as i64)
}

pub(super) fn _mm512_test_epi64_mask(a: __m512i, b: __m512i) -> __mmask8 {
    mask(a, b, |x, y| x & y != 0)
}

/// # Safety
/// `mem_addr` must be valid for reading 64 bytes.
pub(super) unsafe fn _mm512_loadu_si512(mem_addr: *const __m512i) -> __m512i {
    // SAFETY: the caller's promise; the read is unaligned.
    unsafe { mem_addr.read_unaligned() }
}

/// # Safety
/// `mem_addr` must be valid for writing 64 bytes.
pub(super) unsafe fn _mm512_storeu_si512(mem_addr: *mut __m512i, a: __m512i) {
    // SAFETY: the caller's promise; the write is unaligned.
    unsafe { mem_addr.write_unaligned(a) }
}

/// Lane i: the i64 at byte offset offsets_i * SCALE from `slice`.
///
/// # Safety
/// Every such address must be valid for reading 8 bytes.
pub(super) unsafe fn _mm512_i64gather_epi64<const SCALE: i32>(
    offsets: __m512i,
    slice: *const i64,
) -> __m512i {
    let offsets = lanes(offsets);
    vector(core::array::from_fn(|i| {
        let at = (offsets[i] as i64).wrapping_mul(i64::from(SCALE)) as isize;
        // SAFETY: the caller's promise for this lane's address.
        unsafe { slice.cast::<u8>().offset(at).cast::<i64>().read_unaligned() as u64 }
    }))
}

#[cfg(test)]
mod tests {
    //! Each stand-in against the instruction, where the CPU has AVX512-IFMA.
    use core::arch::x86_64 as hw;

    use super::*;

    fn values(seed: &mut [u8; 32]) -> [u64; 8] {
        *seed = crate::sm3::hash(seed);
        let more = crate::sm3::hash(&seed[..16]);
        let mut v: [u64; 8] = core::array::from_fn(|i| {
            let b = if i < 4 {
                &seed[8 * i..]
            } else {
                &more[8 * (i - 4)..]
            };
            u64::from_le_bytes(b[..8].try_into().unwrap())
        });
        // Edges in some lanes: zero, all ones, the sign bit, 52-bit boundaries.
        let edges = [0, u64::MAX, 1 << 63, M52, 1 << 52, (1 << 52) - 2];
        v[(seed[0] & 7) as usize] = edges[seed[1] as usize % edges.len()];
        v[(seed[2] & 7) as usize] = u64::from(seed[3] & 15);
        v
    }

    #[target_feature(enable = "avx512f,avx512ifma")]
    fn real(a: __m512i, b: __m512i, c: __m512i, k: __mmask8) -> [__m512i; 13] {
        [
            hw::_mm512_add_epi64(a, b),
            hw::_mm512_sub_epi64(a, b),
            hw::_mm512_maskz_sub_epi64(k, a, b),
            hw::_mm512_and_si512(a, b),
            hw::_mm512_or_si512(a, b),
            hw::_mm512_slli_epi64::<44>(a),
            hw::_mm512_srai_epi64::<52>(a),
            hw::_mm512_madd52lo_epu64(a, b, c),
            hw::_mm512_madd52hi_epu64(a, b, c),
            hw::_mm512_mask_blend_epi64(k, a, b),
            hw::_mm512_permutex2var_epi64(a, c, b),
            hw::_mm512_set1_epi64(-5),
            hw::_mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0),
        ]
    }

    #[target_feature(enable = "avx512f,avx512ifma")]
    fn real_masks(a: __m512i, b: __m512i) -> [__mmask8; 4] {
        [
            hw::_mm512_cmpeq_epi64_mask(a, b),
            hw::_mm512_cmpneq_epi64_mask(a, b),
            hw::_mm512_cmpge_epi64_mask(a, b),
            hw::_mm512_test_epi64_mask(a, b),
        ]
    }

    #[test]
    fn stand_ins_match_the_instructions() {
        if crate::cpu::Avx512::get()
            .and_then(|t| t.with_ifma())
            .is_none()
        {
            eprintln!("no AVX512-IFMA here: stand-ins not compared with the instructions");
            return;
        }
        let mut seed = [9u8; 32];
        for round in 0..2000 {
            let a = values(&mut seed);
            // Some lanes equal, so the comparisons see both answers.
            let mut b = values(&mut seed);
            b[round % 8] = a[round % 8];
            let c = values(&mut seed);
            let k = seed[5];
            let (a, b, c) = (vector(a), vector(b), vector(c));
            let emulated = [
                _mm512_add_epi64(a, b),
                _mm512_sub_epi64(a, b),
                _mm512_maskz_sub_epi64(k, a, b),
                _mm512_and_si512(a, b),
                _mm512_or_si512(a, b),
                _mm512_slli_epi64::<44>(a),
                _mm512_srai_epi64::<52>(a),
                _mm512_madd52lo_epu64(a, b, c),
                _mm512_madd52hi_epu64(a, b, c),
                _mm512_mask_blend_epi64(k, a, b),
                _mm512_permutex2var_epi64(a, c, b),
                _mm512_set1_epi64(-5),
                _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0),
            ];
            // SAFETY: the CPU has AVX-512F and AVX512-IFMA (checked above).
            let (want, want_masks) = unsafe { (real(a, b, c, k), real_masks(a, b)) };
            for (i, (e, w)) in emulated.iter().zip(&want).enumerate() {
                assert_eq!(lanes(*e), lanes(*w), "operation {i}, round {round}");
            }
            let masks = [
                _mm512_cmpeq_epi64_mask(a, b),
                _mm512_cmpneq_epi64_mask(a, b),
                _mm512_cmpge_epi64_mask(a, b),
                _mm512_test_epi64_mask(a, b),
            ];
            assert_eq!(masks, want_masks, "round {round}");
        }
        let table: Vec<i64> = (0..64).map(|i| i * 1000 + 7).collect();
        let offsets = vector([3, 0, 63, 17, 5, 5, 40, 1]);
        // SAFETY: every offset is inside the 64-entry table; AVX-512F checked above.
        let (e, w) = unsafe {
            (
                _mm512_i64gather_epi64::<8>(offsets, table.as_ptr()),
                hw::_mm512_i64gather_epi64::<8>(offsets, table.as_ptr()),
            )
        };
        assert_eq!(lanes(e), lanes(w));
    }
}
