//! SM2 ops (`sm2-sign`, `sm2-sign-pool`, `sm2-verify`, `sm2-verify-precomputed`, `sm2-keygen`)
//! beside OpenSSL's SM2 and its ECDSA P-256 (`ecdsa-p256-sign`, `ecdsa-p256-verify`), over a
//! 32-byte message; `sm2-encrypt` and `sm2-decrypt` (and `sm2-encrypt-precomputed`) over
//! messages of several sizes. Signing and verification include hashing the message, as the published
//! comparisons count them. Signatures are randomized, so the pre-timing check of each candidate
//! signs and verifies, writing 1 for success.

use openssl::ec::{EcGroup, EcKey};
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{Id, PKey, Private};
use openssl::pkey_ctx::PkeyCtx;
use openssl::sign::{Signer, Verifier};
use shangmi::sm2::{Format, PresignPool, SigningKey};

use crate::harness::{Candidate, Case, Unit};

const MSG: [u8; 32] = [0x5a; 32];

fn per_op(op: &'static str, candidates: Vec<Candidate>) -> Case {
    Case {
        op,
        size: None,
        unit: Unit::OpsPerSec,
        work: 1.0,
        out_len: 1,
        candidates,
    }
}

fn openssl_sm2_key() -> PKey<Private> {
    let mut ctx = PkeyCtx::new_id(Id::SM2).expect("SM2 keygen");
    ctx.keygen_init().expect("SM2 keygen");
    ctx.keygen().expect("SM2 keygen")
}

fn p256_key() -> PKey<Private> {
    let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).expect("P-256");
    PKey::from_ec_key(EcKey::generate(&group).expect("P-256 key")).expect("P-256 pkey")
}

fn openssl_sign(key: &PKey<Private>, md: MessageDigest) -> Vec<u8> {
    let mut s = Signer::new(md, key).expect("signer");
    s.update(&MSG).expect("sign");
    s.sign_to_vec().expect("sign")
}

fn openssl_verify(key: &PKey<Private>, md: MessageDigest, sig: &[u8]) -> bool {
    let mut v = Verifier::new(md, key).expect("verifier");
    v.update(&MSG).expect("verify");
    v.verify(sig).unwrap_or(false)
}

/// An OpenSSL signer candidate: the check also verifies.
fn openssl_signer(key: PKey<Private>, md: fn() -> MessageDigest) -> Candidate {
    let k2 = key.clone();
    Candidate::checked(
        "openssl",
        move |out| out[0] = u8::from(openssl_verify(&k2, md(), &openssl_sign(&k2, md()))),
        move |out| out[0] = openssl_sign(&key, md()).len() as u8,
    )
}

/// Small messages count operations per second (the point multiplications dominate), large
/// ones megabytes per second.
fn sized(op: &'static str, n: usize, candidates: Vec<Candidate>) -> Case {
    let per_op = n <= 1024;
    Case {
        op,
        size: Some(n),
        unit: if per_op { Unit::OpsPerSec } else { Unit::MBps },
        work: if per_op { 1.0 } else { n as f64 },
        out_len: n,
        candidates,
    }
}

fn openssl_encrypt(key: &PKey<Private>, msg: &[u8]) -> Vec<u8> {
    let mut ctx = PkeyCtx::new(key).expect("ctx");
    ctx.encrypt_init().expect("encrypt");
    let mut out = Vec::new();
    ctx.encrypt_to_vec(msg, &mut out).expect("encrypt");
    out
}

fn openssl_decrypt(key: &PKey<Private>, ct: &[u8]) -> Vec<u8> {
    let mut ctx = PkeyCtx::new(key).expect("ctx");
    ctx.decrypt_init().expect("decrypt");
    let mut out = Vec::new();
    ctx.decrypt_to_vec(ct, &mut out).expect("decrypt");
    out
}

