//! SM3 for C: one-shot and streaming hashing, HMAC-SM3, the SM2 KDF and PBKDF2-HMAC-SM3.

use shangmi::sm3::{self, Sm3};

use crate::{Result, fixed_out, give, guard, handle, handle_mut, input, release, shangmi_status};

/// A streaming SM3 computation.
pub struct shangmi_sm3_ctx {
    inner: Sm3,
}

/// SM3 of `len` bytes at `data` into `out` (32 bytes).
///
/// # Safety
/// `data` points to `len` readable bytes (or is NULL with `len` 0); `out` to 32 writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm3(data: *const u8, len: usize, out: *mut u8) -> shangmi_status {
    guard(|| {
        // The digest is computed before the output is touched: the caller may hash a buffer
        // that overlaps it.
        // SAFETY: the caller's contract above.
        let d = sm3::hash(unsafe { input(data, len)? });
        // SAFETY: the caller's contract above.
        *unsafe { fixed_out::<32>(out)? } = d;
        Ok(())
    })
}

/// A new streaming context in `*out` (free with `shangmi_sm3_free`).
///
/// # Safety
/// `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm3_new(out: *mut *mut shangmi_sm3_ctx) -> shangmi_status {
    // SAFETY: the caller's contract above.
    guard(|| unsafe { give(out, shangmi_sm3_ctx { inner: Sm3::new() }) })
}

/// A copy of `ctx` in `*out`, to finish two messages that share a prefix.
///
/// # Safety
/// `ctx` is a live context; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm3_dup(
    ctx: *const shangmi_sm3_ctx,
    out: *mut *mut shangmi_sm3_ctx,
) -> shangmi_status {
    guard(|| {
        // SAFETY: the caller's contract above.
        let c = unsafe { handle(ctx)? };
        // SAFETY: the caller's contract above.
        unsafe {
            give(
                out,
                shangmi_sm3_ctx {
                    inner: c.inner.clone(),
                },
            )
        }
    })
}

/// Feeds `len` bytes.
///
/// # Safety
/// `ctx` is a live context used by no other thread now; `data` as in `shangmi_sm3`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm3_update(
    ctx: *mut shangmi_sm3_ctx,
    data: *const u8,
    len: usize,
) -> shangmi_status {
    guard(|| {
        // SAFETY: the caller's contract above.
        let (c, d) = unsafe { (handle_mut(ctx)?, input(data, len)?) };
        c.inner.update(d);
        Ok(())
    })
}

/// Writes the digest (32 bytes) and resets `ctx` for a new message.
///
/// # Safety
/// `ctx` is a live context; `out` points to 32 writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm3_final(
    ctx: *mut shangmi_sm3_ctx,
    out: *mut u8,
) -> shangmi_status {
    guard(|| {
        // SAFETY: the caller's contract above.
        let (c, o) = unsafe { (handle_mut(ctx)?, fixed_out::<32>(out)?) };
        *o = c.inner.finalize_reset();
        Ok(())
    })
}

/// Frees a context (NULL is ignored).
///
/// # Safety
/// `ctx` is NULL or a live context, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm3_free(ctx: *mut shangmi_sm3_ctx) {
    // SAFETY: the caller's contract above.
    unsafe { release(ctx) }
}

/// HMAC-SM3(key, data) into `out` (32 bytes).
///
/// # Safety
/// `key` and `data` point to their lengths in readable bytes; `out` to 32 writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_hmac_sm3(
    key: *const u8,
    key_len: usize,
    data: *const u8,
    len: usize,
    out: *mut u8,
) -> shangmi_status {
    guard(|| {
        // The tag is computed before a slice over `out` exists: `out` may overlap the inputs.
        // SAFETY: the caller's contract above.
        let tag = unsafe { sm3::hmac(input(key, key_len)?, input(data, len)?) };
        // SAFETY: the caller's contract above; the input slices are no longer used.
        *unsafe { fixed_out::<32>(out)? } = tag;
        Ok(())
    })
}

/// The SM2 key-derivation function: `out_len` bytes from `z` into `out` (exactly `out_len`).
///
/// # Safety
/// `z` points to `z_len` readable bytes; `out` to `out_len` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm3_kdf(
    z: *const u8,
    z_len: usize,
    out: *mut u8,
    out_len: usize,
) -> shangmi_status {
    guard(|| {
        // The shared secret is absorbed before a slice over the output exists (it may sit in
        // the output buffer), with no copy of it made.
        // SAFETY: the caller's contract above.
        let mut kdf = sm3::Kdf::new(unsafe { input(z, z_len)? });
        // SAFETY: the caller's contract above; the input slice is no longer used.
        let o = unsafe { exact_out(out, out_len)? };
        kdf.fill(o).map_err(|_| shangmi_status::ErrInvalidArgument)
    })
}

/// PBKDF2-HMAC-SM3 into `out` (exactly `out_len` bytes).
///
/// # Safety
/// `password` and `salt` point to their lengths in readable bytes; `out` to `out_len`
/// writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_pbkdf2_sm3(
    password: *const u8,
    password_len: usize,
    salt: *const u8,
    salt_len: usize,
    iterations: u32,
    out: *mut u8,
    out_len: usize,
) -> shangmi_status {
    guard(|| {
        // Derived into a private buffer first: `out` may overlap the password or the salt, and
        // no slice over it may exist while they are read.
        let mut key = zeroize::Zeroizing::new(Vec::new());
        key.try_reserve_exact(out_len)
            .map_err(|_| shangmi_status::ErrInvalidArgument)?;
        key.resize(out_len, 0);
        // SAFETY: the caller's contract above.
        let (p, s) = unsafe { (input(password, password_len)?, input(salt, salt_len)?) };
        sm3::pbkdf2(p, s, iterations, &mut key).map_err(|_| shangmi_status::ErrInvalidArgument)?;
        // SAFETY: the caller's contract above; the input slices are no longer used.
        unsafe { exact_out(out, out_len)? }.copy_from_slice(&key);
        Ok(())
    })
}

/// A caller buffer of exactly `len` bytes (NULL only for 0).
///
/// # Safety
/// `p` is NULL or points to `len` writable bytes.
pub(crate) unsafe fn exact_out<'a>(p: *mut u8, len: usize) -> Result<&'a mut [u8]> {
    if len == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(shangmi_status::ErrNullPointer);
    }
    if isize::try_from(len).is_err() {
        return Err(shangmi_status::ErrInvalidArgument);
    }
    // SAFETY: non-null, `len` (at most isize::MAX) writable bytes by the caller's contract.
    Ok(unsafe { core::slice::from_raw_parts_mut(p, len) })
}
