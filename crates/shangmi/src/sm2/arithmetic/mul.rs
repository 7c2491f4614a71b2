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

use subtle::{Choice, ConditionallySelectable, ConstantTimeEq};

use crate::sm2::arithmetic::field::{Arith, Fe};
use crate::sm2::arithmetic::point::{Affine, Jacobian};
use crate::sm2::arithmetic::scalar::{PublicScalar, Scalar};

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

/// A comb table: window i holds j 2^(7i) Q for j = 1..=64, affine, Montgomery form.
pub(crate) type Comb = [[[u64; 8]; 64]; 37];

/// k G in constant time, for k in [1, n-1] (k = 0 gives infinity).
///
/// Why no addition meets P = +-Q: with a_i the accumulated multiple, |a_i| < 2^(7i-1) while
/// the added multiple is d_i 2^(7i), |d_i| >= 1. For i < 36 both are below n/2 in size, so
/// equality mod n would be equality of integers, impossible. For the top window (i = 36,
/// |d_36| <= 16) equality would need a_36 = d_36 2^252 - n, i.e. k = 2 d_36 2^252 - n, which
/// forces d_36 = 8 and a_36 = 2^255 - n, too large in size; opposition would need k = 0 mod n.
pub(crate) fn fixed_base<A: Arith>(a: A, k: &Scalar) -> Jacobian<A> {
    fixed_base_with(a, base_table(), k)
}

/// k G for many scalars (each in [1, n-1]), in constant time: eight at a time in IFMA lanes
/// where the backend has them (a last partial group is padded with the scalar 1, discarded).
pub(crate) fn fixed_base_many<A: Arith>(a: A, ks: &[Scalar]) -> Vec<Jacobian<A>> {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = a.ifma() {
        let mut out = Vec::with_capacity(ks.len());
        for group in ks.chunks(8) {
            let mut kc = [[1u64, 0, 0, 0]; 8];
            for (slot, k) in kc.iter_mut().zip(group) {
                *slot = k.to_canonical();
            }
            let points = crate::sm2::arithmetic::x86_ifma_lanes::fixed_base_x8(t, &kc);
            zeroize::Zeroize::zeroize(&mut kc);
            out.extend(points[..group.len()].iter().map(|p| Jacobian {
                x: Fe::from_mont(a, p[0]),
                y: Fe::from_mont(a, p[1]),
                z: Fe::from_mont(a, p[2]),
            }));
        }
        return out;
    }
    ks.iter().map(|k| fixed_base(a, k)).collect()
}

/// k Q in constant time from Q's comb table, for k in [1, n-1]: as [`fixed_base`], whose
/// argument holds for any point of order n.
pub(crate) fn fixed_base_with<A: Arith>(a: A, table: &Comb, k: &Scalar) -> Jacobian<A> {
    let mut kc = k.to_canonical();
    let signed = |e: &[u64; 8], neg: Choice| {
        let mut p = affine_from_entry(a, e);
        p.y = Fe::conditional_select(&p.y, &-p.y, neg);
        p
    };
    // Window 0 meets an accumulator at infinity whatever k is: its entry becomes the
    // accumulator (infinity for a zero digit) with no addition.
    let (mag, neg) = booth(&kc, 0, 7);
    let mut e = a.select(&table[0], mag);
    let mut acc = Jacobian::conditional_select(
        &Jacobian::from_affine(&signed(&e, neg)),
        &Jacobian::identity(a),
        mag.ct_eq(&0),
    );
    // Window i + 1's scan is cut in eight and run between the products of window i's
    // addition: the scan streams 4 KiB through the vector units while the field
    // multiplications hold the integer ones.
    let (mut mag, mut neg) = booth(&kc, 1, 7);
    e = a.select(&table[1], mag);
    for i in 1..table.len() {
        let p = signed(&e, neg);
        e = [0; 8];
        let (next_mag, next_neg) = booth(&kc, i + 1, 7);
        let sum = match table.get(i + 1) {
            Some(next) => acc.add_mixed_beside(&p, |part| {
                a.select_part(next, next_mag, 8 * part, 8, &mut e)
            }),
            None => acc.add_mixed(&p),
        };
        acc = Jacobian::conditional_select(&sum, &acc, mag.ct_eq(&0));
        (mag, neg) = (next_mag, next_neg);
    }
    zeroize::Zeroize::zeroize(&mut kc);
    zeroize::Zeroize::zeroize(&mut e);
    acc
}

