//! SM2 for C: keys (PEM, DER, raw), signatures, public-key encryption in the three
//! ciphertext layouts, and key exchange.

use core::ffi::c_int;
use std::sync::Mutex;

use shangmi::sm2::{
    self, Agreement, EphemeralSecret, Exchange, Format, KeyFileError, Role, Signature, SigningKey,
    VerifyingKey,
};
use zeroize::Zeroizing;

use crate::{
    Result, fixed, fixed_out, give, guard, guard_out, handle, input, output, release, room,
    shangmi_status,
};

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

/// Writes `data` to the caller's buffer (sized by `output`).
///
/// # Safety
/// As `crate::output`.
unsafe fn put(out: *mut u8, out_cap: usize, out_len: *mut usize, data: &[u8]) -> Result {
    // SAFETY: the caller's contract.
    unsafe { output(out, out_cap, out_len, data.len())? }.copy_from_slice(data);
    Ok(())
}

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
            let (k, id, m) = unsafe { (handle(key)?, self::id(id, id_len)?, input(msg, len)?) };
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
                self::id(id, id_len)?,
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
        let (own, peer) = unsafe { (self::id(id, id_len)?, self::id(peer_id, peer_id_len)?) };
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
