//! TLCP on arbitrary bytes: every parser of peer input, and whole flights fed to a server and to
//! a client that has sent its hello. Nothing panics, and no application data comes out of a
//! connection whose handshake did not complete. Replayed on stable over the committed seeds by
//! crates/shangmi-tlcp/tests/fuzz_corpus.rs.

use std::sync::{Arc, OnceLock};

use der::Encode;

struct Fixture {
    server: Arc<shangmi_tlcp::ServerConfig>,
    client: Arc<shangmi_tlcp::ClientConfig>,
}

/// A CA and a server pair with fixed keys; built once per process.
fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let ca_key = shangmi::sm2::SigningKey::from_bytes(&[3; 32]).expect("a valid scalar");
        let ca = shangmi_pki::self_signed(&ca_key, "/CN=fuzz CA", &shangmi_pki::Issue::ca(3650))
            .expect("issues");
        let leaf = |byte: u8, usage| {
            let key = shangmi::sm2::SigningKey::from_bytes(&[byte; 32]).expect("a valid scalar");
            let csr =
                shangmi_pki::request(&key, "/CN=localhost", &["DNS:localhost"]).expect("request");
            let issue = shangmi_pki::Issue {
                key_usage: Some(usage),
                ..shangmi_pki::Issue::leaf(3650)
            };
            let cert = shangmi_pki::sign_request(&csr, &ca, &ca_key, &issue).expect("issues");
            shangmi_tlcp::Identity::new(vec![cert.to_der().expect("encodes")], key).expect("pair")
        };
        use x509_cert::ext::pkix::{KeyUsage, KeyUsages};
        let sign = leaf(5, KeyUsage(KeyUsages::DigitalSignature.into()));
        let enc = leaf(
            7,
            KeyUsage(KeyUsages::KeyEncipherment | KeyUsages::KeyAgreement),
        );
        let server = shangmi_tlcp::ServerConfig::new(sign, enc)
            .expect("server")
            .with_client_auth(vec![ca.clone()])
            .expect("client auth");
        Fixture {
            server: Arc::new(server),
            client: Arc::new(shangmi_tlcp::ClientConfig::new(vec![ca])),
        }
    })
}

pub fn tlcp(data: &[u8]) {
    shangmi_tlcp::fuzzing::parse_all(data);
    let f = fixture();
    // A server given the bytes as a client's flight, whole and split in two.
    for split in [data.len(), data.len() / 2] {
        let mut s = shangmi_tlcp::Connection::server(f.server.clone());
        let a = s.read_tls_bytes(&data[..split]);
        let b = if a.is_ok() {
            s.read_tls_bytes(&data[split..])
        } else {
            a
        };
        if s.is_handshaking() || b.is_err() {
            assert!(
                s.take_plaintext().is_empty(),
                "data released before the handshake completed"
            );
        }
        let _ = s.take_tls();
    }
    // A client that has sent its hello, given the bytes as the server's answer.
    let mut c = shangmi_tlcp::Connection::client(f.client.clone(), "localhost").expect("client");
    let _ = c.take_tls();
    // Through the reader form, which reads a record's worth at a time.
    let mut rd = data;
    let r = loop {
        match c.read_tls(&mut rd) {
            Ok(0) => break Ok(()),
            Ok(_) => {}
            Err(e) => break Err(e),
        }
    };
    if c.is_handshaking() || r.is_err() {
        assert!(
            c.take_plaintext().is_empty(),
            "data released before the handshake completed"
        );
    }
}
