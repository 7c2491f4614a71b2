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
// `encodings` (key files, PBES2, curve parameters). The short names below let every
// module reach any other as `crate::sm2::name`, whichever layer holds it.
mod arithmetic;
#[cfg(shangmi_ctgrind)]
pub(crate) mod ct_probes;
mod encodings;
pub(crate) mod protocols;

pub(crate) use arithmetic::engine;
use arithmetic::{field, mul, point, safegcd, scalar};
#[cfg(target_arch = "x86_64")]
use arithmetic::{x86_ifma_field, x86_ifma_lanes, x86_ifma_verify, x86_select};
use encodings::{ec_params, keyfile, pbes2};
use protocols::{
    batch, ecdh, encrypt, encrypt_stream, ephemeral_pool, keys, kx, pool, precomputed, signature,
};

#[cfg(test)]
mod tests;

pub use batch::{BatchItem, SignatureEncoding, verify_batch};
pub use ecdh::SharedSecret;
pub use encrypt::{Format, MAX_MESSAGE_LEN, PointEncoding, convert};
pub use encrypt_stream::{Decryptor, Encryptor};
pub use ephemeral_pool::EphemeralPool;
pub use keyfile::KeyFileError;
pub use keys::{DEFAULT_ID, MAX_ID_LEN, SigningKey, VerifyingKey};
pub use kx::{Agreement, EphemeralSecret, Exchange, Role};
pub use pbes2::{
    Cipher, DEFAULT_PBKDF2_ITERATIONS, EncryptionParams, MAX_PBKDF2_ITERATIONS, Prf,
    is_encrypted_pkcs8_der, pbes2_decrypt, pbes2_encrypt,
};
pub use pool::PresignPool;

/// The public-key type under the name encryption and key exchange use for it.
pub type PublicKey = VerifyingKey;
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
