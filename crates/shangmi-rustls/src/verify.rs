//! The verifiers rustls calls: SM2 chains through shangmi-pki's one verification path
//! ([`shangmi_pki::Verifier`], GM/T 0009's default ID, signatures over the bytes as received),
//! international ones (ECDSA, RSA, Ed25519) through webpki; CertificateVerify under RFC 8998's
//! TLS ID.
//!
//! For rustls' own verifiers (webpki), which also take this provider: webpki matches a certificate's AlgorithmIdentifiers byte for byte, so the chain
//! algorithms are registered once for each encoding met in practice: the SPKI as
//! id-ecPublicKey + the SM2 curve or as the bare SM2 OID, and the signature algorithm
//! SM2-with-SM3 with and without NULL parameters. rustls' own TLS 1.3 signature check tries
//! only the first algorithm of a scheme, so one SPKI form; the verifiers here check
//! CertificateVerify themselves and accept every form.

use std::sync::Arc;

use pki_types::SignatureVerificationAlgorithm;
use pki_types::{AlgorithmIdentifier, CertificateDer, InvalidSignature, ServerName, UnixTime};
use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::{CertificateError, Error, RootCertStore, SignatureScheme};
use shangmi::sm2::{DEFAULT_ID, Signature, VerifyingKey};

use crate::sign::{SM2SIG_SM3, TLS13_SM2_ID};

/// AlgorithmIdentifier contents (without the outer SEQUENCE) as certificates carry them,
/// encoded at compile time from the OID table.
mod ids {
    use shangmi::oid::{EC_PUBLIC_KEY, SM2, SM2_WITH_SM3, algorithm_contents};

    /// id-ecPublicKey, namedCurve sm2p256v1.
    pub const EC_PUBLIC_KEY_SM2: &[u8] =
        &algorithm_contents::<19>(&EC_PUBLIC_KEY, Some(&SM2), false);
    /// The bare SM2 OID 1.2.156.10197.1.301 as the key algorithm.
    pub const SM2_BARE: &[u8] = &algorithm_contents::<10>(&SM2, None, false);
    /// SM2-with-SM3, no parameters.
    pub const SM2_WITH_SM3_ALG: &[u8] = &algorithm_contents::<10>(&SM2_WITH_SM3, None, false);
    /// SM2-with-SM3 with NULL parameters.
    pub const SM2_WITH_SM3_NULL: &[u8] = &algorithm_contents::<12>(&SM2_WITH_SM3, None, true);
}

/// One SM2 verification as webpki sees it: a key encoding, a signature encoding, an ID.
#[derive(Debug)]
struct Sm2Verify {
    spki: &'static [u8],
    sig: &'static [u8],
    id: &'static [u8],
}

impl SignatureVerificationAlgorithm for Sm2Verify {
    fn verify_signature(
        &self,
        public_key: &[u8],
        message: &[u8],
        signature: &[u8],
    ) -> Result<(), InvalidSignature> {
        let key = VerifyingKey::from_sec1_bytes(public_key).map_err(|_| InvalidSignature)?;
        let sig = Signature::from_der(signature).map_err(|_| InvalidSignature)?;
        key.verify_with_id(self.id, message, &sig)
            .map_err(|_| InvalidSignature)
    }

    fn public_key_alg_id(&self) -> AlgorithmIdentifier {
        AlgorithmIdentifier::from_slice(self.spki)
    }

    fn signature_alg_id(&self) -> AlgorithmIdentifier {
        AlgorithmIdentifier::from_slice(self.sig)
    }
}

macro_rules! sm2_alg {
    ($spki:ident, $sig:ident, $id:expr) => {
        &Sm2Verify {
            spki: ids::$spki,
            sig: ids::$sig,
            id: $id,
        }
    };
}

/// Chain signatures, every encoding, GM/T 0009's default ID.
static CHAIN: &[&dyn SignatureVerificationAlgorithm] = &[
    sm2_alg!(EC_PUBLIC_KEY_SM2, SM2_WITH_SM3_ALG, DEFAULT_ID),
    sm2_alg!(EC_PUBLIC_KEY_SM2, SM2_WITH_SM3_NULL, DEFAULT_ID),
    sm2_alg!(SM2_BARE, SM2_WITH_SM3_ALG, DEFAULT_ID),
    sm2_alg!(SM2_BARE, SM2_WITH_SM3_NULL, DEFAULT_ID),
];

