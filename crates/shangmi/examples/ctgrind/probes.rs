//! What `main.rs` runs under valgrind: each probe takes its inputs, marks the
//! secret ones, runs an operation on a given backend profile and returns its (public)
//! output. `leaky_control` is the check's own test: it branches on and indexes by a secret,
//! and valgrind must report it.
#![allow(missing_docs)]

mod sm2;

use crate::cpu::Backend;
use crate::ct::{public, public_slice, secret};

/// The probes by name, each run on two inputs so that input-dependent paths would show.
pub const PROBES: [&str; 21] = [
    "sm2-key-exchange",
    "sm2-ecdh",
    "sm2-lanes",
    "sm2-decrypt",
    "sm2-fixed-base",
    "sm2-batch-affine",
    "sm2-variable-base",
    "sm2-scalar-invert",
    "sm2-field-invert",
    "sm2-keygen-sign",
    "sm2-keygen-sign-blinded",
    "sm3-hmac",
    "sm3-pbkdf2",
    "sm3-kdf",
    "sm4-block",
    "sm4-gcm",
    "sm4-ccm",
    "sm4-cmac",
    "sm4-xts",
    "sm4-cbc-unpad",
    "sm4-ctr",
];

/// SM4 on `profile` with a secret key.
fn sm4_secret_key(mut key: [u8; 16], profile: Backend) -> Option<crate::sm4::Sm4> {
    secret(&mut key);
    crate::sm4::Sm4::with_backend(&key, profile).ok()
}

