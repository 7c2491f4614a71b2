//! SM4-GCM and SM4-CCM's data path: AAD, the data in pieces (GCM) or whole (CCM), and the tag
//! at the end; nothing unauthenticated is returned.

use core::ffi::{c_int, c_void};

use zeroize::Zeroizing;

use super::{Ctx, Kind};
use crate::err::{Reason, ctx_mut, result};
use crate::guarded;

/// One update: AAD when `out` is NULL, CCM's length declaration when `input` is too, data
/// otherwise.
///
/// # Safety
/// The core's contract: `ctx` from `newctx`; `out` NULL or `out_size` writable bytes;
/// `input` NULL or `len` readable bytes (possibly the same memory as `out`).
unsafe fn process(
    ctx: *mut c_void,
    out: *mut u8,
    out_len: *mut usize,
    out_size: usize,
    input: *const u8,
    len: usize,
) -> Result<(), Reason> {
    // SAFETY: the contract above.
    let c = unsafe { ctx_mut::<Ctx>(ctx)? };
    c.ready()?;
    if !out_len.is_null() {
        // SAFETY: writable by the contract.
        unsafe { *out_len = 0 };
    }
    if input.is_null() {
        if !out.is_null() {
            return Err(Reason::InvalidArgument);
        }
        if c.kind == Kind::Ccm && !c.data_seen {
            c.msg_len = Some(len);
        }
        return Ok(());
    }
    if out.is_null() {
        if c.data_seen || c.stream.is_some() {
            return Err(Reason::State);
        }
        // SAFETY: `len` readable bytes by the contract.
        c.aad
            .extend_from_slice(unsafe { core::slice::from_raw_parts(input, len) });
    } else {
        if out_size < len {
            return Err(Reason::BufferTooSmall);
        }
        if c.kind == Kind::Gcm && c.encrypt {
            // SAFETY: `len` readable and writable bytes by the contract; `copy` is memmove,
            // so the two may be the same memory, and the slice is made after it.
            let buf = unsafe {
                core::ptr::copy(input, out, len);
                core::slice::from_raw_parts_mut(out, len)
            };
            c.gcm_encrypt(buf)?;
        } else {
            if c.data_seen {
                return Err(Reason::OneUpdate);
            }
            if c.msg_len.is_some_and(|m| m != len) {
                return Err(Reason::InvalidLength);
            }
            if !c.encrypt && c.expected.is_none() {
                return Err(Reason::TagFirst);
            }
            c.data_seen = true;
            // SAFETY: `len` readable bytes by the contract; nothing is written to `out`
            // while this slice lives.
            let done = c.one_shot(unsafe { core::slice::from_raw_parts(input, len) })?;
            c.data_ok = true;
            // SAFETY: `out` has `out_size >= len` writable bytes; the input slice is gone.
            unsafe { core::ptr::copy_nonoverlapping(done.as_ptr(), out, len) };
        }
    }
    if !out_len.is_null() {
        // SAFETY: writable by the contract.
        unsafe { *out_len = len };
    }
    Ok(())
}

pub(super) unsafe extern "C" fn update(
    ctx: *mut c_void,
    out: *mut u8,
    out_len: *mut usize,
    out_size: usize,
    input: *const u8,
    len: usize,
) -> c_int {
    guarded(0, || {
        // SAFETY: the core's contract, as `process` states it.
        let r = unsafe { process(ctx, out, out_len, out_size, input, len) };
        result(r, c"sm4_aead_update")
    })
}

/// # Safety
/// `ctx` from `newctx`; `out_len` NULL or writable.
unsafe fn finish(ctx: *mut c_void, out_len: *mut usize) -> Result<(), Reason> {
    // SAFETY: the contract above.
    let c = unsafe { ctx_mut::<Ctx>(ctx)? };
    c.ready()?;
    if !out_len.is_null() {
        // SAFETY: writable by the contract.
        unsafe { *out_len = 0 };
    }
    let r = if c.kind == Kind::Gcm && c.encrypt {
        if c.stream.is_none() {
            c.gcm_encrypt(&mut [])?;
        }
        let s = c.stream.take().ok_or(Reason::Internal)?;
        let tag = Zeroizing::new(s.finish());
        c.made = Some(Zeroizing::new(tag.to_vec()));
        Ok(())
    } else if c.data_seen {
        if c.data_ok {
            Ok(())
        } else {
            Err(Reason::TagMismatch)
        }
    } else if !c.encrypt && c.expected.is_none() {
        Err(Reason::TagFirst)
    } else {
        c.one_shot(&[]).map(drop)
    };
    c.iv_ready = false;
    c.expected = None;
    if r.is_ok() {
        crate::served::count(match c.kind {
            Kind::Gcm => crate::served::Op::Sm4Gcm,
            Kind::Ccm => crate::served::Op::Sm4Ccm,
        });
    }
    r
}

pub(super) unsafe extern "C" fn final_(
    ctx: *mut c_void,
    _out: *mut u8,
    out_len: *mut usize,
    _out_size: usize,
) -> c_int {
    guarded(0, || {
        // SAFETY: the core's contract, as `finish` states it.
        let r = unsafe { finish(ctx, out_len) };
        result(r, c"sm4_aead_final")
    })
}

/// `EVP_Cipher`: an update, or the end when `input` is NULL (OpenSSL's AEAD convention).
pub(super) unsafe extern "C" fn cipher_(
    ctx: *mut c_void,
    out: *mut u8,
    out_len: *mut usize,
    out_size: usize,
    input: *const u8,
    len: usize,
) -> c_int {
    if input.is_null() && !out.is_null() {
        // SAFETY: forwarded under the same contract.
        unsafe { final_(ctx, out, out_len, out_size) }
    } else {
        // SAFETY: forwarded under the same contract.
        unsafe { update(ctx, out, out_len, out_size, input, len) }
    }
}