/// k Q for public k from a comb table, reading entries directly (variable time).
pub(crate) fn comb_vartime<A: Arith>(a: A, table: &Comb, k: &PublicScalar) -> Jacobian<A> {
    let kc = k.to_canonical();
    let mut acc = Jacobian::identity(a);
    for (i, window) in table.iter().enumerate() {
        let (mag, neg) = booth(&kc, i, 7);
        if mag == 0 {
            continue;
        }
        let p = affine_from_entry(a, &window[mag as usize - 1]);
        let p = if bool::from(neg) { p.neg() } else { p };
        acc = acc.add_mixed_vartime(&p);
    }
    acc
}

/// Builds the comb table of a point (about 2,400 additions and one batched inversion).
pub(crate) fn build_comb<A: Arith>(q: &Affine<A>) -> Box<Comb> {
    let mut table = Box::new([[[0u64; 8]; 64]; 37]);
    let mut base = Jacobian::from_affine(q);
    let mut points = vec![base; 64 * 37];
    for i in 0..37 {
        let w = &mut points[64 * i..64 * (i + 1)];
        w[0] = base;
        w[1] = base.double();
        for j in 2..64 {
            w[j] = w[j - 1].add(&base);
        }
        for _ in 0..7 {
            base = base.double();
        }
    }
    let mut affine = vec![*q; points.len()];
    crate::sm2::arithmetic::point::batch_to_affine(&points, &mut affine);
    for (i, window) in table.iter_mut().enumerate() {
        for (j, e) in window.iter_mut().enumerate() {
            let p = &affine[64 * i + j];
            e[..4].copy_from_slice(&p.x.mont_limbs());
            e[4..].copy_from_slice(&p.y.mont_limbs());
        }
    }
    table
}

/// k P in constant time for a public point P and a secret scalar k: signed 5-bit windows
/// over a table of P..16P, 5 doublings and one addition per window. P is public and so are its
/// multiples: one inversion puts the table in affine form, for mixed additions (7M + 4S
/// instead of 11M + 5S) and a scan of two coordinates instead of three.
///
/// Only the last window can meet the doubling case: before window i >= 1 the accumulator is
/// A P with A = 32 a, |A| < 2^252 < n/2, and the added d P has |d| <= 16, so A = +-d mod n
/// would mean A = +-d as integers, impossible for nonzero d (32 does not divide it) and
/// handled by selection for d = 0 or A = 0. At the last window A = k - d_0 can be d_0 + n (for
/// k = n - 6, say), so that addition is the complete one.
pub(crate) fn variable_base<A: Arith>(a: A, p: &Jacobian<A>, k: &Scalar) -> Jacobian<A> {
    if bool::from(p.is_identity()) {
        return *p;
    }
    let mut kc = k.to_canonical();
    // P is public (its multiples may be built with branches). Co-Z: P rides along with each
    // multiple, so each step is one co-Z addition; it adds P to jP, never +-P for 2 <= j < 16.
    // P (rescaled) and 2P share a Z; each later multiple's Z is the last one's times a factor
    // the addition returns, which the affine conversion follows back down.
    let mut table = [*p; 16];
    let mut grow = [None; 16];
    let (two, mut same) = p.double_coz();
    table[1] = two;
    table[0] = same;
    for j in 2..16 {
        let f;
        (table[j], same, f) = same.add_coz(&table[j - 1]);
        grow[j] = Some(f);
    }
    let zero = Affine {
        x: Fe::zero(a),
        y: Fe::zero(a),
    };
    let mut affine = [zero; 16];
    let last = table[15].z.invert_vartime();
    crate::sm2::arithmetic::point::chain_to_affine(&table, &grow, last, &mut affine);
    // As raw limbs, so the backend's SIMD scan reads them (the fixed-base windows' layout).
    let mut rows = [[0u64; 8]; 16];
    for (row, e) in rows.iter_mut().zip(&affine) {
        row[..4].copy_from_slice(&e.x.mont_limbs());
        row[4..].copy_from_slice(&e.y.mont_limbs());
    }
    let mut acc = Jacobian::identity(a);
    for i in (0..52).rev() {
        // Until the top window's digit the accumulator is at infinity whatever k is: no
        // doublings, and the digit's entry is the sum (public loop positions, not secrets).
        if i < 51 {
            for _ in 0..5 {
                acc = acc.double();
            }
        }
        let (mag, neg) = booth(&kc, i, 5);
        // Digit 0 reads all zeros and discards the sum: the same work for every digit.
        let mut e = affine_from_entry(a, &a.select(&rows, mag));
        e.y = Fe::conditional_select(&e.y, &-e.y, neg);
        let sum = match i {
            0 => acc.add(&Jacobian::from_affine(&e)),
            51 => Jacobian::from_affine(&e),
            _ => acc.add_mixed(&e),
        };
        acc = Jacobian::conditional_select(&sum, &acc, mag.ct_eq(&0));
    }
    zeroize::Zeroize::zeroize(&mut kc);
    acc
}

