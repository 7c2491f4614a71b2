//! SM3: official vectors, OpenSSL as a differential oracle, streaming splits, every backend.

mod common;

use common::vectors;
use openssl::hash::{MessageDigest, hash as ossl_hash};
use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};
use shangmi::Backend;
use shangmi::sm3::{self, Sm3};

fn openssl_sm3(data: &[u8]) -> [u8; 32] {
    ossl_hash(MessageDigest::sm3(), data)
        .unwrap()
        .as_ref()
        .try_into()
        .unwrap()
}

fn random_bytes(rng: &mut StdRng, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    rng.fill_bytes(&mut v);
    v
}

#[test]
fn official_vectors_on_every_backend() {
    for rec in vectors::load("sm3.txt") {
        let msg = rec.hex("msg");
        let want = rec.hex("digest");
        for b in Backend::available() {
            assert_eq!(
                shangmi::hazmat::hash_with_backend(b, &msg)
                    .unwrap()
                    .as_slice(),
                want,
                "{} on {b}",
                rec.place()
            );
            let mut h = Sm3::with_backend(b).unwrap();
            for byte in &msg {
                h.update(std::slice::from_ref(byte));
            }
            assert_eq!(
                h.finalize().as_slice(),
                want,
                "{} byte by byte on {b}",
                rec.place()
            );
        }
        assert_eq!(sm3::hash(&msg).as_slice(), want);
    }
}

#[test]
fn every_length_to_1100_matches_openssl_on_every_backend() {
    let mut rng = StdRng::seed_from_u64(1);
    let data = random_bytes(&mut rng, 1100);
    for len in 0..=1100 {
        let want = openssl_sm3(&data[..len]);
        for b in Backend::available() {
            assert_eq!(
                shangmi::hazmat::hash_with_backend(b, &data[..len]).unwrap(),
                want,
                "len {len} on {b}"
            );
        }
    }
}

#[test]
fn random_lengths_to_1mib_match_openssl() {
    let mut rng = StdRng::seed_from_u64(2);
    let data = random_bytes(&mut rng, 1 << 20);
    for _ in 0..24 {
        let len = rng.random_range(0..=data.len());
        let start = rng.random_range(0..=data.len() - len);
        let msg = &data[start..start + len];
        let want = openssl_sm3(msg);
        for b in Backend::available() {
            assert_eq!(
                shangmi::hazmat::hash_with_backend(b, msg).unwrap(),
                want,
                "len {len} on {b}"
            );
        }
    }
}

#[test]
fn chunked_updates_equal_one_shot() {
    let mut rng = StdRng::seed_from_u64(3);
    let data = random_bytes(&mut rng, 700);
    for b in Backend::available() {
        for piece in 1..=16 {
            for len in [0, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 129, 700] {
                let mut h = Sm3::with_backend(b).unwrap();
                for chunk in data[..len].chunks(piece) {
                    h.update(chunk);
                }
                assert_eq!(
                    h.finalize(),
                    openssl_sm3(&data[..len]),
                    "piece {piece} len {len} on {b}"
                );
            }
        }
        // Random splits, including empty updates.
        for _ in 0..200 {
            let len = rng.random_range(0..data.len());
            let mut h = Sm3::with_backend(b).unwrap();
            let mut at = 0;
            while at < len {
                let n = rng.random_range(0..=(len - at).min(150));
                h.update(&data[at..at + n]);
                at += n;
            }
            assert_eq!(
                h.finalize(),
                openssl_sm3(&data[..len]),
                "random split len {len} on {b}"
            );
        }
    }
}

#[test]
fn reset_clone_and_finalize_reset() {
    for b in Backend::available() {
        let mut h = Sm3::with_backend(b).unwrap();
        h.update(b"garbage that reset must forget");
        h.reset();
        h.update(b"ab");
        let fork = h.clone();
        h.update(b"c");
        assert_eq!(h.finalize_reset(), openssl_sm3(b"abc"));
        assert_eq!(h.finalize(), openssl_sm3(b""));
        let mut fork = fork;
        fork.update(b"d");
        assert_eq!(fork.finalize(), openssl_sm3(b"abd"));
    }
}

#[test]
fn sixteen_mib_stream() {
    let mut rng = StdRng::seed_from_u64(4);
    let data = random_bytes(&mut rng, 16 << 20);
    let want = openssl_sm3(&data);
    for b in Backend::available() {
        let mut h = Sm3::with_backend(b).unwrap();
        // Odd-sized writes, as a reader with a 64 KiB + 7 buffer would do.
        for chunk in data.chunks(65_543) {
            h.update(chunk);
        }
        assert_eq!(h.finalize(), want, "16 MiB on {b}");
    }
}

