//! Key files as other tools write them, each built independently of shangmi's writer: PEM
//! with text around it or unusual line lengths, OpenSSL's `SM2 PRIVATE KEY` label, explicit
//! curve parameters, the SM2 algorithm OID in place of id-ecPublicKey, and PBKDF2 with every
//! HMAC PRF of RFC 8018 (SHA-1 being its default and BouncyCastle's).

use openssl::bn::BigNumContext;
use openssl::ec::{Asn1Flag, EcGroup, EcKey, PointConversionForm};
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::PKey;
use openssl::symm::{Cipher, encrypt};
use shangmi::sm2::{KeyFileError, SigningKey, VerifyingKey};

mod common;
use common::openssl_keys::{d_of, openssl_sm2_key};

fn tlv(tag: u8, body: &[u8]) -> Vec<u8> {
    let len = match body.len() {
        n @ 0..128 => vec![n as u8],
        n @ 128..256 => vec![0x81, n as u8],
        n => vec![0x82, (n >> 8) as u8, n as u8],
    };
    [vec![tag], len, body.to_vec()].concat()
}

fn pem(label: &str, der: &[u8], width: usize) -> String {
    use base64ct::Encoding;
    let b64 = base64ct::Base64::encode_string(der);
    let body: Vec<&str> = b64
        .as_bytes()
        .chunks(width)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    format!(
        "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
        body.join("\n")
    )
}

const SM2_OID: [u8; 8] = [0x2a, 0x81, 0x1c, 0xcf, 0x55, 0x01, 0x82, 0x2d];

#[test]
fn pem_with_text_around_any_line_length_and_several_blocks() {
    let p = openssl_sm2_key();
    let d = d_of(&p);
    let pkcs8 = p.private_key_to_pkcs8().unwrap();
    let spki = p.public_key_to_der().unwrap();
    let public = pem("PUBLIC KEY", &spki, 64);
    for text in [
        pem("PRIVATE KEY", &pkcs8, 10_000),
        pem("PRIVATE KEY", &pkcs8, 76),
        pem("PRIVATE KEY", &pkcs8, 17).replace('\n', "\r\n"),
        // `openssl pkcs12 -nodes` puts bag attributes first; `openssl pkey -text` a dump after.
        format!(
            "Bag Attributes\n    localKeyID: 9A 31\nKey Attributes: <No Attributes>\n{}",
            pem("PRIVATE KEY", &pkcs8, 64)
        ),
        format!(
            "{}Private-Key: (256 bit)\npriv:\n    3f:1a\n",
            pem("PRIVATE KEY", &pkcs8, 64)
        ),
        format!("{}{public}", pem("PRIVATE KEY", &pkcs8, 64)),
        format!("{public}{}", pem("PRIVATE KEY", &pkcs8, 64)),
    ] {
        let k = SigningKey::from_pem(&text, None).unwrap_or_else(|e| panic!("{e}: {text}"));
        assert_eq!(*k.to_bytes(), d);
        let with_public = if text.contains("PUBLIC KEY") {
            text.clone()
        } else {
            format!("{text}{public}")
        };
        assert_eq!(
            VerifyingKey::from_public_key_pem(&with_public).unwrap(),
            *k.verifying_key(),
            "{text}"
        );
    }
    // Two private keys in one file is ambiguous, and said so.
    let two = format!(
        "{}{}",
        pem("PRIVATE KEY", &pkcs8, 64),
        pem("EC PRIVATE KEY", &p.private_key_to_der().unwrap(), 64)
    );
    assert!(matches!(
        SigningKey::from_pem(&two, None),
        Err(KeyFileError::Malformed(m)) if m.contains("several")
    ));
    // A public key where a private one is wanted names what it found.
    assert_eq!(
        SigningKey::from_pem(&public, None).err(),
        Some(KeyFileError::UnexpectedLabel("PUBLIC KEY".into()))
    );
}

#[test]
fn openssl_ec_sm2_private_key_label() {
    // `openssl ec` labels the SEC1 structure with the key type's name.
    let p = openssl_sm2_key();
    let text = pem("SM2 PRIVATE KEY", &p.private_key_to_der().unwrap(), 64);
    assert_eq!(
        *SigningKey::from_pem(&text, None).unwrap().to_bytes(),
        d_of(&p)
    );
    assert_eq!(
        *SigningKey::from_sec1_pem(&text).unwrap().to_bytes(),
        d_of(&p)
    );
}

#[test]
fn explicit_curve_parameters_equal_to_sm2p256v1() {
    let p = openssl_sm2_key();
    let ec = p.ec_key().unwrap();
    let mut group = EcGroup::from_curve_name(Nid::SM2).unwrap();
    group.set_asn1_flag(Asn1Flag::EXPLICIT_CURVE);
    let explicit =
        EcKey::from_private_components(&group, ec.private_key(), ec.public_key()).unwrap();
    let sec1 = explicit.private_key_to_der().unwrap();
    let spki = explicit.public_key_to_der().unwrap();
    let pkcs8 = PKey::from_ec_key(explicit)
        .unwrap()
        .private_key_to_pkcs8()
        .unwrap();
    // They really are explicit: the prime-field OID is inside.
    let prime_field = [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x01, 0x01];
    for der in [&sec1, &spki, &pkcs8] {
        assert!(der.windows(7).any(|w| w == prime_field));
    }
    assert_eq!(
        *SigningKey::from_sec1_der(&sec1).unwrap().to_bytes(),
        d_of(&p)
    );
    assert_eq!(
        *SigningKey::from_pkcs8_der(&pkcs8).unwrap().to_bytes(),
        d_of(&p)
    );
    let mut ctx = BigNumContext::new().unwrap();
    let point = ec
        .public_key()
        .to_bytes(ec.group(), PointConversionForm::UNCOMPRESSED, &mut ctx)
        .unwrap();
    assert_eq!(
        VerifyingKey::from_public_key_der(&spki)
            .unwrap()
            .to_uncompressed(),
        point.as_slice()
    );
    // The same layout with one curve coefficient changed is another curve: refused.
    let b_at = spki
        .windows(4)
        .position(|w| w == [0x28, 0xe9, 0xfa, 0x9e])
        .unwrap();
    let mut other = spki.clone();
    other[b_at + 31] ^= 1;
    assert!(matches!(
        VerifyingKey::from_public_key_der(&other),
        Err(KeyFileError::Unsupported(_))
    ));
}

