//! SM4's raw modes for C (ECB, CBC, CFB, OFB, CTR) and XTS, one call a message.

use core::ffi::c_int;

use shangmi::sm4::Sm4;
use shangmi::sm4::modes::{cbc, cfb, ctr, ecb, ofb, padding, xts};
use zeroize::Zeroizing;

use super::{SHANGMI_XTS_GB, SHANGMI_XTS_IEEE, guard_value, mode_err, move_in, same_length};
use crate::{Result, fixed, guard_out, output, shangmi_status, written};

/// SM4-ECB. `padding` non-zero adds (encrypting) or checks and removes (decrypting) PKCS#7;
/// without it the length must be a multiple of 16.
///
/// # Safety
/// `key` is 16 readable bytes; `in`/`out`/`out_len` as described in shangmi.h.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm4_ecb(
    key: *const u8,
    encrypt: c_int,
    padding: c_int,
    src: *const u8,
    len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    // SAFETY: the caller's contract above.
    unsafe {
        block_mode(
            key,
            None,
            encrypt != 0,
            padding != 0,
            src,
            len,
            out,
            out_cap,
            out_len,
        )
    }
}

/// SM4-CBC under a 16-byte `iv`; `padding` as for ECB.
///
/// # Safety
/// `key` and `iv` are 16 readable bytes; `in`/`out`/`out_len` as described in shangmi.h.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm4_cbc(
    key: *const u8,
    iv: *const u8,
    encrypt: c_int,
    padding: c_int,
    src: *const u8,
    len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    // SAFETY: the caller's contract above.
    unsafe {
        block_mode(
            key,
            Some(iv),
            encrypt != 0,
            padding != 0,
            src,
            len,
            out,
            out_cap,
            out_len,
        )
    }
}

/// ECB (`iv` None) or CBC, with or without padding.
///
/// # Safety
/// As the callers.
#[allow(clippy::too_many_arguments)]
unsafe fn block_mode(
    key: *const u8,
    iv: Option<*const u8>,
    encrypt: bool,
    padding: bool,
    src: *const u8,
    len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    let run = || {
        // SAFETY: the caller's contract.
        let c = Sm4::new(&Zeroizing::new(unsafe { fixed::<16>(key)? }));
        // SAFETY: the caller's contract.
        let iv = iv.map(|p| unsafe { fixed::<16>(p) }).transpose()?;
        let need = match (padding, encrypt) {
            (true, true) => padding::padded_len(len).ok_or(shangmi_status::ErrInvalidArgument)?,
            (false, _) if !len.is_multiple_of(16) => {
                return Err(shangmi_status::ErrInvalidArgument);
            }
            // Decrypting with padding: an upper bound until the padding is checked.
            (true, false) if len == 0 || !len.is_multiple_of(16) => {
                return Err(shangmi_status::ErrInvalidArgument);
            }
            _ => len,
        };
        // SAFETY: the caller's contract.
        let o = unsafe { output(out, out_cap, out_len, need)? };
        // SAFETY: the caller's contract.
        unsafe { move_in(o, src, len)? };
        let n = match (iv, encrypt, padding) {
            (None, true, false) => ecb::encrypt(&c, o).map(|()| len),
            (None, false, false) => ecb::decrypt(&c, o).map(|()| len),
            (None, true, true) => ecb::encrypt_padded_in_place(&c, o, len),
            (None, false, true) => ecb::decrypt_padded_in_place(&c, o),
            (Some(iv), true, false) => cbc::Encryptor::new(&c, &iv).encrypt_blocks(o).map(|()| len),
            (Some(iv), false, false) => {
                cbc::Decryptor::new(&c, &iv).decrypt_blocks(o).map(|()| len)
            }
            (Some(iv), true, true) => cbc::encrypt_padded_in_place(&c, &iv, o, len),
            (Some(iv), false, true) => cbc::decrypt_padded_in_place(&c, &iv, o),
        }
        .map_err(mode_err)?;
        // SAFETY: `output` checked `out_len`.
        unsafe { written(out_len, n) };
        Ok(())
    };
    // SAFETY: the caller's contract above (`out`, `out_cap`, `out_len`).
    unsafe { guard_out(out, out_cap, out_len, run) }
}

