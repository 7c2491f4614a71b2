//! RFC 8998 handshakes between rustls clients and servers on this provider: both suites,
//! mutual authentication, resumption, HelloRetryRequest, key update, and the failures.

mod common;

use std::sync::Arc;

use common::*;
use rustls::crypto::CryptoProvider;
use rustls::{CertificateError, Error, HandshakeKind};

fn with_suite(suite: rustls::SupportedCipherSuite) -> Arc<CryptoProvider> {
    Arc::new(CryptoProvider {
        cipher_suites: vec![suite],
        ..shangmi_rustls::provider()
    })
}

#[test]
fn both_suites_handshake_and_carry_data_both_ways() {
    let pki = pki();
    let server = Arc::new(server_config(&pki, sm_provider(), false));
    for (suite, code) in [
        (shangmi_rustls::TLS13_SM4_GCM_SM3, 0x00C6u16),
        (shangmi_rustls::TLS13_SM4_CCM_SM3, 0x00C7),
    ] {
        let client = Arc::new(client_config(&pki, with_suite(suite), false));
        let (mut c, mut s, r) = connect(&client, &server);
        r.unwrap();
        assert_eq!(
            u16::from(c.negotiated_cipher_suite().unwrap().suite()),
            code
        );
        assert_eq!(
            c.negotiated_key_exchange_group().unwrap().name(),
            shangmi_rustls::CURVE_SM2
        );
        assert_eq!(c.handshake_kind(), Some(HandshakeKind::Full));
        let big: Vec<u8> = (0..200_000u32).map(|i| i as u8).collect();
        assert_eq!(send(&mut c, &mut s, &big), big);
        assert_eq!(send(&mut s, &mut c, b"pong"), b"pong");
        // The peer chain the client saw: leaf and intermediate.
        assert_eq!(c.peer_certificates().unwrap().len(), 2);
    }
}

#[test]
fn client_certificates_are_required_and_checked() {
    let pki = pki();
    let server = Arc::new(server_config(&pki, sm_provider(), true));
    let client = Arc::new(client_config(&pki, sm_provider(), true));
    let (c, s, r) = connect(&client, &server);
    r.unwrap();
    assert!(!c.is_handshaking());
    assert_eq!(s.peer_certificates().unwrap().len(), 2);
    // No certificate: refused by the server.
    let anonymous = Arc::new(client_config(&pki, sm_provider(), false));
    let (_, _, r) = connect(&anonymous, &server);
    assert!(r.is_err());
    // A certificate from another PKI: refused.
    let other = common::pki();
    let mut stranger = client_config(&pki, sm_provider(), false);
    let key = shangmi_rustls::load_certified_key(
        other.client_chain_pem.as_bytes(),
        other.client_key_pem.as_bytes(),
        None,
    )
    .unwrap();
    stranger.client_auth_cert_resolver = Arc::new(shangmi_rustls::SmClientCert::new(key));
    let (_, _, r) = connect(&Arc::new(stranger), &server);
    assert!(
        matches!(
            r,
            Err(Error::InvalidCertificate(_)) | Err(Error::AlertReceived(_))
        ),
        "{r:?}"
    );
}

#[test]
fn an_encryption_only_client_certificate_does_not_log_in() {
    // GM/T encryption keys are escrowed: their certificates must not authenticate a client.
    let enc_only = shangmi_pki::Issue {
        key_usage: Some(x509_cert::ext::pkix::KeyUsage(
            x509_cert::ext::pkix::KeyUsages::KeyEncipherment.into(),
        )),
        ..shangmi_pki::Issue::leaf(365)
    };
    let pki = common::pki_issued(shangmi_pki::Issue::leaf(365), enc_only);
    let server = Arc::new(server_config(&pki, sm_provider(), true));
    let client = Arc::new(client_config(&pki, sm_provider(), true));
    let (_, _, r) = connect(&client, &server);
    assert!(
        matches!(
            r,
            Err(Error::InvalidCertificate(_)) | Err(Error::AlertReceived(_))
        ),
        "{r:?}"
    );
}

#[test]
fn a_server_outside_the_trusted_roots_is_refused() {
    let pki = pki();
    let other = common::pki();
    let server = Arc::new(server_config(&other, sm_provider(), false));
    let client = Arc::new(client_config(&pki, sm_provider(), false));
    let (_, _, r) = connect(&client, &server);
    // Both PKIs use the same names, so the chain is built to the wrong root and fails on
    // its signature; with other names it finds no issuer. Either way: refused.
    assert!(
        matches!(
            r,
            Err(Error::InvalidCertificate(
                CertificateError::BadSignature | CertificateError::UnknownIssuer
            ))
        ),
        "{r:?}"
    );
}

