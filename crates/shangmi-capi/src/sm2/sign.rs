//! SM2 signatures for C, over messages (with the signer's Z) or over digests.

use core::ffi::c_int;

use shangmi::sm2::Signature;

use super::{
    SHANGMI_SIG_DER, SHANGMI_SIG_RAW, err, put, shangmi_sm2_private_key, shangmi_sm2_public_key,
};
use crate::{Result, fixed, guard, guard_out, handle, input, room, shangmi_status};

fn encode(sig: &Signature, encoding: c_int) -> Result<Vec<u8>> {
    match encoding {
        SHANGMI_SIG_DER => Ok(sig.to_der()),
        SHANGMI_SIG_RAW => Ok(sig.to_bytes().to_vec()),
        _ => Err(shangmi_status::ErrInvalidArgument),
    }
}

fn decode(sig: &[u8], encoding: c_int) -> Result<Signature> {
    match encoding {
        SHANGMI_SIG_DER => Signature::from_der(sig),
        SHANGMI_SIG_RAW => Signature::from_bytes(sig),
        _ => return Err(shangmi_status::ErrInvalidArgument),
    }
    .map_err(|_| shangmi_status::ErrAuthentication)
}

/// Signs `msg` (e = SM3(Z_A || msg), Z_A from `id`; NULL `id` for the default
/// 1234567812345678). `encoding` is `SHANGMI_SIG_DER` (at most 72 bytes) or `SHANGMI_SIG_RAW`
/// (64).
///
/// # Safety
/// `key` live; `id` NULL or `id_len` bytes; `msg` `len` bytes; `out`/`out_len` as in shangmi.h.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_sign(
    key: *const shangmi_sm2_private_key,
    id: *const u8,
    id_len: usize,
    msg: *const u8,
    len: usize,
    encoding: c_int,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    let run = || {
        let bound = if encoding == SHANGMI_SIG_RAW { 64 } else { 72 };
        // Sized before signing, so a size query costs no signature; no slice over `out`
        // exists while the message (which may overlap it) is read.
        // SAFETY: the caller's contract above.
        unsafe { room(out, out_cap, out_len, bound)? };
        let sig = {
            // SAFETY: the caller's contract above.
            let (k, id, m) = unsafe { (handle(key)?, super::id(id, id_len)?, input(msg, len)?) };
            encode(&k.inner.sign_with_id(id, m).map_err(err)?, encoding)?
        };
        // SAFETY: the caller's contract above.
        unsafe { put(out, out_cap, out_len, &sig) }
    };
    // SAFETY: the caller's contract above (`out`, `out_cap`, `out_len`).
    unsafe { guard_out(out, out_cap, out_len, run) }
}

/// Signs a precomputed 32-byte e.
///
/// # Safety
/// `key` live; `digest` 32 bytes; `out`/`out_len` as in shangmi.h.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_sign_digest(
    key: *const shangmi_sm2_private_key,
    digest: *const u8,
    encoding: c_int,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    let run = || {
        // SAFETY: the caller's contract above.
        let (k, e) = unsafe { (handle(key)?, fixed::<32>(digest)?) };
        let bound = if encoding == SHANGMI_SIG_RAW { 64 } else { 72 };
        // SAFETY: the caller's contract above.
        unsafe { room(out, out_cap, out_len, bound)? };
        let sig = encode(&k.inner.sign_digest(&e).map_err(err)?, encoding)?;
        // SAFETY: the caller's contract above.
        unsafe { put(out, out_cap, out_len, &sig) }
    };
    // SAFETY: the caller's contract above (`out`, `out_cap`, `out_len`).
    unsafe { guard_out(out, out_cap, out_len, run) }
}

/// `SHANGMI_STATUS_OK` when `sig` signs `msg` under `key` and `id`;
/// `SHANGMI_STATUS_ERR_AUTHENTICATION` otherwise (a malformed signature included).
///
/// # Safety
/// `key` live; `id` NULL or `id_len` bytes; `msg` `len`, `sig` `sig_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_verify(
    key: *const shangmi_sm2_public_key,
    id: *const u8,
    id_len: usize,
    msg: *const u8,
    len: usize,
    sig: *const u8,
    sig_len: usize,
    encoding: c_int,
) -> shangmi_status {
    guard(|| {
        // SAFETY: the caller's contract above.
        let (k, id, m, s) = unsafe {
            (
                handle(key)?,
                super::id(id, id_len)?,
                input(msg, len)?,
                input(sig, sig_len)?,
            )
        };
        let sig = decode(s, encoding)?;
        k.inner.verify_with_id(id, m, &sig).map_err(err)
    })
}

/// `shangmi_sm2_verify` for a precomputed 32-byte e.
///
/// # Safety
/// `key` live; `digest` 32 bytes; `sig` `sig_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_verify_digest(
    key: *const shangmi_sm2_public_key,
    digest: *const u8,
    sig: *const u8,
    sig_len: usize,
    encoding: c_int,
) -> shangmi_status {
    guard(|| {
        // SAFETY: the caller's contract above.
        let (k, e, s) = unsafe { (handle(key)?, fixed::<32>(digest)?, input(sig, sig_len)?) };
        k.inner
            .verify_digest(&e, &decode(s, encoding)?)
            .map_err(err)
    })
}
