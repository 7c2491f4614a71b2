//! Issue and verify: a root, an intermediate and a leaf, and each rule broken once.

use std::time::{Duration, SystemTime};

use der::{Decode, Encode};
use shangmi::sm2::SigningKey;
use shangmi_pki::{
    Error, Issue, Rule, Verifier, certificates, crl, crls, request, requests, self_signed,
    sign_request, verify_request,
};
use shangmi_testkit::der_edit::{children, encode, tlv, with_explicit_defaults};

struct Pki {
    root_key: SigningKey,
    root: shangmi_pki::Cert,
    mid_key: SigningKey,
    mid: shangmi_pki::Cert,
    leaf: shangmi_pki::Cert,
}

fn pki(mid_issue: Issue) -> Pki {
    let root_key = SigningKey::random().unwrap();
    let root = self_signed(&root_key, "/C=CN/O=Test/CN=Root", &Issue::ca(3650)).unwrap();
    let mid_key = SigningKey::random().unwrap();
    let mid_csr = request(&mid_key, "/C=CN/O=Test/CN=Intermediate", &[]).unwrap();
    let mid = sign_request(&mid_csr, &root, &root_key, &mid_issue).unwrap();
    let leaf_key = SigningKey::random().unwrap();
    let csr = request(&leaf_key, "/C=CN/O=Test/CN=leaf", &["DNS:leaf.example"]).unwrap();
    let leaf = sign_request(&csr, &mid, &mid_key, &Issue::leaf(365)).unwrap();
    Pki {
        root_key,
        root,
        mid_key,
        mid,
        leaf,
    }
}

fn rule(r: Result<Vec<shangmi_pki::Cert>, Error>) -> Option<Rule> {
    r.err().and_then(|e| e.rule())
}

#[test]
fn a_three_certificate_chain_verifies_and_round_trips() {
    let p = pki(Issue::ca(1825));
    let v = Verifier::new(vec![p.root.clone()]);
    let path = v.verify(&p.leaf, std::slice::from_ref(&p.mid)).unwrap();
    assert_eq!(path.len(), 3);
    // Without the intermediate: no issuer.
    assert_eq!(rule(v.verify(&p.leaf, &[])), Some(Rule::NoIssuer));
    // DER and PEM round trips read back the same certificates.
    let der = p.leaf.to_der().unwrap();
    assert_eq!(certificates(&der).unwrap(), vec![p.leaf.clone()]);
    let pem = format!(
        "text before\n{}\n{}",
        der::EncodePem::to_pem(&p.leaf, der::pem::LineEnding::LF).unwrap(),
        der::EncodePem::to_pem(&p.mid, der::pem::LineEnding::LF).unwrap()
    );
    assert_eq!(certificates(pem.as_bytes()).unwrap().len(), 2);
    assert!(certificates(b"not a certificate").is_err());
    // Shown as openssl x509 -text lays it out, the extensions people read decoded.
    let text = shangmi_pki::describe_certificate(&p.leaf);
    for want in [
        "DNS:leaf.example",
        "CA:FALSE",
        "Digital Signature, Non Repudiation",
        "id-ecPublicKey",
        "SM2-with-SM3",
    ] {
        assert!(text.contains(want), "{want} in {text}");
    }
    let text = shangmi_pki::describe_certificate(&p.mid);
    assert!(
        text.contains("CA:TRUE") && text.contains("Certificate Sign, CRL Sign"),
        "{text}"
    );
}

#[test]
fn each_rule_is_enforced_and_named() {
    let p = pki(Issue::ca(1825));
    let v = Verifier::new(vec![p.root.clone()]);
    let mid = [p.mid.clone()];
    // Another SM2 ID: every signature fails, and the error says which.
    let e = Verifier::new(vec![p.root.clone()])
        .with_id(b"")
        .verify(&p.leaf, &mid)
        .unwrap_err();
    assert_eq!(e.rule(), Some(Rule::Signature));
    assert!(e.to_string().contains("CN=leaf"), "{e}");
    // Validity.
    let later = SystemTime::now() + Duration::from_secs(400 * 86_400);
    assert_eq!(
        rule(v.clone().at(later).verify(&p.leaf, &mid)),
        Some(Rule::Validity)
    );
    let earlier = SystemTime::now() - Duration::from_secs(86_400);
    assert_eq!(
        rule(v.clone().at(earlier).verify(&p.leaf, &mid)),
        Some(Rule::Validity)
    );
    // A tampered certificate.
    let mut der = p.leaf.to_der().unwrap();
    let at = der.len() - 80;
    der[at] ^= 1;
    if let Ok(bad) = shangmi_pki::Cert::from_der(&der) {
        assert!(v.verify(&bad, &mid).is_err());
    }
    // Revocation: a CRL from the intermediate listing the leaf.
    let serial = p.leaf.tbs_certificate().serial_number().as_bytes().to_vec();
    let list = crl(
        &p.mid,
        &p.mid_key,
        &[(serial, SystemTime::now())],
        30,
        1,
        shangmi_pki::DEFAULT_ID,
    )
    .unwrap();
    let again = crls(&list.to_der().unwrap()).unwrap();
    assert_eq!(
        rule(v.clone().with_crls(again).verify(&p.leaf, &mid)),
        Some(Rule::Revoked)
    );
    let empty = crl(&p.mid, &p.mid_key, &[], 30, 2, shangmi_pki::DEFAULT_ID).unwrap();
    v.clone()
        .with_crls(vec![empty])
        .verify(&p.leaf, &mid)
        .unwrap();
}

