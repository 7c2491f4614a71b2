//! SM2 keys for C: made, read and written (raw, PEM, DER, PKCS#8 encrypted), and freed.

use core::ffi::c_int;

use shangmi::sm2::{SigningKey, VerifyingKey};
use zeroize::Zeroizing;

use super::{err, key_err, put, shangmi_sm2_private_key, shangmi_sm2_public_key};
use crate::{
    Result, fixed, fixed_out, give, guard, guard_out, handle, input, output, release,
    shangmi_status,
};

/// Writes text and a terminating NUL; `*out_len` counts the NUL.
///
/// # Safety
/// As `crate::output`.
unsafe fn put_text(out: *mut u8, out_cap: usize, out_len: *mut usize, text: &str) -> Result {
    // SAFETY: the caller's contract.
    let o = unsafe { output(out, out_cap, out_len, text.len() + 1)? };
    o[..text.len()].copy_from_slice(text.as_bytes());
    o[text.len()] = 0;
    Ok(())
}

/// An optional password: NULL for none.
///
/// # Safety
/// `p` NULL or `len` readable bytes.
unsafe fn password<'a>(p: *const u8, len: usize) -> Result<Option<&'a [u8]>> {
    if p.is_null() {
        Ok(None)
    } else {
        // SAFETY: the caller's contract.
        Ok(Some(unsafe { input(p, len)? }))
    }
}

/// A fresh private key from the operating system's generator.
///
/// # Safety
/// `out` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_private_key_generate(
    out: *mut *mut shangmi_sm2_private_key,
) -> shangmi_status {
    guard(|| {
        let k = SigningKey::random().map_err(err)?;
        // SAFETY: the caller's contract above.
        unsafe { give(out, shangmi_sm2_private_key { inner: k }) }
    })
}

/// From the 32-byte big-endian scalar (1 <= d <= n - 2).
///
/// # Safety
/// `d` 32 readable bytes; `out` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_private_key_from_bytes(
    d: *const u8,
    out: *mut *mut shangmi_sm2_private_key,
) -> shangmi_status {
    guard(|| {
        // SAFETY: the caller's contract above.
        let d = Zeroizing::new(unsafe { fixed::<32>(d)? });
        let k = SigningKey::from_bytes(&d).map_err(err)?;
        // SAFETY: the caller's contract above.
        unsafe { give(out, shangmi_sm2_private_key { inner: k }) }
    })
}

/// From PEM text (`PRIVATE KEY`, `EC PRIVATE KEY`, or `ENCRYPTED PRIVATE KEY` with
/// `password`; NULL password for none). `pem` need not be NUL-terminated.
///
/// # Safety
/// `pem` `pem_len` readable bytes; `password` NULL or `password_len` bytes; `out` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_private_key_from_pem(
    pem: *const u8,
    pem_len: usize,
    password: *const u8,
    password_len: usize,
    out: *mut *mut shangmi_sm2_private_key,
) -> shangmi_status {
    guard(|| {
        // SAFETY: the caller's contract above.
        let (p, pw) = unsafe {
            (
                input(pem, pem_len)?,
                self::password(password, password_len)?,
            )
        };
        let text = core::str::from_utf8(p).map_err(|_| shangmi_status::ErrInvalidKey)?;
        let k = SigningKey::from_pem(text, pw).map_err(key_err)?;
        // SAFETY: the caller's contract above.
        unsafe { give(out, shangmi_sm2_private_key { inner: k }) }
    })
}

/// From DER: PKCS#8, encrypted PKCS#8 (needs `password`) or SEC1.
///
/// # Safety
/// As `shangmi_sm2_private_key_from_pem`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_private_key_from_der(
    der: *const u8,
    der_len: usize,
    password: *const u8,
    password_len: usize,
    out: *mut *mut shangmi_sm2_private_key,
) -> shangmi_status {
    guard(|| {
        // SAFETY: the caller's contract above.
        let (d, pw) = unsafe {
            (
                input(der, der_len)?,
                self::password(password, password_len)?,
            )
        };
        let k = SigningKey::from_der(d, pw).map_err(key_err)?;
        // SAFETY: the caller's contract above.
        unsafe { give(out, shangmi_sm2_private_key { inner: k }) }
    })
}