/// [`variable_base`] for many (P, k) at once (P public and not at infinity, k in [1, n-1]),
/// constant time in the k's: eight at a time in IFMA lanes where the backend has them, the
/// rest one by one. A group of fewer than `LANES_FROM` goes the scalar way; spare lanes
/// repeat the group's first job and are discarded.
pub(crate) fn variable_base_many<A: Arith>(
    a: A,
    jobs: &[(Affine<A>, &Scalar)],
) -> Vec<Jacobian<A>> {
    let alone = |(p, k): &(Affine<A>, &Scalar)| variable_base(a, &Jacobian::from_affine(p), k);
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = a.ifma() {
        use crate::sm2::arithmetic::x86_ifma_ecdh::{Job, variable_base_x8};
        let mut out = Vec::with_capacity(jobs.len());
        for group in jobs.chunks(8) {
            if group.len() < LANES_FROM {
                out.extend(group.iter().map(alone));
                continue;
            }
            let lane = |(p, k): &(Affine<A>, &Scalar)| Job {
                k: k.to_canonical(),
                x: p.x.mont_limbs(),
                y: p.y.mont_limbs(),
            };
            let mut lanes = [lane(&group[0]); 8];
            for (slot, job) in lanes.iter_mut().zip(group) {
                *slot = lane(job);
            }
            let mut done = variable_base_x8(t, &lanes);
            zeroize::Zeroize::zeroize(&mut lanes);
            out.extend(done[..group.len()].iter().map(|q| Jacobian {
                x: Fe::from_mont(a, q[0]),
                y: Fe::from_mont(a, q[1]),
                z: Fe::from_mont(a, q[2]),
            }));
            zeroize::Zeroize::zeroize(&mut done);
        }
        return out;
    }
    jobs.iter().map(alone).collect()
}

