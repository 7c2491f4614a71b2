//! SM2 ops with every in-process peer: `sm2-sign`, `sm2-verify` (over a 32-byte message,
//! hashing included: Z and e = SM3(Z || M)), `sm2-sign-digest`, `sm2-verify-digest` (over a
//! precomputed e), `sm2-sign-pool`, `sm2-verify-precomputed`, `sm2-verify-batch` (64 per
//! call, one thread) and `sm2-verify-batch-2t` (two), `sm2-keygen`, and
//! `sm2-encrypt` / `sm2-decrypt` / `sm2-encrypt-precomputed` over messages of several sizes.
//!
//! Signatures and ciphertexts are randomized, so a candidate's agreement check is a round trip
//! (sign then verify, writing 1; encrypt then decrypt, writing the plaintext) through its own
//! library; decryption candidates each open a ciphertext their library made.

use openssl::hash::MessageDigest;
use openssl::pkey::{Id, PKey, Private};
use openssl::pkey_ctx::PkeyCtx;
use openssl::sign::{Signer, Verifier};
use shangmi::sm2::SigningKey;

use crate::harness::{Candidate, Case, Unit};
use crate::input;

mod encryption;
mod signing;
use encryption::encryption_cases;
use signing::signature_cases;

pub const MSG: [u8; 32] = [0x5a; 32];
const DEFAULT_ID: &str = "1234567812345678";

pub fn per_op(op: &'static str, candidates: Vec<Candidate>) -> Case {
    Case {
        op,
        size: None,
        unit: Unit::OpsPerSec,
        work: 1.0,
        out_len: 1,
        candidates,
    }
}

