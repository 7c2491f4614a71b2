//! Field, scalar and point arithmetic against a big-integer reference, on every backend.

use num_bigint::BigUint;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use subtle::ConstantTimeEq;

use super::arithmetic::field::{Arith, Fe, P, Soft, limbs_to_be};
use super::arithmetic::mul::{
    BASE_TABLE, G_ODD, G_WNAF_WIDTH, double_base_many_vartime, double_base_vartime, fixed_base,
    fixed_base_many, variable_base,
};
use super::arithmetic::point::{Affine, Jacobian, batch_to_affine};
use super::arithmetic::scalar::{N, PublicScalar, Scalar};
/// Test values are public.
fn declassify(s: Scalar) -> PublicScalar {
    PublicScalar::declassify(s)
}

fn big(l: &[u64; 4]) -> BigUint {
    BigUint::from_bytes_be(&limbs_to_be(l))
}

fn limbs(v: &BigUint) -> [u64; 4] {
    let b = v.to_bytes_be();
    let mut buf = [0u8; 32];
    buf[32 - b.len()..].copy_from_slice(&b);
    super::arithmetic::field::limbs_from_be(&buf)
}

fn edge_values(m: &BigUint) -> Vec<BigUint> {
    let one = BigUint::from(1u32);
    let two256 = BigUint::from(1u32) << 256;
    vec![
        BigUint::from(0u32),
        one.clone(),
        BigUint::from(2u32),
        m - &one,
        m - BigUint::from(2u32),
        m >> 1,
        BigUint::from(u64::MAX),
        (&two256 - &one) % m,
        BigUint::from(1u32) << 128,
    ]
}

fn field_checks<A: Arith>(a: A, rng: &mut StdRng) {
    let p = big(&P);
    let mut vals = edge_values(&p);
    for _ in 0..300 {
        vals.push(BigUint::from_bytes_be(&rng.random::<[u8; 32]>()) % &p);
    }
    for x in &vals {
        for y in vals.iter().take(12).chain([x]) {
            let fx = Fe::from_canonical(a, limbs(x));
            let fy = Fe::from_canonical(a, limbs(y));
            assert_eq!(big(&(fx * fy).to_canonical()), (x * y) % &p, "mul {x} {y}");
            assert_eq!(big(&(fx + fy).to_canonical()), (x + y) % &p, "add");
            assert_eq!(big(&(fx - fy).to_canonical()), (x + &p - y) % &p, "sub");
        }
        let fx = Fe::from_canonical(a, limbs(x));
        assert_eq!(big(&fx.square().to_canonical()), (x * x) % &p, "sqr {x}");
        assert_eq!(big(&(-fx).to_canonical()), (&p - x) % &p, "neg");
        let inv = fx.invert();
        assert_eq!(
            inv.mont_limbs(),
            fx.invert_fermat().mont_limbs(),
            "inversions disagree on {x}"
        );
        if *x == BigUint::from(0u32) {
            assert!(bool::from(inv.is_zero()));
        } else {
            assert_eq!(
                big(&(inv * fx).to_canonical()),
                BigUint::from(1u32),
                "inv {x}"
            );
        }
        // Blinded: the same inverse for any blinding bytes, usable or not (zero, p, above).
        let mut blinds = vec![rng.random::<[u8; 32]>(), [0u8; 32], [0xff; 32]];
        blinds.push(limbs_to_be(&P));
        blinds.push(limbs_to_be(&[1, 0, 0, 0]));
        for blind in &blinds {
            assert_eq!(
                fx.invert_blinded(blind).mont_limbs(),
                inv.mont_limbs(),
                "blinded inversion of {x} with {blind:02x?}"
            );
        }
        let sq = fx.square();
        let r = sq.sqrt();
        assert!(bool::from(r.is_some()), "sqrt of a square");
        assert!(bool::from(r.unwrap().square().ct_eq(&sq)));
    }
    // Bytes at or above p are refused, never reduced.
    for v in [
        p.clone(),
        &p + BigUint::from(1u32),
        (BigUint::from(1u32) << 256) - BigUint::from(1u32),
    ] {
        let mut b = [0u8; 32];
        let vb = v.to_bytes_be();
        b[32 - vb.len()..].copy_from_slice(&vb);
        assert!(bool::from(Fe::from_bytes(a, &b).is_none()), "{v} accepted");
    }
}

