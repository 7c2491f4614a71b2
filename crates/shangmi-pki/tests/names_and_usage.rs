//! The rules every protocol shares: whether a certificate is for a host (names read from the
//! name's attributes, never its text; no wildcard for an IP address), and what a certificate
//! may sign (key usage wherever one signs, extended key usage for handshakes), here and
//! inside CMS.

use shangmi::sm2::SigningKey;
use shangmi_pki::cms::{CmsSigner, Flavor};
use shangmi_pki::{
    Error, Issue, Purpose, Rule, Verifier, check_host, check_signing, cms, request, self_signed,
    sign_request,
};
use x509_cert::ext::pkix::{KeyUsage, KeyUsages};

fn root() -> (SigningKey, shangmi_pki::Cert) {
    let key = SigningKey::random().unwrap();
    let cert = self_signed(&key, "CN=Names Root", &Issue::ca(2)).unwrap();
    (key, cert)
}

fn leaf(
    ca: &(SigningKey, shangmi_pki::Cert),
    subject: &str,
    issue: Issue,
) -> (SigningKey, shangmi_pki::Cert) {
    let key = SigningKey::random().unwrap();
    let csr = request(&key, subject, &[]).unwrap();
    (
        key.clone(),
        sign_request(&csr, &ca.1, &ca.0, &issue).unwrap(),
    )
}

fn with_san(san: &[&str]) -> Issue {
    Issue {
        san: san.iter().map(|s| s.to_string()).collect(),
        ..Issue::leaf(2)
    }
}

fn refused_for_name(r: Result<(), Error>) -> bool {
    matches!(
        r,
        Err(Error::Chain {
            rule: Rule::Name,
            ..
        })
    )
}

#[test]
fn a_common_name_inside_another_attribute_is_not_the_common_name() {
    let ca = root();
    // No SAN: the CN decides, and "CN=victim.example" inside O's value is text, not a CN.
    for subject in [
        r"CN=attacker.example,O=Evil\, CN=victim.example",
        r"O=Evil\, CN=victim.example,CN=attacker.example",
    ] {
        let (_, cert) = leaf(&ca, subject, Issue::leaf(2));
        assert!(
            refused_for_name(check_host(&cert, "victim.example")),
            "{subject}"
        );
        check_host(&cert, "attacker.example").unwrap();
        check_host(&cert, "ATTACKER.example.").unwrap();
    }
    // Several common names that differ: no client can tell which one the CA vouched for.
    let (_, two) = leaf(&ca, "CN=a.example+CN=b.example", Issue::leaf(2));
    assert!(refused_for_name(check_host(&two, "a.example")));
    assert!(refused_for_name(check_host(&two, "b.example")));
    let (_, same) = leaf(&ca, "CN=a.example,CN=a.example", Issue::leaf(2));
    check_host(&same, "a.example").unwrap();
    let (_, none) = leaf(&ca, "O=No Name", Issue::leaf(2));
    assert!(refused_for_name(check_host(&none, "a.example")));
}

#[test]
fn wildcards_never_match_ip_addresses() {
    let ca = root();
    let (_, cert) = leaf(&ca, "CN=*.0.0.1", with_san(&["DNS:*.0.0.1"]));
    assert!(refused_for_name(check_host(&cert, "127.0.0.1")));
    let (_, cn_only) = leaf(&ca, "CN=*.0.0.1", Issue::leaf(2));
    assert!(refused_for_name(check_host(&cn_only, "127.0.0.1")));
    // An address matches an address entry (either text form of IPv6), or a CN that is it.
    let (_, ip) = leaf(&ca, "CN=x", with_san(&["IP:127.0.0.1", "IP:::1"]));
    check_host(&ip, "127.0.0.1").unwrap();
    check_host(&ip, "[::1]").unwrap();
    check_host(&ip, "0:0:0:0:0:0:0:1").unwrap();
    assert!(refused_for_name(check_host(&ip, "127.0.0.2")));
    let (_, cn_ip) = leaf(&ca, "CN=10.1.2.3", Issue::leaf(2));
    check_host(&cn_ip, "10.1.2.3").unwrap();
    assert!(refused_for_name(check_host(&cn_ip, "10.1.2.4")));
}

