//! Both directions with gmsm (github.com/emmansun/gmsm v0.44, Go), through the small peer in
//! `interop/gmsm`: gmsm verifies the chain, request and CRL made here, and its own chain and
//! request verify and sign here. Go is needed; without it the test fails under CI=true and
//! is skipped (saying so) elsewhere.

mod common;

use std::time::SystemTime;

use der::{EncodePem, pem::LineEnding};
use shangmi::sm2::SigningKey;
use shangmi_pki::{
    Issue, Verifier, certificates, crl, request, requests, self_signed, sign_request,
};

fn pem<T: EncodePem>(t: &T) -> String {
    t.to_pem(LineEnding::LF).unwrap()
}

#[test]
fn gmsm_and_shangmi_verify_each_others_certificates() {
    let Some(peer) = common::peer("gmsmpeer") else {
        return;
    };
    let d = std::env::temp_dir().join(format!("shangmi-pki-gmsm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();

    // Ours: root, intermediate, leaf, the leaf's request, a CRL revoking the leaf.
    let root_key = SigningKey::random().unwrap();
    let root = self_signed(&root_key, "/C=CN/O=shangmi/CN=Root", &Issue::ca(30)).unwrap();
    let mid_key = SigningKey::random().unwrap();
    let mid_csr = request(&mid_key, "/C=CN/O=shangmi/CN=Intermediate", &[]).unwrap();
    let mid = sign_request(&mid_csr, &root, &root_key, &Issue::ca(20)).unwrap();
    let key = SigningKey::random().unwrap();
    let csr = request(&key, "/CN=leaf.example", &["DNS:leaf.example"]).unwrap();
    let leaf = sign_request(&csr, &mid, &mid_key, &Issue::leaf(10)).unwrap();
    let serial = leaf.tbs_certificate().serial_number().as_bytes().to_vec();
    let list = crl(
        &mid,
        &mid_key,
        &[(serial.clone(), SystemTime::now())],
        7,
        1,
        shangmi_pki::DEFAULT_ID,
    )
    .unwrap();
    for (name, text) in [
        ("root.pem", pem(&root)),
        ("mid.pem", pem(&mid)),
        ("leaf.pem", pem(&leaf)),
        ("leaf.csr", pem(&csr)),
        ("mid.crl", pem(&list)),
    ] {
        std::fs::write(d.join(name), text).unwrap();
    }
    let hex: String = serial.iter().map(|b| format!("{b:02x}")).collect();
    assert!(common::run(
        &peer,
        &d,
        &["verify", "root.pem", "leaf.pem", "mid.pem"]
    ));
    assert!(common::run(&peer, &d, &["verify-csr", "leaf.csr"]));
    assert!(common::run(
        &peer,
        &d,
        &["verify-crl", "mid.crl", "mid.pem", &hex]
    ));
    // The test can fail: without the intermediate gmsm finds no chain.
    assert!(!common::run(&peer, &d, &["verify", "root.pem", "leaf.pem"]));

    // Theirs: a root, a leaf and a request, verified and signed here.
    let theirs = d.join("gmsm");
    std::fs::create_dir_all(&theirs).unwrap();
    assert!(common::run(&peer, &d, &["issue", "gmsm"]));
    let read = |f: &str| std::fs::read(theirs.join(f)).unwrap();
    let their_root = certificates(&read("root.pem")).unwrap().remove(0);
    let their_leaf = certificates(&read("leaf.pem")).unwrap().remove(0);
    Verifier::new(vec![their_root])
        .verify(&their_leaf, &[])
        .unwrap();
    let their_csr = requests(&read("leaf.csr")).unwrap().remove(0);
    let issued = sign_request(&their_csr, &root, &root_key, &Issue::leaf(5)).unwrap();
    std::fs::write(theirs.join("issued.pem"), pem(&issued)).unwrap();
    assert!(common::run(
        &peer,
        &d,
        &["verify", "root.pem", "gmsm/issued.pem"]
    ));
    std::fs::remove_dir_all(&d).unwrap();
}
