//! SM4-GCM, SM4-CCM and SM4-CMAC for C: nothing is written unless the tag verifies.

use shangmi::sm4::modes::{self};
use shangmi::sm4::modes::{ccm::Sm4Ccm, gcm::Sm4Gcm};
use zeroize::Zeroizing;

use super::{mode_err, move_in};
use crate::{Result, fixed, fixed_out, guard, guard_out, input, output, room, shangmi_status};

/// Which AEAD a seal/open call uses.
enum Aead {
    Gcm(Box<Sm4Gcm>),
    Ccm(Box<Sm4Ccm>),
}

impl Aead {
    fn tag_len(&self) -> usize {
        match self {
            Aead::Gcm(g) => g.tag_len(),
            Aead::Ccm(c) => c.tag_len(),
        }
    }
}

/// # Safety
/// `key` 16 readable bytes.
unsafe fn aead(key: *const u8, ccm_nonce: Option<usize>, tag_len: usize) -> Result<Aead> {
    // SAFETY: the caller's contract.
    let k = Zeroizing::new(unsafe { fixed::<16>(key)? });
    match ccm_nonce {
        None => Sm4Gcm::with_tag_len(&k, tag_len).map(|g| Aead::Gcm(Box::new(g))),
        Some(n) => Sm4Ccm::new(&k, n, tag_len).map(|c| Aead::Ccm(Box::new(c))),
    }
    .map_err(mode_err)
}

/// # Safety
/// As the callers.
#[allow(clippy::too_many_arguments)]
unsafe fn seal(
    a: Result<Aead>,
    nonce: *const u8,
    nonce_len: usize,
    aad: *const u8,
    aad_len: usize,
    src: *const u8,
    len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    // `guard_out` zeroes the output (the plaintext moved in) when sealing fails.
    let run = || {
        let a = a?;
        // SAFETY: the caller's contract.
        let (n, ad) = unsafe { (input(nonce, nonce_len)?, input(aad, aad_len)?) };
        let t = a.tag_len();
        let need = len
            .checked_add(t)
            .ok_or(shangmi_status::ErrInvalidArgument)?;
        // SAFETY: the caller's contract.
        let o = unsafe { output(out, out_cap, out_len, need)? };
        // SAFETY: the caller's contract.
        unsafe { move_in(o, src, len)? };
        let (body, tag) = o.split_at_mut(len);
        match &a {
            Aead::Gcm(g) => {
                let full = g.encrypt_in_place_detached(n, ad, body).map_err(mode_err)?;
                tag.copy_from_slice(&full[..t]);
            }
            Aead::Ccm(c) => {
                tag.copy_from_slice(&c.encrypt_in_place_detached(n, ad, body).map_err(mode_err)?)
            }
        }
        Ok(())
    };
    // SAFETY: the caller's contract above (`out`, `out_cap`, `out_len`).
    unsafe { guard_out(out, out_cap, out_len, run) }
}

/// # Safety
/// As the callers.
#[allow(clippy::too_many_arguments)]
unsafe fn open(
    a: Result<Aead>,
    nonce: *const u8,
    nonce_len: usize,
    aad: *const u8,
    aad_len: usize,
    src: *const u8,
    len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    // `guard_out` zeroes the output (the plaintext moved in) when sealing fails.
    let run = || {
        let a = a?;
        // SAFETY: the caller's contract.
        let (n, ad) = unsafe { (input(nonce, nonce_len)?, input(aad, aad_len)?) };
        let t = a.tag_len();
        let body = len
            .checked_sub(t)
            .ok_or(shangmi_status::ErrAuthentication)?;
        if src.is_null() {
            return Err(shangmi_status::ErrNullPointer);
        }
        if isize::try_from(len).is_err() {
            return Err(shangmi_status::ErrInvalidArgument);
        }
        // The size is settled before any input is read, and the tag read before the output
        // is written (`out` may overlap it).
        // SAFETY: the caller's contract; no slice over `out` is made.
        unsafe { room(out, out_cap, out_len, body)? };
        // SAFETY: `src` has `len` = body + t readable bytes.
        let tag = Zeroizing::new(unsafe { input(src.add(body), t)? }.to_vec());
        // SAFETY: the caller's contract.
        let o = unsafe { output(out, out_cap, out_len, body)? };
        // SAFETY: the caller's contract.
        unsafe { move_in(o, src, body)? };
        // Both decryptions zero the buffer when the tag is wrong, and so does `guard_out`.
        match &a {
            Aead::Gcm(g) => g.decrypt_in_place_detached(n, ad, o, &tag),
            Aead::Ccm(c) => c.decrypt_in_place_detached(n, ad, o, &tag),
        }
        .map_err(mode_err)
    };
    // SAFETY: the caller's contract above (`out`, `out_cap`, `out_len`).
    unsafe { guard_out(out, out_cap, out_len, run) }
}

