//! SM2 signatures: the standard's examples, OpenSSL both ways, malformed and edge-case inputs.

mod common;

use common::vectors;
use openssl::hash::MessageDigest;
use openssl::pkey::{Id, PKey, Private};
use openssl::pkey_ctx::PkeyCtx;
use openssl::sign::{Signer, Verifier};
use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};
use shangmi::Backend;
use shangmi::sm2::{DEFAULT_ID, Error, Signature, SigningKey, VerifyingKey};

fn arr(v: Vec<u8>) -> [u8; 32] {
    v.try_into().unwrap()
}

#[test]
fn known_answers_on_every_backend() {
    for rec in vectors::load("sm2_sign.txt") {
        let id = rec.str("id").as_bytes().to_vec();
        let msg = rec.str("msg").as_bytes().to_vec();
        let r = arr(rec.hex("r"));
        let s = arr(rec.hex("s"));
        let sig = Signature::from_scalars(&r, &s).unwrap();
        if let Some(pub_hex) = rec.opt_str("pub") {
            let vk = VerifyingKey::from_sec1_bytes(&hex::decode(pub_hex).unwrap()).unwrap();
            for b in Backend::available() {
                vk.with_backend(b)
                    .unwrap()
                    .verify_with_id(&id, &msg, &sig)
                    .unwrap();
            }
            continue;
        }
        let d = arr(rec.hex("d"));
        let k = arr(rec.hex("k"));
        for b in Backend::available() {
            let key = SigningKey::from_bytes(&d).unwrap().with_backend(b).unwrap();
            let vk = *key.verifying_key();
            if rec.opt_str("px").is_some() {
                let (x, y) = vk.coordinates();
                assert_eq!(x.as_slice(), rec.hex("px"), "{} on {b}", rec.place());
                assert_eq!(y.as_slice(), rec.hex("py"));
            }
            let z = vk.z(&id).unwrap();
            if rec.opt_str("z").is_some() {
                assert_eq!(z.as_slice(), rec.hex("z"));
            }
            let mut h = shangmi::sm3::Sm3::new();
            h.update(&z);
            h.update(&msg);
            let e = h.finalize();
            if rec.opt_str("e").is_some() {
                assert_eq!(e.as_slice(), rec.hex("e"));
            }
            let got = key
                .sign_digest_with_nonce_for_known_answer_tests(&e, &k)
                .unwrap();
            assert_eq!(got, sig, "{} on {b}", rec.place());
            if rec.opt_str("der").is_some() {
                assert_eq!(got.to_der(), rec.hex("der"));
                assert_eq!(Signature::from_der(&rec.hex("der")).unwrap(), sig);
            }
            vk.verify_with_id(&id, &msg, &sig).unwrap();
            assert_eq!(
                vk.verify_with_id(&id, b"other message", &sig),
                Err(Error::Verification)
            );
            // A fresh hedged signature verifies too.
            let fresh = key.sign_with_id(&id, &msg).unwrap();
            vk.verify_with_id(&id, &msg, &fresh).unwrap();
        }
    }
}

fn openssl_sm2_key() -> PKey<Private> {
    let mut ctx = PkeyCtx::new_id(Id::SM2).unwrap();
    ctx.keygen_init().unwrap();
    ctx.keygen().unwrap()
}

fn private_bytes(k: &PKey<Private>) -> [u8; 32] {
    let d = k.ec_key().unwrap().private_key().to_vec_padded(32).unwrap();
    d.try_into().unwrap()
}

