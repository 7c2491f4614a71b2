//! SM2 for C: keys (PEM, DER, raw), signatures, public-key encryption in the three
//! ciphertext layouts, and key exchange.

use core::ffi::c_int;
use std::sync::Mutex;

use shangmi::sm2::{
    self, Agreement, EphemeralSecret, Format, KeyFileError, SigningKey, VerifyingKey,
};

use crate::{Result, input, output, shangmi_status};

mod cipher;
mod exchange;
mod keys;
mod sign;

pub use cipher::*;
pub use exchange::*;
pub use keys::*;
pub use sign::*;

/// DER signatures (SEQUENCE of two INTEGERs, at most 72 bytes), as OpenSSL writes them.
pub const SHANGMI_SIG_DER: c_int = 0;
/// Raw 64-byte r || s.
pub const SHANGMI_SIG_RAW: c_int = 1;
/// C1 || C3 || C2 (GB/T 32918.4-2016), C1 = 04 || x || y.
pub const SHANGMI_SM2_C1C3C2: c_int = 0;
/// C1 || C2 || C3 (the 2010 draft's order).
pub const SHANGMI_SM2_C1C2C3: c_int = 1;
/// DER (GM/T 0009, OpenSSL's layout).
pub const SHANGMI_SM2_ASN1: c_int = 2;
/// This side starts the exchange (user A of GB/T 32918.3).
pub const SHANGMI_SM2_INITIATOR: c_int = 0;
/// This side answers (user B).
pub const SHANGMI_SM2_RESPONDER: c_int = 1;

/// An SM2 private key (its public key included); wiped when freed.
pub struct shangmi_sm2_private_key {
    pub(crate) inner: SigningKey,
}

/// An SM2 public key.
pub struct shangmi_sm2_public_key {
    inner: VerifyingKey,
}

/// A single-use ephemeral key for one key exchange.
pub struct shangmi_sm2_ephemeral {
    inner: Mutex<Option<EphemeralSecret>>,
    public: VerifyingKey,
}

/// The outcome of a key exchange: the shared key and the confirmation values.
pub struct shangmi_sm2_agreement {
    inner: Agreement,
}

fn err(e: sm2::Error) -> shangmi_status {
    use sm2::Error as E;
    match e {
        E::InvalidPrivateKey | E::InvalidPublicKey => shangmi_status::ErrInvalidKey,
        E::InvalidSignature | E::Verification | E::Decryption | E::InvalidCiphertext => {
            shangmi_status::ErrAuthentication
        }
        E::KeyConfirmation => shangmi_status::ErrAuthentication,
        E::Rng => shangmi_status::ErrRng,
        _ => shangmi_status::ErrInvalidArgument,
    }
}

fn key_err(e: KeyFileError) -> shangmi_status {
    match e {
        KeyFileError::Rng => shangmi_status::ErrRng,
        _ => shangmi_status::ErrInvalidKey,
    }
}

fn format(f: c_int) -> Result<Format> {
    match f {
        SHANGMI_SM2_C1C3C2 => Ok(Format::C1C3C2),
        SHANGMI_SM2_C1C2C3 => Ok(Format::C1C2C3),
        SHANGMI_SM2_ASN1 => Ok(Format::Der),
        _ => Err(shangmi_status::ErrInvalidArgument),
    }
}

/// The caller's ID, or the default 1234567812345678 when `id` is NULL.
///
/// # Safety
/// `id` NULL or `id_len` readable bytes.
unsafe fn id<'a>(id: *const u8, id_len: usize) -> Result<&'a [u8]> {
    if id.is_null() {
        Ok(sm2::DEFAULT_ID)
    } else {
        // SAFETY: the caller's contract.
        unsafe { input(id, id_len) }
    }
}

/// Writes `data` to the caller's buffer (sized by `output`).
///
/// # Safety
/// As `crate::output`.
unsafe fn put(out: *mut u8, out_cap: usize, out_len: *mut usize, data: &[u8]) -> Result {
    // SAFETY: the caller's contract.
    unsafe { output(out, out_cap, out_len, data.len())? }.copy_from_slice(data);
    Ok(())
}