#[test]
fn sessions_resume_by_ticket_and_by_id() {
    let pki = pki();
    for tickets in [false, true] {
        let mut server = server_config(&pki, sm_provider(), false);
        if tickets {
            server.ticketer = shangmi_rustls::ticketer().unwrap();
        }
        let server = Arc::new(server);
        let client = Arc::new(client_config(&pki, sm_provider(), false));
        let (mut c, mut s, r) = connect(&client, &server);
        r.unwrap();
        // The tickets travel after the handshake.
        send(&mut s, &mut c, b"x");
        let (mut c2, mut s2, r) = connect(&client, &server);
        r.unwrap();
        assert_eq!(
            c2.handshake_kind(),
            Some(HandshakeKind::Resumed),
            "tickets {tickets}"
        );
        assert_eq!(send(&mut c2, &mut s2, b"again"), b"again");
    }
}

#[test]
fn a_client_that_guesses_another_group_first_gets_a_hello_retry() {
    let pki = pki();
    let server = Arc::new(server_config(&pki, sm_provider(), false));
    let aws = rustls::crypto::aws_lc_rs::default_provider();
    let provider = Arc::new(CryptoProvider {
        kx_groups: vec![aws.kx_groups[0], shangmi_rustls::CURVE_SM2_GROUP],
        ..shangmi_rustls::provider()
    });
    let client = Arc::new(client_config(&pki, provider, false));
    let (mut c, mut s, r) = connect(&client, &server);
    r.unwrap();
    assert_eq!(
        c.handshake_kind(),
        Some(HandshakeKind::FullWithHelloRetryRequest)
    );
    assert_eq!(send(&mut c, &mut s, b"after retry"), b"after retry");
}

#[test]
fn key_updates_keep_the_connection_going() {
    let pki = pki();
    let server = Arc::new(server_config(&pki, sm_provider(), false));
    let client = Arc::new(client_config(&pki, sm_provider(), false));
    let (mut c, mut s, r) = connect(&client, &server);
    r.unwrap();
    for i in 0..3 {
        c.refresh_traffic_keys().unwrap();
        let msg = format!("after update {i}");
        assert_eq!(send(&mut c, &mut s, msg.as_bytes()), msg.as_bytes());
        s.refresh_traffic_keys().unwrap();
        assert_eq!(send(&mut s, &mut c, msg.as_bytes()), msg.as_bytes());
    }
}

#[test]
fn a_tampered_record_is_refused_and_releases_nothing() {
    use std::io::{Read, Write};
    let pki = pki();
    let server = Arc::new(server_config(&pki, sm_provider(), false));
    let client = Arc::new(client_config(&pki, sm_provider(), false));
    let (mut c, mut s, r) = connect(&client, &server);
    r.unwrap();
    c.writer().write_all(b"secret payload").unwrap();
    let mut wire = Vec::new();
    c.write_tls(&mut wire).unwrap();
    let last = wire.len() - 1;
    wire[last] ^= 0x80;
    s.read_tls(&mut &wire[..]).unwrap();
    assert_eq!(s.process_new_packets().unwrap_err(), Error::DecryptError);
    let mut got = [0u8; 32];
    assert!(s.reader().read(&mut got).is_err());
}

/// Signs CertificateVerify with GM/T 0009's default ID instead of RFC 8998's TLS ID.
#[derive(Debug)]
struct DefaultIdKey(Arc<shangmi::sm2::SigningKey>);

#[derive(Debug)]
struct DefaultIdSigner(Arc<shangmi::sm2::SigningKey>);

impl rustls::sign::SigningKey for DefaultIdKey {
    fn choose_scheme(
        &self,
        offered: &[rustls::SignatureScheme],
    ) -> Option<Box<dyn rustls::sign::Signer>> {
        offered
            .contains(&shangmi_rustls::SM2SIG_SM3)
            .then(|| Box::new(DefaultIdSigner(self.0.clone())) as Box<dyn rustls::sign::Signer>)
    }

    fn algorithm(&self) -> rustls::SignatureAlgorithm {
        rustls::SignatureAlgorithm::Unknown(8)
    }
}