/// PKCS#8 PEM, NUL-terminated (`*out_len` counts the NUL); with a non-NULL `password`,
/// encrypted (PBKDF2-HMAC-SM3 and SM4-CBC).
///
/// # Safety
/// `key` live; `password` NULL or `password_len` bytes; `out`/`out_len` as in shangmi.h.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_private_key_to_pem(
    key: *const shangmi_sm2_private_key,
    password: *const u8,
    password_len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    let run = || {
        // SAFETY: the caller's contract above.
        let (k, pw) = unsafe { (handle(key)?, self::password(password, password_len)?) };
        let pem = Zeroizing::new(match pw {
            None => k.inner.to_pkcs8_pem().map_err(key_err)?.to_string(),
            Some(p) => k
                .inner
                .to_pkcs8_encrypted_pem(p, Default::default())
                .map_err(key_err)?,
        });
        // SAFETY: the caller's contract above.
        unsafe { put_text(out, out_cap, out_len, &pem) }
    };
    // SAFETY: the caller's contract above (`out`, `out_cap`, `out_len`).
    unsafe { guard_out(out, out_cap, out_len, run) }
}

/// PKCS#8 DER; with a non-NULL `password`, encrypted.
///
/// # Safety
/// As `shangmi_sm2_private_key_to_pem`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_private_key_to_der(
    key: *const shangmi_sm2_private_key,
    password: *const u8,
    password_len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    let run = || {
        // SAFETY: the caller's contract above.
        let (k, pw) = unsafe { (handle(key)?, self::password(password, password_len)?) };
        let der = match pw {
            None => k.inner.to_pkcs8_der().map_err(key_err)?,
            Some(p) => Zeroizing::new(
                k.inner
                    .to_pkcs8_encrypted_der(p, Default::default())
                    .map_err(key_err)?,
            ),
        };
        // SAFETY: the caller's contract above.
        unsafe { put(out, out_cap, out_len, &der) }
    };
    // SAFETY: the caller's contract above (`out`, `out_cap`, `out_len`).
    unsafe { guard_out(out, out_cap, out_len, run) }
}

/// The 32-byte scalar.
///
/// # Safety
/// `key` live; `out` 32 writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_private_key_to_bytes(
    key: *const shangmi_sm2_private_key,
    out: *mut u8,
) -> shangmi_status {
    guard(|| {
        // SAFETY: the caller's contract above.
        let (k, o) = unsafe { (handle(key)?, fixed_out::<32>(out)?) };
        o.copy_from_slice(&k.inner.to_bytes()[..]);
        Ok(())
    })
}

/// The key's public key, as a new handle.
///
/// # Safety
/// `key` live; `out` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_private_key_public_key(
    key: *const shangmi_sm2_private_key,
    out: *mut *mut shangmi_sm2_public_key,
) -> shangmi_status {
    guard(|| {
        // SAFETY: the caller's contract above.
        let k = unsafe { handle(key)? };
        // SAFETY: the caller's contract above.
        unsafe {
            give(
                out,
                shangmi_sm2_public_key {
                    inner: *k.inner.verifying_key(),
                },
            )
        }
    })
}

/// Frees a private key, wiping it (NULL is ignored).
///
/// # Safety
/// `key` NULL or live, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_private_key_free(key: *mut shangmi_sm2_private_key) {
    // SAFETY: the caller's contract above.
    unsafe { release(key) }
}

/// From SEC1 bytes (65 uncompressed, 33 compressed) or the raw 64-byte x || y.
///
/// # Safety
/// `data` `len` readable bytes; `out` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_public_key_from_bytes(
    data: *const u8,
    len: usize,
    out: *mut *mut shangmi_sm2_public_key,
) -> shangmi_status {
    guard(|| {
        // SAFETY: the caller's contract above.
        let d = unsafe { input(data, len)? };
        let k = if d.len() == 64 {
            let mut sec1 = [4u8; 65];
            sec1[1..].copy_from_slice(d);
            VerifyingKey::from_sec1_bytes(&sec1)
        } else {
            VerifyingKey::from_sec1_bytes(d)
        }
        .map_err(err)?;
        // SAFETY: the caller's contract above.
        unsafe { give(out, shangmi_sm2_public_key { inner: k }) }
    })
}

