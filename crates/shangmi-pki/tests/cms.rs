//! CMS SignedData (GM/T 0010 and PKCS#7 OIDs): round trips with every option, tampering, the
//! CFCA SignedData of the corpus, and gmsm's pkcs7 package both ways (through interop/gmsm).

mod common;

use der::{EncodePem, pem::LineEnding};
use shangmi::sm2::SigningKey;
use shangmi_pki::{
    Certificate, CmsSigner, Error, Flavor, Issue, Verifier, certificates, cms_decrypt, cms_encrypt,
    cms_sign, cms_verify, request, self_signed, sign_request,
};

struct Party {
    key: SigningKey,
    cert: Certificate,
}

fn ca() -> Party {
    let key = SigningKey::random().unwrap();
    let cert = self_signed(&key, "/C=CN/O=shangmi/CN=CMS Root", &Issue::ca(30)).unwrap();
    Party { key, cert }
}

fn leaf(ca: &Party, name: &str) -> Party {
    let key = SigningKey::random().unwrap();
    let csr = request(&key, name, &[]).unwrap();
    let cert = sign_request(&csr, &ca.cert, &ca.key, &Issue::leaf(10)).unwrap();
    Party { key, cert }
}

#[test]
fn signed_data_round_trips_in_every_form() {
    let root = ca();
    let (a, b) = (leaf(&root, "CN=alice"), leaf(&root, "CN=bob"));
    let v = Verifier::new(vec![root.cert.clone()]);
    let msg = b"1 KiB of contract".repeat(60);
    for flavor in [Flavor::Pkcs7, Flavor::Gm] {
        for detached in [false, true] {
            let signers = [
                CmsSigner {
                    cert: &a.cert,
                    key: &a.key,
                },
                CmsSigner {
                    cert: &b.cert,
                    key: &b.key,
                },
            ];
            let p7 = cms_sign(&msg, &signers, &[], detached, flavor).unwrap();
            let content = detached.then_some(msg.as_slice());
            let got = cms_verify(&p7, content, &v).unwrap();
            assert_eq!(got.content, msg);
            assert_eq!(got.flavor, flavor);
            // SignerInfos is a SET: in DER order, not the order given.
            assert_eq!(got.signers.len(), 2);
            assert!(got.signers.contains(&a.cert) && got.signers.contains(&b.cert));
            // Tampered content, a flipped byte anywhere in the message, another anchor.
            let mut other = msg.clone();
            other[3] ^= 1;
            if detached {
                assert!(matches!(
                    cms_verify(&p7, Some(&other), &v),
                    Err(Error::BadSignature(_))
                ));
                assert!(cms_verify(&p7, None, &v).is_err());
            } else {
                assert!(cms_verify(&p7, Some(&msg), &v).is_err());
            }
            for i in (0..p7.len()).step_by(7) {
                let mut bad = p7.clone();
                bad[i] ^= 0x04;
                if let Ok(g) = cms_verify(&bad, content, &v) {
                    // Only bytes no check covers (the unsigned framing of an unsigned field)
                    // may change without failing, and then nothing signed changed.
                    assert_eq!(g.content, msg);
                }
            }
            let stranger = Verifier::new(vec![ca().cert]);
            assert!(cms_verify(&p7, content, &stranger).is_err());
        }
    }
    // A key that is not the certificate's is refused before signing.
    let wrong = [CmsSigner {
        cert: &a.cert,
        key: &b.key,
    }];
    assert!(cms_sign(&msg, &wrong, &[], false, Flavor::Gm).is_err());
}

#[test]
fn cfca_signed_data_without_signed_attributes_verifies() {
    let path = format!(
        "{}/tests/vectors/x509/gmsm-cfca-signeddata-attached.der",
        env!("CARGO_MANIFEST_DIR")
    );
    let p7 = std::fs::read(path).unwrap();
    // Its signer's issuer is not in the corpus: trust the signer's certificate itself.
    let signer = {
        let v = Verifier::new(vec![]);
        match cms_verify(&p7, None, &v) {
            Err(Error::Chain { .. }) => {}
            other => panic!("expected a chain failure without anchors, got {other:?}"),
        }
        first_cert(&p7)
    };
    let got = cms_verify(
        &p7,
        None,
        &Verifier::new(vec![signer])
            .at(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_750_000_000)),
    )
    .unwrap();
    assert_eq!(got.content, b"Hello Secret World!");
    assert_eq!(got.flavor, Flavor::Gm);
}