impl rustls::sign::Signer for DefaultIdSigner {
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, Error> {
        Ok(self.0.sign(message).unwrap().to_der())
    }

    fn scheme(&self) -> rustls::SignatureScheme {
        shangmi_rustls::SM2SIG_SM3
    }
}

#[test]
fn a_certificate_verify_made_with_the_default_id_is_refused() {
    let pki = pki();
    let key = shangmi::sm2::SigningKey::from_key_file(pki.server_key_pem.as_bytes(), None).unwrap();
    let certified = rustls::sign::CertifiedKey::new(
        der_certs(&pki.server_chain_pem),
        Arc::new(DefaultIdKey(Arc::new(key))),
    );
    let mut server = server_config(&pki, sm_provider(), false);
    server.cert_resolver = Arc::new(shangmi_rustls::SmCertResolver::new(certified));
    let server = Arc::new(server);
    let client = Arc::new(client_config(&pki, sm_provider(), false));
    let (_, _, r) = connect(&client, &server);
    assert_eq!(
        r.unwrap_err(),
        Error::InvalidCertificate(CertificateError::BadSignature)
    );
}

#[test]
fn a_server_key_with_a_presign_pool_signs_across_refills() {
    let pki = pki();
    let key = shangmi_rustls::Sm2SigningKey::from_key_file(pki.server_key_pem.as_bytes(), None)
        .unwrap()
        .with_presign_pool(3);
    let certified = shangmi_rustls::certified_key(der_certs(&pki.server_chain_pem), key).unwrap();
    let mut server = server_config(&pki, sm_provider(), false);
    server.cert_resolver = Arc::new(shangmi_rustls::SmCertResolver::new(certified));
    let server = Arc::new(server);
    let mut client = client_config(&pki, sm_provider(), false);
    client.resumption = rustls::client::Resumption::disabled();
    let client = Arc::new(client);
    for _ in 0..10 {
        let (c, _, r) = connect(&client, &server);
        r.unwrap();
        assert_eq!(c.handshake_kind(), Some(HandshakeKind::Full));
    }
}

#[test]
fn every_certificate_encoding_met_in_practice_is_served_and_verified() {
    for bare_key in [false, true] {
        for null_params in [false, true] {
            let pki = common::pki_encoded(bare_key, null_params);
            // The variant really is in the certificate the server sends.
            let leaf = &der_certs(&pki.server_chain_pem)[0];
            let bare_spki = [
                0x30, 0x0a, 0x06, 0x08, 0x2a, 0x81, 0x1c, 0xcf, 0x55, 0x01, 0x82, 0x2d,
            ];
            assert_eq!(leaf.as_ref().windows(12).any(|w| w == bare_spki), bare_key);
            let server = Arc::new(server_config(&pki, sm_provider(), false));
            let client = Arc::new(client_config(&pki, sm_provider(), false));
            let (mut c, mut s, r) = connect(&client, &server);
            r.unwrap_or_else(|e| panic!("bare key {bare_key}, NULL {null_params}: {e}"));
            assert_eq!(send(&mut c, &mut s, b"ok"), b"ok");
        }
    }
}

#[test]
fn a_certificate_with_explicit_defaults_is_served_and_verified() {
    let pki = common::pki_explicit_defaults();
    let leaf = der_certs(&pki.server_chain_pem).remove(0);
    let parsed = shangmi_pki::Cert::from_der(&leaf).unwrap();
    assert_ne!(
        der::Encode::to_der(parsed.certificate()).unwrap(),
        leaf.as_ref()
    );
    let server = Arc::new(server_config(&pki, sm_provider(), false));
    let client = Arc::new(client_config(&pki, sm_provider(), false));
    let (mut c, mut s, r) = connect(&client, &server);
    r.unwrap();
    assert_eq!(send(&mut c, &mut s, b"ok"), b"ok");
}

