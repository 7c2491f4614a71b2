//! Both directions with OpenSSL 4.0, whose SM2 default ID is GM/T 0009's (OpenSSL 3's is
//! empty): its `verify` checks a chain of three made here, self-signature included, and
//! its `cms` verifies SignedData made here; its own chain and SignedData verify here.

mod common;

use std::path::Path;
use std::process::Command;

use der::{EncodePem, pem::LineEnding};
use shangmi::sm2::SigningKey;
use shangmi_pki::cms::{CmsSigner, Flavor};
use shangmi_pki::{Issue, Verifier, certificates, cms, request, self_signed, sign_request};

fn openssl(tool: &Path, dir: &Path, args: &[&str]) -> (bool, Vec<u8>) {
    let o = Command::new(tool)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    if !o.status.success() {
        eprintln!("openssl {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    }
    (o.status.success(), o.stdout)
}

#[test]
fn openssl4_and_shangmi_verify_each_others_chains_and_signed_data() {
    let Some(o4) = common::openssl4() else {
        return;
    };
    let dir = tempfile_dir();
    let d = dir.as_path();
    let ok = |args: &[&str]| openssl(&o4, d, args).0;

    // Ours: a chain of three and SignedData from the leaf.
    let root_key = SigningKey::random().unwrap();
    let root = self_signed(&root_key, "/CN=shangmi Root", &Issue::ca(30)).unwrap();
    let mid_key = SigningKey::random().unwrap();
    let mid_csr = request(&mid_key, "/CN=shangmi Intermediate", &[]).unwrap();
    let mid = sign_request(&mid_csr, &root, &root_key, &Issue::ca(20)).unwrap();
    let key = SigningKey::random().unwrap();
    let csr = request(&key, "/CN=leaf.example", &["DNS:leaf.example"]).unwrap();
    let leaf = sign_request(&csr, &mid, &mid_key, &Issue::leaf(10)).unwrap();
    let msg = b"signed here, verified there".to_vec();
    let signers = [CmsSigner {
        cert: &leaf,
        key: &key,
    }];
    let p7 = cms::sign(
        &msg,
        &signers,
        std::slice::from_ref(&mid),
        false,
        Flavor::Pkcs7,
    )
    .unwrap();
    for (name, data) in [
        (
            "root.pem",
            root.to_pem(LineEnding::LF).unwrap().into_bytes(),
        ),
        ("mid.pem", mid.to_pem(LineEnding::LF).unwrap().into_bytes()),
        (
            "leaf.pem",
            leaf.to_pem(LineEnding::LF).unwrap().into_bytes(),
        ),
        ("ours.p7", p7),
        ("msg", msg.clone()),
    ] {
        std::fs::write(d.join(name), data).unwrap();
    }
    assert!(ok(&[
        "verify",
        "-CAfile",
        "root.pem",
        "-untrusted",
        "mid.pem",
        "-check_ss_sig",
        "leaf.pem"
    ]));
    assert!(
        !ok(&["verify", "-CAfile", "root.pem", "leaf.pem"]),
        "the check can fail"
    );
    let (good, content) = openssl(
        &o4,
        d,
        &[
            "cms", "-verify", "-in", "ours.p7", "-inform", "DER", "-CAfile", "root.pem", "-binary",
        ],
    );
    assert!(good);
    assert_eq!(content, msg);

    // Theirs: a root and a leaf (PKCS#8 keys, its default extensions), and SignedData.
    assert!(ok(&["genpkey", "-algorithm", "SM2", "-out", "o4-root.key"]));
    assert!(ok(&["genpkey", "-algorithm", "SM2", "-out", "o4-leaf.key"]));
    assert!(ok(&[
        "req",
        "-new",
        "-x509",
        "-key",
        "o4-root.key",
        "-subj",
        "/CN=OpenSSL Root",
        "-days",
        "30",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
        "-out",
        "o4-root.pem",
    ]));
    assert!(ok(&[
        "req",
        "-new",
        "-key",
        "o4-leaf.key",
        "-subj",
        "/CN=OpenSSL leaf",
        "-out",
        "o4-leaf.csr",
    ]));
    assert!(ok(&[
        "x509",
        "-req",
        "-in",
        "o4-leaf.csr",
        "-CA",
        "o4-root.pem",
        "-CAkey",
        "o4-root.key",
        "-days",
        "30",
        "-out",
        "o4-leaf.pem",
    ]));
    assert!(ok(&[
        "cms",
        "-sign",
        "-in",
        "msg",
        "-signer",
        "o4-leaf.pem",
        "-inkey",
        "o4-leaf.key",
        "-outform",
        "DER",
        "-out",
        "theirs.p7",
        "-nodetach",
        "-binary",
    ]));
    let read = |f: &str| std::fs::read(d.join(f)).unwrap();
    let their_root = certificates(&read("o4-root.pem")).unwrap().remove(0);
    let their_leaf = certificates(&read("o4-leaf.pem")).unwrap().remove(0);
    let v = Verifier::new(vec![their_root]);
    v.verify(&their_leaf, &[]).unwrap();
    let verified = cms::verify(&read("theirs.p7"), None, &v).unwrap();
    assert_eq!(verified.content, msg);
    // And a certificate from a request OpenSSL made, signed here, verifies there.
    let their_csr = shangmi_pki::requests(&read("o4-leaf.csr"))
        .unwrap()
        .remove(0);
    let issued = sign_request(&their_csr, &root, &root_key, &Issue::leaf(5)).unwrap();
    std::fs::write(d.join("issued.pem"), issued.to_pem(LineEnding::LF).unwrap()).unwrap();
    assert!(ok(&["verify", "-CAfile", "root.pem", "issued.pem"]));
    std::fs::remove_dir_all(&dir).unwrap();
}

fn tempfile_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("shangmi-pki-openssl4-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
