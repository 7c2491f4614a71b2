//! Wycheproof's ECDSA and ECDH test categories, mirrored for SM2 with cases built here (the
//! Wycheproof suites have no SM2 files; their SM4-GCM, SM4-CCM and HMAC-SM3 files run in
//! sm4_modes.rs and sm3_family.rs). Points are built with a big-integer reference, never with
//! the code under test: signatures that are valid although verification meets an unusual
//! case (x1 between n and p, a doubling inside the double multiplication, extreme r and s, a
//! public key with a tiny x), and ones that must fail (a sum at infinity, r or s out of range).
//! Encodings (DER oddities, invalid and infinite points, other curves) are covered in
//! sm2_sign.rs, sm2_keyfile.rs and sm2_encrypt.rs.

mod common;

use common::curve::{Curve, Pt, b32, sm2};
use num_bigint::BigUint;
use rand::rngs::StdRng;
use rand::{RngCore, SeedableRng};
use shangmi::Backend;
use shangmi::sm2::{Error, Signature, VerifyingKey};

struct Case {
    public: Pt,
    r: BigUint,
    s: BigUint,
    e: BigUint,
}

fn random_below(rng: &mut StdRng, n: &BigUint) -> BigUint {
    let mut b = [0u8; 40];
    rng.fill_bytes(&mut b);
    BigUint::from_bytes_be(&b) % n
}

/// The signature (r, s) over digest e that makes verification compute s G + t P = R for the
/// given s and t: r = t - s, and e chosen so that e + x(R) = r. `None` if r would be 0.
fn signature_for(c: &Curve, g: &Pt, public: &Pt, s: &BigUint, t: &BigUint) -> Option<Case> {
    let n = &c.n;
    let r = (t + n - s) % n;
    if r == BigUint::ZERO {
        return None;
    }
    let sum = c.add(&c.mul(s, g), &c.mul(t, public));
    let x = sum.map_or(BigUint::ZERO, |(x, _)| x);
    let e = (&r + n - (x % n)) % n;
    Some(Case {
        public: public.clone(),
        r,
        s: s.clone(),
        e,
    })
}

fn verify(case: &Case, backend: Backend) -> Result<(), Error> {
    let (x, y) = case.public.clone().unwrap();
    let sec1 = [&[4u8][..], &b32(&x), &b32(&y)].concat();
    let key = VerifyingKey::from_sec1_bytes(&sec1)?
        .with_backend(backend)
        .unwrap();
    let sig = Signature::from_scalars(&b32(&case.r), &b32(&case.s))?;
    key.verify_digest(&b32(&case.e), &sig)
}

fn on_every_backend(case: &Case) -> Vec<Result<(), Error>> {
    Backend::available()
        .into_iter()
        .map(|b| verify(case, b))
        .collect()
}

#[test]
fn x1_between_n_and_p_verifies() {
    // Wycheproof: "k*G has a large x-coordinate". x(R) in [n, p) is reduced mod n before the
    // comparison; the verifier's shortcut that avoids an inversion must try r - e + n too.
    let (c, b, g) = sm2();
    let mut rng = StdRng::seed_from_u64(81);
    let mut x = c.n.clone();
    let big = loop {
        x += 1u8;
        if let Some(p) = c.lift_x(&b, &x) {
            break Some(p);
        }
    };
    assert!(big.as_ref().unwrap().0 >= c.n);
    // P = t^-1 (R - s G): a public key for which s G + t P = R.
    for _ in 0..4 {
        let s = random_below(&mut rng, &c.n);
        let t = random_below(&mut rng, &c.n);
        let public = c.mul(&c.inv_n(&t), &c.add(&big, &c.neg(&c.mul(&s, &g))));
        let case = signature_for(&c, &g, &public, &s, &t).unwrap();
        assert!(on_every_backend(&case).iter().all(Result::is_ok));
        // r one off: fails.
        let off = Case {
            r: (&case.r + 1u8) % &c.n,
            ..case
        };
        assert!(on_every_backend(&off).iter().all(Result::is_err));
    }
}

