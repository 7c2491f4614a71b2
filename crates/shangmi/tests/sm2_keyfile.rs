//! Key files: round trips in every format, OpenSSL 3 reading ours and us reading OpenSSL's
//! (plain, SEC1, public, and password-encrypted with its default AES-256-CBC and with SM4-CBC),
//! and every corruption of a file rejected with an error.

use openssl::ec::{EcGroup, EcKey};
use openssl::nid::Nid;
use openssl::pkey::PKey;
use openssl::symm::Cipher;
use rand::SeedableRng;
use rand::rngs::StdRng;
use shangmi::sm2::{EncryptionParams, KeyFileError, Prf, Signature, SigningKey, VerifyingKey};

fn same(a: &SigningKey, b: &SigningKey) -> bool {
    *a.to_bytes() == *b.to_bytes() && a.verifying_key() == b.verifying_key()
}

const FAST: EncryptionParams = EncryptionParams {
    prf: Prf::HmacSm3,
    iterations: 3,
};

#[test]
fn every_format_round_trips() {
    let mut rng = StdRng::seed_from_u64(90);
    for _ in 0..10 {
        let k = random_key(&mut rng);
        assert!(same(
            &k,
            &SigningKey::from_pkcs8_der(&k.to_pkcs8_der().unwrap()).unwrap()
        ));
        assert!(same(
            &k,
            &SigningKey::from_pkcs8_pem(&k.to_pkcs8_pem().unwrap()).unwrap()
        ));
        assert!(same(
            &k,
            &SigningKey::from_sec1_der(&k.to_sec1_der().unwrap()).unwrap()
        ));
        assert!(same(
            &k,
            &SigningKey::from_sec1_pem(&k.to_sec1_pem().unwrap()).unwrap()
        ));
        for prf in [Prf::HmacSm3, Prf::HmacSha256] {
            let params = EncryptionParams { prf, iterations: 7 };
            let der = k.to_pkcs8_encrypted_der(b"pw", params).unwrap();
            assert!(same(
                &k,
                &SigningKey::from_pkcs8_encrypted_der(&der, b"pw").unwrap()
            ));
            let pem = k
                .to_pkcs8_encrypted_pem("pässword".as_bytes(), params)
                .unwrap();
            assert!(same(
                &k,
                &SigningKey::from_pkcs8_encrypted_pem(&pem, "pässword".as_bytes()).unwrap()
            ));
            assert!(same(
                &k,
                &SigningKey::from_pem(&pem, Some("pässword".as_bytes())).unwrap()
            ));
            assert_eq!(
                SigningKey::from_pem(&pem, None).unwrap_err(),
                KeyFileError::PasswordRequired
            );
        }
        assert!(same(
            &k,
            &SigningKey::from_pem(&k.to_pkcs8_pem().unwrap(), None).unwrap()
        ));
        assert!(same(
            &k,
            &SigningKey::from_pem(&k.to_sec1_pem().unwrap(), None).unwrap()
        ));
        let vk = k.verifying_key();
        assert_eq!(
            VerifyingKey::from_public_key_der(&vk.to_public_key_der().unwrap()).unwrap(),
            *vk
        );
        assert_eq!(
            VerifyingKey::from_public_key_pem(&vk.to_public_key_pem().unwrap()).unwrap(),
            *vk
        );
    }
}

mod common;
use common::openssl_keys::{d_of, openssl_sm2_key};
use common::random_key;

#[test]
fn we_read_what_openssl_writes() {
    for _ in 0..10 {
        let p = openssl_sm2_key();
        let want = SigningKey::from_bytes(&d_of(&p)).unwrap();
        let pkcs8_pem = String::from_utf8(p.private_key_to_pem_pkcs8().unwrap()).unwrap();
        assert!(same(
            &want,
            &SigningKey::from_pkcs8_pem(&pkcs8_pem).unwrap()
        ));
        let pkcs8_der = p.private_key_to_pkcs8().unwrap();
        assert!(same(
            &want,
            &SigningKey::from_pkcs8_der(&pkcs8_der).unwrap()
        ));
        // The traditional form is SEC1.
        let sec1 = p.private_key_to_der().unwrap();
        assert!(same(&want, &SigningKey::from_sec1_der(&sec1).unwrap()));
        let sec1_pem =
            String::from_utf8(p.ec_key().unwrap().private_key_to_pem().unwrap()).unwrap();
        assert!(sec1_pem.starts_with("-----BEGIN EC PRIVATE KEY-----"));
        assert!(same(&want, &SigningKey::from_pem(&sec1_pem, None).unwrap()));
        let spki = String::from_utf8(p.public_key_to_pem().unwrap()).unwrap();
        assert_eq!(
            VerifyingKey::from_public_key_pem(&spki).unwrap(),
            *want.verifying_key()
        );
        // Encrypted: OpenSSL's default AES-256-CBC, and SM4-CBC (both with HMAC-SHA256).
        for cipher in [
            Cipher::aes_256_cbc(),
            Cipher::aes_128_cbc(),
            Cipher::sm4_cbc(),
        ] {
            let pem = p
                .private_key_to_pem_pkcs8_passphrase(cipher, b"secret")
                .unwrap();
            let pem = String::from_utf8(pem).unwrap();
            assert!(same(
                &want,
                &SigningKey::from_pkcs8_encrypted_pem(&pem, b"secret").unwrap()
            ));
            assert_eq!(
                SigningKey::from_pkcs8_encrypted_pem(&pem, b"secreT").unwrap_err(),
                KeyFileError::WrongPassword
            );
        }
    }
}