#[test]
fn field_matches_bigint_on_every_backend() {
    let mut rng = StdRng::seed_from_u64(40);
    field_checks(Soft, &mut rng);
    #[cfg(target_arch = "x86_64")]
    {
        if let (Some(a), Some(t)) = (crate::cpu::Adx::get(), crate::cpu::Avx2::get()) {
            field_checks(super::arithmetic::field::x86_adx::Adx(a, t), &mut rng);
        }
        if let Some(t) = crate::cpu::Avx512::get() {
            field_checks(super::arithmetic::field::x86_adx::Adx512(t), &mut rng);
        }
    }
}

#[test]
fn scalar_matches_bigint() {
    let n = big(&N);
    let mut rng = StdRng::seed_from_u64(41);
    let mut vals = edge_values(&n);
    for _ in 0..200 {
        vals.push(BigUint::from_bytes_be(&rng.random::<[u8; 32]>()) % &n);
    }
    let sc = |v: &BigUint| {
        let mut b = [0u8; 32];
        let vb = v.to_bytes_be();
        b[32 - vb.len()..].copy_from_slice(&vb);
        Scalar::from_bytes(&b).unwrap()
    };
    for x in &vals {
        for y in vals.iter().take(10) {
            assert_eq!(big(&sc(x).mul(&sc(y)).to_canonical()), (x * y) % &n);
            assert_eq!(big(&sc(x).add(&sc(y)).to_canonical()), (x + y) % &n);
            assert_eq!(big(&sc(x).sub(&sc(y)).to_canonical()), (x + &n - y) % &n);
        }
        assert_eq!(sc(x).invert().0, sc(x).invert_fermat().0);
        if *x != BigUint::from(0u32) {
            assert_eq!(
                big(&sc(x).invert().mul(&sc(x)).to_canonical()),
                BigUint::from(1u32)
            );
        }
    }
    let mut b = [0xffu8; 32];
    assert!(bool::from(Scalar::from_bytes(&b).is_none()));
    b = limbs_to_be(&N);
    assert!(bool::from(Scalar::from_bytes(&b).is_none()));
    // Reduction of hash outputs: 2^256 - 1 mod n.
    let r = Scalar::from_bytes_reduced(&[0xff; 32]);
    assert_eq!(
        big(&r.to_canonical()),
        ((BigUint::from(1u32) << 256) - BigUint::from(1u32)) % &n
    );
}

/// Affine reference arithmetic on big integers (None = infinity).
type Pt = Option<(BigUint, BigUint)>;

fn ref_add(p: &Pt, q: &Pt) -> Pt {
    let pm = big(&P);
    let (Some((x1, y1)), Some((x2, y2))) = (p, q) else {
        return p.clone().or(q.clone());
    };
    let inv = |v: &BigUint| v.modpow(&(&pm - BigUint::from(2u32)), &pm);
    let l = if x1 == x2 {
        if (y1 + y2) % &pm == BigUint::from(0u32) {
            return None;
        }
        let num = (BigUint::from(3u32) * x1 * x1 + &pm - BigUint::from(3u32)) % &pm;
        num * inv(&((BigUint::from(2u32) * y1) % &pm)) % &pm
    } else {
        ((y2 + &pm - y1) % &pm) * inv(&((x2 + &pm - x1) % &pm)) % &pm
    };
    let x3 = (&l * &l + &pm * 2u32 - x1 - x2) % &pm;
    let y3 = (&l * ((x1 + &pm - &x3) % &pm) + &pm - y1) % &pm;
    Some((x3, y3))
}

