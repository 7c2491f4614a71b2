//! The verifiers rustls calls, asked directly: SM2 chains take shangmi-pki's path (the rules
//! TLCP and CMS keep, which webpki does not: an intermediate must be allowed to sign
//! certificates), international chains webpki's.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use der::Encode;
use rustls::client::danger::ServerCertVerifier;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::danger::ClientCertVerifier;
use rustls::{CertificateError, Error};
use shangmi::sm2::SigningKey;
use shangmi_pki::{Issue, request, self_signed, sign_request};
use x509_cert::ext::pkix::{KeyUsage, KeyUsages};

struct Chain {
    root: Vec<u8>,
    mid: Vec<u8>,
    leaf: Vec<u8>,
}

/// Root -> intermediate (issued as `mid`) -> a leaf for localhost issued as `leaf`.
fn chain(mid: Issue, leaf: Issue) -> Chain {
    let root_key = SigningKey::random().unwrap();
    let root = self_signed(&root_key, "/CN=Verifier Root", &Issue::ca(3650)).unwrap();
    let mid_key = SigningKey::random().unwrap();
    let csr = request(&mid_key, "/CN=Verifier Intermediate", &[]).unwrap();
    let mid = sign_request(&csr, &root, &root_key, &mid).unwrap();
    let key = SigningKey::random().unwrap();
    let csr = request(&key, "/CN=localhost", &["DNS:localhost"]).unwrap();
    let leaf = sign_request(&csr, &mid, &mid_key, &leaf).unwrap();
    Chain {
        root: root.to_der().unwrap(),
        mid: mid.to_der().unwrap(),
        leaf: leaf.to_der().unwrap(),
    }
}

fn server_verifier(root: &[u8]) -> Arc<shangmi_rustls::Sm2ServerVerifier> {
    let provider = Arc::new(shangmi_rustls::beside(
        rustls::crypto::aws_lc_rs::default_provider(),
    ));
    let roots = shangmi_rustls::Roots::from_ders([root]).unwrap();
    shangmi_rustls::Sm2ServerVerifier::new(Arc::new(roots), provider).unwrap()
}

fn verify_server(c: &Chain, name: &str, now: SystemTime) -> Result<(), Error> {
    let now = UnixTime::since_unix_epoch(now.duration_since(SystemTime::UNIX_EPOCH).unwrap());
    server_verifier(&c.root)
        .verify_server_cert(
            &CertificateDer::from(c.leaf.clone()),
            &[CertificateDer::from(c.mid.clone())],
            &ServerName::try_from(name.to_string()).unwrap(),
            &[],
            now,
        )
        .map(|_| ())
}

#[test]
fn an_sm2_chain_is_verified_with_the_rules_of_tlcp_and_cms() {
    let good = chain(Issue::ca(1825), Issue::leaf(365));
    verify_server(&good, "localhost", SystemTime::now()).unwrap();
    assert_eq!(
        verify_server(&good, "other.example", SystemTime::now()),
        Err(Error::InvalidCertificate(CertificateError::NotValidForName))
    );
    let later = SystemTime::now() + Duration::from_secs(400 * 86_400);
    assert_eq!(
        verify_server(&good, "localhost", later),
        Err(Error::InvalidCertificate(CertificateError::Expired))
    );
    let other = chain(Issue::ca(1825), Issue::leaf(365));
    let mixed = Chain {
        root: other.root,
        ..good
    };
    assert_eq!(
        verify_server(&mixed, "localhost", SystemTime::now()),
        Err(Error::InvalidCertificate(CertificateError::BadSignature))
    );

    // An intermediate whose key usage leaves out keyCertSign may not issue the leaf (webpki
    // alone accepts this chain: it reads no key usage).
    let no_cert_sign = Issue {
        key_usage: Some(KeyUsage(KeyUsages::DigitalSignature | KeyUsages::CRLSign)),
        ..Issue::ca(1825)
    };
    let bad = chain(no_cert_sign, Issue::leaf(365));
    assert_eq!(
        verify_server(&bad, "localhost", SystemTime::now()),
        Err(Error::InvalidCertificate(CertificateError::InvalidPurpose))
    );
}

#[test]
fn an_encryption_certificate_cannot_log_a_client_in() {
    let enc_only = Issue {
        key_usage: Some(KeyUsage(
            KeyUsages::KeyEncipherment | KeyUsages::KeyAgreement,
        )),
        ..Issue::leaf(365)
    };
    for (issue, ok) in [(Issue::leaf(365), true), (enc_only, false)] {
        let c = chain(Issue::ca(1825), issue);
        let provider = Arc::new(shangmi_rustls::provider());
        let roots = shangmi_rustls::Roots::from_ders([c.root.as_slice()]).unwrap();
        let verifier = shangmi_rustls::Sm2ClientVerifier::new(Arc::new(roots), provider).unwrap();
        let r = verifier.verify_client_cert(
            &CertificateDer::from(c.leaf.clone()),
            &[CertificateDer::from(c.mid.clone())],
            UnixTime::now(),
        );
        assert_eq!(r.is_ok(), ok, "{r:?}");
    }
}

#[test]
fn an_international_chain_goes_through_webpki() {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(ca, ca_key);
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["localhost".to_string()])
        .unwrap()
        .signed_by(&leaf_key, &issuer)
        .unwrap();
    let c = Chain {
        root: ca_cert.der().to_vec(),
        mid: Vec::new(),
        leaf: leaf.der().to_vec(),
    };
    let verifier = server_verifier(&c.root);
    let name = ServerName::try_from("localhost").unwrap();
    let leaf = CertificateDer::from(c.leaf.clone());
    verifier
        .verify_server_cert(&leaf, &[], &name, &[], UnixTime::now())
        .unwrap();
    let wrong = ServerName::try_from("other.example").unwrap();
    assert!(
        verifier
            .verify_server_cert(&leaf, &[], &wrong, &[], UnixTime::now())
            .is_err()
    );
}