#[test]
fn openssl_reads_what_we_write_and_signs_with_it() {
    let mut rng = StdRng::seed_from_u64(91);
    for _ in 0..10 {
        let k = random_key(&mut rng);
        let pems = [
            PKey::private_key_from_pem(k.to_pkcs8_pem().unwrap().as_bytes()).unwrap(),
            PKey::private_key_from_pem(k.to_sec1_pem().unwrap().as_bytes()).unwrap(),
            PKey::private_key_from_der(&k.to_pkcs8_der().unwrap()).unwrap(),
            // OpenSSL 3.0 has no HMAC-SM3 PRF: the SHA-256 variant is for it.
            PKey::private_key_from_pem_passphrase(
                k.to_pkcs8_encrypted_pem(
                    b"pw",
                    EncryptionParams {
                        prf: Prf::HmacSha256,
                        iterations: 1000,
                    },
                )
                .unwrap()
                .as_bytes(),
                b"pw",
            )
            .unwrap(),
        ];
        // OpenSSL's own SM2 key, reloaded from its PEM, as the reference for what it reports.
        let reference =
            PKey::private_key_from_pem(&openssl_sm2_key().private_key_to_pem_pkcs8().unwrap())
                .unwrap();
        for p in pems {
            assert_eq!(
                p.id(),
                reference.id(),
                "OpenSSL loads it as it loads its own"
            );
            assert_eq!(p.bits(), 256);
            // Written back out by OpenSSL, it is still our key.
            let back = SigningKey::from_pkcs8_der(&p.private_key_to_pkcs8().unwrap()).unwrap();
            assert!(same(&back, &k));
            // OpenSSL signs (empty ID) with the key it loaded; we verify.
            let mut signer =
                openssl::sign::Signer::new(openssl::hash::MessageDigest::sm3(), &p).unwrap();
            signer.update(b"msg").unwrap();
            let sig = Signature::from_der(&signer.sign_to_vec().unwrap()).unwrap();
            k.verifying_key().verify_with_id(b"", b"msg", &sig).unwrap();
        }
        let pubkey =
            PKey::public_key_from_pem(k.verifying_key().to_public_key_pem().unwrap().as_bytes())
                .unwrap();
        let reference =
            PKey::public_key_from_pem(&openssl_sm2_key().public_key_to_pem().unwrap()).unwrap();
        assert_eq!(pubkey.id(), reference.id());
        let pubkey =
            PKey::public_key_from_der(&k.verifying_key().to_public_key_der().unwrap()).unwrap();
        assert_eq!(
            pubkey.public_key_to_der().unwrap(),
            k.verifying_key().to_public_key_der().unwrap()
        );
    }
}

/// Every single-bit change, every truncation and an appended byte: all rejected.
fn assert_all_corruptions_rejected(name: &str, good: &[u8], parse: impl Fn(&[u8]) -> bool) {
    assert!(parse(good), "{name}: the good file must parse");
    for i in 0..good.len() {
        for bit in 0..8 {
            let mut bad = good.to_vec();
            bad[i] ^= 1 << bit;
            assert!(
                !parse(&bad),
                "{name}: flip of bit {bit} in byte {i} accepted"
            );
        }
    }
    for cut in 0..good.len() {
        assert!(!parse(&good[..cut]), "{name}: truncation to {cut} accepted");
    }
    let mut longer = good.to_vec();
    longer.push(0);
    assert!(!parse(&longer), "{name}: trailing byte accepted");
}

