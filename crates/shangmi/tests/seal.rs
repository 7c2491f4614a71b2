//! Sealed files: the format's test vector (docs/FORMAT.md), round trips at chunk boundaries,
//! and every way of damaging a file failing with nothing released.

use std::io::Write;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shangmi::seal::{self, CHUNK_SIZE, Error, Key, Recipients, Sealer};
use shangmi::sink::MemorySink;
use shangmi::sm2::SigningKey;

fn unhex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    hex::decode(s).unwrap()
}

const PASSWORD: &[u8] = b"correct horse battery staple";

#[test]
fn reproduces_the_format_test_vector() {
    let salt: [u8; 16] = core::array::from_fn(|i| i as u8);
    let prefix: [u8; 7] = core::array::from_fn(|i| 0xa0 + i as u8);
    let header = "534d5345414c 01 02 10 a0a1a2a3a4a5a6 000102030405060708090a0b0c0d0e0f 000003e8
        42018210d7b4ae764a37e520e8a5529c2d8a1522a17078e98c5ce450f715b5fc";
    for (msg, body) in [
        (
            &b"shangmi seal format, version 1\n"[..],
            "05eda9835a71930a97ebb0701c4c083347ca1575977d5f1bac9320a423a8ff
             c8d0db2b2ff86d6d9d76a430db34e788",
        ),
        (&b""[..], "6aaf259952af790a868f8ba02afc4083"),
    ] {
        let mut s =
            Sealer::with_password_for_known_answer_tests(Vec::new(), PASSWORD, 1000, salt, prefix)
                .unwrap();
        s.write_all(msg).unwrap();
        let file = s.finish().unwrap();
        assert_eq!(file, [unhex(header), unhex(body)].concat());
        let opened = seal::open(&file[..], Key::Password(PASSWORD), MemorySink::new()).unwrap();
        assert_eq!(*opened, msg);
    }
}

fn sealed_to(key: &SigningKey, msg: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    seal::seal(msg, &mut out, Recipients::Keys(&[*key.verifying_key()])).unwrap();
    out
}

fn random_key(rng: &mut StdRng) -> SigningKey {
    loop {
        if let Ok(k) = SigningKey::from_bytes(&rng.random()) {
            return k;
        }
    }
}

#[test]
fn round_trips_at_every_chunk_boundary() {
    let mut rng = StdRng::seed_from_u64(100);
    let (a, b) = (random_key(&mut rng), random_key(&mut rng));
    for len in [
        0,
        1,
        CHUNK_SIZE - 1,
        CHUNK_SIZE,
        CHUNK_SIZE + 1,
        2 * CHUNK_SIZE,
        3 * CHUNK_SIZE + 5,
    ] {
        let msg: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        let mut file = Vec::new();
        let to = [*a.verifying_key(), *b.verifying_key()];
        seal::seal(&msg[..], &mut file, Recipients::Keys(&to)).unwrap();
        // Chunks of plaintext + 16, the last possibly empty; the header for two recipients.
        let chunks = if len == 0 {
            1
        } else {
            len.div_ceil(CHUNK_SIZE)
        };
        assert_eq!(
            file.len(),
            16 + 2 + 2 * 129 + 32 + len + 16 * chunks,
            "{len}"
        );
        for k in [&a, &b] {
            assert_eq!(
                *seal::open(&file[..], Key::Private(k), MemorySink::new()).unwrap(),
                msg
            );
        }
        let mut pw_file = Vec::new();
        seal::seal(
            &msg[..],
            &mut pw_file,
            Recipients::Password {
                password: b"pw",
                iterations: 10,
            },
        )
        .unwrap();
        assert_eq!(
            *seal::open(&pw_file[..], Key::Password(b"pw"), MemorySink::new()).unwrap(),
            msg
        );
    }
}

/// `open` must fail, and (the sink being a Vec) nothing must come out.
fn rejected(file: &[u8], key: Key<'_>) -> Error {
    seal::open(file, key, MemorySink::new()).expect_err("damaged file opened")
}