/// Small messages count operations per second (the point multiplications dominate), large
/// ones megabytes per second.
pub fn sized(op: &'static str, n: usize, candidates: Vec<Candidate>) -> Case {
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

pub fn openssl_sm2_key() -> PKey<Private> {
    let mut ctx = PkeyCtx::new_id(Id::SM2).expect("SM2 keygen");
    ctx.keygen_init().expect("SM2 keygen");
    ctx.keygen().expect("SM2 keygen")
}

pub fn openssl_sign(key: &PKey<Private>, md: MessageDigest, msg: &[u8]) -> Vec<u8> {
    let mut s = Signer::new(md, key).expect("signer");
    s.update(msg).expect("sign");
    s.sign_to_vec().expect("sign")
}

pub fn openssl_verify(key: &PKey<Private>, md: MessageDigest, msg: &[u8], sig: &[u8]) -> bool {
    let mut v = Verifier::new(md, key).expect("verifier");
    v.update(msg).expect("verify");
    v.verify(sig).unwrap_or(false)
}

/// EVP_PKEY_sign over a digest: what "without hashing the message" means for OpenSSL.
pub fn openssl_sign_digest(key: &PKey<Private>, digest: &[u8]) -> Vec<u8> {
    let mut ctx = PkeyCtx::new(key).expect("ctx");
    ctx.sign_init().expect("sign init");
    let mut sig = Vec::new();
    ctx.sign_to_vec(digest, &mut sig).expect("sign");
    sig
}

pub fn openssl_verify_digest(key: &PKey<Private>, digest: &[u8], sig: &[u8]) -> bool {
    let mut ctx = PkeyCtx::new(key).expect("ctx");
    ctx.verify_init().expect("verify init");
    ctx.verify(digest, sig).unwrap_or(false)
}

/// OpenSSL's ECDSA P-256 signing (SHA-256 over the message): the yardstick of the SM2
/// targets, timed inside the SM2 cases so the ratios compare alternating rounds.
fn ecdsa_sign_yardstick(key: PKey<Private>) -> Candidate {
    Candidate::yardstick("yardstick:ecdsa-p256-sign", move |out| {
        out[0] = openssl_sign(&key, MessageDigest::sha256(), &MSG)[3];
    })
}

/// gmcrypto-core's signing (DER output, default ID), checked by its own verification.
fn gmcrypto_sign(k: &Keys) -> Candidate {
    use gmcrypto_core::sm2::{sign_with_id, verify_with_id};
    let (sk1, sk2, pk) = (k.gm_sk.clone(), k.gm_sk.clone(), k.gm_pk);
    Candidate::checked(
        "gmcrypto",
        move |out| {
            let sig = sign_with_id(&sk1, DEFAULT_ID.as_bytes(), &MSG, &mut getrandom::SysRng)
                .expect("sign");
            out[0] = u8::from(verify_with_id(&pk, DEFAULT_ID.as_bytes(), &MSG, &sig));
        },
        move |out| {
            out[0] = sign_with_id(&sk2, DEFAULT_ID.as_bytes(), &MSG, &mut getrandom::SysRng)
                .expect("sign")[3];
        },
    )
}

fn gmcrypto_verify(k: &Keys) -> Candidate {
    use gmcrypto_core::sm2::{sign_with_id, verify_with_id};
    let sig = sign_with_id(
        &k.gm_sk,
        DEFAULT_ID.as_bytes(),
        &MSG,
        &mut getrandom::SysRng,
    )
    .expect("sign");
    let pk = k.gm_pk;
    Candidate::new("gmcrypto", move |out| {
        out[0] = u8::from(verify_with_id(&pk, DEFAULT_ID.as_bytes(), &MSG, &sig));
    })
}

fn ecdsa_verify_yardstick(key: PKey<Private>) -> Candidate {
    let sig = openssl_sign(&key, MessageDigest::sha256(), &MSG);
    Candidate::yardstick("yardstick:ecdsa-p256-verify", move |out| {
        out[0] = u8::from(openssl_verify(&key, MessageDigest::sha256(), &MSG, &sig));
    })
}

pub fn p256_key() -> PKey<Private> {
    let group =
        openssl::ec::EcGroup::from_curve_name(openssl::nid::Nid::X9_62_PRIME256V1).expect("P-256");
    PKey::from_ec_key(openssl::ec::EcKey::generate(&group).expect("P-256 key")).expect("pkey")
}

fn rng() -> rand_core::UnwrapErr<getrandom::SysRng> {
    rand_core::UnwrapErr(getrandom::SysRng)
}

/// One key in the representation of each library.
struct Keys {
    ours: SigningKey,
    openssl: PKey<Private>,
    rc_sign: rustcrypto_sm2::dsa::SigningKey,
    rc_secret: rustcrypto_sm2::SecretKey,
    libsm_sk: num_bigint_libsm::BigUint,
    libsm_pk: libsm::sm2::ecc::Point,
    gm_sk: gmcrypto_core::sm2::Sm2PrivateKey,
    gm_pk: gmcrypto_core::sm2::Sm2PublicKey,
    p256: PKey<Private>,
}

fn keys() -> Keys {
    let openssl = openssl_sm2_key();
    let d: [u8; 32] = openssl
        .ec_key()
        .expect("EC key")
        .private_key()
        .to_vec_padded(32)
        .expect("32 bytes")
        .try_into()
        .expect("32 bytes");
    let ours = SigningKey::from_bytes(&d).expect("valid key");
    let ours_public = ours.verifying_key().to_uncompressed();
    let rc_secret = rustcrypto_sm2::SecretKey::from_slice(&d).expect("valid key");
    let rc_sign = rustcrypto_sm2::dsa::SigningKey::new(DEFAULT_ID, &rc_secret).expect("valid key");
    let ctx = libsm::sm2::signature::SigCtx::new();
    let libsm_sk = ctx.load_seckey(&d).expect("valid key");
    let libsm_pk = ctx.pk_from_sk(&libsm_sk).expect("valid key");
    Keys {
        ours,
        openssl,
        rc_sign,
        rc_secret,
        libsm_sk,
        libsm_pk,
        gm_sk: Option::from(gmcrypto_core::sm2::Sm2PrivateKey::from_bytes_be(&d))
            .expect("valid key"),
        gm_pk: gmcrypto_core::sm2::Sm2PublicKey::from_sec1_bytes(&ours_public).expect("valid key"),
        p256: p256_key(),
    }
}

pub fn cases(quick: bool) -> Vec<Case> {
    let k = keys();
    let mut v = Vec::new();
    signature_cases(&k, &mut v);
    let sizes: &[usize] = if quick {
        &[32, 1 << 20]
    } else {
        &[16, 32, 128, 1024, 8192, 32768, 1 << 20]
    };
    for &n in sizes {
        encryption_cases(n, &k, &mut v);
    }
    v.push(keygen_case(k.p256.clone()));
    batch_cases(&mut v);
    v
}

/// `sm2-verify-batch` (one thread) and `sm2-verify-batch-2t` (two): 64 signatures by 64 keys
/// per call, reported per signature, each beside single verification of the same items.
fn batch_cases(v: &mut Vec<Case>) {
    use shangmi::sm2::{BatchItem, SignatureEncoding, VerifyingKey, verify_batch};
    let mut keys: Vec<SigningKey> = Vec::new();
    while keys.len() < 64 {
        let seed = input::bytes_seeded(32, 1000 + keys.len() as u64);
        if let Ok(k) = SigningKey::from_bytes(seed.as_slice().try_into().expect("32 bytes")) {
            keys.push(k);
        }
    }
    let msgs: Vec<Vec<u8>> = (0..64).map(|i| vec![i as u8; 32]).collect();
    let sigs: Vec<Vec<u8>> = keys
        .iter()
        .zip(&msgs)
        .map(|(k, m)| k.sign(m).expect("sign").to_der())
        .collect();
    let vks: Vec<VerifyingKey> = keys.iter().map(|k| *k.verifying_key()).collect();
    let batch = |threads: usize| {
        let (vks, msgs, sigs) = (vks.clone(), msgs.clone(), sigs.clone());
        move |out: &mut [u8]| {
            let items: Vec<BatchItem<'_>> = (0..64)
                .map(|i| BatchItem {
                    key: &vks[i],
                    id: shangmi::sm2::DEFAULT_ID,
                    message: &msgs[i],
                    signature: &sigs[i],
                    encoding: SignatureEncoding::Der,
                })
                .collect();
            out[0] = u8::from(verify_batch(&items, threads).iter().all(|&ok| ok));
        }
    };
    let single = batch(1);
    let (vks1, msgs1, sigs1) = (vks.clone(), msgs.clone(), sigs.clone());
    let one_by_one = move |out: &mut [u8]| {
        let mut all = true;
        for i in 0..64 {
            let s = shangmi::sm2::Signature::from_der(&sigs1[i]).expect("der");
            all &= vks1[i].verify(&msgs1[i], &s).is_ok();
        }
        out[0] = u8::from(all);
    };
    let one_by_one2 = one_by_one.clone();
    for (op, run) in [
        (
            "sm2-verify-batch",
            Box::new(single) as Box<dyn FnMut(&mut [u8])>,
        ),
        ("sm2-verify-batch-2t", Box::new(batch(2))),
    ] {
        let yard = if op.ends_with("2t") {
            one_by_one2.clone()
        } else {
            one_by_one.clone()
        };
        v.push(Case {
            work: 64.0,
            ..per_op(
                op,
                vec![
                    Candidate::new("shangmi", run),
                    Candidate::yardstick("yardstick:sm2-verify", yard),
                ],
            )
        });
    }
}

fn keygen_case(p256: PKey<Private>) -> Case {
    per_op(
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
            Candidate::new("rustcrypto", |out| {
                let sk: rustcrypto_sm2::SecretKey =
                    rustcrypto_sm2::elliptic_curve::Generate::generate_from_rng(&mut rng());
                out[0] = sk.public_key().to_sec1_bytes()[0] / 4;
            }),
            Candidate::new("libsm", |out| {
                let (pk, _) = libsm::sm2::signature::SigCtx::new()
                    .new_keypair()
                    .expect("keygen");
                out[0] = u8::from(
                    libsm::sm2::ecc::EccCtx::new()
                        .check_point(&pk)
                        .unwrap_or(false),
                );
            }),
            ecdsa_sign_yardstick(p256),
        ],
    )
}