#[test]
fn the_sm2_oid_as_the_key_algorithm() {
    let p = openssl_sm2_key();
    let sec1 = p.private_key_to_der().unwrap();
    let ec = p.ec_key().unwrap();
    let mut ctx = BigNumContext::new().unwrap();
    let point = ec
        .public_key()
        .to_bytes(ec.group(), PointConversionForm::UNCOMPRESSED, &mut ctx)
        .unwrap();
    for params in [vec![], vec![0x05, 0x00], tlv(0x06, &SM2_OID)] {
        let alg = tlv(0x30, &[tlv(0x06, &SM2_OID), params.clone()].concat());
        let spki = tlv(
            0x30,
            &[alg.clone(), tlv(0x03, &[&[0u8][..], &point].concat())].concat(),
        );
        assert_eq!(
            VerifyingKey::from_public_key_der(&spki)
                .unwrap()
                .to_uncompressed(),
            point.as_slice(),
            "{params:02x?}"
        );
        let pkcs8 = tlv(0x30, &[tlv(0x02, &[0]), alg, tlv(0x04, &sec1)].concat());
        assert_eq!(
            *SigningKey::from_pkcs8_der(&pkcs8).unwrap().to_bytes(),
            d_of(&p)
        );
    }
    // Another curve under the SM2 OID is still refused.
    let p256 = [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
    let alg = tlv(0x30, &[tlv(0x06, &SM2_OID), tlv(0x06, &p256)].concat());
    let spki = tlv(
        0x30,
        &[alg, tlv(0x03, &[&[0u8][..], &point].concat())].concat(),
    );
    assert!(VerifyingKey::from_public_key_der(&spki).is_err());
}

/// Encrypted PKCS#8 with PBKDF2 under `prf` (None: the field left out, meaning HMAC-SHA1) and
/// AES-256-CBC, built from OpenSSL's PBKDF2 and cipher.
fn encrypted(pkcs8: &[u8], password: &[u8], prf: Option<(&[u8], MessageDigest)>) -> Vec<u8> {
    let salt = [0x5a; 16];
    let iv = [0x17; 16];
    let iterations = 2048u16;
    let md = prf.as_ref().map_or(MessageDigest::sha1(), |p| p.1);
    let mut key = [0u8; 32];
    openssl::pkcs5::pbkdf2_hmac(password, &salt, iterations.into(), md, &mut key).unwrap();
    let data = encrypt(Cipher::aes_256_cbc(), &key, Some(&iv), pkcs8).unwrap();
    let mut kdf_params = [tlv(0x04, &salt), tlv(0x02, &iterations.to_be_bytes())].concat();
    if let Some((oid, _)) = prf {
        kdf_params.extend(tlv(0x30, &[tlv(0x06, oid), vec![0x05, 0x00]].concat()));
    }
    let pbkdf2 = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x05, 0x0c];
    let pbes2 = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x05, 0x0d];
    let aes256_cbc = [0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x01, 0x2a];
    let kdf = tlv(0x30, &[tlv(0x06, &pbkdf2), tlv(0x30, &kdf_params)].concat());
    let scheme = tlv(0x30, &[tlv(0x06, &aes256_cbc), tlv(0x04, &iv)].concat());
    let alg = tlv(
        0x30,
        &[tlv(0x06, &pbes2), tlv(0x30, &[kdf, scheme].concat())].concat(),
    );
    tlv(0x30, &[alg, tlv(0x04, &data)].concat())
}

#[test]
fn pbkdf2_with_every_hmac_prf() {
    let p = openssl_sm2_key();
    let pkcs8 = p.private_key_to_pkcs8().unwrap();
    let hmac = |last: u8| [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x02, last];
    let prfs: [(Option<[u8; 8]>, MessageDigest); 6] = [
        (None, MessageDigest::sha1()),
        (Some(hmac(7)), MessageDigest::sha1()),
        (Some(hmac(8)), MessageDigest::sha224()),
        (Some(hmac(9)), MessageDigest::sha256()),
        (Some(hmac(10)), MessageDigest::sha384()),
        (Some(hmac(11)), MessageDigest::sha512()),
    ];
    for (oid, md) in prfs {
        let der = encrypted(&pkcs8, b"pw", oid.as_ref().map(|o| (&o[..], md)));
        let k = SigningKey::from_pkcs8_encrypted_der(&der, b"pw")
            .unwrap_or_else(|e| panic!("{oid:02x?}: {e}"));
        assert_eq!(*k.to_bytes(), d_of(&p));
        assert_eq!(
            SigningKey::from_pkcs8_encrypted_der(&der, b"pW").unwrap_err(),
            KeyFileError::WrongPassword
        );
        let text = pem("ENCRYPTED PRIVATE KEY", &der, 64);
        assert_eq!(
            *SigningKey::from_pem(&text, Some(b"pw")).unwrap().to_bytes(),
            d_of(&p)
        );
    }
}