/// Width-w NAF of k (public): digits odd or zero, |d| < 2^(w-1), at most one nonzero digit in
/// any w consecutive ones. Read off k's bits in place, with the carry of the last negative
/// digit: a run of zero digits is a run of bits equal to the carry, skipped at once (a
/// trailing-zero count); the next w bits plus the carry then make an odd digit, after which
/// the next w - 1 digits are zero. The branches left are well predicted (the loop's end, a run
/// of 64 zero digits); the textbook loop (subtract the digit, halve k, repeat) cost 1.7 us a
/// verification, mostly in mispredicted ones.
pub(crate) fn wnaf_vartime(k: &[u64; 4], w: u32) -> [i16; 257] {
    let w = w as usize;
    let mut out = [0i16; 257];
    let mut carry = 0u64;
    let mut pos = 0;
    while pos < 257 {
        // Bits equal to the carry are zero digits: with a carry, a 1 bit plus the carry is 0
        // and carries on; without, a 0 bit is 0.
        let run = (bits64(k, pos) ^ carry.wrapping_neg()).trailing_zeros() as usize;
        pos += run;
        if run == 64 || pos >= 257 {
            continue;
        }
        let v = window(k, pos, w) + carry; // odd, below 2^w
        carry = v >> (w - 1);
        out[pos] = (v as i64 - ((carry as i64) << w)) as i16;
        pos += w;
    }
    out
}

/// How many odd multiples of P a verification tabulates: one per width-5 NAF digit magnitude.
const P_ODD: usize = 8;

/// P's odd multiples P, 3P, ..., 15P as a co-Z chain, for P not at infinity: each multiple's
/// Z is the last one's times the factor the addition returns, so one inversion of the last Z
/// puts them all in affine form ([`chain_to_affine`]).
///
/// [`chain_to_affine`]: crate::sm2::arithmetic::point::chain_to_affine
struct OddChain<A: Arith> {
    points: [Jacobian<A>; P_ODD],
    grow: [Option<Fe<A>>; P_ODD],
}

impl<A: Arith> OddChain<A> {
    fn new(p: &Jacobian<A>) -> Self {
        // Co-Z: 2P rides along with each multiple, so each step is one co-Z addition. The
        // steps add 2P to (2j - 1) P, never +-2P for j < 8 (P has prime order n).
        let mut points = [*p; P_ODD];
        let mut grow = [None; P_ODD];
        let (mut p2, first) = p.double_coz();
        points[0] = first;
        for j in 1..P_ODD {
            let f;
            (points[j], p2, f) = p2.add_coz(&points[j - 1]);
            grow[j] = Some(f);
        }
        OddChain { points, grow }
    }

    fn last_z(&self) -> Fe<A> {
        self.points[P_ODD - 1].z
    }

    fn to_affine(&self, last_z_inverse: Fe<A>) -> [Affine<A>; P_ODD] {
        let mut out = [Affine::generator(last_z_inverse.a); P_ODD];
        crate::sm2::arithmetic::point::chain_to_affine(
            &self.points,
            &self.grow,
            last_z_inverse,
            &mut out,
        );
        out
    }
}

/// The table for P at infinity: (0, 0) entries, as the affine conversion has always given it
/// (no verification reaches it: keys are never the point at infinity).
fn odd_multiples_of_infinity<A: Arith>(a: A) -> [Affine<A>; P_ODD] {
    let zero = Affine {
        x: Fe::zero(a),
        y: Fe::zero(a),
    };
    [zero; P_ODD]
}

/// u1 G + u2 P in variable time (verification: everything public). The G part takes
/// width-`G_WNAF_WIDTH` NAF digits from the static table of G's odd multiples (built once, in
/// rodata: a wider window means fewer additions per signature); the P part uses width-5 NAF
/// over 8 odd multiples made per call; the doublings are shared (Straus).
pub(crate) fn double_base_vartime<A: Arith>(
    a: A,
    u1: &PublicScalar,
    u2: &PublicScalar,
    p: &Jacobian<A>,
) -> Jacobian<A> {
    // P's odd multiples in affine form (one inversion for the eight), so that each of the
    // ~43 additions of P's digits is a mixed one.
    let pt = if bool::from(p.is_identity()) {
        odd_multiples_of_infinity(a)
    } else {
        let chain = OddChain::new(p);
        chain.to_affine(chain.last_z().invert_vartime())
    };
    double_base_with_vartime(a, u1, u2, &pt)
}