#[test]
fn a_doubling_inside_the_double_multiplication_verifies() {
    // Wycheproof: "edge case for Shamir multiplication". With t P = s G the sum is a
    // doubling, which an addition formula must not get wrong.
    let (c, _, g) = sm2();
    let mut rng = StdRng::seed_from_u64(82);
    for _ in 0..4 {
        let d = random_below(&mut rng, &c.n);
        let public = c.mul(&d, &g);
        let s = random_below(&mut rng, &c.n);
        let t = &s * c.inv_n(&d) % &c.n;
        let case = signature_for(&c, &g, &public, &s, &t).unwrap();
        assert_eq!(
            c.add(&c.mul(&s, &g), &c.mul(&t, &public)),
            c.mul(&(2u8 * &s), &g)
        );
        assert!(on_every_backend(&case).iter().all(Result::is_ok));
    }
}

#[test]
fn a_sum_at_infinity_never_verifies() {
    // t P = -s G: s G + t P is the point at infinity, which has no x to compare. Whatever
    // e is, the signature must be refused (not compared against some default x).
    let (c, _, g) = sm2();
    let mut rng = StdRng::seed_from_u64(83);
    for _ in 0..4 {
        let d = random_below(&mut rng, &c.n);
        let public = c.mul(&d, &g);
        let s = random_below(&mut rng, &c.n);
        let t = (&c.n - (&s * c.inv_n(&d) % &c.n)) % &c.n;
        assert_eq!(c.add(&c.mul(&s, &g), &c.mul(&t, &public)), None);
        let case = signature_for(&c, &g, &public, &s, &t).unwrap();
        for e in [
            case.e.clone(),
            case.r.clone(),
            BigUint::ZERO,
            BigUint::from(1u8),
        ] {
            let attempt = Case {
                e,
                public: case.public.clone(),
                r: case.r.clone(),
                s: case.s.clone(),
            };
            assert!(on_every_backend(&attempt).iter().all(Result::is_err));
        }
    }
}

#[test]
fn extreme_r_and_s_verify_when_valid() {
    // Wycheproof: r and s of 1 and n - 1, as valid signatures (built for them).
    let (c, _, g) = sm2();
    let mut rng = StdRng::seed_from_u64(84);
    let one = BigUint::from(1u8);
    let top = &c.n - 1u8;
    let below_top = &c.n - 2u8;
    // (1, n - 1) and (n - 1, 1) are the r + s = n case, refused below.
    for (r, s) in [
        (&one, &one),
        (&top, &top),
        (&one, &below_top),
        (&below_top, &one),
    ] {
        let d = random_below(&mut rng, &c.n);
        let public = c.mul(&d, &g);
        let t = (r + s) % &c.n;
        let case = signature_for(&c, &g, &public, s, &t).unwrap();
        assert_eq!(&case.r, r);
        assert!(on_every_backend(&case).iter().all(Result::is_ok));
    }
    // r + s = n (t = 0) is refused even though each is in range.
    let d = random_below(&mut rng, &c.n);
    let public = c.mul(&d, &g);
    let case = Case {
        public,
        r: one.clone(),
        s: top.clone(),
        e: BigUint::from(5u8),
    };
    assert!(
        on_every_backend(&case)
            .iter()
            .all(|r| *r == Err(Error::Verification))
    );
}

#[test]
fn public_keys_with_a_tiny_x_work() {
    // Wycheproof: public keys with special coordinates. The smallest x that is on the curve.
    let (c, b, g) = sm2();
    let public = (0u32..)
        .find_map(|x| c.lift_x(&b, &BigUint::from(x)))
        .map(Some)
        .unwrap();
    let mut rng = StdRng::seed_from_u64(85);
    for negate in [false, true] {
        let p = if negate {
            c.neg(&public)
        } else {
            public.clone()
        };
        let s = random_below(&mut rng, &c.n);
        let t = random_below(&mut rng, &c.n);
        let case = signature_for(&c, &g, &p, &s, &t).unwrap();
        assert!(on_every_backend(&case).iter().all(Result::is_ok));
        // And encryption to it round-trips through the private-key-less check of C1: the
        // point decodes compressed as well.
        let (x, y) = p.clone().unwrap();
        let compressed = [&[2 | (b32(&y)[31] & 1)][..], &b32(&x)].concat();
        let key = VerifyingKey::from_sec1_bytes(&compressed).unwrap();
        assert_eq!(key.coordinates(), (b32(&x), b32(&y)));
    }
}