#[test]
fn openssl_signs_shangmi_verifies_and_back_with_an_empty_id() {
    // Without a distid, OpenSSL 3 hashes Z with an empty ID.
    let mut rng = StdRng::seed_from_u64(50);
    for _ in 0..20 {
        let pkey = openssl_sm2_key();
        let key = SigningKey::from_bytes(&private_bytes(&pkey)).unwrap();
        let vk = *key.verifying_key();
        let pub_der = pkey.public_key_to_der().unwrap();
        assert!(pub_der.ends_with(&vk.to_uncompressed()));
        let msg: Vec<u8> = (0..rng.random_range(0..300))
            .map(|_| rng.random())
            .collect();

        let mut signer = Signer::new(MessageDigest::sm3(), &pkey).unwrap();
        signer.update(&msg).unwrap();
        let der = signer.sign_to_vec().unwrap();
        let sig = Signature::from_der(&der).unwrap();
        vk.verify_with_id(b"", &msg, &sig).unwrap();
        assert!(
            vk.verify(&msg, &sig).is_err(),
            "the default ID must differ from the empty one"
        );

        let ours = key.sign_with_id(b"", &msg).unwrap();
        let mut verifier = Verifier::new(MessageDigest::sm3(), &pkey).unwrap();
        verifier.update(&msg).unwrap();
        assert!(
            verifier.verify(&ours.to_der()).unwrap(),
            "OpenSSL rejects our signature"
        );
    }
}

#[test]
fn keys_and_signatures_round_trip_on_every_backend() {
    for b in Backend::available() {
        for _ in 0..10 {
            let key = SigningKey::random().unwrap().with_backend(b).unwrap();
            let again = SigningKey::from_bytes(&key.to_bytes()).unwrap();
            assert_eq!(again.verifying_key(), key.verifying_key());
            let vk = key.verifying_key();
            for enc in [vk.to_sec1_bytes(false), vk.to_sec1_bytes(true)] {
                assert_eq!(&VerifyingKey::from_sec1_bytes(&enc).unwrap(), vk);
            }
            let sig = key.sign(b"hello").unwrap();
            vk.verify(b"hello", &sig).unwrap();
            assert_eq!(Signature::from_bytes(&sig.to_bytes()).unwrap(), sig);
            assert_eq!(Signature::from_der(&sig.to_der()).unwrap(), sig);
            // Same message twice: different nonces, both valid.
            let sig2 = key.sign(b"hello").unwrap();
            assert_ne!(sig, sig2);
            vk.verify(b"hello", &sig2).unwrap();
        }
    }
}

const N: [u8; 32] = [
    0xff, 0xff, 0xff, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0x72, 0x03, 0xdf, 0x6b, 0x21, 0xc6, 0x05, 0x2b, 0x53, 0xbb, 0xf4, 0x09, 0x39, 0xd5, 0x41, 0x23,
];

fn minus(a: &[u8; 32], d: u8) -> [u8; 32] {
    let mut v = *a;
    let mut borrow = d;
    for b in v.iter_mut().rev() {
        let (x, o) = b.overflowing_sub(borrow);
        *b = x;
        borrow = u8::from(o);
    }
    v
}

#[test]
fn private_keys_outside_1_to_n_minus_2_are_refused() {
    for bad in [[0u8; 32], N, minus(&N, 1), [0xff; 32]] {
        assert_eq!(
            SigningKey::from_bytes(&bad).err(),
            Some(Error::InvalidPrivateKey)
        );
    }
    let mut one = [0u8; 32];
    one[31] = 1;
    assert!(SigningKey::from_bytes(&one).is_ok());
    assert!(SigningKey::from_bytes(&minus(&N, 2)).is_ok());
}