/// k·P by double-and-add in Jacobian coordinates with textbook formulas for a = -3 and one
/// inversion at the end. The affine `ref_add` inverts at every step: as the reference for
/// hundreds of scalars it took seconds per backend, and over a minute under QEMU.
fn ref_mul(k: &BigUint, p: &Pt) -> Pt {
    let pm = big(&P);
    let (px, py) = p.as_ref()?;
    let mul = |a: &BigUint, b: &BigUint| a * b % &pm;
    let sub = |a: &BigUint, b: &BigUint| (a + &pm - b) % &pm;
    let small = |c: u32, a: &BigUint| a * c % &pm;
    let zero = BigUint::from(0u32);
    // (x, y, z) stands for (x/z², y/z³); z = 0 is the point at infinity.
    let (mut x, mut y, mut z) = (zero.clone(), zero.clone(), zero.clone());
    for i in (0..k.bits()).rev() {
        if z != zero {
            // dbl-2001-b: a = -3 makes 3x² + a·z⁴ = 3(x - z²)(x + z²).
            let delta = mul(&z, &z);
            let gamma = mul(&y, &y);
            let beta = mul(&x, &gamma);
            let alpha = small(3, &mul(&sub(&x, &delta), &((&x + &delta) % &pm)));
            let x3 = sub(&mul(&alpha, &alpha), &small(8, &beta));
            let yz = (&y + &z) % &pm;
            let z3 = sub(&sub(&mul(&yz, &yz), &gamma), &delta);
            let y3 = sub(
                &mul(&alpha, &sub(&small(4, &beta), &x3)),
                &small(8, &mul(&gamma, &gamma)),
            );
            (x, y, z) = (x3, y3, z3);
        }
        if !k.bit(i) {
            continue;
        }
        if z == zero {
            (x, y, z) = (px.clone(), py.clone(), BigUint::from(1u32));
            continue;
        }
        // Mixed addition of the affine P: u2 = px·z², s2 = py·z³.
        let zz = mul(&z, &z);
        let h = sub(&mul(px, &zz), &x);
        let r = sub(&mul(&mul(py, &z), &zz), &y);
        if h == zero {
            // The accumulator is ±P: the affine reference decides (doubling or infinity).
            let zi = z.modpow(&(&pm - 2u32), &pm);
            let zi2 = mul(&zi, &zi);
            let acc = Some((mul(&x, &zi2), mul(&y, &mul(&zi2, &zi))));
            (x, y, z) = match ref_add(&acc, p) {
                Some((x3, y3)) => (x3, y3, BigUint::from(1u32)),
                None => (zero.clone(), zero.clone(), zero.clone()),
            };
            continue;
        }
        let hh = mul(&h, &h);
        let hhh = mul(&h, &hh);
        let v = mul(&x, &hh);
        let x3 = sub(&sub(&mul(&r, &r), &hhh), &small(2, &v));
        let y3 = sub(&mul(&r, &sub(&v, &x3)), &mul(&y, &hhh));
        (x, y, z) = (x3, y3, mul(&z, &h));
    }
    if z == zero {
        return None;
    }
    let zi = z.modpow(&(&pm - 2u32), &pm);
    let zi2 = mul(&zi, &zi);
    Some((mul(&x, &zi2), mul(&y, &mul(&zi2, &zi))))
}

/// The affine double-and-add `ref_mul` replaced, kept to check it on a few scalars.
fn ref_mul_affine(k: &BigUint, p: &Pt) -> Pt {
    let mut acc: Pt = None;
    for i in (0..k.bits()).rev() {
        acc = ref_add(&acc, &acc);
        if k.bit(i) {
            acc = ref_add(&acc, p);
        }
    }
    acc
}

#[test]
fn jacobian_reference_matches_the_affine_one() {
    let n = big(&N);
    let g = g_ref();
    let mut rng = StdRng::seed_from_u64(7);
    let mut ks: Vec<BigUint> = (0u32..6).map(BigUint::from).collect();
    // Past n the accumulator meets ±G, the branch that falls back to the affine formulas.
    for d in [1u32, 2] {
        ks.push(&n - d);
    }
    for d in [0u32, 1, 2, 3] {
        ks.push(&n + d);
    }
    ks.push(&n * 2u32 + 1u32);
    ks.extend((0..4).map(|_| BigUint::from_bytes_be(&rng.random::<[u8; 32]>())));
    let p = ref_mul_affine(&ks[ks.len() - 1], &g);
    for k in &ks {
        assert_eq!(ref_mul(k, &g), ref_mul_affine(k, &g), "k = {k}");
        assert_eq!(ref_mul(k, &p), ref_mul_affine(k, &p), "k = {k}, P random");
    }
}

