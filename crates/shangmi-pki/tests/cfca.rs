//! CFCA's key formats: the `.sm2` file of the corpus opened, ours made and opened by gmsm's
//! `cfca` package and the reverse, the escrowed key of the corpus opened (also through
//! `open_enveloped_key`), and wrong passwords, wrong keys and damaged files refused.

mod common;

use der::{Encode, EncodePem, pem::LineEnding};
use shangmi::sm2::SigningKey;
use shangmi_pki::{Error, Issue, certificates, cfca, open_enveloped_key, self_signed};

fn vector(name: &str) -> Vec<u8> {
    let dir = format!("{}/tests/vectors/x509", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(format!("{dir}/{name}")).unwrap()
}

fn key_of(hex: &str) -> SigningKey {
    let d: [u8; 32] = shangmi::hex::decode_secret(hex.as_bytes()).unwrap()[..]
        .try_into()
        .unwrap();
    SigningKey::from_bytes(&d).unwrap()
}

#[test]
fn the_corpus_sm2_file_opens_with_its_password_only() {
    let file = vector("cfca-sm2file-test-oca1.pem");
    let (key, cert) = cfca::open_sm2_file(&file, b"123456").unwrap();
    assert_eq!(
        *key.to_bytes(),
        *key_of("d3f24d61bb2816882b8474b778dd7c3166d665f9455dc9d551c989c161e76ab0").to_bytes()
    );
    assert_eq!(
        cert.to_der().unwrap(),
        vector("cfca-test-leaf-from-sm2file.der")
    );
    for wrong in [&b"123457"[..], b"12345", b"1234567"] {
        assert!(matches!(
            cfca::open_sm2_file(&file, wrong),
            Err(Error::Decryption(_))
        ));
    }
    assert!(matches!(
        cfca::open_sm2_file(&file, b""),
        Err(Error::InvalidArgument(_))
    ));
    // The same file as bare Base64 (as SADK writes .sm2 files) and as DER.
    let der = shangmi::pem::pem_blocks(std::str::from_utf8(&file).unwrap()).unwrap()[0]
        .der
        .to_vec();
    assert!(cfca::open_sm2_file(&der, b"123456").is_ok());
    let b64 = <base64ct::Base64 as base64ct::Encoding>::encode_string(&der);
    let wrapped: String = b64
        .as_bytes()
        .chunks(64)
        .map(|l| format!("{}\r\n", std::str::from_utf8(l).unwrap()))
        .collect();
    assert!(cfca::open_sm2_file(wrapped.as_bytes(), b"123456").is_ok());
    // Every truncation is an error, never a panic.
    for n in 0..der.len() {
        assert!(cfca::open_sm2_file(&der[..n], b"123456").is_err());
    }
}

#[test]
fn our_sm2_files_round_trip_and_refuse_another_key() {
    let key = SigningKey::random().unwrap();
    let cert = self_signed(&key, "CN=cfca user", &Issue::leaf(30)).unwrap();
    let file = cfca::sm2_file(&key, &cert, b"pass word").unwrap();
    let (k, c) = cfca::open_sm2_file(&file, b"pass word").unwrap();
    assert_eq!(*k.to_bytes(), *key.to_bytes());
    assert_eq!(c, cert);
    let other = SigningKey::random().unwrap();
    assert!(cfca::sm2_file(&other, &cert, b"pw").is_err());
}

#[test]
fn the_corpus_escrowed_key_opens_with_the_temporary_key() {
    let escrow = vector("cfca-escrow-enckey.der");
    let tmp = key_of("cacece36cac24aab94e52bcd5c0f552c95028f2856053135a1e47510b4c307ba");
    let want = key_of("f6e02c941a0dfdac58d8b3b1bc1bd136f179741b7465ebc7b0b25bb381840a3b");
    let got = cfca::open_escrowed_key(&escrow, &tmp).unwrap();
    assert_eq!(*got.to_bytes(), *want.to_bytes());
    // The key-envelope reader recognises it too.
    assert_eq!(
        *open_enveloped_key(&escrow, &tmp).unwrap().to_bytes(),
        *want.to_bytes()
    );
    // CFCA's text form: the 64-digit header, 16 digits of length, Base64 with commas.
    let b64 = <base64ct::Base64 as base64ct::Encoding>::encode_string(&escrow);
    let body: String = b64
        .as_bytes()
        .chunks(40)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect::<Vec<_>>()
        .join(",");
    let text = format!(
        "0000000000000001000000000000000100000000000000000000000000000000{:016}{body}",
        body.len()
    );
    assert_eq!(
        *cfca::open_escrowed_key(text.as_bytes(), &tmp)
            .unwrap()
            .to_bytes(),
        *want.to_bytes()
    );
    assert_eq!(
        *open_enveloped_key(text.as_bytes(), &tmp)
            .unwrap()
            .to_bytes(),
        *want.to_bytes()
    );
    let short = format!("{}{}", &text[..64], &text[64..].replacen('0', "1", 1));
    assert!(cfca::open_escrowed_key(short.as_bytes(), &tmp).is_err());
    // Another key, a flipped byte: nothing opens.
    assert!(matches!(
        cfca::open_escrowed_key(&escrow, &want),
        Err(Error::Decryption(_))
    ));
    for at in [10, escrow.len() / 2, escrow.len() - 1] {
        let mut bad = escrow.clone();
        bad[at] ^= 1;
        assert!(cfca::open_escrowed_key(&bad, &tmp).is_err(), "{at}");
    }
    for n in 0..escrow.len() {
        assert!(cfca::open_escrowed_key(&escrow[..n], &tmp).is_err());
    }
}

#[test]
fn gmsm_and_shangmi_open_each_others_sm2_files() {
    let Some(peer) = common::peer("gmsmpeer-cfca") else {
        return;
    };
    let d = std::env::temp_dir().join(format!("shangmi-pki-cfca-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    // Ours to gmsm.
    let key = SigningKey::random().unwrap();
    let cert = self_signed(&key, "CN=cfca user", &Issue::leaf(30)).unwrap();
    std::fs::write(
        d.join("ours.sm2"),
        cfca::sm2_file(&key, &cert, b"123456").unwrap(),
    )
    .unwrap();
    assert!(common::run(
        &peer,
        &d,
        &["cfca-sm2-open", "ours.sm2", "123456", "k.pem", "c.pem"]
    ));
    let k = SigningKey::from_pem(&std::fs::read_to_string(d.join("k.pem")).unwrap(), None).unwrap();
    assert_eq!(*k.to_bytes(), *key.to_bytes());
    let c = certificates(&std::fs::read(d.join("c.pem")).unwrap()).unwrap();
    assert_eq!(c[0], cert);
    assert!(!common::run(
        &peer,
        &d,
        &["cfca-sm2-open", "ours.sm2", "654321", "x.pem", "y.pem"]
    ));
    // gmsm's to ours.
    std::fs::write(d.join("cert.pem"), cert.to_pem(LineEnding::LF).unwrap()).unwrap();
    std::fs::write(d.join("key.pem"), key.to_pkcs8_pem().unwrap().as_bytes()).unwrap();
    assert!(common::run(
        &peer,
        &d,
        &[
            "cfca-sm2-make",
            "cert.pem",
            "key.pem",
            "secret",
            "theirs.sm2"
        ]
    ));
    let theirs = std::fs::read(d.join("theirs.sm2")).unwrap();
    let (k, c) = cfca::open_sm2_file(&theirs, b"secret").unwrap();
    assert_eq!(*k.to_bytes(), *key.to_bytes());
    assert_eq!(c, cert);
    assert!(cfca::open_sm2_file(&theirs, b"Secret").is_err());
    std::fs::remove_dir_all(&d).unwrap();
}
