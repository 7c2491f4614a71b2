//! RFC 8998 on arbitrary bytes: a curveSM2 key share, an SM2 handshake signature against any
//! certificate, session tickets, and whole flights fed to a server and to a client that has
//! sent its hello. Nothing panics, nothing forged verifies, and no application data comes out
//! of a connection whose handshake did not complete. Replayed on stable over the committed
//! seeds by crates/shangmi-rustls/tests/fuzz_corpus.rs.

use std::io::Read;
use std::sync::{Arc, OnceLock};

use rustls::pki_types::{CertificateDer, ServerName};

struct Fixture {
    server: Arc<rustls::ServerConfig>,
    client: Arc<rustls::ClientConfig>,
    cert: CertificateDer<'static>,
}

/// A self-signed server certificate with a fixed key; built once per process.
fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let key = shangmi::sm2::SigningKey::from_bytes(&[3; 32]).expect("a valid scalar");
        let mut issue = shangmi_pki::Issue::leaf(3650);
        issue.san = vec!["DNS:localhost".into()];
        let cert = shangmi_pki::self_signed(&key, "/CN=localhost", &issue).expect("issues");
        let cert = CertificateDer::from(der::Encode::to_der(&cert).expect("encodes"));
        let provider = Arc::new(shangmi_rustls::provider());
        let certified = shangmi_rustls::certified_key(
            vec![cert.clone()],
            shangmi_rustls::Sm2SigningKey::new(key),
        )
        .expect("matches");
        let server = rustls::ServerConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .expect("TLS 1.3")
            .with_no_client_auth()
            .with_cert_resolver(Arc::new(shangmi_rustls::SmCertResolver::new(certified)));
        let roots = shangmi_rustls::Roots::from_ders([cert.as_ref()]).expect("anchor");
        let client = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .expect("TLS 1.3")
            .dangerous()
            .with_custom_certificate_verifier(
                shangmi_rustls::Sm2ServerVerifier::new(Arc::new(roots), provider).expect("roots"),
            )
            .with_no_client_auth();
        Fixture {
            server: Arc::new(server),
            client: Arc::new(client),
            cert,
        }
    })
}

/// Feeds `data` to a connection; it may fail, but must never release application data.
fn feed(conn: &mut rustls::Connection, data: &[u8]) {
    let mut rd = data;
    while !rd.is_empty() {
        match conn.read_tls(&mut rd) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if conn.process_new_packets().is_err() {
            break;
        }
    }
    let mut buf = [0u8; 64];
    if conn.is_handshaking() {
        assert!(
            !matches!(conn.reader().read(&mut buf), Ok(n) if n > 0),
            "application data before the handshake completed"
        );
    }
    let mut out = Vec::new();
    let _ = conn.write_tls(&mut out);
}

pub fn tls_rfc8998(data: &[u8]) {
    let f = fixture();
    // A key share: only a valid uncompressed point is accepted.
    if let Ok(point) = shangmi_rustls::parse_key_share(data) {
        assert_eq!(point.to_uncompressed().as_slice(), data);
    }
    // curveSM2MLKEM768 shares, as a server receives a client's and a client a server's: the
    // bytes as they come, and cycled to each share's exact length so the ML-KEM part is
    // reached.
    let hybrid = shangmi_rustls::CURVE_SM2_MLKEM768_GROUP;
    let _ = hybrid.start_and_complete(data);
    if !data.is_empty() {
        let cycled = |n: usize| -> Vec<u8> { data.iter().copied().cycle().take(n).collect() };
        let _ = hybrid.start_and_complete(&cycled(65 + 1184));
        if let Ok(kx) = hybrid.start() {
            let _ = kx.complete(&cycled(65 + 1088));
        }
    }
    // A CertificateVerify from the fixture's certificate: a random signature never verifies
    // (the private key is fixed but the message below is never signed).
    let (msg, sig) = data.split_at(data.len() / 2);
    assert!(shangmi_rustls::verify_tls13_sm2(msg, &f.cert, sig).is_err());
    // The same with arbitrary bytes as the certificate.
    let _ = shangmi_rustls::verify_tls13_sm2(msg, &CertificateDer::from(data), sig);
    // Arbitrary flights at a fresh server and at a client waiting for the server's.
    let mut server =
        rustls::Connection::Server(rustls::ServerConnection::new(f.server.clone()).expect("new"));
    feed(&mut server, data);
    let mut client = rustls::Connection::Client(
        rustls::ClientConnection::new(f.client.clone(), ServerName::try_from("localhost").unwrap())
            .expect("new"),
    );
    let mut hello = Vec::new();
    let _ = client.write_tls(&mut hello);
    feed(&mut client, data);
}