fn to_ref<A: Arith>(j: &Jacobian<A>) -> Pt {
    let aff = j.to_affine();
    if bool::from(aff.is_none()) {
        return None;
    }
    let a = aff.unwrap();
    Some((big(&a.x.to_canonical()), big(&a.y.to_canonical())))
}

fn g_ref() -> Pt {
    let a = Affine::generator(Soft);
    Some((big(&a.x.to_canonical()), big(&a.y.to_canonical())))
}

fn scalar_of(v: &BigUint) -> Scalar {
    let mut b = [0u8; 32];
    let vb = v.to_bytes_be();
    b[32 - vb.len()..].copy_from_slice(&vb);
    Scalar::from_bytes(&b).unwrap()
}

fn point_checks<A: Arith>(a: A, rng: &mut StdRng) {
    let n = big(&N);
    let g = g_ref();
    assert!(bool::from(Affine::generator(a).is_on_curve()));
    let mut ks: Vec<BigUint> = (1u32..40).map(BigUint::from).collect();
    for d in 1u32..40 {
        ks.push(&n - BigUint::from(d));
    }
    for shift in [63u32, 64, 126, 127, 128, 251, 252, 253, 255] {
        ks.push((BigUint::from(1u32) << shift) % &n);
        ks.push(((BigUint::from(1u32) << shift) - BigUint::from(1u32)) % &n);
    }
    ks.push(&n - (BigUint::from(1u32) << 255u32));
    for _ in 0..30 {
        ks.push(BigUint::from_bytes_be(&rng.random::<[u8; 32]>()) % &n);
    }
    // Digits at the window edges: lone windows, all-negative digits, zero windows between.
    for i in 0..37u32 {
        ks.push((BigUint::from(1u32) << (7 * i)) % &n);
        ks.push((BigUint::from(64u32) << (7 * i)) % &n);
    }
    ks.push(BigUint::parse_bytes(&[b'4'; 64], 16).unwrap() % &n);
    ks.push(
        BigUint::parse_bytes(
            b"1fc07f01fc07f01fc07f01fc07f01fc07f01fc07f01fc07f01fc07f01fc07f0",
            16,
        )
        .unwrap(),
    );
    // Many at once (the lane path where the backend has one), a partial last group included.
    let nonzero: Vec<&BigUint> = ks.iter().filter(|k| **k != BigUint::from(0u32)).collect();
    let many = fixed_base_many(a, &nonzero.iter().map(|k| scalar_of(k)).collect::<Vec<_>>());
    assert_eq!(many.len(), nonzero.len());
    assert_eq!(nonzero.len() % 8, 3, "keep a partial group");
    for (k, got) in nonzero.iter().zip(&many) {
        assert_eq!(to_ref(got), ref_mul(k, &g), "fixed base, many, k = {k}");
    }
    let gj = Jacobian::from_affine(&Affine::generator(a));
    let p_secret = BigUint::from_bytes_be(&rng.random::<[u8; 32]>()) % &n;
    let pj = fixed_base(a, &scalar_of(&p_secret));
    let p_ref = ref_mul(&p_secret, &g);
    assert_eq!(to_ref(&pj), p_ref);
    for k in ks.iter().filter(|k| **k != BigUint::from(0u32)) {
        let want = ref_mul(k, &g);
        assert_eq!(
            to_ref(&fixed_base(a, &scalar_of(k))),
            want,
            "fixed base k = {k}"
        );
        assert_eq!(
            to_ref(&variable_base(a, &gj, &scalar_of(k))),
            want,
            "variable base k = {k}"
        );
        let k2 = (k * BigUint::from(7u32) + BigUint::from(3u32)) % &n;
        let want2 = ref_add(&want, &ref_mul(&k2, &p_ref));
        let (u1, u2) = (scalar_of(k), scalar_of(&k2));
        let got2 = double_base_vartime(a, &declassify(u1), &declassify(u2), &pj);
        assert_eq!(to_ref(&got2), want2, "double base k = {k}");
    }
    // Complete addition, and its variable-time form: P + P (also with P scaled to another Z),
    // P + (-P), O + P, P + O, P + G.
    let o = Jacobian::identity(a);
    let z = Fe::from_canonical(a, [7, 0, 0, 0]);
    let p_other_z = Jacobian {
        x: pj.x * z.square(),
        y: pj.y * z.square() * z,
        z: pj.z * z,
    };
    for add in [Jacobian::add, Jacobian::add_vartime] {
        assert_eq!(to_ref(&add(&pj, &pj)), ref_add(&p_ref, &p_ref));
        assert_eq!(to_ref(&add(&pj, &p_other_z)), ref_add(&p_ref, &p_ref));
        assert!(bool::from(add(&pj, &pj.neg()).is_identity()));
        assert_eq!(to_ref(&add(&o, &pj)), p_ref);
        assert_eq!(to_ref(&add(&pj, &o)), p_ref);
        assert!(bool::from(add(&o, &o).is_identity()));
        assert_eq!(to_ref(&add(&pj, &gj)), ref_add(&p_ref, &g));
    }
    assert!(bool::from(
        variable_base(a, &pj, &Scalar::ZERO).is_identity()
    ));
    assert!(bool::from(
        variable_base(a, &o, &scalar_of(&BigUint::from(5u32))).is_identity()
    ));
    // The co-Z pair: each result is the right point, and the pair shares its Z.
    let (two, same) = p_other_z.double_coz();
    assert_eq!(to_ref(&two), ref_add(&p_ref, &p_ref));
    assert_eq!(to_ref(&same), p_ref);
    assert_eq!(two.z.mont_limbs(), same.z.mont_limbs());
    let (three, again, grow) = same.add_coz(&two);
    assert_eq!((two.z * grow).mont_limbs(), three.z.mont_limbs());
    assert_eq!(to_ref(&three), ref_add(&ref_add(&p_ref, &p_ref), &p_ref));
    assert_eq!(to_ref(&again), p_ref);
    assert_eq!(three.z.mont_limbs(), again.z.mont_limbs());
}

