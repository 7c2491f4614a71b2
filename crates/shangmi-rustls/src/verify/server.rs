//! The server-certificate verifier clients use: SM2 chains through shangmi-pki, everything else
//! through webpki.

use std::sync::Arc;

use pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::{DistinguishedName, Error};

use super::{Roots, check_end_entity, parse, sm2_signed, verify_sm2_chain};

/// A server-certificate verifier for clients: SM2 chains through shangmi-pki, international
/// ones through webpki with the provider's algorithms; sm2sig_sm3 CertificateVerify here,
/// every other scheme through webpki.
#[derive(Debug)]
pub struct Sm2ServerVerifier {
    chains: shangmi_pki::Verifier,
    inner: Arc<dyn ServerCertVerifier>,
}

impl Sm2ServerVerifier {
    /// Verifies chains to `roots`, the international ones with `provider`'s algorithms.
    pub fn new(
        roots: Arc<Roots>,
        provider: Arc<CryptoProvider>,
    ) -> Result<Arc<Self>, rustls::client::VerifierBuilderError> {
        let inner =
            WebPkiServerVerifier::builder_with_provider(roots.store.clone(), provider).build()?;
        Ok(Arc::new(Self {
            chains: roots.chains(),
            inner,
        }))
    }
}

impl ServerCertVerifier for Sm2ServerVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let leaf = parse(end_entity)?;
        if sm2_signed(&leaf) {
            verify_sm2_chain(
                &self.chains,
                &leaf,
                intermediates,
                now,
                shangmi_pki::Purpose::ServerAuth,
                Some(server_name),
            )?;
            return Ok(ServerCertVerified::assertion());
        }
        let ok = self.inner.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        )?;
        check_end_entity(&leaf, shangmi_pki::Purpose::ServerAuth, Some(server_name))?;
        Ok(ok)
    }

    handshake_signatures!();

    fn root_hint_subjects(&self) -> Option<&[DistinguishedName]> {
        self.inner.root_hint_subjects()
    }
}
