//! SM2 encryption: the standard's example, OpenSSL both ways, every layout and conversion,
//! tampering with every part, malformed and truncated ciphertexts.

mod common;
use common::random_key;

use common::vectors;
use openssl::pkey::{Id, PKey, Private};
use openssl::pkey_ctx::PkeyCtx;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shangmi::Backend;
use shangmi::sm2::{Error, Format, PointEncoding, SigningKey, convert};

const FORMATS: [Format; 3] = [Format::C1C3C2, Format::C1C2C3, Format::Der];

fn arr(v: Vec<u8>) -> [u8; 32] {
    v.try_into().unwrap()
}

#[test]
fn known_answer_in_every_layout_on_every_backend() {
    for rec in vectors::load("sm2_encrypt.txt") {
        let msg = rec.str("msg").as_bytes();
        let k = arr(rec.hex("k"));
        let c1: Vec<u8> = [vec![4], rec.hex("c1x"), rec.hex("c1y")].concat();
        let (c2, c3) = (rec.hex("c2"), rec.hex("c3"));
        let expect = [
            (
                Format::C1C3C2,
                [c1.clone(), c3.clone(), c2.clone()].concat(),
            ),
            (
                Format::C1C2C3,
                [c1.clone(), c2.clone(), c3.clone()].concat(),
            ),
            (Format::Der, rec.hex("der")),
        ];
        for b in Backend::available() {
            let key = SigningKey::from_bytes(&arr(rec.hex("d")))
                .unwrap()
                .with_backend(b)
                .unwrap();
            for (format, want) in &expect {
                let got = key
                    .verifying_key()
                    .encrypt_with_nonce_for_known_answer_tests(msg, &k, *format)
                    .unwrap();
                assert_eq!(&got, want, "{format:?} on {b}");
                assert_eq!(key.decrypt(want, *format).unwrap(), msg);
            }
        }
    }
}

#[test]
fn round_trips_in_every_layout_and_converts_between_them() {
    let mut rng = StdRng::seed_from_u64(60);
    for len in [
        0usize, 1, 15, 31, 32, 33, 63, 64, 65, 511, 512, 513, 4096, 4097, 70_000,
    ] {
        let msg: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        for b in Backend::available() {
            let key = random_key(&mut rng).with_backend(b).unwrap();
            let pk = key.verifying_key();
            for format in FORMATS {
                for point in [PointEncoding::Uncompressed, PointEncoding::Compressed] {
                    let ct = pk.encrypt_with(&msg, format, point).unwrap();
                    assert_eq!(key.decrypt(&ct, format).unwrap(), msg, "{len} {format:?}");
                    for to in FORMATS {
                        let other = convert(&ct, format, to, point).unwrap();
                        assert_eq!(key.decrypt(&other, to).unwrap(), msg);
                        let back = convert(&other, to, format, point).unwrap();
                        assert_eq!(back, ct, "{format:?} -> {to:?} -> back");
                    }
                }
            }
            // The precomputed key encrypts to the same recipient.
            let pre = pk.precompute();
            let ct = pre.encrypt(&msg, Format::C1C3C2).unwrap();
            assert_eq!(key.decrypt(&ct, Format::C1C3C2).unwrap(), msg);
        }
    }
}

#[test]
fn two_encryptions_differ() {
    let key = random_key(&mut StdRng::seed_from_u64(61));
    let a = key
        .verifying_key()
        .encrypt(b"same", Format::C1C3C2)
        .unwrap();
    let b = key
        .verifying_key()
        .encrypt(b"same", Format::C1C3C2)
        .unwrap();
    assert_ne!(a, b);
}

fn openssl_sm2_key() -> PKey<Private> {
    let mut ctx = PkeyCtx::new_id(Id::SM2).unwrap();
    ctx.keygen_init().unwrap();
    ctx.keygen().unwrap()
}

