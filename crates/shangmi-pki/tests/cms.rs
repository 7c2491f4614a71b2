//! CMS SignedData and EnvelopedData (GM/T 0010 and PKCS#7 OIDs): round trips with every
//! option, tampering, BER, the CFCA and gmsm messages of the corpus, and gmsm's pkcs7 package
//! both ways for every form it writes (through interop/gmsm).

mod common;

use der::{EncodePem, pem::LineEnding};
use shangmi::sm2::SigningKey;
use shangmi_pki::cms::{CmsSigner, Flavor};
use shangmi_pki::envelope::{ContentCipher, Envelope, RecipientName, WrappedKey};
use shangmi_pki::{
    Error, Issue, Verifier, certificates, cms, envelope, request, self_signed, sign_request,
};

struct Party {
    key: SigningKey,
    cert: shangmi_pki::Cert,
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
            let p7 = cms::sign(&msg, &signers, &[], detached, flavor).unwrap();
            let content = detached.then_some(msg.as_slice());
            let got = cms::verify(&p7, content, &v).unwrap();
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
                    cms::verify(&p7, Some(&other), &v),
                    Err(Error::BadSignature(_))
                ));
                assert!(cms::verify(&p7, None, &v).is_err());
            } else {
                assert!(cms::verify(&p7, Some(&msg), &v).is_err());
            }
            for i in (0..p7.len()).step_by(7) {
                let mut bad = p7.clone();
                bad[i] ^= 0x04;
                if let Ok(g) = cms::verify(&bad, content, &v) {
                    // Only bytes no check covers (the unsigned framing of an unsigned field)
                    // may change without failing, and then nothing signed changed.
                    assert_eq!(g.content, msg);
                }
            }
            let stranger = Verifier::new(vec![ca().cert]);
            assert!(cms::verify(&p7, content, &stranger).is_err());
        }
    }
    // A key that is not the certificate's is refused before signing.
    let wrong = [CmsSigner {
        cert: &a.cert,
        key: &b.key,
    }];
    assert!(cms::sign(&msg, &wrong, &[], false, Flavor::Gm).is_err());
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
        let v = Verifier::new(Vec::<shangmi_pki::Cert>::new());
        match cms::verify(&p7, None, &v) {
            Err(Error::Chain { .. }) => {}
            other => panic!("expected a chain failure without anchors, got {other:?}"),
        }
        first_cert(&p7)
    };
    let got = cms::verify(
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
fn first_cert(der: &[u8]) -> shangmi_pki::Cert {
    for i in 0..der.len() {
        if der[i] == 0x30
            && let Ok(c) = shangmi_pki::Cert::from_der(&der[i..i + 2 + len_at(&der[i..])])
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
            cms::sign(&msg, &signers, &[], false, flavor).unwrap(),
        )
        .unwrap();
        std::fs::write(
            d.join(format!("{tag}-det.p7")),
            cms::sign(&msg, &signers, &[], true, flavor).unwrap(),
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
        let got = cms::verify(&p7, content, &v).unwrap_or_else(|e| panic!("{extra:?}: {e}"));
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
        let p7 = envelope::encrypt(&msg, &[a.cert.clone(), b.cert.clone()], flavor).unwrap();
        for r in [&a, &b] {
            assert_eq!(
                envelope::decrypt(&p7, &r.key, Some(&r.cert))
                    .unwrap()
                    .as_slice(),
                msg
            );
            assert_eq!(
                envelope::decrypt(&p7, &r.key, None).unwrap().as_slice(),
                msg
            );
        }
        assert!(matches!(
            envelope::decrypt(&p7, &c.key, None),
            Err(Error::Decryption(_))
        ));
        assert!(envelope::decrypt(&p7, &a.key, Some(&b.cert)).is_err());
        let mut bad = p7.clone();
        let last = bad.len() - 20;
        bad[last] ^= 1;
        assert!(
            envelope::decrypt(&bad, &a.key, None).is_err()
                || envelope::decrypt(&bad, &a.key, None).unwrap().as_slice() != msg
        );
    }
}

#[test]
fn every_envelope_form_round_trips_and_tampering_releases_nothing() {
    let root = ca();
    let (a, b) = (leaf(&root, "CN=alice"), leaf(&root, "CN=bob"));
    let msg = b"sixteen byte key".repeat(5);
    for (_, how) in envelope_forms() {
        let p7 = envelope::encrypt_with(&msg, &[a.cert.clone(), b.cert.clone()], &how).unwrap();
        for r in [&a, &b] {
            assert_eq!(
                envelope::decrypt(&p7, &r.key, Some(&r.cert))
                    .unwrap()
                    .as_slice(),
                msg
            );
        }
        assert!(
            envelope::decrypt(&p7, &a.key, Some(&b.cert)).is_err(),
            "{how:?}"
        );
        // Any flipped byte in the last 40 (GCM tag and ciphertext, or CBC's last blocks and
        // padding): an error, never other plaintext. CBC without a MAC can only promise that
        // for the padding block; GCM promises it everywhere.
        let span = if how.cipher == ContentCipher::Sm4Gcm {
            40
        } else {
            16
        };
        for back in 1..=span {
            let mut bad = p7.clone();
            let at = bad.len() - back;
            bad[at] ^= 0x80;
            match envelope::decrypt(&bad, &a.key, None) {
                Err(Error::Decryption(_)) => {}
                Err(e) if how.cipher == ContentCipher::Sm4Cbc => panic!("{how:?} {back}: {e}"),
                Err(e) => panic!("{how:?} {back}: {e}"),
                Ok(p) => assert!(
                    how.cipher == ContentCipher::Sm4Cbc && p.as_slice() != msg,
                    "{how:?} {back}"
                ),
            }
        }
    }
}

/// `der` re-encoded as BouncyCastle and Windows write CMS: indefinite lengths and the encrypted
/// content's `[0]` in chunks of `chunk` bytes.
fn as_ber(der: &[u8], chunk: usize) -> Vec<u8> {
    fn header(b: &[u8]) -> (usize, usize) {
        let l = b[1] as usize;
        if l < 0x80 {
            (2, l)
        } else {
            let n = l & 0x7f;
            (
                2 + n,
                b[2..2 + n].iter().fold(0, |a, &x| (a << 8) | x as usize),
            )
        }
    }
    // `chunked`: this element is an EncryptedContentInfo's [0], to be sent in chunks.
    fn walk(b: &[u8], chunk: usize, chunked: bool, out: &mut Vec<u8>) {
        let (h, len) = header(b);
        let body = &b[h..h + len];
        if chunked {
            out.extend([0xa0, 0x80]);
            for c in body.chunks(chunk) {
                out.extend([0x04, 0x81, c.len() as u8]);
                out.extend(c);
            }
            out.extend([0, 0]);
        } else if b[0] & 0x20 != 0 {
            let mut children = Vec::new();
            let mut rest = body;
            while !rest.is_empty() {
                let (ch, cl) = header(rest);
                children.push(&rest[..ch + cl]);
                rest = &rest[ch + cl..];
            }
            let tags: Vec<u8> = children.iter().map(|c| c[0]).collect();
            let eci = b[0] == 0x30 && tags == [0x06, 0x30, 0x80];
            out.extend([b[0], 0x80]);
            for (i, c) in children.iter().enumerate() {
                walk(c, chunk, eci && i == 2, out);
            }
            out.extend([0, 0]);
        } else {
            out.extend(&b[..h + len]);
        }
    }
    let mut out = Vec::new();
    walk(der, chunk, false, &mut out);
    out
}

#[test]
fn ber_enveloped_data_as_java_writes_it_opens() {
    let root = ca();
    let a = leaf(&root, "CN=alice");
    let msg = b"streamed by a Java sender".repeat(20);
    for (_, how) in envelope_forms() {
        let p7 = envelope::encrypt_with(&msg, std::slice::from_ref(&a.cert), &how).unwrap();
        let ber = as_ber(&p7, 100);
        assert_ne!(ber, p7);
        assert!(ber.windows(2).any(|w| w == [0xa0, 0x80]));
        assert_eq!(
            envelope::decrypt(&ber, &a.key, None).unwrap().as_slice(),
            msg,
            "{how:?}"
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
        envelope::decrypt(&p7, &key, Some(&cert))
            .unwrap()
            .as_slice(),
        b"Hello World!"
    );
    assert_eq!(
        envelope::decrypt(&p7, &key, None).unwrap().as_slice(),
        b"Hello World!"
    );
}

/// Every envelope form gmsm writes, as (its cms-encrypt options, the same form here).
fn envelope_forms() -> Vec<(Vec<&'static str>, Envelope)> {
    let mut forms = Vec::new();
    for (gcm, cipher) in [
        (false, ContentCipher::Sm4Cbc),
        (true, ContentCipher::Sm4Gcm),
    ] {
        for (opt, flavor, wrapped_key, recipient_name) in [
            (
                None,
                Flavor::Pkcs7,
                WrappedKey::Der,
                RecipientName::IssuerAndSerial,
            ),
            (
                Some("gm"),
                Flavor::Gm,
                WrappedKey::Der,
                RecipientName::IssuerAndSerial,
            ),
            (
                Some("cfca"),
                Flavor::Gm,
                WrappedKey::CfcaRaw,
                RecipientName::IssuerAndSerial,
            ),
            (
                Some("ski"),
                Flavor::Gm,
                WrappedKey::Der,
                RecipientName::SubjectKeyId,
            ),
        ] {
            let mut args: Vec<&str> = opt.into_iter().collect();
            if gcm {
                args.push("gcm");
            }
            let how = Envelope {
                flavor,
                cipher,
                wrapped_key,
                recipient_name,
            };
            forms.push((args, how));
        }
    }
    forms
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
    // Two recipients: gmsm's own leaf (no subject key identifier: both sides name it by the
    // SHA-1 of its key) and one of ours; each key read by the other side.
    assert!(common::run(&peer, &d, &["issue", "."]));
    let theirs_cert = certificates(&std::fs::read(d.join("leaf.pem")).unwrap())
        .unwrap()
        .remove(0);
    let theirs_key =
        SigningKey::from_pem(&std::fs::read_to_string(d.join("leaf.key")).unwrap(), None).unwrap();
    let root = ca();
    let ours = leaf(&root, "CN=recipient");
    std::fs::write(
        d.join("ours.pem"),
        ours.cert.to_pem(LineEnding::LF).unwrap(),
    )
    .unwrap();
    std::fs::write(
        d.join("ours.key"),
        ours.key.to_pkcs8_pem().unwrap().as_bytes(),
    )
    .unwrap();
    for (cert, key, files) in [
        (&theirs_cert, &theirs_key, ["leaf.pem", "leaf.key"]),
        (&ours.cert, &ours.key, ["ours.pem", "ours.key"]),
    ] {
        for (opts, how) in envelope_forms() {
            let tag = format!("{}-{}", files[0], opts.join("-"));
            // Ours to gmsm.
            let p7 = envelope::encrypt_with(&msg, std::slice::from_ref(cert), &how).unwrap();
            std::fs::write(d.join("ours.p7"), p7).unwrap();
            let mut args = vec!["cms-decrypt", "ours.p7", files[0], files[1], "out"];
            if how.wrapped_key == WrappedKey::CfcaRaw {
                args.push("cfca");
            }
            assert!(common::run(&peer, &d, &args), "{tag}");
            assert_eq!(std::fs::read(d.join("out")).unwrap(), msg, "{tag}");
            // gmsm to ours, with and without the certificate to pick the recipient (gmsm
            // names a recipient by key identifier only when the certificate carries one).
            if opts.contains(&"ski") && files[0] == "leaf.pem" {
                continue;
            }
            let mut args = vec!["cms-encrypt", files[0], "msg", "theirs.p7"];
            args.extend(&opts);
            assert!(common::run(&peer, &d, &args), "{tag}");
            let theirs = std::fs::read(d.join("theirs.p7")).unwrap();
            for c in [Some(cert.certificate()), None] {
                let got = envelope::decrypt(&theirs, key, c);
                assert_eq!(got.unwrap().as_slice(), msg, "{tag}");
            }
            assert!(
                envelope::decrypt(&theirs, &root.key, None).is_err(),
                "{tag}"
            );
        }
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn gmssl_signed_data_verifies_only_when_asked() {
    let root = ca();
    let a = leaf(&root, "CN=alice");
    let v = Verifier::new(vec![root.cert.clone()]);
    let msg = b"signed as GmSSL signs".repeat(3);
    let signers = [CmsSigner {
        cert: &a.cert,
        key: &a.key,
    }];
    let p7 = shangmi_pki::cms::sign_gmssl(&msg, &signers, &[]).unwrap();
    let got = shangmi_pki::cms::verify_accepting_gmssl(&p7, &v).unwrap();
    assert_eq!(got.content, msg);
    assert_eq!(got.flavor, Flavor::Gm);
    // Not PKCS#7's signature: the ordinary check refuses it.
    assert!(matches!(
        cms::verify(&p7, None, &v),
        Err(Error::BadSignature(_))
    ));
    // Standard SignedData still verifies through the accepting call.
    let std_p7 = cms::sign(&msg, &signers, &[], false, Flavor::Gm).unwrap();
    assert!(shangmi_pki::cms::verify_accepting_gmssl(&std_p7, &v).is_ok());
    // A changed content byte, another anchor: refused.
    let at = p7.windows(msg.len()).position(|w| w == msg).unwrap();
    let mut bad = p7.clone();
    bad[at + 5] ^= 1;
    assert!(shangmi_pki::cms::verify_accepting_gmssl(&bad, &v).is_err());
    let other = ca();
    assert!(
        shangmi_pki::cms::verify_accepting_gmssl(&p7, &Verifier::new(vec![other.cert])).is_err()
    );
}

#[test]
fn sm4_ecb_content_is_read_only_when_asked() {
    let root = ca();
    let bob = leaf(&root, "CN=bob");
    let p7 = envelope::encrypt(
        b"sixteen byte msg",
        std::slice::from_ref(&bob.cert),
        Flavor::Pkcs7,
    )
    .unwrap();
    // The same envelope relabelled SM4-ECB (1.2.156.10197.1.104.2 -> .104.1, same length).
    let cbc = [0x06, 0x08, 0x2a, 0x81, 0x1c, 0xcf, 0x55, 0x01, 0x68, 0x02];
    let at = p7.windows(cbc.len()).position(|w| w == cbc).unwrap();
    let mut ecb = p7.clone();
    ecb[at + cbc.len() - 1] = 0x01;
    let err = envelope::decrypt(&ecb, &bob.key, None).unwrap_err();
    assert!(
        matches!(&err, Error::Unsupported(m) if m.contains("SM4-ECB")),
        "{err}"
    );
    // Asked for, it is decrypted (to the wrong bytes here: the content was CBC).
    let got = shangmi_pki::envelope::decrypt_allowing_ecb(&ecb, &bob.key, None).unwrap();
    assert_ne!(got.as_slice(), b"sixteen byte msg");
    assert_eq!(
        envelope::decrypt(&p7, &bob.key, None).unwrap().as_slice(),
        b"sixteen byte msg"
    );
}
