//! SM2 public-key cryptography (GB/T 32918-2016) on the recommended curve sm2p256v1: keys and
//! signatures.
//!
//! ```
//! use shangmi::sm2::{Signature, SigningKey};
//!
//! let key = SigningKey::random().unwrap();
//! let sig = key.sign(b"message").unwrap();
//! key.verifying_key().verify(b"message", &sig).unwrap();
//! // DER as OpenSSL writes it, or the 64-byte r || s form.
//! let der = sig.to_der();
//! assert_eq!(Signature::from_der(&der).unwrap(), sig);
//! ```
//!
//! Everything that touches the private key or a nonce is constant time: the fixed-base table is
//! read with masks, the variable-base ladder uses complete formulas and masked selection, and
//! there is no secret-dependent branch. Verification, which handles only public data, uses a
//! faster variable-time double multiplication.

#[cfg(shangmi_ctgrind)]
pub(crate) mod ct_probes;
mod encrypt;
mod encrypt_stream;
mod engine;
mod field;
mod keys;
mod mul;
mod point;
mod pool;
mod precomputed;
mod safegcd;
mod scalar;
mod signature;
#[cfg(target_arch = "x86_64")]
mod x86_select;

#[cfg(test)]
mod tests;

pub use encrypt::{Format, MAX_MESSAGE_LEN, PointEncoding, convert};
pub use encrypt_stream::{Decryptor, Encryptor};
pub use keys::{DEFAULT_ID, MAX_ID_LEN, SigningKey, VerifyingKey};
pub use pool::PresignPool;
pub use precomputed::PrecomputedVerifyingKey;
pub use signature::Signature;

use core::fmt;

/// Why an SM2 operation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A private key outside [1, n-2], or of the wrong length.
    InvalidPrivateKey,
    /// A public key that is not a valid encoding of a point on the curve (or is infinity).
    InvalidPublicKey,
    /// A signature that is not a valid encoding, or has r or s outside [1, n-1].
    InvalidSignature,
    /// The signature does not verify.
    Verification,
    /// An ID longer than 8191 bytes.
    IdTooLong,
    /// A nonce that cannot be used (zero, or giving r = 0, r + k = n or s = 0).
    InvalidNonce,
    /// The operating system's random number generator failed.
    Rng,
    /// A message longer than SM2 encryption allows ((2^32 - 1) * 32 bytes).
    MessageTooLong,
    /// A ciphertext that is not a valid encoding in the named layout (from [`convert`]).
    InvalidCiphertext,
    /// Decryption failed. Deliberately one error for every cause: malformed, wrong key or
    /// tampered with.
    Decryption,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Error::InvalidPrivateKey => "invalid SM2 private key",
            Error::InvalidPublicKey => "invalid SM2 public key",
            Error::InvalidSignature => "malformed SM2 signature",
            Error::Verification => "SM2 signature verification failed",
            Error::IdTooLong => "SM2 ID longer than 8191 bytes",
            Error::InvalidNonce => "unusable SM2 nonce",
            Error::Rng => "the system random number generator failed",
            Error::MessageTooLong => "message too long for SM2 encryption",
            Error::InvalidCiphertext => "malformed SM2 ciphertext",
            Error::Decryption => "SM2 decryption failed",
        })
    }
}

impl std::error::Error for Error {}
