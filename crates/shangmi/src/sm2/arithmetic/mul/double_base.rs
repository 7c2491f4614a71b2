//! The variable-time double multiplication u1 G + u2 Q of verification, one or many; public
//! inputs only.

use super::{G_WNAF_WIDTH, affine_from_entry, bits64, g_odd, window};
use crate::sm2::arithmetic::field::{Arith, Fe};
use crate::sm2::arithmetic::point::{Affine, Jacobian};
use crate::sm2::arithmetic::scalar::PublicScalar;

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
            if group.len() >= super::LANES_FROM {
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