#[test]
fn every_corruption_is_rejected() {
    let k = random_key(&mut StdRng::seed_from_u64(92));
    assert_all_corruptions_rejected("pkcs8", &k.to_pkcs8_der().unwrap(), |b| {
        SigningKey::from_pkcs8_der(b).is_ok()
    });
    assert_all_corruptions_rejected("sec1", &k.to_sec1_der().unwrap(), |b| {
        SigningKey::from_sec1_der(b).is_ok()
    });
    assert_all_corruptions_rejected(
        "spki",
        &k.verifying_key().to_public_key_der().unwrap(),
        |b| VerifyingKey::from_public_key_der(b).is_ok(),
    );
    let enc = k.to_pkcs8_encrypted_der(b"pw", FAST).unwrap();
    assert_all_corruptions_rejected("encrypted", &enc, |b| {
        SigningKey::from_pkcs8_encrypted_der_with_limit(b, b"pw", 1000).is_ok()
    });
    // PEM: damaged armour or base64.
    let pem = k.to_pkcs8_pem().unwrap().to_string();
    for bad in [
        pem.replace("BEGIN PRIVATE", "BEGIN PRIVATER"),
        pem.replace("END PRIVATE KEY", "END PUBLIC KEY"),
        pem.replacen('M', "*", 1),
        pem[..pem.len() / 2].to_string(),
        String::new(),
        "not pem at all".into(),
    ] {
        assert!(SigningKey::from_pem(&bad, None).is_err(), "{bad}");
    }
    // Labels are checked.
    assert!(matches!(
        SigningKey::from_sec1_pem(&pem),
        Err(KeyFileError::UnexpectedLabel(_))
    ));
    assert!(matches!(
        VerifyingKey::from_public_key_pem(&pem),
        Err(KeyFileError::UnexpectedLabel(_))
    ));
}

#[test]
fn out_of_range_and_foreign_keys_are_refused() {
    // d = 0, n - 1, n and above: a SEC1 structure with each.
    let n =
        hex::decode("fffffffeffffffffffffffffffffffff7203df6b21c6052b53bbf40939d54123").unwrap();
    let mut n_minus_1 = n.clone();
    n_minus_1[31] -= 1;
    for d in [
        vec![0u8; 32],
        n_minus_1,
        n,
        vec![0xff; 32],
        vec![],
        vec![1; 33],
    ] {
        let mut sec1 = vec![0x30, 0, 0x02, 0x01, 0x01, 0x04, d.len() as u8];
        sec1.extend_from_slice(&d);
        sec1[1] = (sec1.len() - 2) as u8;
        assert_eq!(
            SigningKey::from_sec1_der(&sec1).err(),
            Some(KeyFileError::InvalidKey),
            "{d:02x?}"
        );
    }
    // A private key whose embedded public key belongs to another key.
    let mut rng = StdRng::seed_from_u64(93);
    let (a, b) = (random_key(&mut rng), random_key(&mut rng));
    let sec1 = a.to_sec1_der().unwrap();
    let (pa, pb) = (
        a.verifying_key().to_uncompressed(),
        b.verifying_key().to_uncompressed(),
    );
    let at = sec1.windows(65).position(|w| w == pa).unwrap();
    let mut mixed = sec1.to_vec();
    mixed[at..at + 65].copy_from_slice(&pb);
    assert_eq!(
        SigningKey::from_sec1_der(&mixed).err(),
        Some(KeyFileError::InvalidKey)
    );
    // P-256 keys are EC keys, but not SM2.
    let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).unwrap();
    let p256 = PKey::from_ec_key(EcKey::generate(&group).unwrap()).unwrap();
    assert!(matches!(
        SigningKey::from_pkcs8_der(&p256.private_key_to_pkcs8().unwrap()),
        Err(KeyFileError::Unsupported(_))
    ));
    assert!(matches!(
        VerifyingKey::from_public_key_der(&p256.public_key_to_der().unwrap()),
        Err(KeyFileError::Unsupported(_))
    ));
    assert!(matches!(
        SigningKey::from_sec1_der(&p256.private_key_to_der().unwrap()),
        Err(KeyFileError::Unsupported(_))
    ));
}

/// An encrypted key whose PBKDF2 parameters say `iterations`, built by hand.
fn encrypted_with_iterations(iterations: u32, prf: Option<&[u8]>) -> Vec<u8> {
    let mut iters = iterations.to_be_bytes().to_vec();
    while iters.len() > 1 && iters[0] == 0 && iters[1] < 0x80 {
        iters.remove(0);
    }
    if iters[0] >= 0x80 {
        iters.insert(0, 0);
    }
    let tlv = |tag: u8, body: &[u8]| -> Vec<u8> {
        let len = match body.len() {
            n @ 0..128 => vec![n as u8],
            n @ 128..256 => vec![0x81, n as u8],
            n => vec![0x82, (n >> 8) as u8, n as u8],
        };
        [vec![tag], len, body.to_vec()].concat()
    };
    let mut kdf_params = [tlv(0x04, &[7; 16]), tlv(0x02, &iters)].concat();
    if let Some(prf) = prf {
        kdf_params.extend(tlv(0x30, &[tlv(0x06, prf), vec![0x05, 0x00]].concat()));
    }
    let pbkdf2_oid = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x05, 0x0c];
    let pbes2_oid = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x05, 0x0d];
    let sm4_cbc = [0x2a, 0x81, 0x1c, 0xcf, 0x55, 0x01, 0x68, 0x02];
    let kdf = tlv(
        0x30,
        &[tlv(0x06, &pbkdf2_oid), tlv(0x30, &kdf_params)].concat(),
    );
    let scheme = tlv(0x30, &[tlv(0x06, &sm4_cbc), tlv(0x04, &[9; 16])].concat());
    let alg = tlv(
        0x30,
        &[tlv(0x06, &pbes2_oid), tlv(0x30, &[kdf, scheme].concat())].concat(),
    );
    tlv(0x30, &[alg, tlv(0x04, &[1; 32])].concat())
}