#[test]
fn one_server_serves_sm_clients_and_international_ones() {
    let pki = pki();
    let base = || rustls::crypto::aws_lc_rs::default_provider();
    let both = Arc::new(shangmi_rustls::beside(base()));
    // The international certificate: ECDSA P-256 for localhost, self-signed.
    let ecdsa = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let ecdsa_der = ecdsa.cert.der().clone();
    let ecdsa_key =
        rustls::pki_types::PrivateKeyDer::try_from(ecdsa.signing_key.serialize_der()).unwrap();
    let international =
        rustls::sign::CertifiedKey::from_der(vec![ecdsa_der.clone()], ecdsa_key, &both).unwrap();
    let sm = shangmi_rustls::load_certified_key(
        pki.server_chain_pem.as_bytes(),
        pki.server_key_pem.as_bytes(),
        None,
    )
    .unwrap();
    let mut server = server_config(&pki, both.clone(), false);
    server.cert_resolver =
        Arc::new(shangmi_rustls::SmCertResolver::new(sm).with_international(international));
    let server = Arc::new(server);
    // An SM client gets the SM2 certificate and an SM suite.
    let sm_client = Arc::new(client_config(&pki, sm_provider(), false));
    let (c, _, r) = connect(&sm_client, &server);
    r.unwrap();
    assert_eq!(
        u16::from(c.negotiated_cipher_suite().unwrap().suite()),
        0x00C6
    );
    // A client with rustls' own provider gets the ECDSA certificate and an AES suite.
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ecdsa_der).unwrap();
    let intl_client = Arc::new(
        rustls::ClientConfig::builder_with_provider(Arc::new(base()))
            .with_protocol_versions(&[&rustls::version::TLS13])
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth(),
    );
    let (mut c, mut s, r) = connect(&intl_client, &server);
    r.unwrap();
    let suite = u16::from(c.negotiated_cipher_suite().unwrap().suite());
    assert!(![0x00C6, 0x00C7].contains(&suite), "{suite:#x}");
    assert_eq!(send(&mut c, &mut s, b"intl"), b"intl");
}

/// The client's verdict on a server whose leaf was issued as `issue` says.
fn server_with(issue: shangmi_pki::Issue) -> Result<(), Error> {
    let pki = common::pki_with(issue);
    let server = Arc::new(server_config(&pki, sm_provider(), false));
    let client = Arc::new(client_config(&pki, sm_provider(), false));
    connect(&client, &server).2
}

#[test]
fn bad_server_certificates_fail_the_handshake_with_the_reason() {
    use shangmi_pki::Issue;
    use std::time::{Duration, SystemTime};
    // Expired.
    let mut expired = Issue::leaf(1);
    expired.not_before = Some(SystemTime::now() - Duration::from_secs(10 * 86_400));
    assert!(
        matches!(
            server_with(expired),
            Err(Error::InvalidCertificate(
                CertificateError::ExpiredContext { .. }
            )) | Err(Error::InvalidCertificate(CertificateError::Expired))
        ),
        "expired"
    );
    // Signed with OpenSSL 3's empty SM2 ID: the chain signature fails under GM/T 0009's.
    let mut empty_id = Issue::leaf(365);
    empty_id.id = Vec::new();
    assert_eq!(
        server_with(empty_id),
        Err(Error::InvalidCertificate(CertificateError::BadSignature))
    );
    // A key usage without digitalSignature (an encryption certificate).
    let mut encipher = Issue::leaf(365);
    encipher.key_usage = Some(x509_cert::ext::pkix::KeyUsage(
        x509_cert::ext::pkix::KeyUsages::KeyEncipherment.into(),
    ));
    assert_eq!(
        server_with(encipher),
        Err(Error::InvalidCertificate(CertificateError::InvalidPurpose))
    );
    // The name does not match (a leaf for another host).
    let mut other = Issue::leaf(365);
    other.san = vec!["DNS:elsewhere.example".into()];
    assert!(matches!(
        server_with(other),
        Err(Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. }
        ))
    ));
}

#[test]
fn a_self_signed_leaf_is_refused_where_a_chain_is_required() {
    let pki = pki();
    let key = shangmi::sm2::SigningKey::random().unwrap();
    let mut issue = shangmi_pki::Issue::leaf(365);
    issue.san = vec!["DNS:localhost".into()];
    let leaf = shangmi_pki::self_signed(&key, "/CN=localhost", &issue).unwrap();
    let certified = shangmi_rustls::certified_key(
        vec![der::Encode::to_der(&leaf).unwrap().into()],
        shangmi_rustls::Sm2SigningKey::new(key),
    )
    .unwrap();
    let mut server = server_config(&pki, sm_provider(), false);
    server.cert_resolver = Arc::new(shangmi_rustls::SmCertResolver::new(certified));
    let client = Arc::new(client_config(&pki, sm_provider(), false));
    let r = connect(&client, &Arc::new(server)).2;
    assert_eq!(
        r,
        Err(Error::InvalidCertificate(CertificateError::UnknownIssuer))
    );
}
