//! SM4 block function: the standard's examples, OpenSSL as an oracle, batches against single
//! blocks, every backend.

mod common;

use common::vectors;
use openssl::symm::{Cipher, Crypter, Mode};
use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};
use shangmi::Backend;
use shangmi::sm4::Sm4;

fn openssl_ecb(key: &[u8; 16], data: &[u8], mode: Mode) -> Vec<u8> {
    let mut c = Crypter::new(Cipher::sm4_ecb(), mode, key, None).unwrap();
    c.pad(false);
    let mut out = vec![0u8; data.len() + 16];
    let n = c.update(data, &mut out).unwrap();
    let m = c.finalize(&mut out[n..]).unwrap();
    out.truncate(n + m);
    out
}

#[test]
fn standard_examples_on_every_backend() {
    for rec in vectors::load("sm4.txt") {
        let key: [u8; 16] = rec.hex("key").try_into().unwrap();
        let pt: [u8; 16] = rec.hex("plaintext").try_into().unwrap();
        let ct = rec.hex("ciphertext");
        let iterations = rec.num("iterations");
        for b in Backend::available() {
            let c = Sm4::with_backend(&key, b).unwrap();
            let mut block = pt;
            for _ in 0..iterations {
                c.encrypt_block(&mut block);
            }
            assert_eq!(block.as_slice(), ct, "{} on {b}", rec.place());
            for _ in 0..iterations {
                c.decrypt_block(&mut block);
            }
            assert_eq!(block, pt, "{} decrypt on {b}", rec.place());
            // The same chain through the bulk path, one block per call.
            if iterations == 1 {
                let mut blocks = [pt; 3];
                c.encrypt_blocks(&mut blocks);
                assert!(blocks.iter().all(|x| x.as_slice() == ct));
            }
        }
    }
}

#[test]
fn bulk_equals_single_blocks_and_openssl_for_every_count() {
    let mut rng = StdRng::seed_from_u64(20);
    for count in (0..=140).chain([255, 256, 257, 1000]) {
        let mut key = [0u8; 16];
        rng.fill_bytes(&mut key);
        let mut data = vec![[0u8; 16]; count];
        for b in &mut data {
            rng.fill_bytes(b);
        }
        let want = openssl_ecb(&key, data.as_flattened(), Mode::Encrypt);
        for b in Backend::available() {
            let c = Sm4::with_backend(&key, b).unwrap();
            let mut bulk = data.clone();
            c.encrypt_blocks(&mut bulk);
            assert_eq!(
                bulk.as_flattened(),
                want.as_slice(),
                "{count} blocks on {b}"
            );
            let mut single = data.clone();
            for x in &mut single {
                c.encrypt_block(x);
            }
            assert_eq!(single, bulk, "{count} single blocks on {b}");
            c.decrypt_blocks(&mut bulk);
            assert_eq!(bulk, data, "{count} blocks decrypted on {b}");
        }
    }
}

#[test]
fn a_101_block_batch_equals_101_single_blocks() {
    let mut rng = StdRng::seed_from_u64(21);
    for _ in 0..20 {
        let key: [u8; 16] = rng.random();
        let blocks: Vec<[u8; 16]> = (0..101).map(|_| rng.random()).collect();
        let reference = Sm4::with_backend(&key, Backend::Portable).unwrap();
        let mut want = blocks.clone();
        for x in &mut want {
            reference.encrypt_block(x);
        }
        for b in Backend::available() {
            let c = Sm4::with_backend(&key, b).unwrap();
            let mut got = blocks.clone();
            c.encrypt_blocks(&mut got);
            assert_eq!(got, want, "{b}");
            c.decrypt_blocks(&mut got);
            assert_eq!(got, blocks, "{b}");
        }
    }
}