#[test]
fn scalar_multiplication_matches_double_and_add_on_every_backend() {
    let mut rng = StdRng::seed_from_u64(42);
    point_checks(Soft, &mut rng);
    #[cfg(target_arch = "x86_64")]
    {
        if let (Some(a), Some(t)) = (crate::cpu::Adx::get(), crate::cpu::Avx2::get()) {
            point_checks(super::arithmetic::field::x86_adx::Adx(a, t), &mut rng);
        }
        if let Some(t) = crate::cpu::Avx512::get() {
            point_checks(super::arithmetic::field::x86_adx::Adx512(t), &mut rng);
        }
    }
}

/// The verification check without inversion, including the rare branch where x1 >= n (x1
/// then stands for x1 - n mod n, and r - e = x1 - n must find x1 as t + n).
#[test]
fn projective_x_check_covers_x_at_or_above_n() {
    use super::protocols::signature::x_matches_vartime;
    let a = Soft;
    let n = big(&N);
    let mut rng = StdRng::seed_from_u64(45);
    let mut found = 0;
    let mut i = 0u32;
    while found < 3 {
        // x in [n, p): a point exists for about half of them.
        let x = &n + BigUint::from(i);
        i += 1;
        let Some(pt) = Option::<Affine<Soft>>::from(Affine::decompress(
            Fe::from_canonical(a, limbs(&x)),
            subtle::Choice::from(0),
        )) else {
            continue;
        };
        found += 1;
        // The same point with a random Z.
        let z = Fe::from_canonical(
            a,
            limbs(&(BigUint::from_bytes_be(&rng.random::<[u8; 32]>()) % big(&P))),
        );
        let z2 = z.square();
        let q = Jacobian {
            x: pt.x * z2,
            y: pt.y * z2 * z,
            z,
        };
        let e_big = BigUint::from_bytes_be(&rng.random::<[u8; 32]>()) % &n;
        let e = limbs_to_be(&limbs(&e_big));
        let r = (&e_big + &x) % &n;
        assert!(x_matches_vartime(&q, &scalar_of(&r), &e));
        let wrong = (&r + 1u8) % &n;
        assert!(!x_matches_vartime(&q, &scalar_of(&wrong), &e));
        // And an ordinary x below n.
        let g = Jacobian::from_affine(&Affine::generator(a));
        let gx = big(&Affine::generator(a).x.to_canonical());
        let r = (&e_big + &gx) % &n;
        assert!(x_matches_vartime(&g, &scalar_of(&r), &e));
        assert!(!x_matches_vartime(
            &Jacobian::identity(a),
            &scalar_of(&r),
            &e
        ));
    }
}