#[test]
fn damaged_files_are_rejected() {
    let mut rng = StdRng::seed_from_u64(101);
    let key = random_key(&mut rng);
    let msg: Vec<u8> = (0..3 * CHUNK_SIZE + 100).map(|_| rng.random()).collect();
    let file = sealed_to(&key, &msg);
    let k = Key::Private(&key);
    let header = 16 + 2 + 129 + 32;
    let chunk = CHUNK_SIZE + 16;
    // Truncation anywhere: in the header, at and around chunk boundaries, one byte short.
    for cut in [
        0,
        5,
        16,
        header - 1,
        header,
        header + 1,
        header + chunk - 1,
        header + chunk,
        header + chunk + 1,
        header + 3 * chunk,
        file.len() - 1,
    ] {
        assert!(matches!(
            rejected(&file[..cut], k),
            Error::Authentication | Error::Format(_)
        ));
    }
    // Appended data: one byte, a whole chunk's worth, a copy of the last chunk.
    for extra in [
        vec![0u8],
        vec![7u8; chunk],
        file[header + 3 * chunk..].to_vec(),
    ] {
        let mut longer = file.clone();
        longer.extend_from_slice(&extra);
        assert!(matches!(rejected(&longer, k), Error::Authentication));
    }
    // Reordered and duplicated chunks.
    let c = |i: usize| &file[header + i * chunk..header + (i + 1) * chunk];
    let tail = &file[header + 3 * chunk..];
    let swapped = [&file[..header], c(1), c(0), c(2), tail].concat();
    let duplicated = [&file[..header], c(0), c(0), c(1), c(2), tail].concat();
    let dropped = [&file[..header], c(0), c(2), tail].concat();
    for bad in [swapped, duplicated, dropped] {
        assert!(matches!(rejected(&bad, k), Error::Authentication));
    }
    // A flipped bit anywhere: header fields, the stanza, the MAC, each chunk, the tags.
    for i in (0..file.len())
        .step_by(997)
        .chain([6, 7, 8, 9, 15, 17, 18, 100, header - 1])
    {
        let mut bad = file.clone();
        bad[i] ^= 0x10;
        let e = rejected(&bad, k);
        assert!(
            matches!(
                e,
                Error::Authentication
                    | Error::Format(_)
                    | Error::NoMatchingKey
                    | Error::WrongKeyKind
            ),
            "byte {i}: {e:?}"
        );
    }
    // The wrong key, the wrong kind of key.
    let other = random_key(&mut rng);
    assert!(matches!(
        rejected(&file, Key::Private(&other)),
        Error::NoMatchingKey
    ));
    assert!(matches!(
        rejected(&file, Key::Password(b"x")),
        Error::WrongKeyKind
    ));
}

#[test]
fn passwords_and_parameters() {
    let mut file = Vec::new();
    seal::seal(
        &b"data"[..],
        &mut file,
        Recipients::Password {
            password: b"right",
            iterations: 10,
        },
    )
    .unwrap();
    assert!(matches!(
        rejected(&file, Key::Password(b"wrong")),
        Error::WrongPassword
    ));
    assert!(matches!(
        rejected(&file, Key::Password(b"")),
        Error::WrongPassword
    ));
    // A header asking for too many iterations is refused before any work.
    let mut hostile = file.clone();
    hostile[32..36].copy_from_slice(&u32::MAX.to_be_bytes());
    assert!(matches!(
        rejected(&hostile, Key::Password(b"right")),
        Error::TooManyIterations(u32::MAX)
    ));
    // Not a sealed file; a future version; an unknown mode; a silly chunk size.
    assert!(matches!(
        rejected(b"hello world, not sealed", Key::Password(b"right")),
        Error::Format(_)
    ));
    for (at, v) in [(6, 2u8), (7, 9), (8, 40), (8, 4)] {
        let mut bad = file.clone();
        bad[at] = v;
        assert!(
            matches!(rejected(&bad, Key::Password(b"right")), Error::Format(_)),
            "{at}"
        );
    }
    // Sealing parameters.
    for iterations in [0, seal::MAX_ITERATIONS + 1] {
        assert!(matches!(
            Sealer::new(
                Vec::new(),
                Recipients::Password {
                    password: b"p",
                    iterations
                }
            ),
            Err(Error::Parameters(_))
        ));
    }
    assert!(matches!(
        Sealer::new(Vec::new(), Recipients::Keys(&[])),
        Err(Error::Parameters(_))
    ));
}

#[test]
fn debug_output_never_shows_the_password() {
    let to = Recipients::Password {
        password: b"hunter2-secret",
        iterations: 1000,
    };
    let shown = format!("{to:?}");
    assert!(!shown.contains("hunter2"), "{shown}");
    assert!(!shown.contains("104, 117"), "{shown}"); // nor as a byte list
    assert!(
        shown.contains("14 bytes") && shown.contains("1000"),
        "{shown}"
    );
}

#[test]
fn recipient_counts_are_bounded_both_ways() {
    let k = SigningKey::random().unwrap();
    let many = vec![*k.verifying_key(); seal::MAX_RECIPIENTS + 1];
    assert!(matches!(
        Sealer::new(Vec::new(), Recipients::Keys(&many)),
        Err(Error::Parameters(_))
    ));
    // A header that claims 65535 stanzas is refused before any SM2 decryption is tried.
    let mut file = Vec::new();
    seal::seal(&b"x"[..], &mut file, Recipients::Keys(&many[..1])).unwrap();
    file[16..18].copy_from_slice(&u16::MAX.to_be_bytes());
    let t = std::time::Instant::now();
    assert!(matches!(
        seal::open(&file[..], Key::Private(&k), MemorySink::new()),
        Err(Error::Format(_))
    ));
    assert!(t.elapsed().as_millis() < 500);
    // Our key in the last of several stanzas: found.
    let others: Vec<_> = (0..5)
        .map(|_| *SigningKey::random().unwrap().verifying_key())
        .chain([*k.verifying_key()])
        .collect();
    let mut file = Vec::new();
    seal::seal(&b"last"[..], &mut file, Recipients::Keys(&others)).unwrap();
    assert_eq!(
        *seal::open(&file[..], Key::Private(&k), MemorySink::new()).unwrap(),
        b"last"
    );
}
