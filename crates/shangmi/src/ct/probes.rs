//! What `examples/ctgrind.rs` runs under valgrind: each probe takes its inputs, marks the
//! secret ones, runs an operation through the portable backend and returns its (public)
//! output. `leaky_control` is the check's own test: it branches on and indexes by a secret,
//! and valgrind must report it.
#![allow(missing_docs)]

use super::{public, public_slice, secret};
use crate::cpu::Backend;
use crate::sm2::ct_probes as sm2;

/// The probes by name, each run on two inputs so that input-dependent paths would show.
pub const PROBES: [&str; 11] = [
    "sm2-key-exchange",
    "sm2-decrypt",
    "sm2-fixed-base",
    "sm2-batch-affine",
    "sm2-variable-base",
    "sm2-scalar-invert",
    "sm2-field-invert",
    "sm2-keygen-sign",
    "sm3-hmac",
    "sm4-block",
    "sm4-gcm",
];

/// Runs one probe on `seed`-derived inputs; `None` for an unknown name.
pub fn run(name: &str, seed: u8) -> Option<Vec<u8>> {
    let input = |salt: u8| -> [u8; 32] { crate::sm3::hash(&[seed, salt]) };
    Some(match name {
        "sm2-fixed-base" => sm2::fixed_base_mul(input(1)).to_vec(),
        "sm2-key-exchange" => {
            sm2::key_exchange([input(17), input(18), input(19), input(20)]).to_vec()
        }
        "sm2-decrypt" => sm2::decrypt(input(15), input(16)).to_vec(),
        "sm2-batch-affine" => sm2::batch_affine(input(14)).to_vec(),
        "sm2-variable-base" => sm2::variable_base_mul(input(2)).to_vec(),
        "sm2-scalar-invert" => sm2::scalar_invert(input(3)).to_vec(),
        "sm2-field-invert" => sm2::field_invert(input(4)).to_vec(),
        "sm2-keygen-sign" => sm2::keygen_and_sign(input(5), input(6), input(7)).to_vec(),
        "sm3-hmac" => {
            let mut key = input(8);
            let mut msg = [input(9), input(10)].concat();
            secret(&mut key);
            secret(&mut msg[..]);
            public(crate::sm3::hmac(&key, &msg)).to_vec()
        }
        "sm4-block" => {
            let k = input(11);
            let mut key: [u8; 16] = k[..16].try_into().ok()?;
            secret(&mut key);
            let c = crate::sm4::Sm4::with_backend(&key, Backend::Portable).ok()?;
            // One block (the word kernel) and 64 (the bitsliced kernel).
            let mut blocks = [[seed; 16]; 65];
            secret(&mut blocks);
            c.encrypt_block(&mut blocks[0]);
            c.encrypt_blocks(&mut blocks[1..]);
            c.decrypt_blocks(&mut blocks[1..]);
            public(blocks).concat()
        }
        "sm4-gcm" => {
            use crate::sm4::{Sm4, Sm4Gcm};
            let k = input(12);
            let mut key: [u8; 16] = k[..16].try_into().ok()?;
            secret(&mut key);
            let c = Sm4::with_backend(&key, Backend::Portable).ok()?;
            let gcm = Sm4Gcm::with_cipher(c, 16).ok()?;
            let mut msg = input(13).repeat(3);
            secret(&mut msg[..]);
            let mut sealed = gcm.encrypt(&[seed; 12], b"aad", &msg).ok()?;
            public_slice(&mut sealed);
            let mut opened = gcm.decrypt(&[seed; 12], b"aad", &sealed).ok()?;
            public_slice(&mut opened);
            // A forgery is rejected: the tag comparison may not leak where it differs.
            sealed[5] ^= 1;
            let forged = gcm.decrypt(&[seed; 12], b"aad", &sealed).is_err();
            [opened, vec![u8::from(forged)]].concat()
        }
        _ => return None,
    })
}

/// Deliberately variable-time: a branch on a secret bit and a load at a secret index.
pub fn leaky_control(seed: u8) -> u8 {
    let mut s = [seed];
    secret(&mut s);
    let table: Vec<u8> = (0..=255u8).collect();
    let looked_up = table[usize::from(s[0])];
    let branch = if s[0] & 1 == 1 { 3 } else { 5 };
    public(looked_up.wrapping_add(branch))
}
