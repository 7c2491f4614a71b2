//! RFC 8998 for rustls: TLS 1.3 with the SM cipher suites, on shangmi's SM2, SM3 and SM4.
//!
//! - Cipher suites TLS_SM4_GCM_SM3 (0x00C6) and TLS_SM4_CCM_SM3 (0x00C7): SM4-GCM or SM4-CCM
//!   records (16-byte key, 12-byte nonce, 16-byte tag), the key schedule's HKDF on HMAC-SM3.
//! - Key exchange group curveSM2 (41): ephemeral ECDH on the SM2 curve. Not the SM2
//!   key-exchange protocol, which RFC 8998 excludes from TLS 1.3.
//! - The post-quantum hybrid curveSM2MLKEM768 (0x11EE), as OpenSSL 4.0 and Tongsuo 8.5 build
//!   it: not in [`provider`]'s list (a client listing it first would meet OpenSSL's default
//!   servers with an extra round trip); add [`CURVE_SM2_MLKEM768_GROUP`] to `kx_groups`,
//!   first on a client that wants it (it then sends a curveSM2 share beside it), anywhere on
//!   a server (rustls follows the client's order).
//! - Signature scheme sm2sig_sm3 (0x0708): CertificateVerify signed and checked with the SM2
//!   ID `TLSv1.3+GM+Cipher+Suite`, certificate chains with GM/T 0009's `1234567812345678`.
//!
//! ```no_run
//! use std::sync::Arc;
//!
//! let provider = Arc::new(shangmi_rustls::provider());
//! // A server: an SM2 certificate chain and its key, as OpenSSL or `shangmi x509` write them.
//! let key = shangmi_rustls::load_certified_key(
//!     &std::fs::read("server.pem")?,
//!     &std::fs::read("server.key")?,
//!     None,
//! )?;
//! let server = rustls::ServerConfig::builder_with_provider(provider.clone())
//!     .with_protocol_versions(&[&rustls::version::TLS13])?
//!     .with_no_client_auth()
//!     .with_cert_resolver(Arc::new(shangmi_rustls::SmCertResolver::new(key)));
//!
//! // A client trusting one SM2 root.
//! let roots = Arc::new(shangmi_rustls::load_roots(&std::fs::read("root.pem")?)?);
//! let client = rustls::ClientConfig::builder_with_provider(provider.clone())
//!     .with_protocol_versions(&[&rustls::version::TLS13])?
//!     .dangerous()
//!     .with_custom_certificate_verifier(shangmi_rustls::Sm2ServerVerifier::new(roots, provider)?)
//!     .with_no_client_auth();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Use [`Sm2ServerVerifier`] and [`Sm2ClientVerifier`] rather than rustls' WebPki verifiers:
//! they verify SM2 chains on shangmi-pki's one path (the path TLCP, CMS and the command line
//! use, over the certificates' bytes as received) and accept CertificateVerify from
//! certificates whose key is written with the bare SM2 OID, which rustls' own check (first
//! algorithm of a scheme only) refuses. International chains still go through webpki. The
//! `dangerous()` step only names the custom-verifier hook; every chain is still verified.

// The README's examples are doctests: a quick start that stops compiling fails the tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod aead;
mod files;
mod hash;
mod hkdf;
mod hybrid;
mod kx;
mod names;
mod prepared;
mod random;
mod resolve;
mod sign;
mod ticket;
mod verify;

use random::OsRandom;
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::{CipherSuite, SupportedCipherSuite, Tls13CipherSuite};

pub use files::{certified_key, load_certificates, load_certified_key, load_roots, server_config};
pub use hybrid::{CURVE_SM2_MLKEM768, CURVE_SM2_MLKEM768_GROUP, CurveSm2MlKem768};
pub use kx::{CURVE_SM2, CURVE_SM2_GROUP, CurveSm2, parse_key_share};
pub use names::{GROUPS, GroupRow, SUITES, SuiteRow, group_name, suite_name};
pub use prepared::{PreparedAgreement, prepare_agreements, with_prepared};
pub use resolve::{SmCertResolver, SmClientCert};
pub use sign::{SM2_KEYS, SM2SIG_SM3, Sm2KeyProvider, Sm2SigningKey, TLS13_SM2_ID};
pub use ticket::{shared_ticketer, ticketer};
pub use verify::{
    Roots, SUPPORTED_SIG_ALGS, Sm2ClientVerifier, Sm2ServerVerifier, verify_tls13_sm2,
};

