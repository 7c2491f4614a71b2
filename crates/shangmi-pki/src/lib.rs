//! SM2 certificates (GM/T 0015), certificate requests (PKCS#10) and revocation lists, on
//! RustCrypto's `x509-cert`: issue them, read every encoding met in practice, and verify a
//! chain to given trust anchors with the SM2 ID each signature was made with.
//!
//! ```
//! use shangmi::sm2::SigningKey;
//! use shangmi_pki::{Issue, Verifier, self_signed, request, sign_request};
//!
//! let ca_key = SigningKey::random().unwrap();
//! let ca = self_signed(&ca_key, "CN=Root,O=Example", &Issue::ca(3650)).unwrap();
//! let key = SigningKey::random().unwrap();
//! let csr = request(&key, "CN=www.example.com", &["DNS:www.example.com"]).unwrap();
//! let leaf = sign_request(&csr, &ca, &ca_key, &Issue::leaf(365)).unwrap();
//! Verifier::new(vec![ca]).verify(&leaf, &[]).unwrap();
//! ```
//!
//! SM2 signatures hash an ID into Z. Certificates, requests and CRLs are signed and verified
//! with GM/T 0009's `1234567812345678` unless another is given; OpenSSL 3 signs them with an
//! empty ID unless told `-sigopt distid:1234567812345678`, and such a signature fails here
//! with an error that says so.

// The README's examples are doctests: a quick start that stops compiling fails the tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod alg;
mod ber;
mod cert;
pub mod cfca;
pub mod cms;
mod crl;
pub mod envelope;
mod envkey;
mod error;
mod issue;
mod name;
pub mod oid;
pub mod pkcs12;
mod read;
pub mod signed_envelope;
mod signer;
mod text;
mod usage;
mod verify;

pub use alg::{SM2_WITH_SM3, public_key};
pub use cert::Cert;
pub use crl::Crl;
pub use envkey::{envelope_key, open_enveloped_key};
pub use error::{Error, Rule};
pub use issue::{Issue, crl, request, self_sign_request, self_signed, sign_request};
pub use name::check_host;
pub use read::{certificate_ders, certificates, crls, requests, verify_request};
pub use text::{describe_certificate, describe_crl, describe_request};
pub use usage::{Purpose, check_extended, check_signing};
pub use verify::Verifier;
pub use x509_cert::{Certificate, crl::CertificateList, request::CertReq};

/// GM/T 0009's default SM2 ID, with which certificates are signed and verified by default.
pub const DEFAULT_ID: &[u8] = shangmi::sm2::DEFAULT_ID;