#[test]
fn an_intermediate_that_is_not_a_ca_or_has_no_room_left_is_refused() {
    let p = pki(Issue::leaf(365));
    let v = Verifier::new(vec![p.root.clone()]);
    assert_eq!(
        rule(v.verify(&p.leaf, std::slice::from_ref(&p.mid))),
        Some(Rule::BasicConstraints)
    );
    // Root with path length 0: the intermediate is one CA too many.
    let root_key = SigningKey::random().unwrap();
    let mut ca0 = Issue::ca(3650);
    ca0.path_len = Some(0);
    let root = self_signed(&root_key, "CN=Root0", &ca0).unwrap();
    let mid_key = SigningKey::random().unwrap();
    let mid = sign_request(
        &request(&mid_key, "CN=Mid0", &[]).unwrap(),
        &root,
        &root_key,
        &Issue::ca(100),
    )
    .unwrap();
    let leaf_key = SigningKey::random().unwrap();
    let leaf = sign_request(
        &request(&leaf_key, "CN=Leaf0", &[]).unwrap(),
        &mid,
        &mid_key,
        &Issue::leaf(10),
    )
    .unwrap();
    let v = Verifier::new(vec![root]);
    assert_eq!(rule(v.verify(&leaf, &[mid])), Some(Rule::PathLength));
    let _ = (p.root_key, p.mid_key);
}

#[test]
fn requests_carry_their_names_and_verify() {
    let key = SigningKey::random().unwrap();
    let csr = request(&key, "CN=req,O=Org", &["DNS:a.example", "IP:127.0.0.1"]).unwrap();
    verify_request(&csr, shangmi_pki::DEFAULT_ID).unwrap();
    assert!(verify_request(&csr, b"other").is_err());
    let back = requests(&csr.to_der().unwrap()).unwrap();
    assert_eq!(back[0], csr);
    assert_eq!(back[0].info.subject.to_string(), "CN=req,O=Org");
}

#[test]
fn signatures_are_checked_over_the_bytes_as_encoded() {
    let p = pki(Issue::ca(1825));
    let leaf = with_explicit_defaults(&p.leaf.to_der().unwrap(), &p.mid_key, 0xa3);
    // It parses (the explicit FALSE is read and dropped), so a re-encoding differs.
    let parsed = shangmi_pki::Certificate::from_der(&leaf).unwrap();
    assert_ne!(parsed.to_der().unwrap(), leaf);
    let v = Verifier::new(vec![p.root.clone()]);
    let mid = vec![p.mid.clone()];
    let kept = shangmi_pki::Cert::from_der(&leaf).unwrap();
    assert_eq!(kept.der(), leaf);
    let path = v.verify(&kept, &mid).unwrap();
    assert_eq!(path.len(), 3);
    assert_eq!(path[0].der(), leaf);
    // Checked over the re-encoding, the issuer's signature does not hold.
    assert_eq!(
        rule(v.verify(&parsed.clone().into(), std::slice::from_ref(&p.mid))),
        Some(Rule::Signature)
    );
    // And the bytes are really what is checked: any change to them fails.
    let mut tampered = leaf.clone();
    let at = tampered.len() / 2;
    tampered[at] ^= 0x01;
    if shangmi_pki::Certificate::from_der(&tampered).is_ok() {
        let tampered = shangmi_pki::Cert::from_der(&tampered).unwrap();
        assert!(v.verify(&tampered, &mid).is_err());
    }
    // A CRL written the same way revokes the leaf; read back and re-encoded, its signature
    // would not hold.
    let serial = parsed.tbs_certificate().serial_number().as_bytes().to_vec();
    let list = crl(
        &p.mid,
        &p.mid_key,
        &[(serial, SystemTime::now())],
        30,
        1,
        shangmi_pki::DEFAULT_ID,
    )
    .unwrap();
    let list = with_explicit_defaults(&list.to_der().unwrap(), &p.mid_key, 0xa0);
    let revoking = v.clone().with_crls(crls(&list).unwrap());
    assert_eq!(rule(revoking.verify(&kept, &mid)), Some(Rule::Revoked));
    // Decoded, then encoded again: the explicit defaults are gone and the signature fails.
    let decoded: Vec<shangmi_pki::CertificateList> =
        crls(&list).unwrap().iter().map(|c| (**c).clone()).collect();
    let reencoded = v.clone().with_crls(decoded);
    assert_eq!(rule(reencoded.verify(&kept, &mid)), Some(Rule::Crl));
}