#[test]
fn openssl_encrypts_shangmi_decrypts_and_back() {
    let mut rng = StdRng::seed_from_u64(62);
    for len in [1usize, 16, 32, 100, 1000, 20_000] {
        let pkey = openssl_sm2_key();
        let d = pkey
            .ec_key()
            .unwrap()
            .private_key()
            .to_vec_padded(32)
            .unwrap();
        let key = SigningKey::from_bytes(&arr(d)).unwrap();
        let msg: Vec<u8> = (0..len).map(|_| rng.random()).collect();

        let mut ctx = PkeyCtx::new(&pkey).unwrap();
        ctx.encrypt_init().unwrap();
        let mut ct = Vec::new();
        ctx.encrypt_to_vec(&msg, &mut ct).unwrap();
        assert_eq!(key.decrypt(&ct, Format::Der).unwrap(), msg, "{len}");

        for format in FORMATS {
            let ours = key.verifying_key().encrypt(&msg, format).unwrap();
            let der = convert(&ours, format, Format::Der, PointEncoding::Uncompressed).unwrap();
            let mut ctx = PkeyCtx::new(&pkey).unwrap();
            ctx.decrypt_init().unwrap();
            let mut pt = Vec::new();
            ctx.decrypt_to_vec(&der, &mut pt).unwrap();
            assert_eq!(pt, msg, "{len} {format:?}");
        }
    }
}

#[test]
fn any_change_to_any_part_is_rejected_without_plaintext() {
    let mut rng = StdRng::seed_from_u64(63);
    let key = random_key(&mut rng);
    let msg = b"attack at dawn, bring snacks".to_vec();
    for format in FORMATS {
        let ct = key.verifying_key().encrypt(&msg, format).unwrap();
        // Every single-bit flip anywhere: C1, C3, C2, the DER headers.
        for i in 0..ct.len() {
            for bit in [0x01u8, 0x80] {
                let mut bad = ct.clone();
                bad[i] ^= bit;
                assert_eq!(
                    key.decrypt(&bad, format),
                    Err(Error::Decryption),
                    "{format:?} byte {i}"
                );
            }
        }
        // Truncation and extension.
        for cut in 0..ct.len() {
            assert_eq!(key.decrypt(&ct[..cut], format), Err(Error::Decryption));
        }
        let mut longer = ct.clone();
        longer.push(0);
        assert_eq!(key.decrypt(&longer, format), Err(Error::Decryption));
        // The wrong layout.
        for other in FORMATS.into_iter().filter(|f| *f != format) {
            assert_eq!(key.decrypt(&ct, other), Err(Error::Decryption));
        }
        // The wrong key.
        let other_key = random_key(&mut rng);
        assert_eq!(other_key.decrypt(&ct, format), Err(Error::Decryption));
    }
}