/// How many verifications make it worth filling the IFMA lanes: eight lanes cost about what
/// four verifications cost alone (a batch of three ran 0.8x the single rate in lanes, four
/// 1.1x, on Zen 4), so fewer go the scalar way. Key agreements use the same threshold: their
/// lanes are the verification's u2 P part with a scanned instead of gathered table, not yet
/// measured apart.
#[cfg(target_arch = "x86_64")]
const LANES_FROM: usize = 4;

/// [`double_base_vartime`] for many (u1, u2, P) at once, P a key (never at infinity): in IFMA
/// lanes, eight at a time, where the backend has them ([`double_base_lanes`]), else
/// [`double_base_shared_inversion`].
pub(crate) fn double_base_many_vartime<A: Arith>(
    a: A,
    jobs: &[(PublicScalar, PublicScalar, Affine<A>)],
) -> Vec<Jacobian<A>> {
    #[cfg(target_arch = "x86_64")]
    if let Some(t) = a.ifma() {
        let mut out = Vec::with_capacity(jobs.len());
        for group in jobs.chunks(8) {
            if group.len() >= LANES_FROM {
                double_base_lanes(a, t, group, &mut out);
            } else {
                out.extend(double_base_shared_inversion(a, group));
            }
        }
        return out;
    }
    double_base_shared_inversion(a, jobs)
}

/// The tables of all the P's share one inversion (Montgomery's trick over their chains' last
/// Z's, three multiplications an item instead of an inversion each).
fn double_base_shared_inversion<A: Arith>(
    a: A,
    jobs: &[(PublicScalar, PublicScalar, Affine<A>)],
) -> Vec<Jacobian<A>> {
    let chains: Vec<OddChain<A>> = jobs
        .iter()
        .map(|(_, _, p)| OddChain::new(&Jacobian::from_affine(p)))
        .collect();
    let one = Fe::one(a);
    let mut prefix = Vec::with_capacity(chains.len());
    let mut acc = one;
    for c in &chains {
        acc = acc * c.last_z();
        prefix.push(acc);
    }
    // A zero Z would zero every inverse. No chain of a point of order n has one; should one
    // ever, each item goes alone rather than the whole batch being wrong.
    if bool::from(acc.is_zero()) {
        return jobs
            .iter()
            .map(|(u1, u2, p)| double_base_vartime(a, u1, u2, &Jacobian::from_affine(p)))
            .collect();
    }
    let mut inv = acc.invert_vartime();
    let mut tables = vec![odd_multiples_of_infinity(a); chains.len()];
    for (i, c) in chains.iter().enumerate().rev() {
        let before = if i == 0 { one } else { prefix[i - 1] };
        tables[i] = c.to_affine(inv * before);
        inv = inv * c.last_z();
    }
    jobs.iter()
        .zip(&tables)
        .map(|((u1, u2, _), pt)| double_base_with_vartime(a, u1, u2, pt))
        .collect()
}

/// Up to eight items in IFMA lanes (spare lanes repeat the first item), appended to `out`; a
/// lane that met an exceptional addition is done again alone.
#[cfg(target_arch = "x86_64")]
fn double_base_lanes<A: Arith>(
    a: A,
    token: crate::cpu::Avx512Ifma,
    group: &[(PublicScalar, PublicScalar, Affine<A>)],
    out: &mut Vec<Jacobian<A>>,
) {
    use crate::sm2::arithmetic::x86_ifma_verify::{Job, double_base_x8_vartime};
    let lane = |(u1, u2, p): &(PublicScalar, PublicScalar, Affine<A>)| Job {
        u1: u1.to_canonical(),
        u2: u2.to_canonical(),
        x: p.x.mont_limbs(),
        y: p.y.mont_limbs(),
    };
    let mut lanes = [lane(&group[0]); 8];
    for (slot, job) in lanes.iter_mut().zip(group) {
        *slot = lane(job);
    }
    let done = double_base_x8_vartime(token, &lanes);
    for ((u1, u2, p), q) in group.iter().zip(done) {
        out.push(match q {
            Some([x, y, z]) => Jacobian {
                x: Fe::from_mont(a, x),
                y: Fe::from_mont(a, y),
                z: Fe::from_mont(a, z),
            },
            None => double_base_vartime(a, u1, u2, &Jacobian::from_affine(p)),
        });
    }
}