/// The CRL re-signed by `key` after `change` (a critical extension added, say).
fn resigned(
    list: &shangmi_pki::CertificateList,
    key: &SigningKey,
    change: impl FnOnce(&mut shangmi_pki::CertificateList),
) -> shangmi_pki::CertificateList {
    let mut l = list.clone();
    change(&mut l);
    let tbs = l.tbs_cert_list.to_der().unwrap();
    let sig = key.sign_with_id(shangmi_pki::DEFAULT_ID, &tbs).unwrap();
    l.signature = der::asn1::BitString::from_bytes(&sig.to_der()).unwrap();
    l
}

#[test]
fn crls_that_cannot_be_trusted_are_errors_not_silence() {
    let p = pki(Issue::ca(1825));
    let mid = [p.mid.clone()];
    let v = Verifier::new(vec![p.root.clone()]);
    let list = crl(&p.mid, &p.mid_key, &[], 30, 1, shangmi_pki::DEFAULT_ID).unwrap();
    v.clone()
        .with_crls(vec![list.clone()])
        .verify(&p.leaf, &mid)
        .unwrap();
    let root_list = crl(&p.root, &p.root_key, &[], 30, 1, shangmi_pki::DEFAULT_ID).unwrap();
    // A badly signed CRL is not skipped because another issuer's CRL is also given.
    let mut forged = list.clone();
    let mut sig = forged.signature.raw_bytes().to_vec();
    let n = sig.len();
    sig[n - 3] ^= 1;
    forged.signature = der::asn1::BitString::from_bytes(&sig).unwrap();
    for given in [vec![forged.clone()], vec![forged, root_list]] {
        assert_eq!(
            rule(v.clone().with_crls(given).verify(&p.leaf, &mid)),
            Some(Rule::Crl)
        );
    }
    // An unknown critical extension, on the list or on an entry: the CRL cannot be used.
    let ext = |oid: &str| x509_cert::ext::Extension {
        extn_id: oid.parse().unwrap(),
        critical: true,
        extn_value: der::asn1::OctetString::new(vec![0x05, 0x00]).unwrap(),
    };
    let odd = resigned(&list, &p.mid_key, |l| {
        l.tbs_cert_list
            .crl_extensions
            .get_or_insert_with(Vec::new)
            .push(ext("1.2.3.4"));
    });
    assert_eq!(
        rule(v.clone().with_crls(vec![odd]).verify(&p.leaf, &mid)),
        Some(Rule::Crl)
    );
    let other_serial = vec![0x01, 0x02];
    let with_entry = crl(
        &p.mid,
        &p.mid_key,
        &[(other_serial, SystemTime::now())],
        30,
        2,
        shangmi_pki::DEFAULT_ID,
    )
    .unwrap();
    let odd_entry = resigned(&with_entry, &p.mid_key, |l| {
        let entries = l.tbs_cert_list.revoked_certificates.as_mut().unwrap();
        entries[0].crl_entry_extensions = Some(vec![ext("2.5.29.29")]);
    });
    assert_eq!(
        rule(v.clone().with_crls(vec![odd_entry]).verify(&p.leaf, &mid)),
        Some(Rule::Crl)
    );
    // A CRL issued after the time asked about says nothing about that time.
    let earlier = SystemTime::now() - Duration::from_secs(3600);
    let days_back = |d: u64| Issue {
        not_before: Some(SystemTime::now() - Duration::from_secs(d * 86400)),
        ..Issue::leaf(30)
    };
    let leaf_key = SigningKey::random().unwrap();
    let csr = request(&leaf_key, "/CN=old leaf", &[]).unwrap();
    let old_leaf = sign_request(&csr, &p.mid, &p.mid_key, &days_back(2)).unwrap();
    let mid_back = Issue {
        not_before: Some(SystemTime::now() - Duration::from_secs(2 * 86400)),
        ..Issue::ca(30)
    };
    let mid_csr = request(&p.mid_key, "/C=CN/O=Test/CN=Intermediate", &[]).unwrap();
    let old_mid = sign_request(&mid_csr, &p.root, &p.root_key, &mid_back).unwrap();
    let root_back = Issue {
        not_before: Some(SystemTime::now() - Duration::from_secs(2 * 86400)),
        ..Issue::ca(30)
    };
    let old_root = self_signed(&p.root_key, "/C=CN/O=Test/CN=Root", &root_back).unwrap();
    let at_earlier = Verifier::new(vec![old_root]).at(earlier);
    at_earlier
        .clone()
        .verify(&old_leaf, std::slice::from_ref(&old_mid))
        .unwrap();
    assert_eq!(
        rule(
            at_earlier
                .with_crls(vec![list])
                .verify(&old_leaf, &[old_mid])
        ),
        Some(Rule::Crl)
    );
}

