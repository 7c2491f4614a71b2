//! SM2 key exchange for C (GB/T 32918.3): ephemeral keys, the agreement and its confirmations.

use core::ffi::c_int;
use std::sync::Mutex;

use shangmi::sm2::{EphemeralSecret, Exchange, Role};

use super::{
    SHANGMI_SM2_INITIATOR, SHANGMI_SM2_RESPONDER, err, put, shangmi_sm2_agreement,
    shangmi_sm2_ephemeral, shangmi_sm2_private_key, shangmi_sm2_public_key,
};
use crate::{fixed_out, give, guard, guard_out, handle, input, release, shangmi_status};

/// A fresh ephemeral key for one exchange.
///
/// # Safety
/// `out` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_ephemeral_generate(
    out: *mut *mut shangmi_sm2_ephemeral,
) -> shangmi_status {
    guard(|| {
        let e = EphemeralSecret::random().map_err(err)?;
        let public = *e.public_key();
        // SAFETY: the caller's contract above.
        unsafe {
            give(
                out,
                shangmi_sm2_ephemeral {
                    inner: Mutex::new(Some(e)),
                    public,
                },
            )
        }
    })
}

/// The ephemeral public key R to send to the peer, as a new handle.
///
/// # Safety
/// `e` live; `out` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_ephemeral_public_key(
    e: *const shangmi_sm2_ephemeral,
    out: *mut *mut shangmi_sm2_public_key,
) -> shangmi_status {
    guard(|| {
        // SAFETY: the caller's contract above.
        let e = unsafe { handle(e)? };
        // SAFETY: the caller's contract above.
        unsafe { give(out, shangmi_sm2_public_key { inner: e.public }) }
    })
}

/// Frees an ephemeral key (NULL is ignored).
///
/// # Safety
/// `e` NULL or live, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_ephemeral_free(e: *mut shangmi_sm2_ephemeral) {
    // SAFETY: the caller's contract above.
    unsafe { release(e) }
}

/// One side of an SM2 key exchange (GB/T 32918.3). `ephemeral` is used up (a second use is
/// `SHANGMI_STATUS_ERR_STATE`; still free it). IDs NULL for the default. The agreement
/// (`*out`) holds the `key_len`-byte key and the confirmation values.
///
/// # Safety
/// Handles live; IDs NULL or their lengths in bytes; `out` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_key_exchange(
    key: *const shangmi_sm2_private_key,
    ephemeral: *const shangmi_sm2_ephemeral,
    role: c_int,
    id: *const u8,
    id_len: usize,
    peer_key: *const shangmi_sm2_public_key,
    peer_id: *const u8,
    peer_id_len: usize,
    peer_ephemeral: *const shangmi_sm2_public_key,
    key_len: usize,
    out: *mut *mut shangmi_sm2_agreement,
) -> shangmi_status {
    guard(|| {
        // SAFETY: the caller's contract above.
        let (k, e, pk, pe) = unsafe {
            (
                handle(key)?,
                handle(ephemeral)?,
                handle(peer_key)?,
                handle(peer_ephemeral)?,
            )
        };
        // SAFETY: the caller's contract above.
        let (own, peer) = unsafe { (super::id(id, id_len)?, super::id(peer_id, peer_id_len)?) };
        let role = match role {
            SHANGMI_SM2_INITIATOR => Role::Initiator,
            SHANGMI_SM2_RESPONDER => Role::Responder,
            _ => return Err(shangmi_status::ErrInvalidArgument),
        };
        let secret = e
            .inner
            .lock()
            .map_err(|_| shangmi_status::ErrInternal)?
            .take()
            .ok_or(shangmi_status::ErrState)?;
        let ex = Exchange {
            role,
            own_id: own,
            peer: &pk.inner,
            peer_id: peer,
            peer_ephemeral: &pe.inner,
            key_len,
        };
        let a = k.inner.key_exchange(secret, &ex).map_err(err)?;
        // SAFETY: the caller's contract above.
        unsafe { give(out, shangmi_sm2_agreement { inner: a }) }
    })
}

/// The shared key (`key_len` bytes as requested).
///
/// # Safety
/// `a` live; `out`/`out_len` as in shangmi.h.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_agreement_key(
    a: *const shangmi_sm2_agreement,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    let run = || {
        // SAFETY: the caller's contract above.
        let a = unsafe { handle(a)? };
        // SAFETY: the caller's contract above.
        unsafe { put(out, out_cap, out_len, a.inner.key()) }
    };
    // SAFETY: the caller's contract above (`out`, `out_cap`, `out_len`).
    unsafe { guard_out(out, out_cap, out_len, run) }
}

/// This side's 32-byte confirmation value to send (S_B from the responder, S_A from the
/// initiator).
///
/// # Safety
/// `a` live; `out` 32 writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_agreement_confirmation(
    a: *const shangmi_sm2_agreement,
    out: *mut u8,
) -> shangmi_status {
    guard(|| {
        // SAFETY: the caller's contract above.
        let (a, o) = unsafe { (handle(a)?, fixed_out::<32>(out)?) };
        *o = a.inner.confirmation();
        Ok(())
    })
}

/// Checks the peer's confirmation value in constant time (`ERR_AUTHENTICATION` on mismatch).
///
/// # Safety
/// `a` live; `value` `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_agreement_verify_confirmation(
    a: *const shangmi_sm2_agreement,
    value: *const u8,
    len: usize,
) -> shangmi_status {
    guard(|| {
        // SAFETY: the caller's contract above.
        let (a, v) = unsafe { (handle(a)?, input(value, len)?) };
        a.inner.verify_confirmation(v).map_err(err)
    })
}

/// Frees an agreement, wiping the key (NULL is ignored).
///
/// # Safety
/// `a` NULL or live, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_agreement_free(a: *mut shangmi_sm2_agreement) {
    // SAFETY: the caller's contract above.
    unsafe { release(a) }
}
