//! The native module's one error type. Every library error converts into it (`From`), and it
//! becomes the Python exception the caller sees in one place (`From<Error> for PyErr`), so a
//! function writes `.or_raise()?` and the mapping is not repeated per module.
//!
//! Three failures mean something else where they happen and are built by name:
//! [`Error::verification`], [`Error::padding`] and [`Error::stream`].

use pyo3::PyErr;
use pyo3::exceptions::PyValueError;
use shangmi::sm2::{self, KeyFileError};
use shangmi::sm3::Pbkdf2Error;
use shangmi::sm4::Error as ModeError;

use crate::pki::ChainError;
use crate::{DecryptionError, InvalidSignature, InvalidTag};

/// Why a native function failed, by the exception it raises.
pub(crate) enum Error {
    /// Malformed input or a refused argument: `ValueError`.
    Value(String),
    /// A tag or MAC did not match: `InvalidTag`, and no plaintext.
    Tag(&'static str),
    /// A signature did not verify or is not an encoding of one: `InvalidSignature`.
    Signature(String),
    /// SM2 or CMS decryption failed: `DecryptionError` (one error for every cause).
    Decryption(String),
    /// A certificate chain did not verify: `ChainError`, naming the certificate and rule.
    Chain(String),
}

impl Error {
    /// A verification's failure: `InvalidSignature`, unless the ID was refused before it ran.
    pub(crate) fn verification(e: sm2::Error) -> Error {
        match e {
            sm2::Error::IdTooLong => e.into(),
            _ => Error::Signature("SM2 signature verification failed".into()),
        }
    }

    /// Removing PKCS#7 padding: a bad pad is `ValueError`, as the `cryptography` package has it.
    pub(crate) fn padding(e: ModeError) -> Error {
        match e {
            ModeError::Decrypt => Error::Value("invalid PKCS#7 padding".into()),
            e => e.into(),
        }
    }

    /// A raw-mode stream: finished, or given a partial block where the mode needs whole ones.
    pub(crate) fn stream(e: ModeError) -> Error {
        match e {
            ModeError::Finished => Error::finalized("stream"),
            ModeError::InvalidLength => {
                Error::Value("the data is not a whole number of 16-byte blocks".into())
            }
            e => Error::padding(e),
        }
    }

    /// An object used after its last call.
    pub(crate) fn finalized(what: &str) -> Error {
        Error::Value(format!("the {what} is finalized"))
    }
}

impl From<sm2::Error> for Error {
    fn from(e: sm2::Error) -> Error {
        Error::Value(e.to_string())
    }
}

impl From<KeyFileError> for Error {
    fn from(e: KeyFileError) -> Error {
        Error::Value(e.to_string())
    }
}

impl From<Pbkdf2Error> for Error {
    fn from(e: Pbkdf2Error) -> Error {
        Error::Value(e.to_string())
    }
}

/// The modes' refusals are malformed input; a failed tag is `InvalidTag`.
impl From<ModeError> for Error {
    fn from(e: ModeError) -> Error {
        match e {
            ModeError::Decrypt => Error::Tag("SM4 authentication tag mismatch"),
            e => Error::Value(e.to_string()),
        }
    }
}

impl From<shangmi_pki::Error> for Error {
    fn from(e: shangmi_pki::Error) -> Error {
        match e {
            shangmi_pki::Error::Chain { .. } => Error::Chain(e.to_string()),
            shangmi_pki::Error::BadSignature(_) => Error::Signature(e.to_string()),
            shangmi_pki::Error::Decryption(_) => Error::Decryption(e.to_string()),
            e => Error::Value(e.to_string()),
        }
    }
}

impl From<Error> for PyErr {
    fn from(e: Error) -> PyErr {
        match e {
            Error::Value(m) => PyValueError::new_err(m),
            Error::Tag(m) => InvalidTag::new_err(m),
            Error::Signature(m) => InvalidSignature::new_err(m),
            Error::Decryption(m) => DecryptionError::new_err(m),
            Error::Chain(m) => ChainError::new_err(m),
        }
    }
}

/// `?` for a library result inside a function that returns `PyResult` (Rust lets neither
/// crate's error convert into the other's directly).
pub(crate) trait OrRaise<T> {
    fn or_raise(self) -> pyo3::PyResult<T>;
}

impl<T, E> OrRaise<T> for Result<T, E>
where
    Error: From<E>,
{
    fn or_raise(self) -> pyo3::PyResult<T> {
        self.map_err(|e| Error::from(e).into())
    }
}
