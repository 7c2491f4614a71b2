//! SM2 public-key encryption and decryption cases, at each message size, beside the peers.

use openssl::pkey::{PKey, Private};
use openssl::pkey_ctx::PkeyCtx;
use rustcrypto_sm2::pke::{DecryptingKey, EncryptingKey, Mode as RcMode};
use shangmi::sm2::Format;

use super::{Keys, rng, sized};
use crate::harness::{Candidate, Case};
use crate::input;

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
pub(super) fn encryption_cases(n: usize, k: &Keys, v: &mut Vec<Case>) {
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
