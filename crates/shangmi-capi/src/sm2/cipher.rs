//! SM2 public-key encryption for C, in the three ciphertext layouts.

use core::ffi::c_int;

use shangmi::sm2::Format;
use zeroize::Zeroizing;

use super::{err, format, put, shangmi_sm2_private_key, shangmi_sm2_public_key};
use crate::{guard_out, handle, input, room, shangmi_status};

/// Encrypts `msg` to `key` in `format` (`SHANGMI_SM2_C1C3C2`, `_C1C2C3`, `_ASN1`). Size:
/// exactly 97 + len for the raw layouts; at most 126 + len for ASN.1 (the size query
/// reports that bound; `*out_len` is the exact size after encryption).
///
/// # Safety
/// `key` live; `msg` `len` bytes; `out`/`out_len` as in shangmi.h.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_encrypt(
    key: *const shangmi_sm2_public_key,
    format: c_int,
    msg: *const u8,
    len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    let run = || {
        let f = self::format(format)?;
        let bound = match f {
            Format::Der => len.checked_add(126),
            _ => len.checked_add(97),
        }
        .ok_or(shangmi_status::ErrInvalidArgument)?;
        // SAFETY: the caller's contract above.
        unsafe { room(out, out_cap, out_len, bound)? };
        let ct = {
            // The message is read while no slice over `out` exists (they may overlap).
            // SAFETY: the caller's contract above.
            let (k, m) = unsafe { (handle(key)?, input(msg, len)?) };
            k.inner.encrypt(m, f).map_err(err)?
        };
        // SAFETY: the caller's contract above.
        unsafe { put(out, out_cap, out_len, &ct) }
    };
    // SAFETY: the caller's contract above (`out`, `out_cap`, `out_len`).
    unsafe { guard_out(out, out_cap, out_len, run) }
}

/// Decrypts `ct` (in `format`); at most `len` bytes of plaintext. Any failure (malformed,
/// wrong key, tampered) is `SHANGMI_STATUS_ERR_AUTHENTICATION` and writes nothing.
///
/// # Safety
/// `key` live; `ct` `len` bytes; `out`/`out_len` as in shangmi.h.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_decrypt(
    key: *const shangmi_sm2_private_key,
    format: c_int,
    ct: *const u8,
    len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    let run = || {
        let f = self::format(format)?;
        // SAFETY: the caller's contract above.
        unsafe { room(out, out_cap, out_len, len)? };
        let pt = {
            // The ciphertext is read while no slice over `out` exists (they may overlap).
            // SAFETY: the caller's contract above.
            let (k, c) = unsafe { (handle(key)?, input(ct, len)?) };
            Zeroizing::new(
                k.inner
                    .decrypt(c, f)
                    .map_err(|_| shangmi_status::ErrAuthentication)?,
            )
        };
        // SAFETY: the caller's contract above.
        unsafe { put(out, out_cap, out_len, &pt) }
    };
    // SAFETY: the caller's contract above (`out`, `out_cap`, `out_len`).
    unsafe { guard_out(out, out_cap, out_len, run) }
}