/// `der` with every element equal to `old` replaced by `new`, the enclosing lengths redone.
fn splice(der: &[u8], old: &[u8], new: &[u8]) -> Vec<u8> {
    if der == old {
        return new.to_vec();
    }
    let (tag, contents, _) = tlv(der);
    if tag & 0x20 == 0 {
        return der.to_vec();
    }
    let inner: Vec<u8> = children(contents)
        .iter()
        .flat_map(|c| splice(c, old, new))
        .collect();
    encode(tag, &inner)
}

/// A signer whose certificate carries explicit DEFAULT values verifies inside SignedData as
/// it does alone: the chain is checked over the certificate's bytes as included, not over a
/// re-encoding (which the issuer never signed).
#[test]
fn a_signer_certificate_with_explicit_defaults_verifies_inside_signed_data() {
    let p = pki(Issue::ca(1825));
    let key = SigningKey::random().unwrap();
    let csr = request(&key, "/C=CN/O=Test/CN=signer", &[]).unwrap();
    let cert = sign_request(&csr, &p.mid, &p.mid_key, &Issue::leaf(365)).unwrap();
    let raw = with_explicit_defaults(&cert.to_der().unwrap(), &p.mid_key, 0xa3);
    let parsed = shangmi_pki::Certificate::from_der(&raw).unwrap();
    let canonical = parsed.to_der().unwrap();
    assert_ne!(canonical, raw);
    let kept = shangmi_pki::Cert::from_der(&raw).unwrap();
    let reencoded: shangmi_pki::Cert = parsed.clone().into();
    let v = Verifier::new(vec![p.root.clone()]);
    for flavor in [
        shangmi_pki::cms::Flavor::Pkcs7,
        shangmi_pki::cms::Flavor::Gm,
    ] {
        let sign = |cert: &shangmi_pki::Cert| {
            let signer = shangmi_pki::cms::CmsSigner { cert, key: &key };
            shangmi_pki::cms::sign(
                b"signed",
                &[signer],
                std::slice::from_ref(&p.mid),
                false,
                flavor,
            )
            .unwrap()
        };
        // Written with a re-encoded certificate, the issuer's signature does not hold.
        let msg = sign(&reencoded);
        assert!(shangmi_pki::cms::verify(&msg, None, &v).is_err());
        // The message a peer writes with the certificate as its issuer wrote it verifies.
        let as_issued = splice(&msg, &canonical, &raw);
        assert_ne!(as_issued, msg);
        let ok = shangmi_pki::cms::verify(&as_issued, None, &v).unwrap();
        assert_eq!(ok.content, b"signed");
        assert_eq!(ok.signers.len(), 1);
        assert_eq!(ok.signers[0].certificate(), &parsed);
        assert_eq!(ok.signers[0].der(), raw);
        // And so does ours, signed with the certificate as read: it includes those bytes.
        let ours = sign(&kept);
        assert!(ours.windows(raw.len()).any(|w| w == raw));
        let ok = shangmi_pki::cms::verify(&ours, None, &v).unwrap();
        assert_eq!(ok.signers[0].der(), raw);
    }
}

