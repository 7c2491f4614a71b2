//! SM2 signing and verification cases: shangmi beside OpenSSL, Tongsuo, GmSSL, gmsm, the Rust
//! SM2 crates and ECDSA P-256.

use openssl::hash::MessageDigest;
use shangmi::sm2::PresignPool;
use signature::{Signer as _, Verifier as _};

use super::{
    Keys, MSG, ecdsa_sign_yardstick, ecdsa_verify_yardstick, gmcrypto_sign, gmcrypto_verify,
    openssl_sign, openssl_sign_digest, openssl_verify, openssl_verify_digest, per_op,
};
use crate::harness::{Candidate, Case};

pub(super) fn signature_cases(k: &Keys, v: &mut Vec<Case>) {
    let vk = *k.ours.verifying_key();
    let (s1, s2) = (k.ours.clone(), k.ours.clone());
    let (o1, o2) = (k.openssl.clone(), k.openssl.clone());
    let (r1, r2) = (k.rc_sign.clone(), k.rc_sign.clone());
    let (lsk, lpk) = (k.libsm_sk.clone(), k.libsm_pk);
    let (lsk2, lpk2) = (k.libsm_sk.clone(), k.libsm_pk);
    v.push(per_op(
        "sm2-sign",
        vec![
            Candidate::checked(
                "shangmi",
                move |out| {
                    out[0] = u8::from(vk.verify(&MSG, &s1.sign(&MSG).expect("sign")).is_ok())
                },
                move |out| out[0] = s2.sign(&MSG).expect("sign").r()[0],
            ),
            // OpenSSL hashes Z with an empty ID unless told otherwise: the cost is the same.
            Candidate::checked(
                "openssl",
                move |out| {
                    let sig = openssl_sign(&o1, MessageDigest::sm3(), &MSG);
                    out[0] = u8::from(openssl_verify(&o1, MessageDigest::sm3(), &MSG, &sig));
                },
                move |out| out[0] = openssl_sign(&o2, MessageDigest::sm3(), &MSG)[3],
            ),
            Candidate::checked(
                "rustcrypto",
                move |out| {
                    let sig: rustcrypto_sm2::dsa::Signature = r1.sign(&MSG);
                    out[0] = u8::from(r1.verifying_key().verify(&MSG, &sig).is_ok());
                },
                move |out| {
                    let sig: rustcrypto_sm2::dsa::Signature = r2.sign(&MSG);
                    out[0] = sig.to_bytes()[0];
                },
            ),
            Candidate::checked(
                "libsm",
                move |out| {
                    let ctx = libsm::sm2::signature::SigCtx::new();
                    let sig = ctx.sign(&MSG, &lsk, &lpk).expect("sign");
                    out[0] = u8::from(ctx.verify(&MSG, &lpk, &sig).expect("verify"));
                },
                move |out| {
                    let ctx = libsm::sm2::signature::SigCtx::new();
                    out[0] = ctx.sign(&MSG, &lsk2, &lpk2).expect("sign").get_r().bits() as u8;
                },
            ),
            gmcrypto_sign(k),
            ecdsa_sign_yardstick(k.p256.clone()),
        ],
    ));

    let sig = k.ours.sign(&MSG).expect("sign");
    let osig = openssl_sign(&k.openssl, MessageDigest::sm3(), &MSG);
    let rsig: rustcrypto_sm2::dsa::Signature = k.rc_sign.sign(&MSG);
    let rvk = k.rc_sign.verifying_key().clone();
    let lctx = libsm::sm2::signature::SigCtx::new();
    let lsig = lctx.sign(&MSG, &k.libsm_sk, &k.libsm_pk).expect("sign");
    let lpk3 = k.libsm_pk;
    let o3 = k.openssl.clone();
    v.push(per_op(
        "sm2-verify",
        vec![
            Candidate::new("shangmi", move |out| {
                out[0] = u8::from(vk.verify(&MSG, &sig).is_ok())
            }),
            Candidate::new("openssl", move |out| {
                out[0] = u8::from(openssl_verify(&o3, MessageDigest::sm3(), &MSG, &osig))
            }),
            Candidate::new("rustcrypto", move |out| {
                out[0] = u8::from(rvk.verify(&MSG, &rsig).is_ok())
            }),
            Candidate::new("libsm", move |out| {
                let ctx = libsm::sm2::signature::SigCtx::new();
                out[0] = u8::from(ctx.verify(&MSG, &lpk3, &lsig).expect("verify"));
            }),
            gmcrypto_verify(k),
            ecdsa_verify_yardstick(k.p256.clone()),
        ],
    ));

    // Without hashing the message: over a precomputed e.
    let e = shangmi::sm3::hash(&MSG);
    let (s3, s4, o4, o5) = (
        k.ours.clone(),
        k.ours.clone(),
        k.openssl.clone(),
        k.openssl.clone(),
    );
    v.push(per_op(
        "sm2-sign-digest",
        vec![
            Candidate::checked(
                "shangmi",
                move |out| {
                    let sig = s3.sign_digest(&e).expect("sign");
                    out[0] = u8::from(vk.verify_digest(&e, &sig).is_ok());
                },
                move |out| out[0] = s4.sign_digest(&e).expect("sign").r()[0],
            ),
            Candidate::checked(
                "openssl",
                move |out| {
                    let sig = openssl_sign_digest(&o4, &e);
                    out[0] = u8::from(openssl_verify_digest(&o4, &e, &sig));
                },
                move |out| out[0] = openssl_sign_digest(&o5, &e)[3],
            ),
        ],
    ));
    let dsig = k.ours.sign_digest(&e).expect("sign");
    let odsig = openssl_sign_digest(&k.openssl, &e);
    let o6 = k.openssl.clone();
    v.push(per_op(
        "sm2-verify-digest",
        vec![
            Candidate::new("shangmi", move |out| {
                out[0] = u8::from(vk.verify_digest(&e, &dsig).is_ok())
            }),
            Candidate::new("openssl", move |out| {
                out[0] = u8::from(openssl_verify_digest(&o6, &e, &odsig))
            }),
        ],
    ));

    let (s5, s6) = (k.ours.clone(), k.ours.clone());
    let mut pool = PresignPool::new(64);
    let mut pool2 = PresignPool::new(64);
    v.push(per_op(
        "sm2-sign-pool",
        vec![
            Candidate::checked(
                "shangmi",
                move |out| {
                    let sig = s5.sign_with_pool(&mut pool2, &MSG).expect("sign");
                    out[0] = u8::from(vk.verify(&MSG, &sig).is_ok());
                },
                move |out| out[0] = s6.sign_with_pool(&mut pool, &MSG).expect("sign").r()[0],
            ),
            ecdsa_sign_yardstick(k.p256.clone()),
        ],
    ));
    let pre = vk.precompute();
    let sig2 = k.ours.sign(&MSG).expect("sign");
    let sig3 = sig2;
    v.push(per_op(
        "sm2-verify-precomputed",
        vec![
            Candidate::new("shangmi", move |out| {
                out[0] = u8::from(pre.verify(&MSG, &sig2).is_ok());
            }),
            // The target compares with plain verification: timed alongside.
            Candidate::yardstick("yardstick:sm2-verify", move |out| {
                out[0] = u8::from(vk.verify(&MSG, &sig3).is_ok());
            }),
        ],
    ));
}
