//! SignedAndEnvelopedData: the CA key delivery of the corpus (www.gmcert.org) opened and its
//! signature verified, our messages in both OID sets round-tripped, tampering and wrong keys
//! or anchors releasing nothing, and gmsm's pkcs7 both ways.

mod common;

use der::{EncodePem, pem::LineEnding};
use shangmi::sm2::SigningKey;
use shangmi_pki::cms::{CmsSigner, Flavor};
use shangmi_pki::{
    Error, Issue, Verifier, certificates, request, self_signed, sign_request, signed_envelope,
};

fn vector(name: &str) -> Vec<u8> {
    let dir = format!("{}/tests/vectors/x509", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(format!("{dir}/{name}")).unwrap()
}

fn key_file(name: &str) -> SigningKey {
    SigningKey::from_pem(std::str::from_utf8(&vector(name)).unwrap(), None).unwrap()
}

#[test]
fn the_corpus_key_delivery_opens_and_verifies() {
    let p7 = vector("gmcert-signed-enveloped-enckey.p7.pem");
    let sign_key = key_file("gmcert-sign-key.p8.pem");
    let ca = certificates(&vector("gotlcp-test-ca.pem")).unwrap();
    // The CA signed it with its CA key (keyCertSign and cRLSign only): refused unless the
    // anchor is allowed to sign.
    let err = signed_envelope::decrypt_and_verify(&p7, &sign_key, &Verifier::new(ca.clone()))
        .unwrap_err();
    assert_eq!(err.rule(), Some(shangmi_pki::Rule::KeyUsage), "{err}");
    let allowing = Verifier::new(ca.clone()).allowing_anchor_signers();
    let got = signed_envelope::decrypt_and_verify(&p7, &sign_key, &allowing).unwrap();
    assert_eq!(got.flavor, Flavor::Gm);
    assert_eq!(got.signers, ca);
    // 32 zero bytes, then the delivered encryption key's d.
    let enc = key_file("gmcert-expected-enc-key.p8.pem");
    assert_eq!(got.content.len(), 64);
    assert_eq!(got.content[..32], [0u8; 32]);
    assert_eq!(got.content[32..], *enc.to_bytes());
    // Another anchor: a chain error and no content; another key: nothing opens.
    let other = SigningKey::random().unwrap();
    let other_ca = self_signed(&other, "CN=other", &Issue::ca(1)).unwrap();
    assert!(matches!(
        signed_envelope::decrypt_and_verify(
            &p7,
            &sign_key,
            &Verifier::new(vec![other_ca]).allowing_anchor_signers()
        ),
        Err(Error::Chain { .. })
    ));
    assert!(matches!(
        signed_envelope::decrypt_and_verify(&p7, &other, &allowing),
        Err(Error::Decryption(_))
    ));
}

struct Party {
    key: SigningKey,
    cert: shangmi_pki::Cert,
}

fn pki() -> (Party, Party, Party) {
    let ca_key = SigningKey::random().unwrap();
    let ca = self_signed(&ca_key, "CN=SED Root", &Issue::ca(30)).unwrap();
    let leaf = |name: &str| {
        let key = SigningKey::random().unwrap();
        let csr = request(&key, name, &[]).unwrap();
        let cert = sign_request(&csr, &ca, &ca_key, &Issue::leaf(10)).unwrap();
        Party { key, cert }
    };
    let (a, b) = (leaf("CN=sender"), leaf("CN=recipient"));
    (
        Party {
            key: ca_key,
            cert: ca,
        },
        a,
        b,
    )
}

#[test]
fn ours_round_trip_and_tampering_releases_nothing() {
    let (root, sender, recipient) = pki();
    let v = Verifier::new(vec![root.cert.clone()]);
    let msg = b"signed, then sealed".repeat(11);
    for flavor in [Flavor::Pkcs7, Flavor::Gm] {
        let signers = [CmsSigner {
            cert: &sender.cert,
            key: &sender.key,
        }];
        let p7 = signed_envelope::sign_and_encrypt(
            &msg,
            &signers,
            std::slice::from_ref(&recipient.cert),
            flavor,
        )
        .unwrap();
        let got = signed_envelope::decrypt_and_verify(&p7, &recipient.key, &v).unwrap();
        assert_eq!(got.content.as_slice(), msg);
        assert_eq!(got.signers, std::slice::from_ref(&sender.cert));
        assert_eq!(got.flavor, flavor);
        assert!(signed_envelope::decrypt_and_verify(&p7, &sender.key, &v).is_err());
        // A flipped byte anywhere: an error, or (in what addresses rather than protects: a
        // recipient's name, which is not relied on) the same content from the same signer.
        let mut refused = 0;
        for at in 0..p7.len() {
            let mut bad = p7.clone();
            bad[at] ^= 0x01;
            match signed_envelope::decrypt_and_verify(&bad, &recipient.key, &v) {
                Ok(o) => {
                    assert_eq!(o.content.as_slice(), msg, "byte {at}");
                    assert_eq!(o.signers, std::slice::from_ref(&sender.cert), "byte {at}");
                }
                Err(_) => refused += 1,
            }
        }
        assert!(refused > p7.len() * 9 / 10, "{refused} of {}", p7.len());
    }
    // A signer whose key is not its certificate's is refused when writing.
    let wrong = [CmsSigner {
        cert: &sender.cert,
        key: &recipient.key,
    }];
    assert!(
        signed_envelope::sign_and_encrypt(
            &msg,
            &wrong,
            std::slice::from_ref(&recipient.cert),
            Flavor::Gm
        )
        .is_err()
    );
}

#[test]
fn gmsm_and_shangmi_open_each_others_signed_envelopes() {
    let Some(peer) = common::peer("gmsmpeer-sed") else {
        return;
    };
    let d = std::env::temp_dir().join(format!("shangmi-pki-sed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let (root, sender, recipient) = pki();
    let put = |name: &str, text: String| std::fs::write(d.join(name), text).unwrap();
    put("root.pem", root.cert.to_pem(LineEnding::LF).unwrap());
    put("sender.pem", sender.cert.to_pem(LineEnding::LF).unwrap());
    put("sender.key", sender.key.to_pkcs8_pem().unwrap().to_string());
    put(
        "recipient.pem",
        recipient.cert.to_pem(LineEnding::LF).unwrap(),
    );
    put(
        "recipient.key",
        recipient.key.to_pkcs8_pem().unwrap().to_string(),
    );
    let msg = b"across implementations, signed and sealed\n".repeat(5);
    std::fs::write(d.join("msg"), &msg).unwrap();
    let v = Verifier::new(vec![root.cert.clone()]);
    for (flavor, gm) in [(Flavor::Pkcs7, None), (Flavor::Gm, Some("gm"))] {
        // Ours to gmsm.
        let signers = [CmsSigner {
            cert: &sender.cert,
            key: &sender.key,
        }];
        let ours = signed_envelope::sign_and_encrypt(
            &msg,
            &signers,
            std::slice::from_ref(&recipient.cert),
            flavor,
        )
        .unwrap();
        std::fs::write(d.join("ours.p7"), ours).unwrap();
        assert!(common::run(
            &peer,
            &d,
            &["sed-open", "ours.p7", "recipient.key", "root.pem", "out"]
        ));
        assert_eq!(std::fs::read(d.join("out")).unwrap(), msg);
        // gmsm's to ours.
        let mut args = vec![
            "sed-make",
            "sender.pem",
            "sender.key",
            "recipient.pem",
            "msg",
            "theirs.p7",
        ];
        args.extend(gm);
        assert!(common::run(&peer, &d, &args));
        let theirs = std::fs::read(d.join("theirs.p7")).unwrap();
        let got = signed_envelope::decrypt_and_verify(&theirs, &recipient.key, &v).unwrap();
        assert_eq!(got.content.as_slice(), msg);
        assert_eq!(got.flavor, flavor);
        assert_eq!(got.signers, std::slice::from_ref(&sender.cert));
    }
    std::fs::remove_dir_all(&d).unwrap();
}
