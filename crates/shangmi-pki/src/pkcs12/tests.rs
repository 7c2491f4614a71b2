use super::*;

/// RFC 7292's KDF with SHA-1 against a value computed by OpenSSL's PKCS12_key_gen_utf8
/// (password "smeg", salt 0A58CF64530D823F, ID 1, 1 iteration, 24 bytes): the vector of
/// the PKCS#12 test suites.
#[test]
fn the_kdf_matches_the_published_vector() {
    let pw = bmp_password(b"smeg").unwrap();
    let salt = [0x0a, 0x58, 0xcf, 0x64, 0x53, 0x0d, 0x82, 0x3f];
    let k = pkcs12_kdf(MacHash::Sha1, &pw, &salt, 1, 1, 24);
    assert_eq!(hex(&k), "8aaae6297b6cb04642ab5b077851284eb7128f1a2a7fbca3");
}

#[test]
fn a_pbmac1_keystore_reads_back_and_refuses_a_wrong_password() {
    let key = shangmi::sm2::SigningKey::random().unwrap();
    let cert = crate::self_signed(&key, "/CN=pbmac1", &crate::Issue::leaf(1)).unwrap();
    let cert = der::Encode::to_der(&cert).unwrap();
    for mac in [MacHash::Sm3, MacHash::Sha256] {
        let params = Pkcs12Params {
            iterations: 10,
            mac,
            mac_iterations: 10,
            pbmac1: true,
            ..Pkcs12Params::sm()
        };
        let entry = Pkcs12Entry {
            key: &key,
            cert: &cert,
            name: Some("k"),
        };
        let file = write(&[entry], &[], b"pw", params).unwrap();
        let back = read(&file, b"pw").unwrap();
        assert!(back.mac.starts_with("PBMAC1"), "{}", back.mac);
        assert_eq!(back.keys.len(), 1);
        assert!(matches!(read(&file, b"pW"), Err(Error::Decryption(_))));
    }
    let sha1 = Pkcs12Params {
        mac: MacHash::Sha1,
        pbmac1: true,
        ..Pkcs12Params::sm()
    };
    let entry = Pkcs12Entry {
        key: &key,
        cert: &cert,
        name: None,
    };
    assert!(write(&[entry], &[], b"pw", sha1).is_err());
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
