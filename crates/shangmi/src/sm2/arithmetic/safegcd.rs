//! Constant-time inversion modulo an odd 256-bit modulus by Bernstein–Yang division steps
//! ("Fast constant-time gcd computation and modular inversion", 2019), in the variant that
//! starts with delta = 1/2, for which 590 steps provably suffice for 256-bit inputs.
//!
//! Why not Fermat: x^(m-2) is a chain of ~270 dependent multiplications, bound by their
//! latency; the division steps are plain 64-bit operations, ~3x fewer cycles here.
//!
//! The state is (delta, f, g, d, e) with f = m, g = x, d = 0, e = 1 at the start and the
//! invariants f = d x, g = e x (mod m). Each batch runs 59 steps on the low 64 bits of f and g
//! only (the low bits decide them), collecting the steps as a 2x2 matrix scaled by 2^62, then
//! applies the matrix to the full f, g (dividing exactly by 2^62) and to d, e (adding the
//! multiple of m that makes the division exact). After ten batches, 590 steps, g = 0 and
//! f = +-1, so x^-1 = +-d. Every step does the same operations whatever the values: swaps
//! and negations are masks. The variable-time inversion takes batches of 62 steps (fewer
//! batches; it stops when g is zero) with the same matrix scale.
//!
//! Numbers are 5 limbs of 62 bits, little-endian; the lower four are in [0, 2^62), the top
//! one carries the sign.

const M62: i64 = (1 << 62) - 1;
const BATCHES: usize = 10;

/// A modulus with what the inversion needs precomputed.
pub(crate) struct Modulus {
    m: [i64; 5],
    /// -m^-1 mod 2^62.
    neg_inv62: u64,
}

impl Modulus {
    pub(crate) const fn new(m: &[u64; 4]) -> Self {
        // Newton's iteration: each step doubles the correct low bits (3 to start, for odd m).
        let mut inv = m[0];
        let mut i = 0;
        while i < 5 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(m[0].wrapping_mul(inv)));
            i += 1;
        }
        Modulus {
            m: to62(m),
            neg_inv62: inv.wrapping_neg() & (M62 as u64),
        }
    }
}

const fn to62(x: &[u64; 4]) -> [i64; 5] {
    [
        (x[0] & M62 as u64) as i64,
        ((x[0] >> 62 | x[1] << 2) & M62 as u64) as i64,
        ((x[1] >> 60 | x[2] << 4) & M62 as u64) as i64,
        ((x[2] >> 58 | x[3] << 6) & M62 as u64) as i64,
        (x[3] >> 56) as i64,
    ]
}

/// The inverse of 2^62-limb `x` for a value in [0, 2^256).
fn from62(x: &[i64; 5]) -> [u64; 4] {
    let l = x.map(|v| v as u64);
    [
        l[0] | l[1] << 62,
        l[1] >> 2 | l[2] << 60,
        l[2] >> 4 | l[3] << 58,
        l[3] >> 6 | l[4] << 56,
    ]
}

/// 59 division steps on the low words of f and g (f odd), with zeta = -(delta + 1/2) (so
/// delta > 0 exactly when zeta < 0). Returns the new zeta and the matrix [u, v, q, r] with
/// 2^62 (f', g') = (u f + v g, q f + r g): it starts at 8 = 2^(62-59), so that ten batches
/// make exactly the 590 steps and every batch still divides by the limb size.
///
/// No selects: when delta > 0 the f row enters negated, so one masked addition gives
/// g - f (swapping) or g + f, and a second one, f + (g - f) = g, completes the swap. About 27
/// operations a step against 39 for choosing between both outcomes.
#[inline(always)]
fn divsteps59(mut zeta: i64, f0: u64, g0: u64) -> (i64, [i64; 4]) {
    let (mut f, mut g) = (f0, g0);
    let (mut u, mut v, mut q, mut r) = (8u64, 0u64, 0u64, 8u64);
    for _ in 0..59 {
        // c1: all ones when delta > 0; c2: all ones when g is odd; swap when both.
        let c1 = crate::ct::barrier((zeta >> 63) as u64);
        let c2 = crate::ct::mask(g & 1);
        let x = (f ^ c1).wrapping_sub(c1);
        let y = (u ^ c1).wrapping_sub(c1);
        let z = (v ^ c1).wrapping_sub(c1);
        g = g.wrapping_add(x & c2);
        q = q.wrapping_add(y & c2);
        r = r.wrapping_add(z & c2);
        let swap = c1 & c2;
        // delta <- 1 - delta swapping, 1 + delta otherwise.
        zeta = (zeta ^ swap as i64).wrapping_sub(1);
        f = f.wrapping_add(g & swap);
        u = u.wrapping_add(q & swap);
        v = v.wrapping_add(r & swap);
        // Halving g is doubling the f row, keeping the 2^62 scale.
        g >>= 1;
        u <<= 1;
        v <<= 1;
    }
    (zeta, [u as i64, v as i64, q as i64, r as i64])
}

