//! What the tests share: a small SM2 PKI made by shangmi-pki, configurations, and an
//! in-memory connection pump.
#![allow(dead_code)]

use std::sync::Arc;

use der::{Encode, EncodePem};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, ServerConfig, ServerConnection};
use shangmi::sm2::SigningKey;
use shangmi_pki::{Issue, request, self_signed, sign_request};
use shangmi_testkit::der_edit::{children, encode, tlv};

pub struct Pki {
    pub root_pem: String,
    pub server_chain_pem: String,
    pub server_key_pem: String,
    pub client_chain_pem: String,
    pub client_key_pem: String,
}

fn pem(c: &shangmi_pki::Certificate) -> String {
    c.to_pem(der::pem::LineEnding::LF).unwrap()
}

/// Root -> intermediate -> leaf for the server (DNS:localhost) and for a client.
pub fn pki() -> Pki {
    pki_with(Issue::leaf(365))
}

/// [`pki`] with the server's leaf issued as `server` says (its validity, key usage, the ID
/// its issuer signs with).
pub fn pki_with(server: Issue) -> Pki {
    pki_issued(server, Issue::leaf(365))
}

/// [`pki_with`], the client's leaf issued as `client` says.
pub fn pki_issued(server: Issue, client: Issue) -> Pki {
    let root_key = SigningKey::random().unwrap();
    let root = self_signed(&root_key, "/C=CN/O=shangmi test/CN=Root", &Issue::ca(3650)).unwrap();
    let mid_key = SigningKey::random().unwrap();
    let mid_csr = request(&mid_key, "/C=CN/O=shangmi test/CN=Intermediate", &[]).unwrap();
    let mid = sign_request(&mid_csr, &root, &root_key, &Issue::ca(1825)).unwrap();
    let leaf = |cn: &str, san: &[&str], issue: &Issue| {
        let key = SigningKey::random().unwrap();
        let csr = request(&key, &format!("/C=CN/O=shangmi test/CN={cn}"), san).unwrap();
        let cert = sign_request(&csr, &mid, &mid_key, issue).unwrap();
        (
            format!("{}{}", pem(&cert), pem(&mid)),
            key.to_pkcs8_pem().unwrap().to_string(),
        )
    };
    let (server_chain_pem, server_key_pem) = leaf("localhost", &["DNS:localhost"], &server);
    let (client_chain_pem, client_key_pem) = leaf("client", &[], &client);
    let _ = root.to_der().unwrap();
    Pki {
        root_pem: pem(&root),
        server_chain_pem,
        server_key_pem,
        client_chain_pem,
        client_key_pem,
    }
}

pub fn sm_provider() -> Arc<CryptoProvider> {
    Arc::new(shangmi_rustls::provider())
}

pub fn server_config(pki: &Pki, provider: Arc<CryptoProvider>, client_auth: bool) -> ServerConfig {
    let key = shangmi_rustls::load_certified_key(
        pki.server_chain_pem.as_bytes(),
        pki.server_key_pem.as_bytes(),
        None,
    )
    .unwrap();
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap();
    let builder = if client_auth {
        let roots = Arc::new(shangmi_rustls::load_roots(pki.root_pem.as_bytes()).unwrap());
        builder.with_client_cert_verifier(
            shangmi_rustls::Sm2ClientVerifier::new(roots, provider).unwrap(),
        )
    } else {
        builder.with_no_client_auth()
    };
    builder.with_cert_resolver(Arc::new(shangmi_rustls::SmCertResolver::new(key)))
}

pub fn client_config(pki: &Pki, provider: Arc<CryptoProvider>, client_auth: bool) -> ClientConfig {
    let roots = Arc::new(shangmi_rustls::load_roots(pki.root_pem.as_bytes()).unwrap());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(
            shangmi_rustls::Sm2ServerVerifier::new(roots, provider).unwrap(),
        );
    if client_auth {
        let key = shangmi_rustls::load_certified_key(
            pki.client_chain_pem.as_bytes(),
            pki.client_key_pem.as_bytes(),
            None,
        )
        .unwrap();
        builder.with_client_cert_resolver(Arc::new(shangmi_rustls::SmClientCert::new(key)))
    } else {
        builder.with_no_client_auth()
    }
}

/// The two connection types, as the pump drives them.
pub trait Pump {
    fn wants_write(&self) -> bool;
    fn write_tls(&mut self, out: &mut dyn std::io::Write) -> std::io::Result<usize>;
    fn read_tls(&mut self, rd: &mut dyn std::io::Read) -> std::io::Result<usize>;
    fn process_new_packets(&mut self) -> Result<rustls::IoState, rustls::Error>;
    fn writer(&mut self) -> rustls::Writer<'_>;
    fn reader(&mut self) -> rustls::Reader<'_>;
}

macro_rules! pump {
    ($t:ty) => {
        impl Pump for $t {
            fn wants_write(&self) -> bool {
                (**self).wants_write()
            }
            fn write_tls(&mut self, out: &mut dyn std::io::Write) -> std::io::Result<usize> {
                (**self).write_tls(out)
            }
            fn read_tls(&mut self, rd: &mut dyn std::io::Read) -> std::io::Result<usize> {
                (**self).read_tls(rd)
            }
            fn process_new_packets(&mut self) -> Result<rustls::IoState, rustls::Error> {
                (**self).process_new_packets()
            }
            fn writer(&mut self) -> rustls::Writer<'_> {
                (**self).writer()
            }
            fn reader(&mut self) -> rustls::Reader<'_> {
                (**self).reader()
            }
        }
    };
}
pump!(ClientConnection);
pump!(ServerConnection);