#[test]
fn hostile_encryption_parameters_are_refused_cheaply() {
    let hmac_sm3 = [0x2a, 0x81, 0x1c, 0xcf, 0x55, 0x01, 0x83, 0x11, 0x02];
    // Within the limit, the structure parses and the password is simply wrong.
    let ok = encrypted_with_iterations(5, Some(&hmac_sm3));
    assert_eq!(
        SigningKey::from_pkcs8_encrypted_der(&ok, b"pw").unwrap_err(),
        KeyFileError::WrongPassword
    );
    // Over the limit: refused before any PBKDF2 work (this would take minutes otherwise).
    let t = std::time::Instant::now();
    let huge = encrypted_with_iterations(4_000_000_000, Some(&hmac_sm3));
    assert_eq!(
        SigningKey::from_pkcs8_encrypted_der(&huge, b"pw").unwrap_err(),
        KeyFileError::TooManyIterations(4_000_000_000)
    );
    let over = encrypted_with_iterations(20_001, Some(&hmac_sm3));
    assert_eq!(
        SigningKey::from_pkcs8_encrypted_der_with_limit(&over, b"pw", 20_000).unwrap_err(),
        KeyFileError::TooManyIterations(20_001)
    );
    assert!(t.elapsed().as_secs() < 5);
    // Zero iterations, the SHA-1 default PRF (read: the password is simply wrong), an
    // unknown PRF.
    assert!(matches!(
        SigningKey::from_pkcs8_encrypted_der(&encrypted_with_iterations(0, Some(&hmac_sm3)), b"pw"),
        Err(KeyFileError::Malformed(_))
    ));
    assert_eq!(
        SigningKey::from_pkcs8_encrypted_der(&encrypted_with_iterations(5, None), b"pw")
            .unwrap_err(),
        KeyFileError::WrongPassword
    );
    let md5 = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x02, 0x05];
    assert!(matches!(
        SigningKey::from_pkcs8_encrypted_der(&encrypted_with_iterations(5, Some(&md5)), b"pw"),
        Err(KeyFileError::Unsupported(_))
    ));
}

#[test]
fn a_wrong_password_is_one_error() {
    let k = random_key(&mut StdRng::seed_from_u64(94));
    let der = k.to_pkcs8_encrypted_der(b"right", FAST).unwrap();
    for wrong in [&b"wrong"[..], b"", b"Right", b"right ", &[0u8; 1000]] {
        assert_eq!(
            SigningKey::from_pkcs8_encrypted_der(&der, wrong).unwrap_err(),
            KeyFileError::WrongPassword
        );
    }
}

#[test]
fn what_decrypts_under_the_right_password_but_is_not_an_sm2_key_is_one_error() {
    // OpenSSL encrypts a P-256 key: the password is right and the padding checks, and the
    // reader must still say no more than "wrong password" (naming the curve found inside
    // would report on the plaintext to whoever can submit ciphertexts).
    let p256 = PKey::from_ec_key(
        EcKey::generate(&EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).unwrap()).unwrap(),
    )
    .unwrap();
    let der = p256
        .private_key_to_pkcs8_passphrase(Cipher::aes_256_cbc(), b"right")
        .unwrap();
    let err = SigningKey::from_pkcs8_encrypted_der(&der, b"right").unwrap_err();
    assert_eq!(err, KeyFileError::WrongPassword);
    assert!(!err.to_string().contains("1.2.840"), "{err}");
}

#[test]
fn the_writer_refuses_what_the_reader_would_refuse() {
    let k = random_key(&mut StdRng::seed_from_u64(95));
    for iterations in [0, 10_000_001, u32::MAX] {
        let params = EncryptionParams {
            prf: Prf::HmacSm3,
            iterations,
        };
        assert!(
            k.to_pkcs8_encrypted_der(b"pw", params).is_err(),
            "{iterations} iterations written"
        );
    }
}