/// SM4-GCM encryption: `out` receives ciphertext || tag (`len + tag_len` bytes). Nonces of 12
/// bytes are the norm; `tag_len` is 12 to 16.
///
/// # Safety
/// `key` 16 readable bytes; `nonce`, `aad` their lengths; `in`/`out`/`out_len` as in shangmi.h.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm4_gcm_seal(
    key: *const u8,
    tag_len: usize,
    nonce: *const u8,
    nonce_len: usize,
    aad: *const u8,
    aad_len: usize,
    src: *const u8,
    len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    // SAFETY: the caller's contract above.
    unsafe {
        seal(
            aead(key, None, tag_len),
            nonce,
            nonce_len,
            aad,
            aad_len,
            src,
            len,
            out,
            out_cap,
            out_len,
        )
    }
}

/// SM4-GCM decryption of ciphertext || tag: `SHANGMI_STATUS_ERR_AUTHENTICATION` and zeroed
/// output when the tag does not match.
///
/// # Safety
/// As `shangmi_sm4_gcm_seal`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm4_gcm_open(
    key: *const u8,
    tag_len: usize,
    nonce: *const u8,
    nonce_len: usize,
    aad: *const u8,
    aad_len: usize,
    src: *const u8,
    len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    // SAFETY: the caller's contract above.
    unsafe {
        open(
            aead(key, None, tag_len),
            nonce,
            nonce_len,
            aad,
            aad_len,
            src,
            len,
            out,
            out_cap,
            out_len,
        )
    }
}

/// SM4-CCM encryption (nonce 7 to 13 bytes, `tag_len` 4, 6, ..., 16): ciphertext || tag.
///
/// # Safety
/// As `shangmi_sm4_gcm_seal`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm4_ccm_seal(
    key: *const u8,
    tag_len: usize,
    nonce: *const u8,
    nonce_len: usize,
    aad: *const u8,
    aad_len: usize,
    src: *const u8,
    len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    // SAFETY: the caller's contract above.
    unsafe {
        seal(
            aead(key, Some(nonce_len), tag_len),
            nonce,
            nonce_len,
            aad,
            aad_len,
            src,
            len,
            out,
            out_cap,
            out_len,
        )
    }
}

/// SM4-CCM decryption, as `shangmi_sm4_gcm_open`.
///
/// # Safety
/// As `shangmi_sm4_gcm_seal`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm4_ccm_open(
    key: *const u8,
    tag_len: usize,
    nonce: *const u8,
    nonce_len: usize,
    aad: *const u8,
    aad_len: usize,
    src: *const u8,
    len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    // SAFETY: the caller's contract above.
    unsafe {
        open(
            aead(key, Some(nonce_len), tag_len),
            nonce,
            nonce_len,
            aad,
            aad_len,
            src,
            len,
            out,
            out_cap,
            out_len,
        )
    }
}

/// SM4-CMAC(key, data) into `out` (16 bytes).
///
/// # Safety
/// `key` 16 readable bytes, `data` `len`, `out` 16 writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm4_cmac(
    key: *const u8,
    data: *const u8,
    len: usize,
    out: *mut u8,
) -> shangmi_status {
    guard(|| {
        // SAFETY: the caller's contract above.
        let k = Zeroizing::new(unsafe { fixed::<16>(key)? });
        // SAFETY: the caller's contract above; the tag is written after the data is read.
        let tag = modes::mac::cmac(&k, unsafe { input(data, len)? });
        // SAFETY: the caller's contract above.
        *unsafe { fixed_out::<16>(out)? } = tag;
        Ok(())
    })
}