/// TLS_SM4_GCM_SM3's code point.
pub const SM4_GCM_SM3: CipherSuite = CipherSuite::Unknown(0x00C6);
/// TLS_SM4_CCM_SM3's code point.
pub const SM4_CCM_SM3: CipherSuite = CipherSuite::Unknown(0x00C7);

/// TLS_SM4_GCM_SM3 (RFC 8998 section 2).
pub static TLS13_SM4_GCM_SM3: SupportedCipherSuite =
    SupportedCipherSuite::Tls13(&Tls13CipherSuite {
        common: rustls::crypto::CipherSuiteCommon {
            suite: SM4_GCM_SM3,
            hash_provider: &hash::SM3,
            // A 128-bit block cipher in GCM: AES-128-GCM's record limit (RFC 8446 section 5.5).
            confidentiality_limit: 1 << 24,
        },
        hkdf_provider: &hkdf::HKDF_SM3,
        aead_alg: &aead::Sm4Aead::Gcm,
        quic: None,
    });

/// TLS_SM4_CCM_SM3 (RFC 8998 section 2).
pub static TLS13_SM4_CCM_SM3: SupportedCipherSuite =
    SupportedCipherSuite::Tls13(&Tls13CipherSuite {
        common: rustls::crypto::CipherSuiteCommon {
            suite: SM4_CCM_SM3,
            hash_provider: &hash::SM3,
            // CCM's bound for a 128-bit block cipher with a 16-byte tag is tighter than GCM's
            // (AES-CCM's analysis, RFC 9147 section 4.5.3): half as many records.
            confidentiality_limit: 1 << 23,
        },
        hkdf_provider: &hkdf::HKDF_SM3,
        aead_alg: &aead::Sm4Aead::Ccm,
        quic: None,
    });

/// Both suites, GCM first (faster, and the one every peer has).
pub static ALL_CIPHER_SUITES: &[SupportedCipherSuite] = &[TLS13_SM4_GCM_SM3, TLS13_SM4_CCM_SM3];

/// The RFC 8998 provider: the two SM suites, curveSM2, sm2sig_sm3, SM2 keys. Use it with
/// TLS 1.3 only (`with_protocol_versions(&[&rustls::version::TLS13])`): RFC 8998 defines
/// nothing for TLS 1.2, and the national TLS 1.1-style protocol is TLCP, not TLS.
pub fn provider() -> CryptoProvider {
    CryptoProvider {
        cipher_suites: ALL_CIPHER_SUITES.to_vec(),
        kx_groups: vec![CURVE_SM2_GROUP],
        signature_verification_algorithms: SUPPORTED_SIG_ALGS,
        secure_random: &OsRandom,
        key_provider: &SM2_KEYS,
    }
}

/// The SM suites, group, scheme and keys first, then everything `base` has (rustls' own
/// provider, say): one configuration for SM clients and international ones. A client built on
/// it sends its first key share on curveSM2. Builds new static tables, so call it once at
/// start-up, not per connection.
pub fn beside(base: CryptoProvider) -> CryptoProvider {
    let mut suites = ALL_CIPHER_SUITES.to_vec();
    suites.extend(base.cipher_suites);
    let mut groups = vec![CURVE_SM2_GROUP];
    groups.extend(base.kx_groups);
    let mut all = SUPPORTED_SIG_ALGS.all.to_vec();
    all.extend_from_slice(base.signature_verification_algorithms.all);
    let mut mapping = SUPPORTED_SIG_ALGS.mapping.to_vec();
    mapping.extend_from_slice(base.signature_verification_algorithms.mapping);
    let keys: &'static Sm2KeyProvider = Box::leak(Box::new(Sm2KeyProvider {
        fallback: Some(base.key_provider),
    }));
    CryptoProvider {
        cipher_suites: suites,
        kx_groups: groups,
        signature_verification_algorithms: WebPkiSupportedAlgorithms {
            all: Box::leak(all.into_boxed_slice()),
            mapping: Box::leak(mapping.into_boxed_slice()),
        },
        secure_random: base.secure_random,
        key_provider: keys,
    }
}