/// The first certificate carried in a SignedData (a certificate is a SEQUENCE starting with
/// a SEQUENCE whose first element is [0] version: found by trying every offset).
fn first_cert(der: &[u8]) -> Certificate {
    for i in 0..der.len() {
        if der[i] == 0x30
            && let Ok(c) =
                <Certificate as der::Decode>::from_der(&der[i..i + 2 + len_at(&der[i..])])
        {
            return c;
        }
    }
    panic!("no certificate");
}

fn len_at(d: &[u8]) -> usize {
    match d.get(1).copied() {
        Some(n) if n < 0x80 => usize::from(n),
        Some(0x81) => usize::from(d[2]) + 1,
        Some(0x82) => (usize::from(d[2]) << 8 | usize::from(d[3])) + 2,
        _ => 0,
    }
    .min(d.len().saturating_sub(2))
}

#[test]
fn gmsm_and_shangmi_verify_each_others_signed_data() {
    let Some(peer) = common::peer("gmsmpeer-cms") else {
        return;
    };
    let d = std::env::temp_dir().join(format!("shangmi-pki-cms-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let root = ca();
    let a = leaf(&root, "CN=alice");
    std::fs::write(
        d.join("root.pem"),
        root.cert.to_pem(LineEnding::LF).unwrap(),
    )
    .unwrap();
    let msg = b"GM/T 0010 SignedData across implementations\n".repeat(20);
    std::fs::write(d.join("msg"), &msg).unwrap();
    // Ours, read by gmsm: both flavors, attached and detached.
    for (flavor, tag) in [(Flavor::Pkcs7, "p7"), (Flavor::Gm, "gm")] {
        let signers = [CmsSigner {
            cert: &a.cert,
            key: &a.key,
        }];
        std::fs::write(
            d.join(format!("{tag}.p7")),
            cms_sign(&msg, &signers, &[], false, flavor).unwrap(),
        )
        .unwrap();
        std::fs::write(
            d.join(format!("{tag}-det.p7")),
            cms_sign(&msg, &signers, &[], true, flavor).unwrap(),
        )
        .unwrap();
        assert!(
            common::run(&peer, &d, &["cms-verify", &format!("{tag}.p7"), "root.pem"]),
            "{tag}"
        );
        assert!(
            common::run(
                &peer,
                &d,
                &["cms-verify", &format!("{tag}-det.p7"), "root.pem", "msg"]
            ),
            "{tag} detached"
        );
    }
    // The check can fail: another message against the detached signature.
    std::fs::write(d.join("other"), b"something else").unwrap();
    assert!(!common::run(
        &peer,
        &d,
        &["cms-verify", "gm-det.p7", "root.pem", "other"]
    ));
    // Theirs, verified here.
    assert!(common::run(&peer, &d, &["issue", "."]));
    let their_root = certificates(&std::fs::read(d.join("root.pem")).unwrap())
        .unwrap()
        .remove(0);
    let v = Verifier::new(vec![their_root]);
    for extra in [vec![], vec!["gm"], vec!["detached"], vec!["gm", "detached"]] {
        let mut args = vec!["cms-sign", "leaf.pem", "leaf.key", "msg", "theirs.p7"];
        args.extend(extra.iter().copied());
        assert!(common::run(&peer, &d, &args));
        let p7 = std::fs::read(d.join("theirs.p7")).unwrap();
        let content = extra.contains(&"detached").then_some(msg.as_slice());
        let got = cms_verify(&p7, content, &v).unwrap_or_else(|e| panic!("{extra:?}: {e}"));
        assert_eq!(got.content, msg);
        assert_eq!(
            got.flavor,
            if extra.contains(&"gm") {
                Flavor::Gm
            } else {
                Flavor::Pkcs7
            }
        );
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn enveloped_data_round_trips_and_refuses_others() {
    let root = ca();
    let (a, b, c) = (
        leaf(&root, "CN=alice"),
        leaf(&root, "CN=bob"),
        leaf(&root, "CN=carol"),
    );
    let msg = b"an SM4 key's worth of secrets".repeat(9);
    for flavor in [Flavor::Pkcs7, Flavor::Gm] {
        let p7 = cms_encrypt(&msg, &[a.cert.clone(), b.cert.clone()], flavor).unwrap();
        for r in [&a, &b] {
            assert_eq!(
                cms_decrypt(&p7, &r.key, Some(&r.cert)).unwrap().as_slice(),
                msg
            );
            assert_eq!(cms_decrypt(&p7, &r.key, None).unwrap().as_slice(), msg);
        }
        assert!(matches!(
            cms_decrypt(&p7, &c.key, None),
            Err(Error::Decryption(_))
        ));
        assert!(cms_decrypt(&p7, &a.key, Some(&b.cert)).is_err());
        let mut bad = p7.clone();
        let last = bad.len() - 20;
        bad[last] ^= 1;
        assert!(
            cms_decrypt(&bad, &a.key, None).is_err()
                || cms_decrypt(&bad, &a.key, None).unwrap().as_slice() != msg
        );
    }
}

#[test]
fn gmsm_envelope_from_the_corpus_opens() {
    let dir = format!("{}/tests/vectors/x509", env!("CARGO_MANIFEST_DIR"));
    let p7 = std::fs::read(format!("{dir}/gmsm-envelopeddata-1.p7.pem")).unwrap();
    let cert = certificates(&std::fs::read(format!("{dir}/gmsm-env-recipient-1.pem")).unwrap())
        .unwrap()
        .remove(0);
    let mut d = [0u8; 32];
    for (i, b) in d.iter_mut().enumerate() {
        *b = u8::from_str_radix(
            &"f043481ce3ba1332cc266ae795f2a41f100e52e47ee560de15d9e014acab35c9"[2 * i..2 * i + 2],
            16,
        )
        .unwrap();
    }
    let key = SigningKey::from_bytes(&d).unwrap();
    assert_eq!(
        cms_decrypt(&p7, &key, Some(&cert)).unwrap().as_slice(),
        b"Hello World!"
    );
    assert_eq!(
        cms_decrypt(&p7, &key, None).unwrap().as_slice(),
        b"Hello World!"
    );
}

#[test]
fn gmsm_and_shangmi_open_each_others_envelopes() {
    let Some(peer) = common::peer("gmsmpeer-cms") else {
        return;
    };
    let d = std::env::temp_dir().join(format!("shangmi-pki-env-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let msg = b"enveloped across implementations\n".repeat(7);
    std::fs::write(d.join("msg"), &msg).unwrap();
    // Theirs: gmsm issues a certificate and key; we encrypt to it, gmsm decrypts; gmsm
    // encrypts to it, we decrypt with the key gmsm wrote.
    assert!(common::run(&peer, &d, &["issue", "."]));
    let cert = certificates(&std::fs::read(d.join("leaf.pem")).unwrap())
        .unwrap()
        .remove(0);
    let key =
        SigningKey::from_pem(&std::fs::read_to_string(d.join("leaf.key")).unwrap(), None).unwrap();
    for (flavor, tag) in [(Flavor::Pkcs7, "p7"), (Flavor::Gm, "gm")] {
        let ours = cms_encrypt(&msg, std::slice::from_ref(&cert), flavor).unwrap();
        std::fs::write(d.join(format!("ours-{tag}.p7")), ours).unwrap();
        let out = format!("out-{tag}");
        assert!(
            common::run(
                &peer,
                &d,
                &[
                    "cms-decrypt",
                    &format!("ours-{tag}.p7"),
                    "leaf.pem",
                    "leaf.key",
                    &out
                ]
            ),
            "{tag}"
        );
        assert_eq!(std::fs::read(d.join(&out)).unwrap(), msg);
        let mut args = vec!["cms-encrypt", "leaf.pem", "msg", "theirs.p7"];
        if tag == "gm" {
            args.push("gm");
        }
        assert!(common::run(&peer, &d, &args));
        let theirs = std::fs::read(d.join("theirs.p7")).unwrap();
        assert_eq!(
            cms_decrypt(&theirs, &key, Some(&cert)).unwrap().as_slice(),
            msg,
            "{tag}"
        );
    }
    std::fs::remove_dir_all(&d).unwrap();
}