#[test]
fn base_table_regenerates_with_the_library_arithmetic() {
    // Rebuild every window with Jacobian arithmetic and one batch inversion per window.
    let a = Soft;
    let mut base = Jacobian::from_affine(&Affine::generator(a));
    for window in BASE_TABLE.iter() {
        let mut pts = vec![base; 64];
        for j in 1..64 {
            pts[j] = if j == 1 {
                base.double()
            } else {
                pts[j - 1].add(&base)
            };
        }
        let mut aff = vec![Affine::generator(a); 64];
        batch_to_affine(&pts, &mut aff);
        for (e, p) in window.iter().zip(&aff) {
            assert_eq!(&e[..4], &p.x.mont_limbs());
            assert_eq!(&e[4..], &p.y.mont_limbs());
        }
        for _ in 0..7 {
            base = base.double();
        }
    }
}

#[test]
fn odd_multiples_of_g_regenerate_with_the_library_arithmetic() {
    let a = Soft;
    assert_eq!(G_ODD.len(), 1 << (G_WNAF_WIDTH - 2));
    let g = Jacobian::from_affine(&Affine::generator(a));
    let g2 = g.double();
    let mut pts = vec![g; G_ODD.len()];
    for j in 1..pts.len() {
        pts[j] = pts[j - 1].add(&g2);
    }
    let mut aff = vec![Affine::generator(a); pts.len()];
    batch_to_affine(&pts, &mut aff);
    for (e, p) in G_ODD.iter().zip(&aff) {
        assert_eq!(&e[..4], &p.x.mont_limbs());
        assert_eq!(&e[4..], &p.y.mont_limbs());
    }
}

