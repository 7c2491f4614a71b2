//! What went wrong: malformed input, an algorithm other than SM2, or a chain rule that a named
//! certificate broke.

use core::fmt;

/// The rule of chain verification that a certificate broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rule {
    /// Its signature does not verify under its issuer's key (with the ID in use).
    Signature,
    /// The verification time is outside its validity.
    Validity,
    /// It signs certificates but is not a CA (basic constraints).
    BasicConstraints,
    /// More CA certificates follow it than its path length constraint allows.
    PathLength,
    /// Its key usage does not allow what it was used for (keyCertSign, cRLSign).
    KeyUsage,
    /// No certificate among the anchors and the untrusted ones issued it.
    NoIssuer,
    /// It is revoked by a CRL of its issuer.
    Revoked,
    /// A CRL for it did not verify, or is out of date.
    Crl,
    /// The chain is longer than any real one (a loop among cross-certificates).
    TooLong,
    /// An unknown extension is marked critical.
    CriticalExtension,
    /// It is not for the host name or address asked for.
    Name,
    /// Its extended key usage does not allow what it was used for.
    ExtendedKeyUsage,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Rule::Signature => "signature",
            Rule::Validity => "validity",
            Rule::BasicConstraints => "basic constraints",
            Rule::PathLength => "path length",
            Rule::KeyUsage => "key usage",
            Rule::NoIssuer => "issuer",
            Rule::Revoked => "revocation",
            Rule::Crl => "CRL",
            Rule::TooLong => "chain length",
            Rule::CriticalExtension => "critical extension",
            Rule::Name => "name",
            Rule::ExtendedKeyUsage => "extended key usage",
        })
    }
}

/// Why a PKI operation failed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// Not well-formed DER or PEM of the expected structure.
    Malformed(String),
    /// Well-formed, but not SM2 (another key or signature algorithm), or a form not supported.
    Unsupported(String),
    /// An argument that cannot be used (a subject that does not parse, a bad SAN).
    InvalidArgument(String),
    /// The SM2 operation failed (the random generator, a key).
    Crypto(String),
    /// A signature over a request, a CRL or a message does not verify.
    BadSignature(String),
    /// A message could not be decrypted with the key given (not a recipient, or tampered).
    Decryption(String),
    /// Chain verification failed: which certificate (its subject), which rule, and why.
    Chain {
        /// The subject of the certificate that broke the rule.
        subject: String,
        /// The rule.
        rule: Rule,
        /// The details.
        detail: String,
    },
}

impl Error {
    /// The chain rule that failed, if this is a chain failure.
    pub fn rule(&self) -> Option<Rule> {
        match self {
            Error::Chain { rule, .. } => Some(*rule),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Malformed(m) => write!(f, "malformed: {m}"),
            Error::Unsupported(m) => write!(f, "unsupported: {m}"),
            Error::InvalidArgument(m) => write!(f, "invalid argument: {m}"),
            Error::Crypto(m) => write!(f, "SM2: {m}"),
            Error::BadSignature(m) => write!(f, "bad signature: {m}"),
            Error::Decryption(m) => write!(f, "decryption failed: {m}"),
            Error::Chain {
                subject,
                rule,
                detail,
            } => write!(f, "certificate \"{subject}\": {rule}: {detail}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<der::Error> for Error {
    fn from(e: der::Error) -> Self {
        Error::Malformed(e.to_string())
    }
}