/// From PEM (`PUBLIC KEY`); need not be NUL-terminated.
///
/// # Safety
/// `pem` `pem_len` readable bytes; `out` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_public_key_from_pem(
    pem: *const u8,
    pem_len: usize,
    out: *mut *mut shangmi_sm2_public_key,
) -> shangmi_status {
    guard(|| {
        // SAFETY: the caller's contract above.
        let p = unsafe { input(pem, pem_len)? };
        let text = core::str::from_utf8(p).map_err(|_| shangmi_status::ErrInvalidKey)?;
        let k = VerifyingKey::from_public_key_pem(text).map_err(key_err)?;
        // SAFETY: the caller's contract above.
        unsafe { give(out, shangmi_sm2_public_key { inner: k }) }
    })
}

/// From DER (SubjectPublicKeyInfo).
///
/// # Safety
/// `der` `der_len` readable bytes; `out` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_public_key_from_der(
    der: *const u8,
    der_len: usize,
    out: *mut *mut shangmi_sm2_public_key,
) -> shangmi_status {
    guard(|| {
        // SAFETY: the caller's contract above.
        let d = unsafe { input(der, der_len)? };
        let k = VerifyingKey::from_public_key_der(d).map_err(key_err)?;
        // SAFETY: the caller's contract above.
        unsafe { give(out, shangmi_sm2_public_key { inner: k }) }
    })
}

/// SEC1 bytes: 65 (`04 || x || y`), or 33 with `compressed` non-zero.
///
/// # Safety
/// `key` live; `out`/`out_len` as in shangmi.h.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_public_key_to_bytes(
    key: *const shangmi_sm2_public_key,
    compressed: c_int,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    let run = || {
        // SAFETY: the caller's contract above.
        let k = unsafe { handle(key)? };
        // SAFETY: the caller's contract above.
        unsafe {
            put(
                out,
                out_cap,
                out_len,
                &k.inner.to_sec1_bytes(compressed != 0),
            )
        }
    };
    // SAFETY: the caller's contract above (`out`, `out_cap`, `out_len`).
    unsafe { guard_out(out, out_cap, out_len, run) }
}

/// PEM (`PUBLIC KEY`), NUL-terminated (`*out_len` counts the NUL).
///
/// # Safety
/// `key` live; `out`/`out_len` as in shangmi.h.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_public_key_to_pem(
    key: *const shangmi_sm2_public_key,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    let run = || {
        // SAFETY: the caller's contract above.
        let k = unsafe { handle(key)? };
        let pem = k.inner.to_public_key_pem().map_err(key_err)?;
        // SAFETY: the caller's contract above.
        unsafe { put_text(out, out_cap, out_len, &pem) }
    };
    // SAFETY: the caller's contract above (`out`, `out_cap`, `out_len`).
    unsafe { guard_out(out, out_cap, out_len, run) }
}

/// DER (SubjectPublicKeyInfo).
///
/// # Safety
/// `key` live; `out`/`out_len` as in shangmi.h.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_public_key_to_der(
    key: *const shangmi_sm2_public_key,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    let run = || {
        // SAFETY: the caller's contract above.
        let k = unsafe { handle(key)? };
        let der = k.inner.to_public_key_der().map_err(key_err)?;
        // SAFETY: the caller's contract above.
        unsafe { put(out, out_cap, out_len, &der) }
    };
    // SAFETY: the caller's contract above (`out`, `out_cap`, `out_len`).
    unsafe { guard_out(out, out_cap, out_len, run) }
}

/// Frees a public key (NULL is ignored).
///
/// # Safety
/// `key` NULL or live, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm2_public_key_free(key: *mut shangmi_sm2_public_key) {
    // SAFETY: the caller's contract above.
    unsafe { release(key) }
}
