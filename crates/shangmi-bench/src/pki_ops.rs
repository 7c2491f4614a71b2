//! Certificates and CMS: a chain of three SM2 certificates (root, intermediate, leaf, made
//! here) verified, and SignedData over 1 KiB signed and verified (one signer, signed
//! attributes, the intermediate included, the chain checked), beside OpenSSL 3's
//! `X509_verify_cert` in this process and gmsm's smx509/pkcs7 in `bench/go`, which reads the
//! same certificates and key from [`dir`].
use std::path::PathBuf;

use der::EncodePem;
use der::pem::LineEnding;
use openssl::stack::Stack;
use openssl::x509::store::{X509Store, X509StoreBuilder};
use openssl::x509::{X509, X509StoreContext};
use shangmi::sm2::SigningKey;
use shangmi_pki::cms::{CmsSigner, Flavor};
use shangmi_pki::{Cert, Issue, Verifier};

use crate::harness::{Candidate, Case};
use crate::sm2_ops::per_op;

/// Where the chain is written for the Go peers (under the workspace's target directory).
pub fn dir() -> PathBuf {
    crate::go_peers::workspace().join("target/bench-pki")
}

struct Chain {
    root: Cert,
    mid: Cert,
    leaf: Cert,
    leaf_key: SigningKey,
}

fn chain() -> Chain {
    let root_key = SigningKey::random().expect("rng");
    let root = shangmi_pki::self_signed(&root_key, "CN=Bench Root,O=shangmi", &Issue::ca(30))
        .expect("root");
    let mid_key = SigningKey::random().expect("rng");
    let csr = shangmi_pki::request(&mid_key, "CN=Bench CA,O=shangmi", &[]).expect("csr");
    let mid = shangmi_pki::sign_request(&csr, &root, &root_key, &Issue::ca(30)).expect("mid");
    let leaf_key = SigningKey::random().expect("rng");
    let csr =
        shangmi_pki::request(&leaf_key, "CN=bench.example", &["DNS:bench.example"]).expect("csr");
    let leaf = shangmi_pki::sign_request(&csr, &mid, &mid_key, &Issue::leaf(30)).expect("leaf");
    Chain {
        root,
        mid,
        leaf,
        leaf_key,
    }
}

fn pem(c: &shangmi_pki::Certificate) -> String {
    c.to_pem(LineEnding::LF).expect("PEM")
}

/// Writes the chain and the leaf's key for bench/go.
fn write(c: &Chain) -> std::io::Result<()> {
    let d = dir();
    std::fs::create_dir_all(&d)?;
    std::fs::write(d.join("root.pem"), pem(&c.root))?;
    std::fs::write(d.join("mid.pem"), pem(&c.mid))?;
    std::fs::write(d.join("leaf.pem"), pem(&c.leaf))?;
    let key = c.leaf_key.to_pkcs8_pem().expect("PKCS#8");
    std::fs::write(d.join("leaf.key"), key.as_bytes())
}

/// `cert` for OpenSSL, its signature checked with GM/T 0009's SM2 ID (OpenSSL 3.0 uses an
/// empty ID unless a certificate carries one).
fn openssl_cert(c: &shangmi_pki::Certificate) -> X509 {
    let x = X509::from_pem(pem(c).as_bytes()).expect("OpenSSL reads the certificate");
    crate::openssl_ffi::set_distinguishing_id(&x, shangmi::sm2::DEFAULT_ID);
    x
}

fn openssl_store(root: &X509) -> X509Store {
    let mut b = X509StoreBuilder::new().expect("store");
    b.add_cert(root.clone()).expect("anchor");
    b.build()
}

fn openssl_verify(store: &X509Store, leaf: &X509, mid: &Stack<X509>) -> bool {
    let mut ctx = X509StoreContext::new().expect("context");
    ctx.init(store, leaf, mid, |c| c.verify_cert())
        .expect("X509_verify_cert ran")
}

pub fn cases() -> Vec<Case> {
    let c = chain();
    if let Err(e) = write(&c) {
        eprintln!(
            "shangmi-bench: {}: {e} (gmsm's PKI figures will be missing)",
            dir().display()
        );
    }
    let (root, mid, leaf) = (
        openssl_cert(&c.root),
        openssl_cert(&c.mid),
        openssl_cert(&c.leaf),
    );
    let mut stack = Stack::new().expect("stack");
    stack.push(mid).expect("push");
    let store = openssl_store(&root);
    assert!(
        openssl_verify(&store, &leaf, &stack),
        "OpenSSL 3 verifies the bench chain"
    );

    let mut v = Vec::new();
    // A verifier kept across chains, as a server keeps its trust store.
    let kept = Verifier::new(vec![c.root.clone()]);
    let (l1, m1) = (c.leaf.clone(), vec![c.mid.clone()]);
    let (ol, os, ostore) = (leaf.clone(), stack, store);
    v.push(per_op(
        "x509-verify-chain",
        vec![
            Candidate::new("shangmi", move |out| {
                out[0] = u8::from(kept.verify(&l1, &m1).is_ok())
            }),
            Candidate::new("openssl", move |out| {
                out[0] = u8::from(openssl_verify(&ostore, &ol, &os))
            }),
        ],
    ));
    // Nothing kept: a new trust store (and, for shangmi, no precomputed issuer keys) per chain.
    let anchors = vec![c.root.clone()];
    let (l2, m2) = (c.leaf.clone(), vec![c.mid.clone()]);
    let mut stack2 = Stack::new().expect("stack");
    stack2.push(openssl_cert(&c.mid)).expect("push");
    let (oroot, ol2) = (root, leaf);
    v.push(per_op(
        "x509-verify-chain-fresh",
        vec![
            Candidate::new("shangmi", move |out| {
                out[0] = u8::from(Verifier::new(anchors.clone()).verify(&l2, &m2).is_ok())
            }),
            Candidate::new("openssl", move |out| {
                out[0] = u8::from(openssl_verify(&openssl_store(&oroot), &ol2, &stack2))
            }),
        ],
    ));

    // SignedData over 1 KiB, the intermediate included; verification checks the chain.
    let msg = crate::input::bytes(1024);
    let (lc, lk, mc) = (c.leaf.clone(), c.leaf_key.clone(), c.mid.clone());
    let sign = move || {
        let s = [CmsSigner {
            cert: &lc,
            key: &lk,
        }];
        shangmi_pki::cms::sign(&msg, &s, std::slice::from_ref(&mc), false, Flavor::Gm)
            .expect("signs")
    };
    let p7 = sign();
    let v1 = Verifier::new(vec![c.root.clone()]);
    let v2 = Verifier::new(vec![c.root.clone()]);
    let sign2 = sign.clone();
    v.push(per_op(
        "cms-sign",
        vec![Candidate::checked(
            "shangmi",
            move |out| out[0] = u8::from(shangmi_pki::cms::verify(&sign(), None, &v1).is_ok()),
            move |out| out[0] = sign2()[0],
        )],
    ));
    v.push(per_op(
        "cms-verify",
        vec![Candidate::new("shangmi", move |out| {
            out[0] = u8::from(shangmi_pki::cms::verify(&p7, None, &v2).is_ok())
        })],
    ));
    v
}
