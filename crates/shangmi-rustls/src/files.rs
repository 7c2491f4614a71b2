//! Certificates and keys from the files shangmi, OpenSSL, Tongsuo and GmSSL write: PEM (text
//! around the blocks allowed) or DER, SM2 keys in PKCS#8 or SEC1, encrypted or not; and the
//! server configuration built from them.

use std::sync::Arc;

use pki_types::CertificateDer;
use rustls::Error;
use rustls::sign::CertifiedKey;

use crate::sign::Sm2SigningKey;
use crate::verify::Roots;

/// Every certificate in a PEM or DER file, as the bytes written there.
pub fn load_certificates(data: &[u8]) -> Result<Vec<CertificateDer<'static>>, Error> {
    shangmi_pki::certificate_ders(data)
        .map(|ders| ders.into_iter().map(CertificateDer::from).collect())
        .map_err(|e| Error::General(format!("reading certificates: {e}")))
}

/// Trust anchors from every certificate in a PEM or DER file.
pub fn load_roots(data: &[u8]) -> Result<Roots, Error> {
    let certs = load_certificates(data)?;
    Roots::from_ders(certs.iter().map(|c| c.as_ref()))
}

/// A certificate chain (leaf first, then its intermediates) with its SM2 private key, checked
/// to belong together (the leaf's key in whichever SPKI form it is written).
pub fn load_certified_key(
    chain: &[u8],
    key: &[u8],
    password: Option<&[u8]>,
) -> Result<CertifiedKey, Error> {
    certified_key(
        load_certificates(chain)?,
        Sm2SigningKey::from_key_file(key, password)?,
    )
}

/// [`load_certified_key`] for a chain and a key already read.
pub fn certified_key(
    certs: Vec<CertificateDer<'static>>,
    key: Sm2SigningKey,
) -> Result<CertifiedKey, Error> {
    let leaf = certs
        .first()
        .ok_or_else(|| Error::General("no certificate in the chain file".into()))?;
    let parsed = <shangmi_pki::Certificate as der::Decode>::from_der(leaf.as_ref())
        .map_err(|e| Error::General(format!("certificate: {e}")))?;
    let public = shangmi_pki::public_key(parsed.tbs_certificate().subject_public_key_info())
        .map_err(|e| Error::General(format!("the certificate holds no SM2 key: {e}")))?;
    if public.to_uncompressed() != key.verifying_key().to_uncompressed() {
        return Err(Error::InconsistentKeys(
            rustls::InconsistentKeys::KeyMismatch,
        ));
    }
    Ok(CertifiedKey::new(certs, Arc::new(key)))
}

/// DER SubjectPublicKeyInfo (id-ecPublicKey + the SM2 curve) of a public key.
pub(crate) fn spki_der(key: &shangmi::sm2::VerifyingKey) -> Vec<u8> {
    key.to_public_key_der()
        .expect("encoding a valid point cannot fail")
}

/// An RFC 8998 server configuration, the one every server here builds (the gateway's sites,
/// `shangmi tls serve`): TLS 1.3 only, `key` served to every client ([`crate::SmCertResolver`]),
/// client certificates required and checked by `client_auth` when given, tickets from
/// `ticketer` ([`crate::ticketer`] for one process, [`crate::shared_ticketer`] for replicas),
/// and `alpn` offered in this order.
pub fn server_config(
    key: CertifiedKey,
    provider: Arc<rustls::crypto::CryptoProvider>,
    client_auth: Option<Arc<dyn rustls::server::danger::ClientCertVerifier>>,
    ticketer: Arc<dyn rustls::server::ProducesTickets>,
    alpn: Vec<Vec<u8>>,
) -> Result<rustls::ServerConfig, Error> {
    let builder = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])?;
    let builder = match client_auth {
        Some(v) => builder.with_client_cert_verifier(v),
        None => builder.with_no_client_auth(),
    };
    let mut c = builder.with_cert_resolver(Arc::new(crate::SmCertResolver::new(key)));
    c.ticketer = ticketer;
    c.alpn_protocols = alpn;
    Ok(c)
}