/// u1 G + u2 P with P's odd multiples given in affine form.
fn double_base_with_vartime<A: Arith>(
    a: A,
    u1: &PublicScalar,
    u2: &PublicScalar,
    pt: &[Affine<A>; P_ODD],
) -> Jacobian<A> {
    let n1 = wnaf_vartime(&u1.to_canonical(), G_WNAF_WIDTH);
    let n2 = wnaf_vartime(&u2.to_canonical(), 5);
    let top = (0..257).rev().find(|&i| n1[i] != 0 || n2[i] != 0);
    let mut acc = Jacobian::identity(a);
    let Some(top) = top else { return acc };
    for i in (0..=top).rev() {
        acc = acc.double();
        let d1 = n1[i];
        if d1 != 0 {
            let e = affine_from_entry(a, &g_odd()[(d1.unsigned_abs() as usize - 1) / 2]);
            let e = if d1 < 0 { e.neg() } else { e };
            acc = acc.add_mixed_vartime(&e);
        }
        let d2 = n2[i];
        if d2 != 0 {
            let e = pt[(d2.unsigned_abs() as usize - 1) / 2];
            let e = if d2 < 0 { e.neg() } else { e };
            acc = acc.add_mixed_vartime(&e);
        }
    }
    acc
}

#[cfg(all(test, target_arch = "x86_64"))]
mod many_tests {
    //! The many-item multiplications with lanes (on stand-ins, `field::SoftLanes`) against
    //! the same work item by item, for every group shape: under the lanes' threshold, one
    //! full group, full groups and a remainder on either side of the threshold.
    use super::*;
    use crate::sm2::arithmetic::field::{Soft, SoftLanes};

    const LENGTHS: [usize; 6] = [1, 3, 4, 8, 11, 13];

    fn scalars(n: usize, seed: u8) -> Vec<Scalar> {
        let mut s = [seed; 32];
        (0..n)
            .map(|_| {
                s = crate::sm3::hash(&s);
                Scalar::from_bytes_reduced(&s)
            })
            .collect()
    }

    fn affine_limbs<A: Arith>(p: &Jacobian<A>) -> ([u64; 4], [u64; 4]) {
        let a = p.to_affine().unwrap();
        (a.x.mont_limbs(), a.y.mont_limbs())
    }

    #[test]
    fn variable_base_many_matches_each_alone() {
        let ks = scalars(13, 1);
        let ds = scalars(13, 2);
        for n in LENGTHS {
            let points: Vec<Affine<SoftLanes>> = ds[..n]
                .iter()
                .map(|d| fixed_base(SoftLanes, d).to_affine().unwrap())
                .collect();
            let jobs: Vec<(Affine<SoftLanes>, &Scalar)> =
                points.iter().copied().zip(&ks[..n]).collect();
            let got = variable_base_many(SoftLanes, &jobs);
            assert_eq!(got.len(), n);
            for ((p, k), q) in jobs.iter().zip(&got) {
                let p = Affine {
                    x: Fe::from_mont(Soft, p.x.mont_limbs()),
                    y: Fe::from_mont(Soft, p.y.mont_limbs()),
                };
                let want = variable_base(Soft, &Jacobian::from_affine(&p), k);
                assert_eq!(affine_limbs(q), affine_limbs(&want), "{n} items");
            }
        }
    }

    #[test]
    fn fixed_base_many_matches_each_alone() {
        let ks = scalars(13, 3);
        for n in LENGTHS {
            let got = fixed_base_many(SoftLanes, &ks[..n]);
            assert_eq!(got.len(), n);
            for (k, q) in ks.iter().zip(&got) {
                assert_eq!(
                    affine_limbs(q),
                    affine_limbs(&fixed_base(Soft, k)),
                    "{n} items"
                );
            }
        }
    }
}