/// Runs one probe on `seed`-derived inputs, the symmetric algorithms on `profile` (under
/// valgrind: `portable`, and `avx2` with AES-NI, PCLMULQDQ and BMI2, which it emulates; the
/// SM2 probes always run the portable field, as valgrind has no ADX); `None` for an unknown
/// name.
pub fn run(name: &str, seed: u8, profile: Backend) -> Option<Vec<u8>> {
    let input = |salt: u8| -> [u8; 32] { crate::sm3::hash(&[seed, salt]) };
    Some(match name {
        "sm2-fixed-base" => sm2::fixed_base_mul(input(1)).to_vec(),
        "sm2-key-exchange" => {
            sm2::key_exchange([input(17), input(18), input(19), input(20)]).to_vec()
        }
        "sm2-decrypt" => sm2::decrypt(input(15), input(16)).to_vec(),
        "sm2-ecdh" => sm2::ecdh(input(45), input(46)).to_vec(),
        // The lanes are x86-64's; elsewhere the probe has nothing to run.
        #[cfg(target_arch = "x86_64")]
        "sm2-lanes" => sm2::lanes(input(47), input(48)).to_vec(),
        #[cfg(not(target_arch = "x86_64"))]
        "sm2-lanes" => vec![0; 4],
        "sm2-batch-affine" => sm2::batch_affine(input(14)).to_vec(),
        "sm2-variable-base" => sm2::variable_base_mul(input(2)).to_vec(),
        "sm2-scalar-invert" => sm2::scalar_invert(input(3)).to_vec(),
        "sm2-field-invert" => sm2::field_invert(input(4)).to_vec(),
        "sm2-keygen-sign" => sm2::keygen_and_sign(input(5), input(6), input(7)).to_vec(),
        "sm2-keygen-sign-blinded" => {
            sm2::keygen_and_sign_blinded(input(41), input(42), [input(43), input(44)]).to_vec()
        }
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
            let c = crate::sm4::Sm4::with_backend(&key, profile).ok()?;
            // One block (the word kernel) and 64 (the bitsliced kernel).
            let mut blocks = [[seed; 16]; 65];
            secret(&mut blocks);
            c.encrypt_block(&mut blocks[0]);
            c.encrypt_blocks(&mut blocks[1..]);
            c.decrypt_blocks(&mut blocks[1..]);
            public(blocks).concat()
        }
        "sm4-gcm" => {
            use crate::sm4::{Sm4, modes::gcm::Sm4Gcm};
            let k = input(12);
            let mut key: [u8; 16] = k[..16].try_into().ok()?;
            secret(&mut key);
            let c = Sm4::with_backend(&key, profile).ok()?;
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
        "sm3-pbkdf2" => {
            let mut password = input(21);
            secret(&mut password);
            let mut out = [0u8; 48];
            crate::hazmat::pbkdf2_with_backend(profile, &password, b"salt", 3, &mut out)
                .ok()?
                .ok()?;
            public(out).to_vec()
        }
        "sm3-kdf" => {
            // Z is the shared secret; the derived key is secret too, published here only as
            // the probe's output.
            let mut z = [input(22), input(23)].concat();
            secret(&mut z[..]);
            let mut out = [0u8; 100];
            crate::hazmat::kdf_with_backend(profile, &z, &mut out).ok()?;
            public(out).to_vec()
        }
        "sm4-ccm" => {
            let c = sm4_secret_key(input(24)[..16].try_into().ok()?, profile)?;
            let ccm = crate::sm4::modes::ccm::Sm4Ccm::with_cipher(c, 12, 16).ok()?;
            let mut msg = input(25).repeat(2);
            secret(&mut msg[..]);
            let mut sealed = ccm.encrypt(&[seed; 12], b"aad", &msg).ok()?;
            public_slice(&mut sealed);
            let mut opened = ccm.decrypt(&[seed; 12], b"aad", &sealed).ok()?;
            public_slice(&mut opened);
            sealed[3] ^= 1;
            let forged = ccm.decrypt(&[seed; 12], b"aad", &sealed).is_err();
            [opened, vec![u8::from(forged)]].concat()
        }
        "sm4-cmac" => {
            use crate::sm4::modes::mac::{Cmac, XcbcMac};
            let c = sm4_secret_key(input(26)[..16].try_into().ok()?, profile)?;
            let mut msg = input(27).repeat(3);
            secret(&mut msg[..41]);
            let mut m = Cmac::with_cipher(c);
            m.update(&msg[..41]);
            let tag = public(m.clone().finalize());
            // Verification of a wrong tag may not show where it differs.
            let mut wrong = tag;
            wrong[9] ^= 1;
            let rejected = m.verify(&wrong).is_err();
            let mut xkey: [u8; 16] = input(28)[..16].try_into().ok()?;
            secret(&mut xkey);
            let mut x = XcbcMac::new(&xkey);
            x.update(&msg[..41]);
            [
                tag.to_vec(),
                public(x.finalize()).to_vec(),
                vec![u8::from(rejected)],
            ]
            .concat()
        }
        "sm4-xts" => {
            use crate::sm4::modes::xts::{Variant, Xts};
            let mut key = [input(29), input(30)].concat();
            secret(&mut key[..]);
            let key: [u8; 32] = key[..32].try_into().ok()?;
            let mut out = Vec::new();
            for variant in [Variant::Gb, Variant::Ieee] {
                let x = Xts::with_backend(&key, variant, profile).ok()?.ok()?;
                // 37 bytes: two whole blocks and ciphertext stealing.
                let mut data = input(31)[..].repeat(2)[..37].to_vec();
                secret(&mut data[..]);
                x.encrypt(&[seed; 16], &mut data).ok()?;
                public_slice(&mut data);
                out.extend_from_slice(&data);
            }
            out
        }
        "sm4-cbc-unpad" => {
            use crate::sm4::modes::cbc;
            let c = sm4_secret_key(input(32)[..16].try_into().ok()?, profile)?;
            // Secret plaintext of every padding length; the padding check of the decryption
            // may reveal only whether it passed.
            let mut out = Vec::new();
            for n in [0usize, 1, 15, 16, 31] {
                let mut msg = vec![seed; n];
                secret(&mut msg[..]);
                let mut ct = cbc::encrypt_padded(&c, &[7; 16], &msg);
                public_slice(&mut ct);
                let mut back = cbc::decrypt_padded(&c, &[7; 16], &ct).ok()?;
                public_slice(&mut back);
                out.extend_from_slice(&back);
                // A damaged last block: refused, without a secret-dependent branch.
                let last = ct.len() - 1;
                ct[last] ^= 0x40;
                out.push(u8::from(cbc::decrypt_padded(&c, &[7; 16], &ct).is_err()));
            }
            out
        }
        "sm4-ctr" => {
            use crate::sm4::modes::ctr;
            let c = sm4_secret_key(input(33)[..16].try_into().ok()?, profile)?;
            let mut data = input(34).repeat(5);
            secret(&mut data[..]);
            ctr::apply_keystream(&c, &[seed; 16], &mut data).ok()?;
            public_slice(&mut data);
            data
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