/// Moves every pending TLS byte from one side to the other; false when nothing moved.
fn transfer(from: &mut dyn Pump, to: &mut dyn Pump) -> Result<bool, rustls::Error> {
    let mut buf = Vec::new();
    while from.wants_write() {
        from.write_tls(&mut buf).unwrap();
    }
    if buf.is_empty() {
        return Ok(false);
    }
    let mut rd = &buf[..];
    while !rd.is_empty() {
        to.read_tls(&mut rd).unwrap();
        to.process_new_packets()?;
    }
    Ok(true)
}

/// Runs the handshake to completion (or the first error, from either side).
pub fn handshake(
    client: &mut ClientConnection,
    server: &mut ServerConnection,
) -> Result<(), rustls::Error> {
    for _ in 0..16 {
        let a = transfer(&mut *client, &mut *server)?;
        let b = transfer(&mut *server, &mut *client)?;
        if !a && !b && !client.is_handshaking() && !server.is_handshaking() {
            return Ok(());
        }
    }
    panic!("handshake did not finish");
}

pub fn connect(
    client_config: &Arc<ClientConfig>,
    server_config: &Arc<ServerConfig>,
) -> (
    ClientConnection,
    ServerConnection,
    Result<(), rustls::Error>,
) {
    let mut c = ClientConnection::new(
        client_config.clone(),
        ServerName::try_from("localhost").unwrap(),
    )
    .unwrap();
    let mut s = ServerConnection::new(server_config.clone()).unwrap();
    let r = handshake(&mut c, &mut s);
    (c, s, r)
}

/// Sends `data` one way, 16 KiB at a time, and returns what the other side read.
pub fn send(from: &mut dyn Pump, to: &mut dyn Pump, data: &[u8]) -> Vec<u8> {
    use std::io::{Read, Write};
    let mut got = Vec::new();
    for chunk in data.chunks(16 << 10) {
        from.writer().write_all(chunk).unwrap();
        transfer(from, to).unwrap();
        let mut part = vec![0u8; chunk.len()];
        to.reader().read_exact(&mut part).unwrap();
        got.extend_from_slice(&part);
    }
    got
}

pub fn der_certs(pem: &str) -> Vec<CertificateDer<'static>> {
    shangmi_rustls::load_certificates(pem.as_bytes()).unwrap()
}

/// `cert` (DER) rewritten in the encodings other issuers use, and signed again by `issuer`:
/// the key as the bare SM2 OID instead of id-ecPublicKey + the curve, and/or the signature
/// algorithm with NULL parameters.
pub fn reencode(cert: &[u8], issuer: &SigningKey, bare_key: bool, null_params: bool) -> Vec<u8> {
    const SM2: &[u8] = &[0x06, 0x08, 0x2a, 0x81, 0x1c, 0xcf, 0x55, 0x01, 0x82, 0x2d];
    const SM2_SM3: &[u8] = &[0x06, 0x08, 0x2a, 0x81, 0x1c, 0xcf, 0x55, 0x01, 0x83, 0x75];
    let alg = if null_params {
        encode(0x30, &[SM2_SM3, &[0x05, 0x00]].concat())
    } else {
        encode(0x30, SM2_SM3)
    };
    let (_, cert_body, _) = tlv(cert);
    let parts = children(cert_body);
    let (_, tbs_body, _) = tlv(&parts[0]);
    let mut fields = children(tbs_body);
    // version [0], serial, signature, issuer, validity, subject, subjectPublicKeyInfo, ...
    fields[2] = alg.clone();
    if bare_key {
        let (_, spki_body, _) = tlv(&fields[6]);
        let spki = children(spki_body);
        fields[6] = encode(0x30, &[encode(0x30, SM2), spki[1].clone()].concat());
    }
    let tbs = encode(0x30, &fields.concat());
    let sig = issuer.sign(&tbs).unwrap().to_der();
    let mut bits = vec![0u8];
    bits.extend_from_slice(&sig);
    encode(0x30, &[tbs, alg, encode(0x03, &bits)].concat())
}

/// A root and a server leaf whose own encodings are chosen (see [`reencode`]).
pub fn pki_encoded(bare_key: bool, null_params: bool) -> Pki {
    pki_rewritten(|leaf, root_key| reencode(leaf, root_key, bare_key, null_params))
}

/// A root and a server leaf written with explicit DEFAULT values (`critical FALSE`), which a
/// parse drops: verified over a re-encoding, its signature would fail.
pub fn pki_explicit_defaults() -> Pki {
    pki_rewritten(|leaf, root_key| {
        shangmi_testkit::der_edit::with_explicit_defaults(leaf, root_key, 0xa3)
    })
}

/// A root and a server leaf rewritten (and signed again) by `rewrite`.
fn pki_rewritten(rewrite: impl Fn(&[u8], &SigningKey) -> Vec<u8>) -> Pki {
    let root_key = SigningKey::random().unwrap();
    let root = self_signed(&root_key, "/CN=Variant Root", &Issue::ca(3650)).unwrap();
    let key = SigningKey::random().unwrap();
    let csr = request(&key, "/CN=localhost", &["DNS:localhost"]).unwrap();
    let leaf = sign_request(&csr, &root, &root_key, &Issue::leaf(365)).unwrap();
    let leaf = rewrite(&leaf.to_der().unwrap(), &root_key);
    let leaf_pem = format!(
        "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
        base64(&leaf)
    );
    Pki {
        root_pem: pem(&root),
        server_chain_pem: leaf_pem,
        server_key_pem: key.to_pkcs8_pem().unwrap().to_string(),
        client_chain_pem: String::new(),
        client_key_pem: String::new(),
    }
}

fn base64(data: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for (i, chunk) in data.chunks(3).enumerate() {
        if i > 0 && i % 16 == 0 {
            out.push('\n');
        }
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(A[(n >> (18 - 6 * k)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