/// SM4-CFB-128 (any length; `out` as long as `in`).
///
/// # Safety
/// `key`, `iv` 16 readable bytes each; `in`/`out`/`out_len` as described in shangmi.h.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm4_cfb(
    key: *const u8,
    iv: *const u8,
    encrypt: c_int,
    src: *const u8,
    len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    // SAFETY: the caller's contract above.
    unsafe {
        stream_once(key, iv, src, len, out, out_cap, out_len, |c, iv, b| {
            let mut f = cfb::Cfb::new(c, iv);
            if encrypt != 0 {
                f.encrypt(b)
            } else {
                f.decrypt(b)
            }
            Ok(())
        })
    }
}

/// SM4-OFB (any length).
///
/// # Safety
/// As `shangmi_sm4_cfb`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm4_ofb(
    key: *const u8,
    iv: *const u8,
    src: *const u8,
    len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    // SAFETY: the caller's contract above.
    unsafe {
        stream_once(key, iv, src, len, out, out_cap, out_len, |c, iv, b| {
            ofb::Ofb::new(c, iv).apply_keystream(b);
            Ok(())
        })
    }
}

/// SM4-CTR with a 128-bit big-endian counter starting at `iv` (any length).
///
/// # Safety
/// As `shangmi_sm4_cfb`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm4_ctr(
    key: *const u8,
    iv: *const u8,
    src: *const u8,
    len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    // SAFETY: the caller's contract above.
    unsafe {
        stream_once(key, iv, src, len, out, out_cap, out_len, |c, iv, b| {
            ctr::apply_keystream(c, iv, b).map_err(mode_err)
        })
    }
}

/// # Safety
/// As the callers.
#[allow(clippy::too_many_arguments)]
unsafe fn stream_once(
    key: *const u8,
    iv: *const u8,
    src: *const u8,
    len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
    f: impl FnOnce(&Sm4, &[u8; 16], &mut [u8]) -> Result,
) -> shangmi_status {
    let setup = || -> Result<(Sm4, [u8; 16])> {
        // SAFETY: the caller's contract.
        let (k, iv) = unsafe { (Zeroizing::new(fixed::<16>(key)?), fixed::<16>(iv)?) };
        Ok((Sm4::new(&k), iv))
    };
    let (c, iv) = match guard_value(setup) {
        Ok(x) => x,
        // SAFETY: the caller's contract.
        Err(e) => return unsafe { crate::refused(out_len, e) },
    };
    // SAFETY: the caller's contract.
    unsafe { same_length(src, len, out, out_cap, out_len, |b| f(&c, &iv, b)) }
}

/// SM4-XTS on one data unit (16 bytes to 16 MiB) under a 16-byte `tweak`. `key` is 32 bytes
/// (K1 || K2, unequal halves); `variant` is `SHANGMI_XTS_IEEE` or `SHANGMI_XTS_GB`.
///
/// # Safety
/// `key` 32 and `tweak` 16 readable bytes; `in`/`out`/`out_len` as described in shangmi.h.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm4_xts(
    key: *const u8,
    variant: c_int,
    encrypt: c_int,
    tweak: *const u8,
    src: *const u8,
    len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    let setup = || -> Result<(xts::Xts, [u8; 16])> {
        let v = match variant {
            SHANGMI_XTS_IEEE => xts::Variant::Ieee,
            SHANGMI_XTS_GB => xts::Variant::Gb,
            _ => return Err(shangmi_status::ErrInvalidArgument),
        };
        // SAFETY: the caller's contract above.
        let (k, t) = unsafe { (Zeroizing::new(fixed::<32>(key)?), fixed::<16>(tweak)?) };
        Ok((xts::Xts::new(&k, v).map_err(mode_err)?, t))
    };
    let (x, t) = match guard_value(setup) {
        Ok(v) => v,
        // SAFETY: the caller's contract.
        Err(e) => return unsafe { crate::refused(out_len, e) },
    };
    // SAFETY: the caller's contract above.
    unsafe {
        same_length(src, len, out, out_cap, out_len, |b| {
            if encrypt != 0 {
                x.encrypt(&t, b)
            } else {
                x.decrypt(&t, b)
            }
            .map_err(mode_err)
        })
    }
}
