//! ECDH, the key exchange a TLS 1.3 handshake pays once a side: `sm2-ecdh` (curveSM2, what
//! RFC 8998 and TLCP's ECDHE suites compute) beside `x25519` and `p256-ecdh`, each one
//! variable-base multiplication by a key kept between operations with the peer's share
//! received as bytes, as `openssl speed ecdh*` times it (the context prepared once, the
//! derivation timed). Every candidate writes 1 on success, so the agreement check compares
//! success, not secrets (each holds its own keys).

use openssl::derive::Deriver;
use openssl::ec::{EcGroup, EcKey};
use openssl::nid::Nid;
use openssl::pkey::{Id, PKey, Private};

use crate::harness::{Candidate, Case};
use crate::sm2_ops::per_op;

fn openssl_ec(nid: Nid) -> PKey<Private> {
    let group = EcGroup::from_curve_name(nid).expect("curve");
    PKey::from_ec_key(EcKey::generate(&group).expect("EC key")).expect("pkey")
}

/// OpenSSL deriving with `ours` against `peer`'s public half, the deriver built once.
fn openssl_derive(ours: PKey<Private>, peer: &PKey<Private>) -> Candidate {
    let public = match peer.id() {
        Id::X25519 => PKey::public_key_from_raw_bytes(
            &peer.raw_public_key().expect("raw public key"),
            Id::X25519,
        )
        .expect("public key"),
        _ => {
            let ec = peer.ec_key().expect("EC key");
            PKey::from_ec_key(
                EcKey::from_public_key(ec.group(), ec.public_key()).expect("public key"),
            )
            .expect("pkey")
        }
    };
    // The keys live as long as the candidate: the deriver borrows them.
    let ours: &'static PKey<Private> = Box::leak(Box::new(ours));
    let public: &'static PKey<_> = Box::leak(Box::new(public));
    let mut deriver = Deriver::new(ours).expect("deriver");
    deriver.set_peer(public).expect("peer");
    let mut secret = [0u8; 32];
    Candidate::new("openssl", move |out| {
        out[0] = u8::from(deriver.derive(&mut secret).expect("derive") == 32);
    })
}

/// aws-lc-rs's `agree` with a kept private key and the peer's share as bytes (`imp`: its name
/// in the table, or a yardstick's).
fn aws_agree(imp: &'static str, alg: &'static aws_lc_rs::agreement::Algorithm) -> Candidate {
    use aws_lc_rs::agreement::{PrivateKey, UnparsedPublicKey, agree};
    let ours = PrivateKey::generate(alg).expect("key");
    let peer = PrivateKey::generate(alg)
        .expect("key")
        .compute_public_key()
        .expect("public key")
        .as_ref()
        .to_vec();
    let run = move |out: &mut [u8]| {
        out[0] = agree(&ours, UnparsedPublicKey::new(alg, &peer), (), |s| {
            Ok(u8::from(s.len() == 32))
        })
        .expect("agree");
    };
    if imp.starts_with("yardstick:") {
        Candidate::yardstick(imp, run)
    } else {
        Candidate::new(imp, run)
    }
}

/// `sm2-ecdh-batch`: 64 agreements a call through `diffie_hellman_many` (eight at a time in
/// IFMA lanes where the CPU has them), each with a key share taken from a pool as a TLS
/// server takes it, reported per agreement beside the same 64 done one by one.
fn batch_case() -> Case {
    use shangmi::sm2::{EphemeralPool, EphemeralSecret, VerifyingKey};
    let peers: Vec<VerifyingKey> = (0..64)
        .map(|_| *EphemeralSecret::random().expect("key").public_key())
        .collect();
    let peers2 = peers.clone();
    let mut pool = EphemeralPool::new(64);
    let mut pool2 = EphemeralPool::new(64);
    let batched = move |out: &mut [u8]| {
        let pairs = peers
            .iter()
            .map(|q| (pool.take().expect("key share"), q))
            .collect();
        let secrets = EphemeralSecret::diffie_hellman_many(pairs);
        out[0] = u8::from(secrets.iter().all(|s| s.is_ok()));
    };
    let one_by_one = move |out: &mut [u8]| {
        let mut all = true;
        for q in &peers2 {
            all &= pool2.take().expect("key share").diffie_hellman(q).is_ok();
        }
        out[0] = u8::from(all);
    };
    Case {
        work: 64.0,
        ..per_op(
            "sm2-ecdh-batch",
            vec![
                Candidate::new("shangmi", batched),
                Candidate::yardstick("yardstick:sm2-ecdh-one-by-one", one_by_one),
            ],
        )
    }
}

/// `sm2-ecdh`, `sm2-ecdh-batch`, `x25519` and `p256-ecdh`.
pub fn cases() -> Vec<Case> {
    let ours = shangmi::sm2::SigningKey::random().expect("key");
    let peer = shangmi::sm2::SigningKey::random()
        .expect("key")
        .verifying_key()
        .to_uncompressed();
    // X25519 timed beside it in the same rounds, for the target ratio.
    let sm2 = per_op(
        "sm2-ecdh",
        vec![
            Candidate::new("shangmi", move |out| {
                // The share arrives as bytes and is validated, as in a handshake.
                let point = shangmi::sm2::VerifyingKey::from_sec1_bytes(&peer).expect("point");
                out[0] =
                    u8::from(ours.diffie_hellman(&point).expect("ecdh").as_bytes().len() == 32);
            }),
            aws_agree("yardstick:x25519", &aws_lc_rs::agreement::X25519),
        ],
    );
    let x25519 = || PKey::generate_x25519().expect("X25519 key");
    let p256 = || openssl_ec(Nid::X9_62_PRIME256V1);
    vec![
        sm2,
        batch_case(),
        per_op(
            "x25519",
            vec![
                aws_agree("aws-lc-rs", &aws_lc_rs::agreement::X25519),
                openssl_derive(x25519(), &x25519()),
            ],
        ),
        per_op(
            "p256-ecdh",
            vec![
                aws_agree("aws-lc-rs", &aws_lc_rs::agreement::ECDH_P256),
                openssl_derive(p256(), &p256()),
            ],
        ),
    ]
}