#[test]
fn malformed_c1_and_der_are_rejected() {
    let key = random_key(&mut StdRng::seed_from_u64(64));
    let ct = key
        .verifying_key()
        .encrypt(b"hello", Format::C1C3C2)
        .unwrap();
    let body = &ct[65..];
    let (x, y) = (&ct[1..33], &ct[33..65]);
    let p =
        hex::decode("fffffffeffffffffffffffffffffffffffffffff00000000ffffffffffffffff").unwrap();
    let bad_c1s: Vec<Vec<u8>> = vec![
        vec![0],                                    // infinity
        [vec![4], vec![0; 64]].concat(),            // (0, 0), off the curve
        [vec![4], x.to_vec(), p.clone()].concat(),  // y = p
        [vec![4], p.clone(), y.to_vec()].concat(),  // x = p
        [vec![6], x.to_vec(), y.to_vec()].concat(), // hybrid form
        [vec![5], x.to_vec(), y.to_vec()].concat(), // unknown prefix
        [vec![2], p.clone()].concat(),              // compressed x = p
    ];
    for c1 in bad_c1s {
        let bad = [c1.clone(), body.to_vec()].concat();
        assert_eq!(
            key.decrypt(&bad, Format::C1C3C2),
            Err(Error::Decryption),
            "{c1:02x?}"
        );
        assert_eq!(
            convert(
                &bad,
                Format::C1C3C2,
                Format::Der,
                PointEncoding::Uncompressed
            ),
            Err(Error::InvalidCiphertext)
        );
    }
    // Empty and tiny inputs in every layout.
    for format in FORMATS {
        for len in 0..100 {
            let junk = vec![0x30u8; len];
            assert_eq!(key.decrypt(&junk, format), Err(Error::Decryption));
        }
    }
    // DER: non-minimal lengths and integers, negative integers, a short C3, trailing data.
    // Use a C1 whose x has its top bit clear but a nonzero first byte, so its minimal INTEGER is
    // exactly 32 bytes, and whose y has a nonzero first byte (the builder below writes 32 or 33).
    let ct = loop {
        let ct = key
            .verifying_key()
            .encrypt(b"hello", Format::C1C3C2)
            .unwrap();
        if (0x01..0x80).contains(&ct[1]) && ct[33] != 0 {
            break ct;
        }
    };
    let (x, y) = (&ct[1..33], &ct[33..65]);
    let der = convert(
        &ct,
        Format::C1C3C2,
        Format::Der,
        PointEncoding::Uncompressed,
    )
    .unwrap();
    assert_eq!(key.decrypt(&der, Format::Der).unwrap(), b"hello");
    let mut long_form = vec![0x30, 0x81, der[1]];
    long_form.extend_from_slice(&der[2..]);
    assert_eq!(key.decrypt(&long_form, Format::Der), Err(Error::Decryption));
    let mut trailing = der.clone();
    trailing.extend_from_slice(&[0, 0]);
    assert_eq!(key.decrypt(&trailing, Format::Der), Err(Error::Decryption));
    let int = |v: &[u8]| -> Vec<u8> {
        if v[0] >= 0x80 {
            [vec![0x02, 0x21, 0x00], v.to_vec()].concat()
        } else {
            [vec![0x02, 0x20], v.to_vec()].concat()
        }
    };
    let c3 = [vec![0x04, 0x20], ct[65..97].to_vec()].concat();
    let c2 = [vec![0x04, (ct.len() - 97) as u8], ct[97..].to_vec()].concat();
    let build = |parts: &[&[u8]]| {
        let content: Vec<u8> = parts.concat();
        [vec![0x30, content.len() as u8], content].concat()
    };
    assert_eq!(build(&[&int(x), &int(y), &c3, &c2]), der);
    let padded_x = [vec![0x02, 0x21, 0x00], x.to_vec()].concat();
    let negative_x = [vec![0x02, 0x20], vec![0xff; 32]].concat();
    let short_c3 = [vec![0x04, 0x1f], ct[65..96].to_vec()].concat();
    let long_c3 = [vec![0x04, 0x21], ct[65..97].to_vec(), vec![0]].concat();
    let as_bit_string = [vec![0x03, c2[1] + 1, 0], ct[97..].to_vec()].concat();
    for bad in [
        build(&[&padded_x, &int(y), &c3, &c2]),
        build(&[&negative_x, &int(y), &c3, &c2]),
        build(&[&int(x), &int(y), &short_c3, &c2]),
        build(&[&int(x), &int(y), &long_c3, &c2]),
        build(&[&int(x), &int(y), &c3, &as_bit_string]),
        build(&[&int(x), &int(y), &c3]),
        build(&[&int(x), &int(y), &c3, &c2, &c2]),
        build(&[&int(y), &int(x), &c3, &c2]),
    ] {
        assert_eq!(
            key.decrypt(&bad, Format::Der),
            Err(Error::Decryption),
            "{bad:02x?}"
        );
    }
}

#[test]
fn empty_messages_round_trip() {
    let key = random_key(&mut StdRng::seed_from_u64(65));
    for format in FORMATS {
        let ct = key.verifying_key().encrypt(b"", format).unwrap();
        assert_eq!(key.decrypt(&ct, format).unwrap(), b"");
    }
}

mod streaming {
    use super::*;
    use shangmi::sink::{AtomicFile, MemorySink, Sink};
    use shangmi::sm2::{Decryptor, Encryptor};
    use std::io::{Cursor, Write};

    fn write_in_pieces(w: &mut impl Write, data: &[u8], rng: &mut StdRng) {
        let mut rest = data;
        while !rest.is_empty() {
            let n = rng.random_range(1..=rest.len().min(40_000));
            w.write_all(&rest[..n]).unwrap();
            rest = &rest[n..];
        }
    }

    #[test]
    fn streams_match_one_shot_both_ways() {
        let mut rng = StdRng::seed_from_u64(70);
        let key = random_key(&mut rng);
        for len in [0usize, 1, 2, 31, 32, 33, 1000, 16_384, 16_385, 200_000] {
            let msg: Vec<u8> = (0..len).map(|_| rng.random()).collect();
            for point in [PointEncoding::Uncompressed, PointEncoding::Compressed] {
                // C1C2C3 into a plain Vec.
                let mut enc = Encryptor::c1c2c3(key.verifying_key(), point, Vec::new()).unwrap();
                write_in_pieces(&mut enc, &msg, &mut rng);
                let ct = enc.finish().unwrap();
                assert_eq!(key.decrypt(&ct, Format::C1C2C3).unwrap(), msg, "{len}");
                // C1C3C2 into a seekable writer that already holds a prefix.
                let mut cursor = Cursor::new(b"prefix".to_vec());
                cursor.set_position(6);
                let mut enc = Encryptor::c1c3c2(key.verifying_key(), point, cursor).unwrap();
                write_in_pieces(&mut enc, &msg, &mut rng);
                let out = enc.finish().unwrap().into_inner();
                assert_eq!(&out[..6], b"prefix");
                assert_eq!(key.decrypt(&out[6..], Format::C1C3C2).unwrap(), msg);
                // And back through the streaming decryptor.
                for (format, ct) in [(Format::C1C2C3, &ct[..]), (Format::C1C3C2, &out[6..])] {
                    let mut dec = Decryptor::new(&key, format, MemorySink::new()).unwrap();
                    write_in_pieces(&mut dec, ct, &mut rng);
                    assert_eq!(*dec.finish().unwrap(), msg);
                }
            }
        }
    }