/// CertificateVerify under the TLS ID, for verifiers that go through rustls' own check (the
/// id-ecPublicKey form first, as nearly every certificate has it).
static HANDSHAKE: &[&dyn SignatureVerificationAlgorithm] = &[
    sm2_alg!(EC_PUBLIC_KEY_SM2, SM2_WITH_SM3_ALG, TLS13_SM2_ID),
    sm2_alg!(SM2_BARE, SM2_WITH_SM3_ALG, TLS13_SM2_ID),
];

/// The provider's `signature_verification_algorithms`.
pub static SUPPORTED_SIG_ALGS: WebPkiSupportedAlgorithms = WebPkiSupportedAlgorithms {
    all: CHAIN,
    mapping: &[(SM2SIG_SM3, HANDSHAKE)],
};

/// Checks an sm2sig_sm3 CertificateVerify: the certificate's key in any SPKI form, the
/// signature in DER, the TLS ID.
pub fn verify_tls13_sm2(
    message: &[u8],
    cert: &CertificateDer<'_>,
    signature: &[u8],
) -> Result<HandshakeSignatureValid, Error> {
    let parsed = shangmi_pki::Cert::from_der(cert.as_ref())
        .map_err(|_| Error::InvalidCertificate(CertificateError::BadEncoding))?;
    let key = parsed.public_key().map_err(|_| {
        Error::InvalidCertificate(CertificateError::Other(rustls::OtherError(Arc::new(
            NotSm2,
        ))))
    })?;
    let sig = Signature::from_der(signature)
        .map_err(|_| Error::InvalidCertificate(CertificateError::BadSignature))?;
    key.verify_with_id(TLS13_SM2_ID, message, &sig)
        .map_err(|_| Error::InvalidCertificate(CertificateError::BadSignature))?;
    Ok(HandshakeSignatureValid::assertion())
}

/// The end-entity rules both paths share (webpki checks extended key usage and names, but
/// not key usage): an end-entity certificate
/// whose key usage is present and leaves out digitalSignature may not sign a handshake (RFC
/// 5280 section 4.2.1.3; GM/T 0015 issues separate signing and encryption certificates, and
/// the encryption keys are escrowed, so an encryption certificate must not log anyone in).
/// The name is checked again with the rule TLCP and the gateway use, so no protocol of
/// shangmi's accepts a certificate for a host that another would refuse.
fn check_end_entity(
    cert: &shangmi_pki::Cert,
    purpose: shangmi_pki::Purpose,
    host: Option<&ServerName<'_>>,
) -> Result<(), Error> {
    shangmi_pki::check_signing(cert, purpose)
        .map_err(|_| Error::InvalidCertificate(CertificateError::InvalidPurpose))?;
    if let Some(host) = host {
        shangmi_pki::check_host(cert, &host.to_str())
            .map_err(|_| Error::InvalidCertificate(CertificateError::NotValidForName))?;
    }
    Ok(())
}

/// The peer signed with sm2sig_sm3 but its certificate holds no SM2 key.
#[derive(Debug)]
struct NotSm2;

impl core::fmt::Display for NotSm2 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("sm2sig_sm3 signature from a certificate without an SM2 key")
    }
}

impl std::error::Error for NotSm2 {}

/// The handshake-signature methods both verifiers share: sm2sig_sm3 checked here, every
/// other scheme by the wrapped verifier (`self.inner`).
macro_rules! handshake_signatures {
    () => {
        fn verify_tls12_signature(
            &self,
            message: &[u8],
            cert: &pki_types::CertificateDer<'_>,
            dss: &rustls::DigitallySignedStruct,
        ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
            self.inner.verify_tls12_signature(message, cert, dss)
        }

        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &pki_types::CertificateDer<'_>,
            dss: &rustls::DigitallySignedStruct,
        ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
            if dss.scheme == $crate::sign::SM2SIG_SM3 {
                $crate::verify::verify_tls13_sm2(message, cert, dss.signature())
            } else {
                self.inner.verify_tls13_signature(message, cert, dss)
            }
        }

        fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
            $crate::verify::with_sm2(self.inner.supported_verify_schemes())
        }
    };
}

