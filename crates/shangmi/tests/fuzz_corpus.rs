//! The fuzz targets' checks (`fuzz/checks.rs`) run on stable over every committed seed and
//! every regression input (`fuzz/seeds/<target>/`, `fuzz/regressions/<target>/`): what a
//! fuzzing run once found stays fixed. `write_seeds` (ignored; run by hand) makes the seeds.

#[path = "../../../fuzz/checks.rs"]
mod checks;

use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

fn inputs(kind: &str, target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = fuzz_dir().join(kind).join(target);
    let mut out: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| (e.path(), std::fs::read(e.path()).unwrap()))
        .collect();
    out.sort();
    out
}

#[test]
fn every_seed_and_regression_input_passes_its_check() {
    let mut seeds = 0;
    for (target, check) in checks::TARGETS {
        let s = inputs("seeds", target);
        assert!(!s.is_empty(), "no seeds for {target}");
        seeds += s.len();
        for (path, data) in s.iter().chain(inputs("regressions", target).iter()) {
            let r = std::panic::catch_unwind(|| check(data));
            assert!(r.is_ok(), "{target}: {} fails its check", path.display());
        }
    }
    assert!(seeds >= 2 * checks::TARGETS.len());
}

/// Writes the seed corpora: valid instances of every format the targets parse, and
/// structured inputs (a split byte, a message, mutations) for the others.
#[test]
#[ignore = "writes fuzz/seeds; run by hand when the formats change"]
fn write_seeds() {
    use shangmi::seal;
    use shangmi::sm2::{EncryptionParams, Format, Prf, SigningKey};
    use shangmi::sm4::Sm4;
    use shangmi::sm4::modes::cbc;

    let write = |target: &str, name: &str, data: &[u8]| {
        let dir = fuzz_dir().join("seeds").join(target);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), data).unwrap();
    };
    let key = SigningKey::from_bytes(&[0x11; 32]).unwrap();
    let other = SigningKey::from_bytes(&[0x5c; 32]).unwrap();
    for (name, k) in [("a", &key), ("b", &other)] {
        write(
            "key_files",
            &format!("{name}-pkcs8.der"),
            &k.to_pkcs8_der().unwrap(),
        );
        write(
            "key_files",
            &format!("{name}-sec1.der"),
            &k.to_sec1_der().unwrap(),
        );
        write(
            "key_files",
            &format!("{name}-pkcs8.pem"),
            k.to_pkcs8_pem().unwrap().as_bytes(),
        );
        write(
            "key_files",
            &format!("{name}-sec1.pem"),
            k.to_sec1_pem().unwrap().as_bytes(),
        );
        let p = k.verifying_key();
        write(
            "key_files",
            &format!("{name}-spki.der"),
            &p.to_public_key_der().unwrap(),
        );
        write(
            "key_files",
            &format!("{name}-spki.pem"),
            p.to_public_key_pem().unwrap().as_bytes(),
        );
        write(
            "key_files",
            &format!("{name}-point"),
            &p.to_sec1_bytes(false),
        );
        write(
            "key_files",
            &format!("{name}-point-compressed"),
            &p.to_sec1_bytes(true),
        );
        for (prf, tag) in [(Prf::HmacSm3, "sm3"), (Prf::HmacSha256, "sha256")] {
            let params = EncryptionParams {
                prf,
                iterations: 16,
            };
            write(
                "key_files",
                &format!("{name}-encrypted-{tag}.der"),
                &k.to_pkcs8_encrypted_der(b"pw", params).unwrap(),
            );
        }
    }
    let e = shangmi::sm3::hash(b"seed");
    for (i, nonce) in [[0x01u8; 32], [0x7f; 32], [0xc3; 32]].iter().enumerate() {
        let sig = key
            .sign_digest_with_nonce_for_known_answer_tests(&e, nonce)
            .unwrap();
        write("signature_der", &format!("der-{i}"), &sig.to_der());
        write("signature_der", &format!("raw-{i}"), &sig.to_bytes());
    }
    // Structured seeds: split byte, message, then mutation triples (none, or one).
    for (i, msg) in [&b""[..], b"x", b"hello, world", &[0xa5; 100]]
        .iter()
        .enumerate()
    {
        let mut s = vec![msg.len() as u8];
        s.extend_from_slice(msg);
        for target in [
            "sm2_ciphertext",
            "sm2_stream",
            "sealed_file",
            "sm4_aead_open",
        ] {
            write(target, &format!("message-{i}"), &s);
            let mut m = s.clone();
            m.extend_from_slice(&[3, 0, 0x80]);
            write(target, &format!("message-{i}-mutated"), &m);
        }
    }
    for f in [Format::C1C3C2, Format::C1C2C3, Format::Der] {
        let ct = key
            .verifying_key()
            .encrypt_with_nonce_for_known_answer_tests(b"plain", &[0x33; 32], f)
            .unwrap();
        write("sm2_ciphertext", &format!("raw-{f:?}"), &ct);
    }
    let mut sealed = Vec::new();
    seal::seal(
        &b"sealed seed"[..],
        &mut sealed,
        seal::Recipients::Password {
            password: b"pw",
            iterations: 2,
        },
    )
    .unwrap();
    write("sealed_file", "raw-password", &sealed);
    let c = Sm4::new(&[3; 16]);
    for n in [0usize, 5, 16, 40] {
        write(
            "cbc_unpad",
            &format!("padded-{n}"),
            &cbc::encrypt_padded(&c, &[4; 16], &vec![0x61; n]),
        );
    }
    for n in [0usize, 17, 33, 100, 300, 700] {
        let bytes: Vec<u8> = (0..n).map(|i| (i * 131 + 7) as u8).collect();
        for target in ["backends_sm4", "backends_sm3", "backends_sm2"] {
            write(target, &format!("bytes-{n}"), &bytes);
        }
    }
}