#[test]
fn alternative_names_decide_when_present() {
    let ca = root();
    let (_, cert) = leaf(
        &ca,
        "CN=www.example.com",
        with_san(&["DNS:*.example.net", "DNS:api.example.org"]),
    );
    check_host(&cert, "a.example.net").unwrap();
    check_host(&cert, "API.example.org").unwrap();
    // The CN is not consulted once the SAN names hosts.
    assert!(refused_for_name(check_host(&cert, "www.example.com")));
    assert!(refused_for_name(check_host(&cert, "example.net")));
    assert!(refused_for_name(check_host(&cert, "a.b.example.net")));
}

fn usage(ku: Option<KeyUsages>, eku: &[&str]) -> Issue {
    Issue {
        key_usage: ku.map(|k| KeyUsage(k.into())),
        extended_key_usage: eku.iter().map(|o| o.parse().unwrap()).collect(),
        ..Issue::leaf(2)
    }
}

#[test]
fn only_signing_certificates_sign() {
    let ca = root();
    const SERVER: &str = "1.3.6.1.5.5.7.3.1";
    const CLIENT: &str = "1.3.6.1.5.5.7.3.2";
    const ANY: &str = "2.5.29.37.0";
    let cert = |ku, eku: &[&str]| leaf(&ca, "CN=u", usage(ku, eku)).1;
    let rule = |r: Result<(), Error>| r.err().and_then(|e| e.rule());
    let enc = cert(Some(KeyUsages::KeyEncipherment), &[]);
    for p in [Purpose::ServerAuth, Purpose::ClientAuth, Purpose::Document] {
        assert_eq!(rule(check_signing(&enc, p)), Some(Rule::KeyUsage));
    }
    let nr = cert(Some(KeyUsages::NonRepudiation), &[]);
    check_signing(&nr, Purpose::Document).unwrap();
    assert_eq!(
        rule(check_signing(&nr, Purpose::ClientAuth)),
        Some(Rule::KeyUsage)
    );
    let server_only = cert(Some(KeyUsages::DigitalSignature), &[SERVER]);
    check_signing(&server_only, Purpose::ServerAuth).unwrap();
    assert_eq!(
        rule(check_signing(&server_only, Purpose::ClientAuth)),
        Some(Rule::ExtendedKeyUsage)
    );
    check_signing(&cert(None, &[ANY]), Purpose::ClientAuth).unwrap();
    check_signing(&cert(None, &[SERVER, CLIENT]), Purpose::ClientAuth).unwrap();
    check_signing(&cert(None, &[]), Purpose::ServerAuth).unwrap();
}

#[test]
fn cms_signers_need_a_signing_key_usage() {
    let ca = root();
    let v = Verifier::new(vec![ca.1.clone()]);
    let signed = |key: &SigningKey, cert: &shangmi_pki::Cert| {
        let s = [CmsSigner { cert, key }];
        cms::sign(b"contract", &s, &[], false, Flavor::Gm).unwrap()
    };
    let (k, enc) = leaf(&ca, "CN=enc", usage(Some(KeyUsages::KeyEncipherment), &[]));
    let err = cms::verify(&signed(&k, &enc), None, &v).unwrap_err();
    assert_eq!(err.rule(), Some(Rule::KeyUsage), "{err}");
    let (k, nr) = leaf(&ca, "CN=nr", usage(Some(KeyUsages::NonRepudiation), &[]));
    cms::verify(&signed(&k, &nr), None, &v).unwrap();
    // A CA whose key usage is certificate and CRL signing only does not sign documents.
    let ca_key = SigningKey::random().unwrap();
    let strict = Issue {
        key_usage: Some(KeyUsage(KeyUsages::KeyCertSign | KeyUsages::CRLSign)),
        ..Issue::ca(2)
    };
    let ca_cert = self_signed(&ca_key, "CN=Strict Root", &strict).unwrap();
    let v = Verifier::new(vec![ca_cert.clone()]);
    let err = cms::verify(&signed(&ca_key, &ca_cert), None, &v).unwrap_err();
    assert_eq!(err.rule(), Some(Rule::KeyUsage), "{err}");
}