pub(crate) fn with_sm2(mut schemes: Vec<SignatureScheme>) -> Vec<SignatureScheme> {
    if !schemes.contains(&SM2SIG_SM3) {
        schemes.insert(0, SM2SIG_SM3);
    }
    schemes
}

/// Trust anchors as both verification paths hold them: the certificates themselves, against
/// which shangmi-pki verifies SM2 chains, and webpki's store for the international ones.
#[derive(Clone, Debug)]
pub struct Roots {
    certs: Vec<shangmi_pki::Cert>,
    store: Arc<RootCertStore>,
}

impl Roots {
    /// Anchors from certificates as received (DER).
    pub fn from_ders<'a>(ders: impl IntoIterator<Item = &'a [u8]>) -> Result<Roots, Error> {
        let mut certs = Vec::new();
        let mut store = RootCertStore::empty();
        for der in ders {
            certs.push(
                shangmi_pki::Cert::from_der(der)
                    .map_err(|e| Error::General(format!("trust anchor: {e}")))?,
            );
            store
                .add(CertificateDer::from(der.to_vec()))
                .map_err(|e| Error::General(format!("trust anchor: {e}")))?;
        }
        Ok(Roots {
            certs,
            store: Arc::new(store),
        })
    }

    /// The anchors' certificates.
    pub fn certs(&self) -> &[shangmi_pki::Cert] {
        &self.certs
    }

    /// The anchors as webpki holds them.
    pub fn store(&self) -> &Arc<RootCertStore> {
        &self.store
    }

    fn chains(&self) -> shangmi_pki::Verifier {
        shangmi_pki::Verifier::new(self.certs.iter().cloned())
    }
}

/// Whether a chain is shangmi-pki's to verify: its leaf is signed with SM2. A chain that
/// mixes algorithms (an SM2 leaf under an RSA CA) is left to webpki, which has the
/// international algorithms; a chain whose leaf is SM2-signed is SM2 throughout in practice.
fn sm2_signed(leaf: &shangmi_pki::Cert) -> bool {
    leaf.signature_algorithm().oid == shangmi_pki::SM2_WITH_SM3
}

/// Verifies an SM2 chain with `chains` at `now`, then the leaf's key usage and name.
fn verify_sm2_chain(
    chains: &shangmi_pki::Verifier,
    leaf: &shangmi_pki::Cert,
    intermediates: &[CertificateDer<'_>],
    now: UnixTime,
    purpose: shangmi_pki::Purpose,
    host: Option<&ServerName<'_>>,
) -> Result<(), Error> {
    let untrusted = intermediates
        .iter()
        .map(|c| shangmi_pki::Cert::from_der(c.as_ref()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| Error::InvalidCertificate(CertificateError::BadEncoding))?;
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(now.as_secs());
    chains
        .verify_at(leaf, &untrusted, at)
        .map_err(certificate_error)?;
    check_end_entity(leaf, purpose, host)
}

/// rustls' error for a chain that shangmi-pki refused, with shangmi-pki's words kept where
/// rustls has no variant of its own.
fn certificate_error(e: shangmi_pki::Error) -> Error {
    use shangmi_pki::Rule;
    let kind = match &e {
        shangmi_pki::Error::Chain { rule, detail, .. } => match rule {
            Rule::Signature => CertificateError::BadSignature,
            Rule::Validity if detail.starts_with("expired") => CertificateError::Expired,
            Rule::Validity => CertificateError::NotValidYet,
            Rule::NoIssuer => CertificateError::UnknownIssuer,
            Rule::Revoked => CertificateError::Revoked,
            Rule::KeyUsage | Rule::ExtendedKeyUsage => CertificateError::InvalidPurpose,
            Rule::Name => CertificateError::NotValidForName,
            _ => other(e),
        },
        _ => other(e),
    };
    Error::InvalidCertificate(kind)
}

fn other(e: shangmi_pki::Error) -> CertificateError {
    CertificateError::Other(rustls::OtherError(Arc::new(e)))
}

fn parse(cert: &CertificateDer<'_>) -> Result<shangmi_pki::Cert, Error> {
    shangmi_pki::Cert::from_der(cert.as_ref())
        .map_err(|_| Error::InvalidCertificate(CertificateError::BadEncoding))
}

mod client;
mod server;
#[cfg(test)]
mod tests;

pub use client::*;
pub use server::*;
