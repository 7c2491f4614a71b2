//! One server, two kinds of clients: the SM2 certificate for clients that offer sm2sig_sm3,
//! an international certificate (ECDSA, RSA, Ed25519: rustls' own suites) for the rest.

use std::sync::Arc;

use rustls::SignatureScheme;
use rustls::client::ResolvesClientCert;
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use crate::sign::SM2SIG_SM3;

/// Picks the certificate by what the client can verify.
#[derive(Debug)]
pub struct SmCertResolver {
    sm: Arc<CertifiedKey>,
    international: Option<Arc<CertifiedKey>>,
}

impl SmCertResolver {
    /// Serves `sm` (an SM2 certificate and key) to every client.
    pub fn new(sm: CertifiedKey) -> Self {
        Self {
            sm: Arc::new(sm),
            international: None,
        }
    }

    /// Serves `other` to clients that do not offer sm2sig_sm3; pair it with a provider that
    /// has rustls' own suites beside ours ([`crate::beside`]).
    pub fn with_international(mut self, other: CertifiedKey) -> Self {
        self.international = Some(Arc::new(other));
        self
    }
}

impl ResolvesServerCert for SmCertResolver {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let sm_client = hello.signature_schemes().contains(&SM2SIG_SM3);
        match (&self.international, sm_client) {
            (Some(other), false) => Some(Arc::clone(other)),
            _ => Some(Arc::clone(&self.sm)),
        }
    }
}

/// A client's SM2 certificate, offered when the server asks for one and accepts sm2sig_sm3.
#[derive(Debug)]
pub struct SmClientCert(Arc<CertifiedKey>);

impl SmClientCert {
    /// Offers `key` (an SM2 certificate chain and key).
    pub fn new(key: CertifiedKey) -> Self {
        Self(Arc::new(key))
    }
}

impl ResolvesClientCert for SmClientCert {
    fn resolve(
        &self,
        _root_hint_subjects: &[&[u8]],
        sigschemes: &[SignatureScheme],
    ) -> Option<Arc<CertifiedKey>> {
        sigschemes
            .contains(&SM2SIG_SM3)
            .then(|| Arc::clone(&self.0))
    }

    fn has_certs(&self) -> bool {
        true
    }
}
