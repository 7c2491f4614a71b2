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
use rustcrypto_sm2::pke::{DecryptingKey, EncryptingKey, Mode as RcMode};
use shangmi::sm2::{Format, PresignPool, SigningKey};
use signature::{Signer as _, Verifier as _};

use crate::harness::{Candidate, Case, Unit};
use crate::input;

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

fn signature_cases(k: &Keys, v: &mut Vec<Case>) {
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

/// Encryption and decryption at `n` bytes, C1C3C2 where the library lets one choose.
fn encryption_cases(n: usize, k: &Keys, v: &mut Vec<Case>) {
    let msg = input::bytes(n);
    let ours = k.ours.clone();
    let pk = *ours.verifying_key();
    let ossl = k.openssl.clone();
    let rc_pub = rustcrypto_sm2::PublicKey::from_secret_scalar(&k.rc_secret.to_nonzero_scalar());
    let rc_enc = EncryptingKey::new_with_mode(rc_pub, RcMode::C1C3C2);
    let rc_dec = DecryptingKey::new_with_mode(k.rc_secret.to_nonzero_scalar(), RcMode::C1C3C2);
    let (lsk, lpk) = (k.libsm_sk.clone(), k.libsm_pk);

    let enc = {
        let (ours, m1, m2) = (ours.clone(), msg.clone(), msg.clone());
        let (o, m3, m4) = (ossl.clone(), msg.clone(), msg.clone());
        let (re, rd, m5, m6) = (rc_enc.clone(), rc_dec.clone(), msg.clone(), msg.clone());
        let (re2,) = (rc_enc.clone(),);
        let (lsk1, lpk1, m7, m8) = (lsk.clone(), lpk, msg.clone(), msg.clone());
        vec![
            Candidate::checked(
                "shangmi",
                move |out| {
                    let ct = pk.encrypt(&m1, Format::C1C3C2).expect("encrypt");
                    out.copy_from_slice(&ours.decrypt(&ct, Format::C1C3C2).expect("decrypt"));
                },
                move |out| out[0] = pk.encrypt(&m2, Format::C1C3C2).expect("encrypt")[7],
            ),
            Candidate::checked(
                "openssl",
                {
                    let o = o.clone();
                    move |out| out.copy_from_slice(&openssl_decrypt(&o, &openssl_encrypt(&o, &m3)))
                },
                move |out| out[0] = openssl_encrypt(&o, &m4)[7],
            ),
            Candidate::checked(
                "rustcrypto",
                move |out| {
                    let ct = re.encrypt(&mut rng(), &m5).expect("encrypt");
                    out.copy_from_slice(&rd.decrypt(&ct).expect("decrypt"));
                },
                move |out| out[0] = re2.encrypt(&mut rng(), &m6).expect("encrypt")[7],
            ),
            Candidate::checked(
                "libsm",
                {
                    let (lsk1, lpk1) = (lsk1.clone(), lpk1);
                    move |out| {
                        let ct = libsm::sm2::encrypt::EncryptCtx::new(m7.len(), lpk1)
                            .encrypt(&m7)
                            .expect("encrypt");
                        let pt = libsm::sm2::encrypt::DecryptCtx::new(m7.len(), lsk1.clone())
                            .decrypt(&ct)
                            .expect("decrypt");
                        out.copy_from_slice(&pt);
                    }
                },
                move |out| {
                    out[0] = libsm::sm2::encrypt::EncryptCtx::new(m8.len(), lpk1)
                        .encrypt(&m8)
                        .expect("encrypt")[7]
                },
            ),
        ]
    };
    let mut enc = enc;
    if n == 1 << 20 {
        // The targets at 1 MiB: single-stream SM3 and OpenSSL's SM4-CBC encryption.
        let (m11, m12) = (msg.clone(), msg.clone());
        enc.push(Candidate::yardstick("yardstick:sm3", move |out| {
            out[..32].copy_from_slice(&shangmi::sm3::hash(&m11));
        }));
        enc.push(Candidate::yardstick(
            "yardstick:openssl-sm4-cbc-enc",
            move |out| {
                let key = [7u8; 16];
                let mut c = openssl::symm::Crypter::new(
                    openssl::symm::Cipher::sm4_cbc(),
                    openssl::symm::Mode::Encrypt,
                    &key,
                    Some(&key),
                )
                .expect("openssl sm4");
                c.pad(false);
                let mut tmp = vec![0u8; m12.len() + 16];
                let k = c.update(&m12, &mut tmp).expect("openssl sm4");
                out.copy_from_slice(&tmp[..k]);
            },
        ));
    }
    v.push(sized("sm2-encrypt", n, enc));

    let pre = pk.precompute();
    let pre2 = pre.clone();
    let (o2, m9, m10) = (ours.clone(), msg.clone(), msg.clone());
    v.push(sized(
        "sm2-encrypt-precomputed",
        n,
        vec![Candidate::checked(
            "shangmi",
            move |out| {
                let ct = pre.encrypt(&m9, Format::C1C3C2).expect("encrypt");
                out.copy_from_slice(&o2.decrypt(&ct, Format::C1C3C2).expect("decrypt"));
            },
            move |out| out[0] = pre2.encrypt(&m10, Format::C1C3C2).expect("encrypt")[7],
        )],
    ));

    // Decryption: shangmi and OpenSSL open the same OpenSSL ciphertext (DER); the others their
    // own library's.
    let der = openssl_encrypt(&ossl, &msg);
    let der2 = der.clone();
    let rc_ct = rc_enc.encrypt(&mut rng(), &msg).expect("encrypt");
    let l_ct = libsm::sm2::encrypt::EncryptCtx::new(n, lpk)
        .encrypt(&msg)
        .expect("encrypt");
    v.push(sized(
        "sm2-decrypt",
        n,
        vec![
            Candidate::new("shangmi", move |out| {
                out.copy_from_slice(&ours.decrypt(&der, Format::Der).expect("decrypt"))
            }),
            Candidate::new("openssl", move |out| {
                out.copy_from_slice(&openssl_decrypt(&ossl, &der2))
            }),
            Candidate::new("rustcrypto", move |out| {
                out.copy_from_slice(&rc_dec.decrypt(&rc_ct).expect("decrypt"))
            }),
            Candidate::new("libsm", move |out| {
                let pt = libsm::sm2::encrypt::DecryptCtx::new(n, lsk.clone())
                    .decrypt(&l_ct)
                    .expect("decrypt");
                out.copy_from_slice(&pt);
            }),
        ],
    ));
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