#[test]
#[ignore = "timing probe, run by hand"]
fn timing_probe() {
    use std::time::Instant;
    /// Seconds per cycle: a chain of dependent 64-bit multiplications (3 cycles each).
    fn cycle() -> f64 {
        let t = Instant::now();
        let mut y = std::hint::black_box(3u64);
        for _ in 0..4_000_000 {
            y = y.wrapping_mul(y) | 1;
        }
        std::hint::black_box(y);
        t.elapsed().as_secs_f64() / 16e6
    }
    /// The fastest of seven timings of `n` calls, in cycles per call: the machine is shared,
    /// and interference only ever adds time.
    fn best(n: u32, mut f: impl FnMut()) -> f64 {
        (0..7)
            .map(|_| {
                let c = cycle();
                let t = Instant::now();
                for _ in 0..n {
                    f();
                }
                t.elapsed().as_secs_f64() / f64::from(n) / c
            })
            .fold(f64::MAX, f64::min)
    }
    fn probe<A: Arith>(a: A, name: &str) {
        use std::hint::black_box as bb;
        let y = Fe::from_canonical(a, [5, 6, 7, 8]);
        let mut x = Fe::from_canonical(a, [1, 2, 3, 4]);
        let mul = best(100_000, || x = x * y);
        let sqr = best(100_000, || x = x.square());
        let mut xs = [x; 8];
        let mul_tp = best(20_000, || {
            for v in xs.iter_mut() {
                *v = *v * y;
            }
        }) / 8.0;
        // Each input differs (x <- x^-1 + y): inverting x^-1 back to x would let the branch
        // predictor learn the variable-time steps of two values.
        let inv = best(200, || x = bb(x).invert() + y);
        let inv_f = best(200, || x = bb(x).invert_fermat() + y);
        let inv_vt = best(200, || x = bb(x).invert_vartime() + y);
        let mut blind = [0x3cu8; 32];
        let inv_b = best(200, || {
            blind[0] = blind[0].wrapping_add(1) & 0x7f;
            x = bb(x).invert_blinded(&blind) + y
        });
        // Full-size scalars: verification's cost follows the length of u1 and u2.
        let n = big(&N);
        let k = scalar_of(&(BigUint::from_bytes_be(&[0xa5; 32]) % &n));
        let k2 = scalar_of(&(BigUint::from_bytes_be(&[0x3c; 32]) % &n));
        let mut acc = Jacobian::identity(a);
        let fb = best(100, || acc = fixed_base(a, bb(&k)));
        let q = acc.to_affine().unwrap();
        let mut sel = [0u64; 8];
        let mut i = 0u32;
        let sel_c = best(10_000, || {
            i = i.wrapping_add(1);
            sel = a.select(&BASE_TABLE[(i % 37) as usize], (i % 65) ^ sel[0] as u32 & 1);
        });
        let dbl = best(10_000, || acc = acc.double());
        let madd = best(10_000, || acc = acc.add_mixed(bb(&q)));
        let p2 = Jacobian::from_affine(&q).double();
        let jadd = best(10_000, || acc = acc.add_vartime(bb(&p2)));
        let (u1, u2) = (declassify(k), declassify(k2));
        let db = best(20, || acc = double_base_vartime(a, &u1, &u2, bb(&p2)));
        // Batch verification's core over 64 items (IFMA lanes where the backend has them).
        let jobs = vec![(u1, u2, q); 64];
        let db_many = best(5, || {
            bb(double_base_many_vartime(a, bb(&jobs)));
        }) / 64.0;
        let vb = best(20, || acc = variable_base(a, bb(&p2), &k));
        let sinv = best(200, || {
            bb(k.invert());
        });
        let ks = vec![k; 64];
        let many = best(20, || {
            bb(fixed_base_many(a, bb(&ks)));
        }) / 64.0;
        bb((x, xs, acc, sel));
        println!(
            "{name} (cycles): mul lat {mul:.0} tput {mul_tp:.0}, sqr lat {sqr:.0}, inv {inv:.0} (fermat {inv_f:.0}, vartime {inv_vt:.0}, blinded {inv_b:.0}), scalar inv {sinv:.0}, select {sel_c:.0}, dbl {dbl:.0}, add mixed {madd:.0}, add (vartime) {jadd:.0}, fixed_base {fb:.0} (many: {many:.0} each), variable_base {vb:.0}, double_base {db:.0} (many: {db_many:.0} each)"
        );
    }
    probe(Soft, "soft");
    #[cfg(target_arch = "x86_64")]
    {
        if let (Some(a), Some(t)) = (crate::cpu::Adx::get(), crate::cpu::Avx2::get()) {
            probe(super::arithmetic::field::x86_adx::Adx(a, t), "adx");
        }
        if let Some(t) = crate::cpu::Avx512::get() {
            probe(super::arithmetic::field::x86_adx::Adx512(t), "adx512");
        }
    }
}

#[test]
fn random_keys_and_signatures_through_the_blinded_inversion() {
    use super::protocols::keys::SigningKey;
    for i in 0..64u8 {
        let key = SigningKey::random().unwrap();
        // The public key made with the blinded inversion is the one the constant-time path makes.
        let again = SigningKey::from_bytes(&key.to_bytes()).unwrap();
        assert_eq!(
            key.verifying_key().to_uncompressed(),
            again.verifying_key().to_uncompressed()
        );
        // r comes from k G made affine the same way: the signature verifies.
        let e = [i; 32];
        let sig = key.sign_digest(&e).unwrap();
        key.verifying_key().verify_digest(&e, &sig).unwrap();
    }
}