    #[test]
    fn tampered_streams_commit_nothing() {
        let mut rng = StdRng::seed_from_u64(71);
        let key = random_key(&mut rng);
        let msg: Vec<u8> = (0..5000).map(|_| rng.random()).collect();
        let dir = std::env::temp_dir().join(format!("shangmi-stream-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for format in [Format::C1C3C2, Format::C1C2C3] {
            let ct = key.verifying_key().encrypt(&msg, format).unwrap();
            for i in [0usize, 1, 40, 64, 65, 80, 96, 97, 2000, ct.len() - 1] {
                let mut bad = ct.clone();
                bad[i] ^= 4;
                let target = dir.join("out.bin");
                let mut dec =
                    Decryptor::new(&key, format, AtomicFile::create(&target).unwrap()).unwrap();
                write_in_pieces(&mut dec, &bad, &mut rng);
                let err = dec.finish().unwrap_err();
                assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
                assert!(!target.exists(), "{format:?} byte {i}: target written");
            }
            // Truncated: C1 cut, C3 cut.
            for cut in [0usize, 10, 64, 70, ct.len() - 1] {
                let mut dec = Decryptor::new(&key, format, MemorySink::new()).unwrap();
                dec.write_all(&ct[..cut]).unwrap();
                assert!(dec.finish().is_err());
            }
            // The good one lands, under the target's name only.
            let target = dir.join("good.bin");
            let mut dec =
                Decryptor::new(&key, format, AtomicFile::create(&target).unwrap()).unwrap();
            dec.write_all(&ct).unwrap();
            assert_eq!(dec.finish().unwrap(), target);
            assert_eq!(std::fs::read(&target).unwrap(), msg);
            std::fs::remove_file(&target).unwrap();
        }
        // An abandoned decryption leaves nothing behind.
        let ct = key.verifying_key().encrypt(&msg, Format::C1C3C2).unwrap();
        let mut dec = Decryptor::new(
            &key,
            Format::C1C3C2,
            AtomicFile::create(dir.join("x")).unwrap(),
        )
        .unwrap();
        dec.write_all(&ct[..3000]).unwrap();
        drop(dec);
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "temporary files left"
        );
        std::fs::remove_dir(&dir).unwrap();
        assert!(Decryptor::new(&key, Format::Der, MemorySink::new()).is_err());
    }

    #[test]
    fn atomic_file_replaces_the_target_only_on_commit() {
        let dir = std::env::temp_dir().join(format!("shangmi-atomic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("t");
        std::fs::write(&target, b"old").unwrap();
        let mut f = AtomicFile::create(&target).unwrap();
        f.write_all(b"new").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"old");
        f.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        let mut f = AtomicFile::create(&target).unwrap();
        f.write_all(b"newer").unwrap();
        f.discard();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// One keystream byte in 256 is zero; the standard then draws a new k, so C2 never equals a
/// one-byte message. 3000 tries would show about 12 such ciphertexts otherwise.
#[test]
fn an_all_zero_keystream_is_never_used() {
    use shangmi::sm2::Encryptor;
    use std::io::Write;
    let key = random_key(&mut StdRng::seed_from_u64(72));
    for i in 0..3000u32 {
        let m = [i as u8];
        let ct = key.verifying_key().encrypt(&m, Format::C1C2C3).unwrap();
        assert_ne!(ct[65], m[0], "one-shot, try {i}");
        let mut enc =
            Encryptor::c1c2c3(key.verifying_key(), PointEncoding::Uncompressed, Vec::new())
                .unwrap();
        enc.write_all(&m).unwrap();
        let ct = enc.finish().unwrap();
        assert_eq!(ct.len(), 65 + 1 + 32);
        assert_ne!(ct[65], m[0], "streaming, try {i}");
        assert_eq!(key.decrypt(&ct, Format::C1C2C3).unwrap(), m);
    }
}
