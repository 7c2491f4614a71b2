//! The international algorithms the published comparisons set SM2 against, all through
//! OpenSSL: ECDSA on P-256 and secp256k1 (`ecdsa-p256-*`, `ecdsa-secp256k1-*`), RSA-2048 and
//! RSA-3072 PKCS#1 v1.5 signatures (`rsa2048-*`, `rsa3072-*`), each with the message hashed
//! (SHA-256) and over a precomputed digest (`*-digest`), and RSA-OAEP (SHA-256) encryption over
//! messages of 16 B to 32 KiB, cut into as many OAEP blocks as the key size needs, as the
//! studies did (`rsa2048-oaep-encrypt`, ...).

use openssl::ec::{EcGroup, EcKey};
use openssl::hash::MessageDigest;
use openssl::md::Md;
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private};
use openssl::pkey_ctx::PkeyCtx;
use openssl::rsa::{Padding, Rsa};

use crate::harness::{Candidate, Case};
use crate::input;
use crate::sm2_ops::{
    MSG, openssl_sign, openssl_sign_digest, openssl_verify, openssl_verify_digest, per_op, sized,
};

fn ec_key(nid: Nid) -> PKey<Private> {
    let group = EcGroup::from_curve_name(nid).expect("curve");
    PKey::from_ec_key(EcKey::generate(&group).expect("EC key")).expect("pkey")
}

fn rsa_key(bits: u32) -> PKey<Private> {
    PKey::from_rsa(Rsa::generate(bits).expect("RSA key")).expect("pkey")
}

/// Signing and verification, with and without hashing, for one OpenSSL key.
fn signature_family(
    name: &'static [&'static str; 4],
    key: PKey<Private>,
    rsa: bool,
    v: &mut Vec<Case>,
) {
    let [sign, verify, sign_digest, verify_digest] = *name;
    let md = MessageDigest::sha256;
    let digest = openssl::sha::sha256(&MSG);
    let (k1, k2) = (key.clone(), key.clone());
    v.push(per_op(
        sign,
        vec![Candidate::checked(
            "openssl",
            move |out| {
                let sig = openssl_sign(&k1, md(), &MSG);
                out[0] = u8::from(openssl_verify(&k1, md(), &MSG, &sig));
            },
            move |out| out[0] = openssl_sign(&k2, md(), &MSG)[3],
        )],
    ));
    let sig = openssl_sign(&key, md(), &MSG);
    let k3 = key.clone();
    v.push(per_op(
        verify,
        vec![Candidate::new("openssl", move |out| {
            out[0] = u8::from(openssl_verify(&k3, md(), &MSG, &sig))
        })],
    ));
    let (k4, k5) = (key.clone(), key.clone());
    let sign_d = move |k: &PKey<Private>| -> Vec<u8> {
        if rsa {
            rsa_sign_digest(k, &digest)
        } else {
            openssl_sign_digest(k, &digest)
        }
    };
    let verify_d = move |k: &PKey<Private>, s: &[u8]| -> bool {
        if rsa {
            rsa_verify_digest(k, &digest, s)
        } else {
            openssl_verify_digest(k, &digest, s)
        }
    };
    v.push(per_op(
        sign_digest,
        vec![Candidate::checked(
            "openssl",
            move |out| out[0] = u8::from(verify_d(&k4, &sign_d(&k4))),
            move |out| out[0] = sign_d(&k5)[3],
        )],
    ));
    let dsig = sign_d(&key);
    v.push(per_op(
        verify_digest,
        vec![Candidate::new("openssl", move |out| {
            out[0] = u8::from(verify_d(&key, &dsig))
        })],
    ));
}

/// PKCS#1 v1.5 over a SHA-256 digest: the DigestInfo prefix added by OpenSSL.
fn rsa_sign_digest(key: &PKey<Private>, digest: &[u8]) -> Vec<u8> {
    let mut ctx = PkeyCtx::new(key).expect("ctx");
    ctx.sign_init().expect("sign init");
    ctx.set_rsa_padding(Padding::PKCS1).expect("padding");
    ctx.set_signature_md(Md::sha256()).expect("md");
    let mut sig = Vec::new();
    ctx.sign_to_vec(digest, &mut sig).expect("sign");
    sig
}