#[test]
fn named_edge_cases_are_rejected() {
    let key = SigningKey::random().unwrap();
    let vk = key.verifying_key();
    let sig = key.sign(b"m").unwrap();
    let (r, s) = (*sig.r(), *sig.s());
    let zero = [0u8; 32];
    // r = 0, s = 0, r = n, s = n, values above n: not even constructible.
    for (rr, ss) in [
        (zero, s),
        (r, zero),
        (N, s),
        (r, N),
        ([0xff; 32], s),
        (r, [0xff; 32]),
    ] {
        assert_eq!(
            Signature::from_scalars(&rr, &ss).err(),
            Some(Error::InvalidSignature)
        );
        let mut raw = [0u8; 64];
        raw[..32].copy_from_slice(&rr);
        raw[32..].copy_from_slice(&ss);
        assert_eq!(
            Signature::from_bytes(&raw).err(),
            Some(Error::InvalidSignature)
        );
    }
    // r + s = n: constructible, never verifies.
    let mut n_minus_r = [0u8; 32];
    let mut borrow = 0u16;
    for i in (0..32).rev() {
        let v = u16::from(N[i]).wrapping_sub(u16::from(r[i]) + borrow);
        n_minus_r[i] = v as u8;
        borrow = (v >> 15) & 1;
    }
    let bad = Signature::from_scalars(&r, &n_minus_r).unwrap();
    assert_eq!(vk.verify(b"m", &bad), Err(Error::Verification));
    // A signature for one key does not verify under another, nor with another ID.
    let other = SigningKey::random().unwrap();
    assert_eq!(
        other.verifying_key().verify(b"m", &sig),
        Err(Error::Verification)
    );
    assert_eq!(
        vk.verify_with_id(b"someone else", b"m", &sig),
        Err(Error::Verification)
    );
    // IDs longer than 8191 bytes are refused.
    assert_eq!(
        key.sign_with_id(&[b'a'; 8192], b"m").err(),
        Some(Error::IdTooLong)
    );
    assert!(key.sign_with_id(&[b'a'; 8191], b"m").is_ok());
    assert!(key.sign_with_id(DEFAULT_ID, b"m").is_ok());
    // The known-answer entry point refuses k = 0 and k >= n.
    assert_eq!(
        key.sign_digest_with_nonce_for_known_answer_tests(&[1; 32], &zero)
            .err(),
        Some(Error::InvalidNonce)
    );
    assert_eq!(
        key.sign_digest_with_nonce_for_known_answer_tests(&[1; 32], &N)
            .err(),
        Some(Error::InvalidNonce)
    );
}

#[test]
fn public_key_decoding_rejects_everything_invalid() {
    let vk = *SigningKey::random().unwrap().verifying_key();
    let good = vk.to_uncompressed();
    let compressed = vk.to_sec1_bytes(true);
    let p: [u8; 32] =
        hex::decode("fffffffeffffffffffffffffffffffffffffffff00000000ffffffffffffffff")
            .unwrap()
            .try_into()
            .unwrap();
    let mut cases: Vec<Vec<u8>> = vec![
        vec![],
        vec![0],
        vec![4],
        good[..64].to_vec(),
        [&good[..], &[0]].concat(),
    ];
    for prefix in [0u8, 1, 5, 6, 7, 0xff] {
        let mut c = good.to_vec();
        c[0] = prefix;
        cases.push(c);
        let mut c = compressed.clone();
        c[0] = prefix;
        cases.push(c);
    }
    // Coordinates >= p (p itself, p + small, all ones), x and y in turn.
    for v in [p, minus(&[0xff; 32], 0), {
        let mut q = p;
        q[31] = 0xff;
        q
    }] {
        let mut c = good;
        c[1..33].copy_from_slice(&v);
        cases.push(c.to_vec());
        let mut c = good;
        c[33..].copy_from_slice(&v);
        cases.push(c.to_vec());
        let mut c = compressed.clone();
        c[1..].copy_from_slice(&v);
        cases.push(c);
    }
    // Off the curve: flip a bit of y.
    let mut c = good;
    c[64] ^= 1;
    cases.push(c.to_vec());
    // The point at infinity as all zeros.
    cases.push([&[4u8][..], &[0u8; 64]].concat());
    // x with no square root: search small x values.
    let mut found = false;
    for x in 0u8..50 {
        let mut c = vec![2u8; 33];
        c[1..].fill(0);
        c[32] = x;
        if VerifyingKey::from_sec1_bytes(&c).is_err() {
            found = true;
            cases.push(c);
            break;
        }
    }
    assert!(found);
    for c in cases {
        assert_eq!(
            VerifyingKey::from_sec1_bytes(&c).err(),
            Some(Error::InvalidPublicKey),
            "{}",
            hex::encode(&c)
        );
    }
}