/// Encryption and decryption at `n` bytes. Encryption is randomized: each candidate's check
/// encrypts and decrypts, writing the plaintext, which must be the message for all of them.
/// Decryption: every candidate opens the same OpenSSL ciphertext (DER).
fn encryption_cases(n: usize, key: &SigningKey, ossl: &PKey<Private>, v: &mut Vec<Case>) {
    let msg: Vec<u8> = (0..n).map(|i| (i * 7 + 3) as u8).collect();
    let (k1, k2, m1, m2) = (key.clone(), key.clone(), msg.clone(), msg.clone());
    let (o1, o2, m3, m4) = (ossl.clone(), ossl.clone(), msg.clone(), msg.clone());
    v.push(sized(
        "sm2-encrypt",
        n,
        vec![
            Candidate::checked(
                "shangmi",
                move |out| {
                    let ct = k1
                        .verifying_key()
                        .encrypt(&m1, Format::C1C3C2)
                        .expect("encrypt");
                    out.copy_from_slice(&k1.decrypt(&ct, Format::C1C3C2).expect("decrypt"));
                },
                move |out| {
                    let ct = k2
                        .verifying_key()
                        .encrypt(&m2, Format::C1C3C2)
                        .expect("encrypt");
                    out[0] = ct[100 % ct.len()];
                },
            ),
            Candidate::checked(
                "openssl",
                move |out| out.copy_from_slice(&openssl_decrypt(&o1, &openssl_encrypt(&o1, &m3))),
                move |out| out[0] = openssl_encrypt(&o2, &m4)[100],
            ),
        ],
    ));
    let pre = key.verifying_key().precompute();
    let (k3, m5, m6) = (key.clone(), msg.clone(), msg.clone());
    let pre2 = pre.clone();
    v.push(sized(
        "sm2-encrypt-precomputed",
        n,
        vec![Candidate::checked(
            "shangmi",
            move |out| {
                let ct = pre.encrypt(&m5, Format::C1C3C2).expect("encrypt");
                out.copy_from_slice(&k3.decrypt(&ct, Format::C1C3C2).expect("decrypt"));
            },
            move |out| out[0] = pre2.encrypt(&m6, Format::C1C3C2).expect("encrypt")[100],
        )],
    ));
    let ct = openssl_encrypt(ossl, &msg);
    let (k4, o3, ct2) = (key.clone(), ossl.clone(), ct.clone());
    v.push(sized(
        "sm2-decrypt",
        n,
        vec![
            Candidate::new("shangmi", move |out| {
                out.copy_from_slice(&k4.decrypt(&ct, Format::Der).expect("decrypt"))
            }),
            Candidate::new("openssl", move |out| {
                out.copy_from_slice(&openssl_decrypt(&o3, &ct2))
            }),
        ],
    ));
}

pub fn cases(quick: bool) -> Vec<Case> {
    let key = SigningKey::random().expect("OS RNG");
    let vk = *key.verifying_key();
    let ossl = openssl_sm2_key();
    let p256 = p256_key();
    let mut v = Vec::new();

    let (k1, k2) = (key.clone(), key.clone());
    v.push(per_op(
        "sm2-sign",
        vec![
            Candidate::checked(
                "shangmi",
                move |out| {
                    out[0] = u8::from(vk.verify(&MSG, &k1.sign(&MSG).expect("sign")).is_ok())
                },
                move |out| out[0] = k2.sign(&MSG).expect("sign").r()[0],
            ),
            openssl_signer(ossl.clone(), MessageDigest::sm3),
        ],
    ));
    v.push(per_op(
        "ecdsa-p256-sign",
        vec![openssl_signer(p256.clone(), MessageDigest::sha256)],
    ));

    let k3 = key.clone();
    let mut pool = PresignPool::new(64);
    let k4 = key.clone();
    let mut pool2 = PresignPool::new(64);
    v.push(per_op(
        "sm2-sign-pool",
        vec![Candidate::checked(
            "shangmi",
            move |out| {
                let sig = k3.sign_with_pool(&mut pool2, &MSG).expect("sign");
                out[0] = u8::from(vk.verify(&MSG, &sig).is_ok());
            },
            move |out| out[0] = k4.sign_with_pool(&mut pool, &MSG).expect("sign").r()[0],
        )],
    ));

    let sig = key.sign(&MSG).expect("sign");
    let ossl_sig = openssl_sign(&ossl, MessageDigest::sm3());
    let p256_sig = openssl_sign(&p256, MessageDigest::sha256());
    v.push(per_op(
        "sm2-verify",
        vec![
            Candidate::new("shangmi", move |out| {
                out[0] = u8::from(vk.verify(&MSG, &sig).is_ok())
            }),
            Candidate::new("openssl", {
                let ossl = ossl.clone();
                move |out| out[0] = u8::from(openssl_verify(&ossl, MessageDigest::sm3(), &ossl_sig))
            }),
        ],
    ));
    let pre = vk.precompute();
    v.push(per_op(
        "sm2-verify-precomputed",
        vec![Candidate::new("shangmi", move |out| {
            out[0] = u8::from(pre.verify(&MSG, &sig).is_ok());
        })],
    ));
    v.push(per_op(
        "ecdsa-p256-verify",
        vec![Candidate::new("openssl", move |out| {
            out[0] = u8::from(openssl_verify(&p256, MessageDigest::sha256(), &p256_sig));
        })],
    ));
    // The same key on both sides, so both decrypt the same ciphertexts.
    let d = ossl
        .ec_key()
        .expect("EC key")
        .private_key()
        .to_vec_padded(32)
        .expect("32 bytes");
    let shared = SigningKey::from_bytes(&d.try_into().expect("32 bytes")).expect("valid key");
    let sizes: &[usize] = if quick {
        &[32, 1 << 20]
    } else {
        &[32, 1024, 8192, 1 << 20]
    };
    for &n in sizes {
        encryption_cases(n, &shared, &ossl, &mut v);
    }
    v.push(per_op(
        "sm2-keygen",
        vec![
            Candidate::new("shangmi", |out| {
                out[0] = SigningKey::random()
                    .expect("OS RNG")
                    .verifying_key()
                    .to_uncompressed()[0]
                    / 4;
            }),
            Candidate::new("openssl", |out| {
                out[0] = u8::from(openssl_sm2_key().bits() == 256)
            }),
        ],
    ));
    v
}