fn rsa_verify_digest(key: &PKey<Private>, digest: &[u8], sig: &[u8]) -> bool {
    let mut ctx = PkeyCtx::new(key).expect("ctx");
    ctx.verify_init().expect("verify init");
    ctx.set_rsa_padding(Padding::PKCS1).expect("padding");
    ctx.set_signature_md(Md::sha256()).expect("md");
    ctx.verify(digest, sig).unwrap_or(false)
}

fn oaep_ctx(key: &PKey<Private>, encrypt: bool) -> PkeyCtx<Private> {
    let mut ctx = PkeyCtx::new(key).expect("ctx");
    if encrypt {
        ctx.encrypt_init().expect("encrypt init");
    } else {
        ctx.decrypt_init().expect("decrypt init");
    }
    ctx.set_rsa_padding(Padding::PKCS1_OAEP).expect("padding");
    ctx.set_rsa_oaep_md(Md::sha256()).expect("oaep md");
    ctx.set_rsa_mgf1_md(Md::sha256()).expect("mgf1 md");
    ctx
}

/// The message in OAEP blocks of at most k - 66 bytes.
fn oaep_encrypt(key: &PKey<Private>, msg: &[u8]) -> Vec<Vec<u8>> {
    let max = key.size() - 66;
    msg.chunks(max)
        .map(|c| {
            let mut ctx = oaep_ctx(key, true);
            let mut out = Vec::new();
            ctx.encrypt_to_vec(c, &mut out).expect("encrypt");
            out
        })
        .collect()
}

fn oaep_decrypt(key: &PKey<Private>, blocks: &[Vec<u8>], out: &mut [u8]) {
    let mut at = 0;
    for b in blocks {
        let mut ctx = oaep_ctx(key, false);
        let mut pt = Vec::new();
        ctx.decrypt_to_vec(b, &mut pt).expect("decrypt");
        out[at..at + pt.len()].copy_from_slice(&pt);
        at += pt.len();
    }
}

fn oaep_cases(name: [&'static str; 2], key: &PKey<Private>, n: usize, v: &mut Vec<Case>) {
    let msg = input::bytes(n);
    let (k1, k2, m1, m2) = (key.clone(), key.clone(), msg.clone(), msg.clone());
    v.push(sized(
        name[0],
        n,
        vec![Candidate::checked(
            "openssl",
            move |out| oaep_decrypt(&k1, &oaep_encrypt(&k1, &m1), out),
            move |out| out[0] = oaep_encrypt(&k2, &m2)[0][7],
        )],
    ));
    let blocks = oaep_encrypt(key, &msg);
    let k3 = key.clone();
    v.push(sized(
        name[1],
        n,
        vec![Candidate::new("openssl", move |out| {
            oaep_decrypt(&k3, &blocks, out)
        })],
    ));
}

pub fn cases(quick: bool) -> Vec<Case> {
    let mut v = Vec::new();
    signature_family(
        &[
            "ecdsa-p256-sign",
            "ecdsa-p256-verify",
            "ecdsa-p256-sign-digest",
            "ecdsa-p256-verify-digest",
        ],
        ec_key(Nid::X9_62_PRIME256V1),
        false,
        &mut v,
    );
    signature_family(
        &[
            "ecdsa-secp256k1-sign",
            "ecdsa-secp256k1-verify",
            "ecdsa-secp256k1-sign-digest",
            "ecdsa-secp256k1-verify-digest",
        ],
        ec_key(Nid::SECP256K1),
        false,
        &mut v,
    );
    let rsa2048 = rsa_key(2048);
    let rsa3072 = rsa_key(3072);
    signature_family(
        &[
            "rsa2048-sign",
            "rsa2048-verify",
            "rsa2048-sign-digest",
            "rsa2048-verify-digest",
        ],
        rsa2048.clone(),
        true,
        &mut v,
    );
    signature_family(
        &[
            "rsa3072-sign",
            "rsa3072-verify",
            "rsa3072-sign-digest",
            "rsa3072-verify-digest",
        ],
        rsa3072.clone(),
        true,
        &mut v,
    );
    let sizes: &[usize] = if quick {
        &[32]
    } else {
        &[16, 32, 128, 1024, 8192, 32768]
    };
    for &n in sizes {
        oaep_cases(
            ["rsa2048-oaep-encrypt", "rsa2048-oaep-decrypt"],
            &rsa2048,
            n,
            &mut v,
        );
        oaep_cases(
            ["rsa3072-oaep-encrypt", "rsa3072-oaep-decrypt"],
            &rsa3072,
            n,
            &mut v,
        );
    }
    v
}
