//! Both directions with BouncyCastle (bcpkix 1.87, Java), through the peer in
//! `interop/bcpkix`: BC verifies the chain, request, CRL and SignedData made here, and its own
//! certificates, request, CRL and SignedData verify and sign here. Maven and Java are needed;
//! without them the test fails under CI=true and is skipped (saying so) elsewhere.

mod common;

use std::path::Path;
use std::time::SystemTime;

use der::{EncodePem, pem::LineEnding};
use shangmi::sm2::SigningKey;
use shangmi_pki::cms::{CmsSigner, Flavor};
use shangmi_pki::{
    Issue, Rule, Verifier, certificates, cms, crl, crls, request, requests, self_signed,
    sign_request,
};

fn pem<T: EncodePem>(t: &T) -> String {
    t.to_pem(LineEnding::LF).unwrap()
}

#[test]
fn bouncycastle_and_shangmi_read_each_others_certificates_and_signed_data() {
    let Some(cp) = common::bcpkix() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("shangmi-pki-bc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.as_path();

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
    let msg = b"a contract, signed".to_vec();
    let signers = [CmsSigner {
        cert: &leaf,
        key: &key,
    }];
    let extra = [mid.clone()];
    for (name, data) in [
        ("root.pem", pem(&root).into_bytes()),
        ("mid.pem", pem(&mid).into_bytes()),
        ("leaf.pem", pem(&leaf).into_bytes()),
        ("leaf.csr", pem(&csr).into_bytes()),
        ("mid.crl", pem(&list).into_bytes()),
        ("msg", msg.clone()),
        (
            "ours.p7",
            cms::sign(&msg, &signers, &extra, false, Flavor::Pkcs7).unwrap(),
        ),
        (
            "ours-detached.p7",
            cms::sign(&msg, &signers, &extra, true, Flavor::Pkcs7).unwrap(),
        ),
    ] {
        std::fs::write(d.join(name), data).unwrap();
    }
    let hex: String = serial.iter().map(|b| format!("{b:02x}")).collect();
    let ok = |args: &[&str]| common::bc(&cp, d, args).0;
    assert!(ok(&["verify", "root.pem", "leaf.pem", "mid.pem"]));
    assert!(ok(&["verify-csr", "leaf.csr"]));
    assert!(ok(&["verify-crl", "mid.crl", "mid.pem", &hex]));
    // The checks can fail: without the intermediate, BC finds the leaf not signed by the root.
    assert!(!ok(&["verify", "root.pem", "leaf.pem"]));
    // SignedData, attached (BC prints the content) and detached. BC's chain check is one
    // level, so the intermediate is the trust anchor it is given.
    let (good, content) = common::bc(&cp, d, &["cms-verify", "ours.p7", "mid.pem"]);
    assert!(good);
    assert_eq!(content, msg);
    assert!(ok(&["cms-verify", "ours-detached.p7", "mid.pem", "msg"]));
    assert!(!ok(&["cms-verify", "ours.p7", "root.pem"]));

    // Theirs: a root, a leaf, a request, a CRL revoking the leaf, SignedData.
    assert!(ok(&["issue", "bc"]));
    let read = |f: &str| std::fs::read(d.join("bc").join(f)).unwrap();
    let their_root = certificates(&read("root.pem")).unwrap().remove(0);
    let their_leaf = certificates(&read("leaf.pem")).unwrap().remove(0);
    let v = Verifier::new(vec![their_root.clone()]);
    v.verify(&their_leaf, &[]).unwrap();
    let their_crls = crls(&read("root.crl")).unwrap();
    let revoked = v.clone().with_crls(their_crls).verify(&their_leaf, &[]);
    assert_eq!(revoked.err().and_then(|e| e.rule()), Some(Rule::Revoked));
    let their_csr = requests(&read("leaf.csr")).unwrap().remove(0);
    shangmi_pki::verify_request(&their_csr, shangmi_pki::DEFAULT_ID).unwrap();
    let issued = sign_request(&their_csr, &root, &root_key, &Issue::leaf(5)).unwrap();
    std::fs::write(d.join("bc/issued.pem"), pem(&issued)).unwrap();
    assert!(ok(&["verify", "root.pem", "bc/issued.pem"]));
    for (out, detached, ber) in [
        ("theirs.p7", false, false),
        ("theirs-detached.p7", true, false),
        ("theirs-ber.p7", false, true),
        ("theirs-ber-detached.p7", true, true),
    ] {
        let mut args = vec!["cms-sign", "bc/leaf.pem", "bc/leaf.key", "msg", out];
        if detached {
            args.push("detached");
        }
        if ber {
            args.push("ber");
        }
        assert!(ok(&args));
        let p7 = std::fs::read(d.join(out)).unwrap();
        // BC's own encoding really is BER: an indefinite length right at the start.
        assert_eq!(p7[1] == 0x80, ber, "{out}");
        let content = detached.then_some(msg.as_slice());
        let verified = cms::verify(&p7, content, &Verifier::new(vec![their_root.clone()])).unwrap();
        assert_eq!(verified.content, msg);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// PKCS#12 both ways with BouncyCastle's KeyStore: its default keystore (3DES keys, RC2-40
/// certificates, a SHA-1 MAC) and its AES one read here, the key matching the certificate;
/// ours in OpenSSL 3's parameters read by BC, whose KeyStore signs with the key and verifies
/// with the certificate. (BC's PKCS#12 has no SM3 MAC and no SM4 under PBES2: it reads the
/// international parameter set, not the SM one.)
#[test]
fn bouncycastle_and_shangmi_read_each_others_pkcs12() {
    use shangmi_pki::pkcs12::{self, Pkcs12Entry, Pkcs12Params};
    let Some(cp) = common::bcpkix() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("shangmi-pki-bc-p12-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.as_path();
    let root_key = SigningKey::random().unwrap();
    let root = self_signed(&root_key, "/CN=p12 root", &Issue::ca(30)).unwrap();
    let key = SigningKey::random().unwrap();
    let csr = request(&key, "/CN=p12.example", &["DNS:p12.example"]).unwrap();
    let leaf = sign_request(&csr, &root, &root_key, &Issue::leaf(10)).unwrap();
    let leaf_der = der::Encode::to_der(&leaf).unwrap();
    std::fs::write(d.join("leaf.pem"), pem(&leaf)).unwrap();
    std::fs::write(d.join("leaf.key"), key.to_pkcs8_pem().unwrap().as_bytes()).unwrap();
    let password = "bc password";
    for ty in ["PKCS12", "PKCS12-AES256-AES128"] {
        let out = format!("bc-{ty}.p12");
        let (ok, _) = common::bc(
            &cp,
            d,
            &["p12-write", "leaf.key", "leaf.pem", password, &out, ty],
        );
        assert!(ok, "{ty}");
        let p = pkcs12::read(&std::fs::read(d.join(&out)).unwrap(), password.as_bytes()).unwrap();
        assert_eq!(p.keys.len(), 1, "{ty}");
        assert_eq!(
            p.keys[0].key.verifying_key().to_uncompressed(),
            key.verifying_key().to_uncompressed(),
            "{ty}"
        );
        assert_eq!(p.certs[0].der, leaf_der, "{ty}");
        assert_eq!(p.keys[0].attributes.friendly_name.as_deref(), Some("bc"));
        assert!(pkcs12::read(&std::fs::read(d.join(&out)).unwrap(), b"wrong").is_err());
    }
    let ours = pkcs12::write(
        &[Pkcs12Entry {
            key: &key,
            cert: &leaf_der,
            name: Some("shangmi"),
        }],
        &[der::Encode::to_der(&root).unwrap()],
        password.as_bytes(),
        Pkcs12Params::international(),
    )
    .unwrap();
    std::fs::write(d.join("ours.p12"), ours).unwrap();
    let (ok, out) = common::bc(&cp, d, &["p12-read", "ours.p12", password]);
    assert!(ok);
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.contains("key shangmi (EC), chain of 2, key matches"),
        "{out}"
    );
    let (ok, _) = common::bc(&cp, d, &["p12-read", "ours.p12", "wrong"]);
    assert!(!ok);
    // The JDK's keytool with BC as the keystore's provider lists our entry as it lists BC's
    // own (both then end with the JDK's own re-check failing on the SM2 curve, a JDK limit).
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop/bcpkix/target/lib");
    let bcprov = std::fs::read_dir(&lib)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("bcprov")
        })
        .unwrap();
    for file in ["ours.p12", "bc-PKCS12.p12"] {
        let o = std::process::Command::new("keytool")
            .args(["-list", "-keystore", file, "-storetype", "PKCS12"])
            .args([
                "-storepass",
                password,
                "-providername",
                "BC",
                "-providerpath",
            ])
            .arg(&bcprov)
            .args([
                "-providerclass",
                "org.bouncycastle.jce.provider.BouncyCastleProvider",
            ])
            .current_dir(d)
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            out.contains("Your keystore contains 1 entry") && out.contains("PrivateKeyEntry"),
            "{file}: {out}{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
