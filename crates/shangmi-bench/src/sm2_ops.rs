//! SM2 ops (`sm2-sign`, `sm2-sign-pool`, `sm2-verify`, `sm2-verify-precomputed`, `sm2-keygen`)
//! beside OpenSSL's SM2 and its ECDSA P-256 (`ecdsa-p256-sign`, `ecdsa-p256-verify`), over a
//! 32-byte message. Signing and verification include hashing the message, as the published
//! comparisons count them. Signatures are randomized, so the pre-timing check of each candidate
//! signs and verifies, writing 1 for success.

use openssl::ec::{EcGroup, EcKey};
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{Id, PKey, Private};
use openssl::pkey_ctx::PkeyCtx;
use openssl::sign::{Signer, Verifier};
use shangmi::sm2::{PresignPool, SigningKey};

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

pub fn cases(_quick: bool) -> Vec<Case> {
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
            Candidate::new("openssl", move |out| {
                out[0] = u8::from(openssl_verify(&ossl, MessageDigest::sm3(), &ossl_sig))
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