/// Several certificates can be an issuer (a CA cross-signed by two roots, a CA re-issued under
/// the same name and key): the path search tries each, and one that leads nowhere (to a root
/// that is not trusted, or through an expired cross certificate) does not hide one that
/// reaches an anchor.
#[test]
fn the_path_search_tries_every_candidate_issuer() {
    let name = "/C=CN/O=Test/CN=Cross CA";
    let anchor_key = SigningKey::random().unwrap();
    let anchor = self_signed(&anchor_key, "/C=CN/O=Test/CN=Trusted", &Issue::ca(3650)).unwrap();
    let other_key = SigningKey::random().unwrap();
    let other = self_signed(&other_key, "/C=CN/O=Test/CN=Other", &Issue::ca(3650)).unwrap();
    // One CA key, certified three times: by an untrusted root, by the anchor, and by the
    // anchor again in a certificate that has since expired.
    let ca_key = SigningKey::random().unwrap();
    let csr = request(&ca_key, name, &[]).unwrap();
    let by_other = sign_request(&csr, &other, &other_key, &Issue::ca(3650)).unwrap();
    let by_anchor = sign_request(&csr, &anchor, &anchor_key, &Issue::ca(3650)).unwrap();
    let mut short = Issue::ca(1);
    short.not_before = Some(SystemTime::now() - Duration::from_secs(3 * 86_400));
    let expired = sign_request(&csr, &anchor, &anchor_key, &short).unwrap();
    let leaf_key = SigningKey::random().unwrap();
    let leaf_csr = request(&leaf_key, "/C=CN/O=Test/CN=leaf", &[]).unwrap();
    let leaf = sign_request(&leaf_csr, &by_anchor, &ca_key, &Issue::leaf(30)).unwrap();
    let v = Verifier::new(vec![anchor.clone()]);
    // The dead ends come first in the list given.
    let mut untrusted = vec![by_other.clone()];
    untrusted.push(expired.clone());
    untrusted.push(by_anchor.clone());
    let path = v.verify(&leaf, &untrusted).unwrap();
    assert_eq!(path.len(), 3);
    assert_eq!(path[1], by_anchor);
    assert_eq!(path[2], anchor);
    // With the untrusted root trusted instead, the path goes through it.
    let v2 = Verifier::new(vec![other.clone()]);
    let path = v2.verify(&leaf, &untrusted).unwrap();
    assert_eq!(path[1], by_other);
    // Only dead ends: the error names what the issuer that verified ran into, not a
    // signature mismatch.
    let mut dead = vec![by_other];
    dead.push(expired);
    let r = v.verify(&leaf, &dead);
    assert!(matches!(
        rule(r),
        Some(Rule::NoIssuer) | Some(Rule::Validity)
    ));
    // A leaf whose issuer key is none of the candidates': the signature rule.
    let stranger = SigningKey::random().unwrap();
    let impostor = self_signed(&stranger, name, &Issue::ca(30)).unwrap();
    let forged = sign_request(&leaf_csr, &impostor, &stranger, &Issue::leaf(30)).unwrap();
    assert_eq!(rule(v.verify(&forged, &untrusted)), Some(Rule::Signature));
}

/// Many certificates under one name and key cannot make the search run away: it stops with
/// an error after a bounded number of candidates.
#[test]
fn a_maze_of_cross_certificates_ends_the_search() {
    let anchor_key = SigningKey::random().unwrap();
    let anchor = self_signed(&anchor_key, "/CN=Trusted", &Issue::ca(3650)).unwrap();
    // Two names, each key certified by the other under many serials: every step has many
    // candidates, none of which reaches the anchor.
    let (ka, kb) = (SigningKey::random().unwrap(), SigningKey::random().unwrap());
    let ra = request(&ka, "/CN=A", &[]).unwrap();
    let rb = request(&kb, "/CN=B", &[]).unwrap();
    let a0 = self_signed(&ka, "/CN=A", &Issue::ca(30)).unwrap();
    let b0 = sign_request(&rb, &a0, &ka, &Issue::ca(30)).unwrap();
    let mut maze = Vec::new();
    for _ in 0..12 {
        maze.push(sign_request(&ra, &b0, &kb, &Issue::ca(30)).unwrap());
        maze.push(sign_request(&rb, &a0, &ka, &Issue::ca(30)).unwrap());
    }
    let leaf_key = SigningKey::random().unwrap();
    let leaf_csr = request(&leaf_key, "/CN=leaf", &[]).unwrap();
    let leaf = sign_request(&leaf_csr, &a0, &ka, &Issue::leaf(30)).unwrap();
    let v = Verifier::new(vec![anchor]);
    let started = std::time::Instant::now();
    assert!(v.verify(&leaf, &maze).is_err());
    assert!(started.elapsed() < Duration::from_secs(20));
}