/// 62 division steps for public values, with h = delta - 1/2: the steps of [`divsteps59`] and
/// a matrix of the same scale (it starts at 1), but each run of zero bits of g is taken at
/// once (trailing-zero count), and the odd steps branch.
fn divsteps62_vartime(mut h: i64, f0: u64, g0: u64) -> (i64, [i64; 4]) {
    let (mut f, mut g) = (f0, g0);
    let (mut u, mut v, mut q, mut r) = (1i64, 0i64, 0i64, 1i64);
    let mut left = 62u32;
    loop {
        // g even, z times over: g <- g / 2, delta <- delta + 1, the f row doubled.
        let z = (g | (u64::MAX << left)).trailing_zeros();
        g >>= z;
        u <<= z;
        v <<= z;
        h += i64::from(z);
        left -= z;
        if left == 0 {
            break;
        }
        // g odd: the swapping step when delta > 0, else g <- (g + f) / 2. By masks, as in
        // `divsteps59`, not a branch: on random inputs the branch is a coin toss, and its
        // mispredictions made this as slow as the constant-time steps.
        let s = !(h >> 63) as u64;
        let g2 = g.wrapping_add((f ^ s).wrapping_sub(s));
        q = q.wrapping_add((u as u64 ^ s).wrapping_sub(s) as i64);
        r = r.wrapping_add((v as u64 ^ s).wrapping_sub(s) as i64);
        f = f.wrapping_add(g2 & s);
        u = u.wrapping_add(q & s as i64);
        v = v.wrapping_add(r & s as i64);
        g = g2 >> 1;
        h = (h ^ s as i64).wrapping_sub(s as i64) + (1 & !s as i64);
        u <<= 1;
        v <<= 1;
        left -= 1;
        if left == 0 {
            break;
        }
    }
    (h, [u, v, q, r])
}

#[inline(always)]
fn wide(a: i64, b: i64) -> i128 {
    i128::from(a) * i128::from(b)
}

/// (f, g) <- (u f + v g, q f + r g) / 2^62, exact by construction of the matrix.
fn update_fg(f: &mut [i64; 5], g: &mut [i64; 5], t: &[i64; 4]) {
    let [u, v, q, r] = *t;
    let mut cf = wide(u, f[0]) + wide(v, g[0]);
    let mut cg = wide(q, f[0]) + wide(r, g[0]);
    debug_assert_eq!((cf as i64) & M62, 0);
    debug_assert_eq!((cg as i64) & M62, 0);
    cf >>= 62;
    cg >>= 62;
    for i in 1..5 {
        cf += wide(u, f[i]) + wide(v, g[i]);
        cg += wide(q, f[i]) + wide(r, g[i]);
        f[i - 1] = cf as i64 & M62;
        g[i - 1] = cg as i64 & M62;
        cf >>= 62;
        cg >>= 62;
    }
    f[4] = cf as i64;
    g[4] = cg as i64;
}

/// (d, e) <- (u d + v e, q d + r e) / 2^62 mod m, from (-m, m) back into (-m, m).
fn update_de(d: &mut [i64; 5], e: &mut [i64; 5], t: &[i64; 4], m: &Modulus) {
    let [u, v, q, r] = *t;
    let mut cd = wide(u, d[0]) + wide(v, e[0]);
    let mut ce = wide(q, d[0]) + wide(r, e[0]);
    // The multiples of m in [0, 2^62) that clear the low 62 bits.
    let md = ((cd as u64).wrapping_mul(m.neg_inv62) & M62 as u64) as i64;
    let me = ((ce as u64).wrapping_mul(m.neg_inv62) & M62 as u64) as i64;
    cd += wide(md, m.m[0]);
    ce += wide(me, m.m[0]);
    debug_assert_eq!((cd as i64) & M62, 0);
    debug_assert_eq!((ce as i64) & M62, 0);
    cd >>= 62;
    ce >>= 62;
    for i in 1..5 {
        cd += wide(u, d[i]) + wide(v, e[i]) + wide(md, m.m[i]);
        ce += wide(q, d[i]) + wide(r, e[i]) + wide(me, m.m[i]);
        d[i - 1] = cd as i64 & M62;
        e[i - 1] = ce as i64 & M62;
        cd >>= 62;
        ce >>= 62;
    }
    d[4] = cd as i64;
    e[4] = ce as i64;
    // |u d + v e| < 2^62 m and md m < 2^62 m: the results are in (-m, 2m).
    sub_if_ge(d, &m.m);
    sub_if_ge(e, &m.m);
}

/// x + y where `mask` is all ones, else x.
fn add_masked(x: &mut [i64; 5], y: &[i64; 5], mask: i64) {
    let mut c = 0i64;
    for i in 0..4 {
        let s = x[i] + (y[i] & mask) + c;
        x[i] = s & M62;
        c = s >> 62;
    }
    x[4] += (y[4] & mask) + c;
}

/// x - m when x >= m, else x.
fn sub_if_ge(x: &mut [i64; 5], m: &[i64; 5]) {
    let mut t = [0i64; 5];
    let mut c = 0i64;
    for i in 0..4 {
        let s = x[i] - m[i] + c;
        t[i] = s & M62;
        c = s >> 62;
    }
    t[4] = x[4] - m[4] + c;
    // Opaque to the optimiser, which otherwise turns this select into a branch on the sign.
    let keep = crate::ct::barrier_i64(t[4] >> 63);
    for i in 0..5 {
        x[i] = (x[i] & keep) | (t[i] & !keep);
    }
}

