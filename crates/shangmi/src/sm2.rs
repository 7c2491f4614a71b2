//! SM2 public-key cryptography (GB/T 32918-2016) on the recommended curve sm2p256v1: keys,
//! signatures, public-key encryption and key exchange.
//!
//! ```
//! use shangmi::sm2::{Format, Signature, SigningKey};
//!
//! let key = SigningKey::random().unwrap();
//! let sig = key.sign(b"message").unwrap();
//! key.verifying_key().verify(b"message", &sig).unwrap();
//! // DER as OpenSSL writes it, or the 64-byte r || s form.
//! let der = sig.to_der();
//! assert_eq!(Signature::from_der(&der).unwrap(), sig);
//!
//! // Encryption: the layout is always named, never guessed.
//! let ct = key.verifying_key().encrypt(b"secret", Format::C1C3C2).unwrap();
//! assert_eq!(key.decrypt(&ct, Format::C1C3C2).unwrap(), b"secret");
//! ```
//!
//! Everything that touches a private key, a nonce or an ephemeral key is constant time: the
//! fixed-base table is read with masks, variable-base multiplication uses masked selection,
//! inversions are division steps, and there is no secret-dependent branch. Verification, which
//! handles only public data, uses a faster variable-time double multiplication.

// Three layers, each a directory: `arithmetic` (field, scalars, points, multiplication and
// the backends), `protocols` (keys, signatures, encryption, key exchange, batches, pools) and
// `encodings` (key files, PBES2, curve parameters). Modules name each other by full path
// (`crate::sm2::arithmetic::field`), so an import says which layer it reaches into.
pub(crate) mod arithmetic;
pub(crate) mod encodings;
pub(crate) mod protocols;

#[cfg(test)]
mod tests;

pub use encodings::keyfile::KeyFileError;
pub use encodings::pbes2::{
    Cipher, DEFAULT_PBKDF2_ITERATIONS, EncryptionParams, MAX_PBKDF2_ITERATIONS, Pbkdf2Prf, Prf,
    is_encrypted_pkcs8_der, pbes2_decrypt, pbes2_encrypt,
};
pub use protocols::batch::{BatchItem, SignatureEncoding, verify_batch};
pub use protocols::ecdh::SharedSecret;
pub use protocols::encrypt::{Format, MAX_MESSAGE_LEN, PointEncoding, convert};
pub use protocols::encrypt_stream::{Decryptor, Encryptor};
pub use protocols::ephemeral_pool::EphemeralPool;
pub use protocols::keys::{DEFAULT_ID, MAX_ID_LEN, SigningKey, VerifyingKey};
pub use protocols::kx::{Agreement, EphemeralSecret, Exchange, Role};
pub use protocols::pool::PresignPool;

/// The public-key type under the name encryption and key exchange use for it.
pub type PublicKey = VerifyingKey;
pub use protocols::precomputed::PrecomputedVerifyingKey;
pub use protocols::signature::Signature;

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
    /// A key exchange with a degenerate result (U at infinity) or a zero key length.
    KeyExchange,
    /// The peer's key-confirmation value does not match.
    KeyConfirmation,
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
            Error::KeyExchange => "SM2 key exchange failed",
            Error::KeyConfirmation => "SM2 key confirmation failed",
        })
    }
}

impl std::error::Error for Error {}