#[test]
fn malformed_der_is_rejected() {
    let key = SigningKey::random().unwrap();
    let sig = key.sign(b"m").unwrap();
    let der = sig.to_der();
    assert_eq!(Signature::from_der(&der).unwrap(), sig);
    let mut cases: Vec<Vec<u8>> = Vec::new();
    // Every truncation, every appended byte.
    for cut in 0..der.len() {
        cases.push(der[..cut].to_vec());
    }
    cases.push([&der[..], &[0]].concat());
    // Wrong outer tag, wrong lengths, long-form and indefinite lengths.
    for (i, v) in [
        (0usize, 0x31u8),
        (0, 0x10),
        (1, der[1] + 1),
        (1, der[1] - 1),
        (1, 0x80),
        (1, 0x81),
    ] {
        let mut c = der.clone();
        c[i] = v;
        cases.push(c);
    }
    let int = |v: &[u8]| [&[0x02, v.len() as u8][..], v].concat();
    let seq = |a: Vec<u8>, b: Vec<u8>| [&[0x30, (a.len() + b.len()) as u8][..], &a, &b].concat();
    let r = sig.r().to_vec();
    let s = sig.s().to_vec();
    // Non-minimal (extra leading zero), negative (missing zero), empty, too long, zero.
    cases.push(seq(int(&[&[0u8, 0][..], &r[..]].concat()), int(&s)));
    cases.push(seq(int(&[0x80u8; 32]), int(&s)));
    cases.push(seq(int(&[]), int(&s)));
    cases.push(seq(int(&[1u8; 33]), int(&s)));
    cases.push(seq(int(&[0]), int(&s)));
    cases.push(
        seq(int(&r), int(&s))
            .into_iter()
            .chain([0x02, 0x01, 0x01])
            .collect(),
    );
    cases.push(seq(int(&r), vec![]));
    // Long-form length on the SEQUENCE.
    cases.push([&[0x30, 0x81, der.len() as u8 - 2][..], &der[2..]].concat());
    // INTEGER with a long-form length.
    cases.push(seq([&[0x02, 0x81, 32][..], &r[..]].concat(), int(&s)));
    // Other tags in place of INTEGER.
    cases.push(seq([&[0x04, 32][..], &r[..]].concat(), int(&s)));
    for c in cases {
        assert_eq!(
            Signature::from_der(&c).err(),
            Some(Error::InvalidSignature),
            "{}",
            hex::encode(&c)
        );
    }
    // A value that needs the sign byte is written with it and read back.
    let mut rng = StdRng::seed_from_u64(51);
    for _ in 0..200 {
        let sig = key.sign(&rng.random::<[u8; 8]>()).unwrap();
        let der = sig.to_der();
        assert_eq!(Signature::from_der(&der).unwrap(), sig);
        assert_eq!(der.len(), 2 + der[1] as usize);
    }
    let mut seed = [0u8; 32];
    rng.fill_bytes(&mut seed);
}

#[test]
fn pooled_and_precomputed_paths_agree_with_the_plain_ones() {
    use shangmi::sm2::PresignPool;
    for b in Backend::available() {
        let key = SigningKey::random().unwrap().with_backend(b).unwrap();
        let vk = *key.verifying_key();
        let pre = vk.precompute();
        let mut pool = PresignPool::new(7);
        let mut seen = std::collections::HashSet::new();
        for i in 0..40u32 {
            let msg = i.to_be_bytes();
            let sig = key.sign_with_pool(&mut pool, &msg).unwrap();
            // Every pooled nonce is fresh: r differs for every signature over the same e.
            assert!(seen.insert(*sig.r()), "pooled nonce reused");
            vk.verify(&msg, &sig).unwrap();
            pre.verify(&msg, &sig).unwrap();
            assert_eq!(pre.verify(b"other", &sig), Err(Error::Verification));
            let plain = key.sign(&msg).unwrap();
            pre.verify(&msg, &plain).unwrap();
        }
        // The same digest signed from the pool twice gets different nonces.
        let a = key.sign_with_pool(&mut pool, b"same").unwrap();
        let c = key.sign_with_pool(&mut pool, b"same").unwrap();
        assert_ne!(a, c);
    }
}