#[test]
fn digest_trait() {
    use digest::Digest;
    let d = <Sm3 as Digest>::digest(b"abc");
    assert_eq!(d.as_slice(), openssl_sm3(b"abc"));
    let mut h = <Sm3 as Digest>::new();
    Digest::update(&mut h, b"ab");
    Digest::update(&mut h, b"c");
    assert_eq!(
        Digest::finalize_reset(&mut h).as_slice(),
        openssl_sm3(b"abc")
    );
    assert_eq!(Digest::finalize(h).as_slice(), openssl_sm3(b""));
}

#[test]
fn unsupported_backend_is_an_error_not_a_panic() {
    for b in [
        Backend::Portable,
        Backend::Avx2,
        Backend::Avx512,
        Backend::Neon,
        Backend::NeonSm,
    ] {
        assert_eq!(Sm3::with_backend(b).is_ok(), b.is_available());
        assert_eq!(
            shangmi::hazmat::hash_many_with_backend(b, &[]).is_ok(),
            b.is_available()
        );
    }
}

#[test]
fn lanes_equal_single_stream_for_unequal_lengths() {
    let mut rng = StdRng::seed_from_u64(5);
    let data = random_bytes(&mut rng, 8192);
    for b in Backend::available() {
        for count in (0..40).chain([63, 100]) {
            let msgs: Vec<&[u8]> = (0..count)
                .map(|_| {
                    let len = match rng.random_range(0..4) {
                        0 => rng.random_range(0..130),
                        1 => rng.random_range(0..1100),
                        2 => 64 * rng.random_range(0..20),
                        _ => rng.random_range(0..8192),
                    };
                    let start = rng.random_range(0..=data.len() - len);
                    &data[start..start + len]
                })
                .collect();
            let got = shangmi::hazmat::hash_many_with_backend(b, &msgs).unwrap();
            assert_eq!(got.len(), msgs.len());
            for (i, m) in msgs.iter().enumerate() {
                assert_eq!(
                    got[i],
                    openssl_sm3(m),
                    "message {i} of {count} (len {}) on {b}",
                    m.len()
                );
            }
        }
        // Every message length from 0 to 200 in one call: each padding shape in some lane.
        let msgs: Vec<&[u8]> = (0..=200).map(|n| &data[n..2 * n]).collect();
        let got = shangmi::hazmat::hash_many_with_backend(b, &msgs).unwrap();
        for (i, m) in msgs.iter().enumerate() {
            assert_eq!(got[i], openssl_sm3(m), "length {i} on {b}");
        }
    }
    let msgs = [b"abc".as_slice(); 17];
    let mut out = [[0u8; 32]; 17];
    sm3::hash_many_into(&msgs, &mut out).unwrap();
    assert!(out.iter().all(|d| *d == openssl_sm3(b"abc")));
    assert!(sm3::hash_many_into(&msgs, &mut out[..3]).is_err());
}

mod properties {
    use super::*;
    use proptest::collection::vec;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Any message, cut into any pieces, hashes the same on every backend as OpenSSL.
        #[test]
        fn every_backend_and_every_split_agree(
            data in vec(any::<u8>(), 0..3000),
            cuts in vec(any::<prop::sample::Index>(), 0..6),
        ) {
            let want = openssl_sm3(&data);
            let mut points: Vec<usize> = cuts.iter().map(|c| c.index(data.len() + 1)).collect();
            points.sort_unstable();
            for b in Backend::available() {
                let mut h = Sm3::with_backend(b).unwrap();
                let mut at = 0;
                for &p in &points {
                    h.update(&data[at..p]);
                    at = p;
                }
                h.update(&data[at..]);
                prop_assert_eq!(h.finalize(), want);
            }
        }

        /// Lanes equal single-stream for any batch of messages.
        #[test]
        fn lanes_agree(msgs in vec(vec(any::<u8>(), 0..400), 0..40)) {
            let refs: Vec<&[u8]> = msgs.iter().map(Vec::as_slice).collect();
            for b in Backend::available() {
                let got = shangmi::hazmat::hash_many_with_backend(b, &refs).unwrap();
                for (m, d) in refs.iter().zip(&got) {
                    prop_assert_eq!(*d, openssl_sm3(m));
                }
            }
        }
    }
}

/// A hash suspended at a block boundary and resumed elsewhere (as the JCA provider keeps
/// its state in Java) ends as the hash never suspended.
#[test]
fn a_hash_resumes_from_its_chaining_state() {
    let mut rng = StdRng::seed_from_u64(11);
    for len in [0usize, 1, 63, 64, 65, 127, 128, 1000, 4096] {
        let data = random_bytes(&mut rng, len + 192);
        let (head, tail) = data.split_at(192);
        let mut h = Sm3::new();
        h.update(head);
        let (state, blocks) = h.chaining_state().expect("a whole number of blocks");
        assert_eq!(blocks, 3);
        let mut resumed = Sm3::resume(state, blocks);
        resumed.update(tail);
        assert_eq!(resumed.finalize(), sm3::hash(&data), "{len}");
    }
    let mut h = Sm3::new();
    h.update(b"not a whole block");
    assert!(h.chaining_state().is_none());
}
