//! The one error type of SM4's modes and streams.

use core::fmt;

/// Why an SM4 mode refused its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The data length does not suit the mode (e.g. not a whole number of blocks, shorter
    /// than one block for XTS or CTS, too long for the counter or the standard).
    InvalidLength,
    /// A nonce or IV of a length the mode does not take.
    InvalidNonce,
    /// A tag length the mode does not take, or one below the configured minimum.
    InvalidTagLength,
    /// A key the mode refuses (XTS with equal halves).
    InvalidKey,
    /// Decryption failed: wrong tag, wrong padding or tampered ciphertext. One error for every
    /// cause, so the failure reveals nothing about which check failed.
    Decrypt,
    /// The output buffer is smaller than the size the call said it needs; nothing changed.
    BufferTooSmall,
    /// The stream has already been finished.
    Finished,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Error::InvalidLength => "invalid data length for this SM4 mode",
            Error::InvalidNonce => "invalid nonce or IV length",
            Error::InvalidTagLength => "invalid tag length",
            Error::InvalidKey => "invalid key for this mode",
            Error::Decrypt => "decryption failed",
            Error::BufferTooSmall => "output buffer too small",
            Error::Finished => "stream already finished",
        })
    }
}

impl std::error::Error for Error {}