/// Verifications decided together (the tables' inversion shared, keys on different backends
/// in one call) give each item the verdict it gets alone: valid, tampered, under the wrong
/// key, a key used many times, s out of range.
#[test]
fn verifications_decided_together_match_each_alone() {
    use super::protocols::keys::{SigningKey, VerifyingKey};
    use super::protocols::signature::{Signature, verify_digests};
    use crate::cpu::Backend;
    let mut rng = StdRng::seed_from_u64(91);
    let keys: Vec<SigningKey> = (0..4)
        .map(|_| SigningKey::from_bytes(&rng.random()).unwrap())
        .collect();
    let mut owned: Vec<(VerifyingKey, [u8; 32], Signature, bool)> = Vec::new();
    for i in 0..30usize {
        let k = &keys[i % 4];
        let mut vk = *k.verifying_key();
        if i % 3 == 0 {
            vk = vk.with_backend(Backend::Portable).unwrap();
        }
        let e: [u8; 32] = rng.random();
        let sig = k.sign_digest(&e).unwrap();
        let (sig, e, vk) = match i % 5 {
            1 => {
                let mut b = sig.to_bytes();
                b[40] ^= 4;
                (Signature::from_bytes(&b).unwrap(), e, vk)
            }
            2 => (sig, e, *keys[(i + 1) % 4].verifying_key()),
            3 => {
                let mut b = sig.to_bytes();
                b[32..].copy_from_slice(&limbs_to_be(&N));
                (Signature::from_bytes(&b).unwrap_or(sig), [0; 32], vk)
            }
            _ => (sig, e, vk),
        };
        let alone = vk.verify_digest(&e, &sig).is_ok();
        owned.push((vk, e, sig, alone));
    }
    assert!(owned.iter().any(|o| o.3) && owned.iter().any(|o| !o.3));
    let items: Vec<_> = owned.iter().map(|(vk, e, sig, _)| (vk, *e, *sig)).collect();
    let want: Vec<bool> = owned.iter().map(|o| o.3).collect();
    assert_eq!(verify_digests(&items), want);
    assert_eq!(verify_digests(&items[..1]), want[..1]);
    assert_eq!(verify_digests(&[]), Vec::<bool>::new());
}

/// The width-w NAF by the textbook loop (subtract the digit, halve, repeat): the reference for
/// `wnaf_vartime`, which reads the digits off k's bits in place.
fn wnaf_by_subtraction(k: &BigUint, w: u32) -> Vec<i64> {
    let mut x = num_bigint::BigInt::from(k.clone());
    let mut out = Vec::new();
    let two_w = num_bigint::BigInt::from(1i64 << w);
    while x != num_bigint::BigInt::from(0) {
        let d = if x.bit(0) {
            let m = i64::try_from(((&x % &two_w) + &two_w) % &two_w).unwrap();
            if m >= 1 << (w - 1) { m - (1 << w) } else { m }
        } else {
            0
        };
        x -= d;
        x >>= 1;
        out.push(d);
    }
    out
}

#[test]
fn wnaf_digits_match_the_textbook_loop() {
    let mut rng = StdRng::seed_from_u64(5);
    let n = big(&N);
    let mut ks = edge_values(&n);
    ks.push((BigUint::from(1u32) << 256) - 1u32);
    ks.push(BigUint::parse_bytes(&[b'f'; 64], 16).unwrap());
    ks.push(
        BigUint::parse_bytes(
            b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            16,
        )
        .unwrap(),
    );
    for _ in 0..2000 {
        ks.push(BigUint::from_bytes_be(&rng.random::<[u8; 32]>()));
    }
    for k in &ks {
        for w in [2, 5, super::arithmetic::mul::G_WNAF_WIDTH] {
            let got = super::arithmetic::mul::wnaf_vartime(&limbs(k), w);
            let want = wnaf_by_subtraction(k, w);
            for (i, d) in got.iter().enumerate() {
                assert_eq!(
                    i64::from(*d),
                    want.get(i).copied().unwrap_or(0),
                    "k = {k:x}, w = {w}, digit {i}"
                );
            }
        }
    }
}

#[test]
fn tables_built_at_run_time_as_webassembly_builds_them_match_build_rs() {
    use crate::sm2::arithmetic::mul::tables;
    assert_eq!(tables::G_WNAF_WIDTH, G_WNAF_WIDTH);
    assert!(tables::base()[..] == BASE_TABLE[..]);
    assert!(tables::g_odd()[..] == G_ODD[..]);
}