/// -x where `mask` is all ones, else x.
fn neg_masked(x: &mut [i64; 5], mask: i64) {
    let mut c = 0i64;
    for i in 0..4 {
        let s = (x[i] ^ mask) - mask + c;
        x[i] = s & M62;
        c = s >> 62;
    }
    x[4] = (x[4] ^ mask) - mask + c;
}

/// x^-1 mod m for x < m (0 for 0), in constant time.
pub(crate) fn invert(x: &[u64; 4], m: &Modulus) -> [u64; 4] {
    let mut f = m.m;
    let mut g = to62(x);
    let mut d = [0i64; 5];
    let mut e = [1i64, 0, 0, 0, 0];
    let mut zeta = -1i64; // delta = 1/2
    for _ in 0..BATCHES {
        let t;
        (zeta, t) = divsteps59(zeta, f[0] as u64, g[0] as u64);
        update_de(&mut d, &mut e, &t, m);
        update_fg(&mut f, &mut g, &t);
    }
    debug_assert!(g == [0; 5]);
    // f = +-1 (or m when x = 0, with d = 0): the inverse is d with f's sign.
    neg_masked(&mut d, crate::ct::barrier_i64(f[4] >> 63));
    let negative = crate::ct::barrier_i64(d[4] >> 63);
    add_masked(&mut d, &m.m, negative);
    from62(&d)
}

/// x^-1 mod m for a public x < m (0 for 0): the same division steps as [`invert`], taken
/// faster by branching, and stopping as soon as g is zero (about 60% of the steps the
/// constant-time bound asks for, on random inputs).
pub(crate) fn invert_vartime(x: &[u64; 4], m: &Modulus) -> [u64; 4] {
    let mut f = m.m;
    let mut g = to62(x);
    let mut d = [0i64; 5];
    let mut e = [1i64, 0, 0, 0, 0];
    let mut h = 0i64;
    for _ in 0..BATCHES {
        // An OR of the limbs: comparing the array is a call to memcmp (1% of a key generation).
        if g.iter().fold(0, |acc, l| acc | l) == 0 {
            break;
        }
        let t;
        (h, t) = divsteps62_vartime(h, f[0] as u64, g[0] as u64);
        update_de(&mut d, &mut e, &t, m);
        update_fg(&mut f, &mut g, &t);
    }
    debug_assert!(g == [0; 5]);
    neg_masked(&mut d, f[4] >> 63);
    let negative = d[4] >> 63;
    add_masked(&mut d, &m.m, negative);
    from62(&d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigUint;

    fn big(x: &[u64; 4]) -> BigUint {
        BigUint::from_slice(
            &x.iter()
                .flat_map(|w| [*w as u32, (w >> 32) as u32])
                .collect::<Vec<_>>(),
        )
    }

    fn limbs(x: &BigUint) -> [u64; 4] {
        let d = x.to_u64_digits();
        core::array::from_fn(|i| d.get(i).copied().unwrap_or(0))
    }

    #[test]
    fn inverts_mod_p_and_n_against_bignum() {
        use rand::rngs::StdRng;
        use rand::{Rng, SeedableRng};
        let mut rng = StdRng::seed_from_u64(44);
        for mm in [
            crate::sm2::arithmetic::field::P,
            crate::sm2::arithmetic::scalar::N,
        ] {
            let m = Modulus::new(&mm);
            let mb = big(&mm);
            let one = BigUint::from(1u8);
            let mut cases: Vec<BigUint> = vec![
                one.clone(),
                BigUint::from(2u8),
                &mb - 1u8,
                &mb - 2u8,
                (&one << 255u32) % &mb,
                ((&one << 256u32) - 1u8) % &mb,
                (&one << 128u32) + 1u8,
            ];
            for _ in 0..2000 {
                cases.push(BigUint::from_bytes_be(&rng.random::<[u8; 32]>()) % &mb);
                // Small and sparse values stress the long runs of even steps.
                let k = rng.random_range(0..256u32);
                cases.push((&one << k) % &mb);
            }
            for x in cases {
                let inv = big(&invert(&limbs(&x), &m));
                assert_eq!((&x * &inv) % &mb, one, "x = {x:x}");
                let inv_vt = big(&invert_vartime(&limbs(&x), &m));
                assert_eq!(inv_vt, inv, "vartime, x = {x:x}");
            }
            assert_eq!(invert(&[0; 4], &m), [0; 4]);
            assert_eq!(invert_vartime(&[0; 4], &m), [0; 4]);
        }
    }

    #[test]
    fn limb_conversion_round_trips() {
        for x in [
            [0u64; 4],
            [u64::MAX; 4],
            [1, 2, 3, 4],
            crate::sm2::arithmetic::field::P,
        ] {
            assert_eq!(from62(&to62(&x)), x);
        }
    }
}
