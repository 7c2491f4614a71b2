//! Real SM2 certificates from public SM projects (`tests/vectors/x509/README.md` says where
//! each comes from and what it must do): every one parses, and the chains and traps there
//! verify or fail as that README says.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use shangmi_pki::{Rule, Verifier, certificates, crls, public_key, requests};

fn read(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/vectors/x509/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn cert(name: &str) -> shangmi_pki::Cert {
    certificates(&read(name)).unwrap().remove(0)
}

fn at(unix: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(unix)
}

fn rule(r: Result<Vec<shangmi_pki::Cert>, shangmi_pki::Error>) -> Option<Rule> {
    r.err().and_then(|e| e.rule())
}

#[test]
fn every_certificate_request_and_crl_parses() {
    let dir = format!("{}/tests/vectors/x509", env!("CARGO_MANIFEST_DIR"));
    let mut certs = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let data = read(&name);
        if let Ok(list) = certificates(&data) {
            for c in list {
                certs += 1;
                // Every key is SM2 in one of its forms, except the one certificate whose key is
                // P-256 under an SM2 signature label.
                let key = public_key(c.tbs_certificate().subject_public_key_info());
                assert_eq!(
                    key.is_ok(),
                    name != "kona-ca-p256key-sm2sigoid.pem",
                    "{name}"
                );
            }
        }
    }
    assert_eq!(
        certs, 44,
        "certificates in the corpus (18 leaves, 13 roots, 13 intermediates)"
    );
    for name in [
        "gmsm-ali-kms-csr.pem",
        "tongsuo-sm2-csr.pem",
        "icbc-p10-explicit-params-bad-cofactor.der",
    ] {
        assert_eq!(requests(&read(name)).unwrap().len(), 1, "{name}");
    }
    for name in [
        "nrcac-rootca.crl",
        "nrcac-device-root.crl",
        "kona-ca-revokes-intca.crl.pem",
    ] {
        assert_eq!(crls(&read(name)).unwrap().len(), 1, "{name}");
    }
    // A CFCA request that leaves out the SET around its attributes is refused, as by OpenSSL.
    assert!(requests(&read("gmsm-cfca-sadk-csr.pem")).is_err());
    // A CFCA request with no attributes field at all (OpenSSL tolerates it): read, and its
    // signature verifies over the bytes as written.
    let bare = requests(&read("cfca-sadk-p10-no-attributes.der"))
        .unwrap()
        .remove(0);
    assert!(bare.info.attributes.is_empty());
    shangmi_pki::verify_request(&bare, shangmi_pki::DEFAULT_ID).unwrap();
    assert!(shangmi_pki::verify_request(&bare, b"").is_err());
}

#[test]
fn national_and_cfca_chains_verify_at_a_time_inside_their_validity() {
    let root = cert("nrcac-rootca.pem");
    for sub in [
        "nrcac-sheca-sm2.pem",
        "nrcac-taier-ca.pem",
        "nrcac-antfin-s1.pem",
        "nrcac-zjca-oca1.pem",
    ] {
        let path = Verifier::new(vec![root.clone()])
            .at(at(1_700_000_000))
            .verify(&cert(sub), &[]);
        assert_eq!(path.unwrap().len(), 2, "{sub}");
    }
    // Three certificates, the leaf expired today: verified at a time it was valid.
    let v = Verifier::new(vec![cert("cfca-cs-sm2-ca.pem")]);
    let leaf = cert("cfca-ebssec-boc-sign.pem");
    let path = v
        .clone()
        .at(at(1_623_488_720))
        .verify(&leaf, &[cert("cfca-sm2-oca1.pem")]);
    assert_eq!(path.unwrap().len(), 3);
    assert_eq!(
        rule(
            v.at(at(1_900_000_000))
                .verify(&leaf, &[cert("cfca-sm2-oca1.pem")])
        ),
        Some(Rule::Validity)
    );
    // Tongsuo's TLCP chain, and its certificate that expired before its issuer began.
    let v = Verifier::new(vec![cert("tongsuo-tlcp-root.pem")]);
    let sub = [cert("tongsuo-tlcp-subca.pem")];
    for leaf in [
        "tongsuo-tlcp-server-sign.pem",
        "tongsuo-tlcp-server-enc.pem",
        "tongsuo-tlcp-client-sign.pem",
    ] {
        assert_eq!(v.verify(&cert(leaf), &sub).unwrap().len(), 3, "{leaf}");
    }
    assert_eq!(
        rule(v.verify(&cert("tongsuo-tlcp-server-sign-expired.pem"), &sub)),
        Some(Rule::Validity)
    );
    // Bare SM2 OID keys; a leaf whose issuer DN equals its own subject but is not self-signed.
    let v = Verifier::new(vec![cert("tongsuo-sm2-root.pem")]);
    assert_eq!(
        v.verify(&cert("tongsuo-sm2-leaf-same-dn.pem"), &[])
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn the_traps_fail_as_they_must() {
    // Two CAs with one name: only the one whose key signed verifies it, whichever is offered.
    let leaf = cert("tjfoc-localhost-sign.pem");
    let other = Verifier::new(vec![cert("gotlcp-test-ca.pem")]).at(at(1_700_000_000));
    assert_eq!(rule(other.verify(&leaf, &[])), Some(Rule::Signature));
    let both = Verifier::new(vec![cert("gotlcp-test-ca.pem"), cert("tjfoc-test-ca.pem")])
        .at(at(1_700_000_000));
    assert_eq!(both.verify(&leaf, &[]).unwrap().len(), 2);
    // The key matches but the issuer name does not: name chaining fails.
    let v = Verifier::new(vec![cert("jsca-ca-sm2.der")]).at(at(1_600_000_000));
    assert!(v.verify(&cert("jsca-host-leaf.der"), &[]).is_err());
    // notBefore after notAfter: never valid.
    for t in [1_500_000_000, 1_560_000_000, 1_600_000_000, 1_800_000_000] {
        let v = Verifier::new(Vec::<shangmi_pki::Cert>::new()).at(at(t));
        assert_eq!(
            rule(v.verify(&cert("tjfoc-smartca-inverted-validity.der"), &[])),
            Some(Rule::Validity)
        );
    }
}

#[test]
fn a_crl_revokes_the_intermediate_it_lists() {
    let ca = cert("kona-ca-sm2sm2.pem");
    let int = cert("kona-intca-sm2sm2.pem");
    let leaf = cert("kona-ee-sm2sm2.pem");
    let v = Verifier::new(vec![ca]).at(at(1_650_000_000));
    assert_eq!(
        v.verify(&leaf, std::slice::from_ref(&int)).unwrap().len(),
        3
    );
    let list = crls(&read("kona-ca-revokes-intca.crl.pem")).unwrap();
    let r = v.with_crls(list).verify(&leaf, &[int]);
    assert_eq!(rule(r), Some(Rule::Revoked));
}
