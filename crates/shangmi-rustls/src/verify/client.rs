//! The client-certificate verifier servers use, shaped like the server one.

use std::sync::Arc;

use pki_types::{CertificateDer, UnixTime};
use rustls::crypto::CryptoProvider;
use rustls::server::WebPkiClientVerifier;
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DistinguishedName, Error};

use super::{Roots, check_end_entity, parse, sm2_signed, verify_sm2_chain};

/// A client-certificate verifier for servers, shaped like
/// [`Sm2ServerVerifier`](super::Sm2ServerVerifier): a client certificate is required.
#[derive(Debug)]
pub struct Sm2ClientVerifier {
    chains: shangmi_pki::Verifier,
    inner: Arc<dyn ClientCertVerifier>,
}

impl Sm2ClientVerifier {
    /// Requires a client certificate chaining to `roots`, the international ones checked
    /// with `provider`'s algorithms.
    pub fn new(
        roots: Arc<Roots>,
        provider: Arc<CryptoProvider>,
    ) -> Result<Arc<Self>, rustls::server::VerifierBuilderError> {
        let inner =
            WebPkiClientVerifier::builder_with_provider(roots.store.clone(), provider).build()?;
        Ok(Arc::new(Self {
            chains: roots.chains(),
            inner,
        }))
    }

    /// [`Sm2ClientVerifier::new`], with client certificates also checked against the CRLs in
    /// `crls` (PEM or DER, as received; each counts for the CA that signed it, SM2 or
    /// international). An issuer with no CRL among them is not checked for revocation.
    pub fn with_crls(
        roots: Arc<Roots>,
        provider: Arc<CryptoProvider>,
        crls: &[u8],
    ) -> Result<Arc<Self>, Error> {
        let crls = shangmi_pki::crls(crls).map_err(|e| Error::General(format!("CRL: {e}")))?;
        let ders: Vec<_> = crls
            .iter()
            .map(|c| rustls::pki_types::CertificateRevocationListDer::from(c.der().to_vec()))
            .collect();
        let chains = roots.chains().with_crls(crls);
        let inner = WebPkiClientVerifier::builder_with_provider(roots.store.clone(), provider)
            .with_crls(ders)
            .allow_unknown_revocation_status()
            .build()
            .map_err(|e| Error::General(format!("CRL: {e}")))?;
        Ok(Arc::new(Self { chains, inner }))
    }
}

impl ClientCertVerifier for Sm2ClientVerifier {
    fn offer_client_auth(&self) -> bool {
        self.inner.offer_client_auth()
    }

    fn client_auth_mandatory(&self) -> bool {
        self.inner.client_auth_mandatory()
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, Error> {
        let leaf = parse(end_entity)?;
        if sm2_signed(&leaf) {
            verify_sm2_chain(
                &self.chains,
                &leaf,
                intermediates,
                now,
                shangmi_pki::Purpose::ClientAuth,
                None,
            )?;
            return Ok(ClientCertVerified::assertion());
        }
        let ok = self
            .inner
            .verify_client_cert(end_entity, intermediates, now)?;
        check_end_entity(&leaf, shangmi_pki::Purpose::ClientAuth, None)?;
        Ok(ok)
    }

    handshake_signatures!();
}
