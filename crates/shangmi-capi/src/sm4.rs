//! SM4 for C: the raw modes, XTS, the AEADs (GCM, CCM), CMAC and a streaming context.
//!
//! Data goes from `in` to `out`, which may be the same buffer (or overlap): the input is
//! moved into the output first and transformed there, so no input slice ever aliases the
//! output. Keys, IVs, nonces and AAD must not overlap `out`.

use core::ffi::c_int;

use shangmi::sm4::Error as ModeError;
use shangmi::sm4::modes::{self, cbc, cfb, ctr, ecb, ofb, padding, xts};
use shangmi::sm4::modes::{ccm::Sm4Ccm, gcm::Sm4Gcm};
use shangmi::sm4::{Direction, Mode, Sm4, Stream};
use zeroize::Zeroizing;

use crate::{
    Result, fixed, fixed_out, give, guard, guard_out, handle, handle_mut, input, output, release,
    room, shangmi_status, written,
};

/// ECB mode (for `shangmi_sm4_stream_new`).
pub const SHANGMI_SM4_ECB: c_int = 0;
/// CBC mode.
pub const SHANGMI_SM4_CBC: c_int = 1;
/// CFB-128 mode.
pub const SHANGMI_SM4_CFB: c_int = 2;
/// OFB mode.
pub const SHANGMI_SM4_OFB: c_int = 3;
/// CTR mode, 128-bit big-endian counter.
pub const SHANGMI_SM4_CTR: c_int = 4;
/// XTS with IEEE 1619's tweak multiplication.
pub const SHANGMI_XTS_IEEE: c_int = 0;
/// XTS with GB/T 17964-2021's tweak multiplication.
pub const SHANGMI_XTS_GB: c_int = 1;

fn mode_err(e: ModeError) -> shangmi_status {
    match e {
        ModeError::Decrypt => shangmi_status::ErrAuthentication,
        ModeError::InvalidKey => shangmi_status::ErrInvalidKey,
        ModeError::BufferTooSmall => shangmi_status::ErrBufferTooSmall,
        ModeError::Finished => shangmi_status::ErrState,
        _ => shangmi_status::ErrInvalidArgument,
    }
}

/// Moves `len` bytes from `src` (which may overlap `dst`) to the start of `dst`.
///
/// # Safety
/// `src` is NULL (only with `len` 0) or `len` readable bytes; `dst` has at least `len` bytes.
unsafe fn move_in(dst: &mut [u8], src: *const u8, len: usize) -> Result {
    if len == 0 {
        return Ok(());
    }
    if src.is_null() {
        return Err(shangmi_status::ErrNullPointer);
    }
    if dst.len() < len {
        return Err(shangmi_status::ErrInternal);
    }
    // SAFETY: `src` has `len` readable bytes, `dst` at least `len` writable ones; `copy` is
    // memmove, correct when they overlap.
    unsafe { core::ptr::copy(src, dst.as_mut_ptr(), len) };
    Ok(())
}

/// Runs a whole-data transform on `in` -> `out` where the output is as long as the input.
///
/// # Safety
/// As every function here: `in` has `len` readable bytes, `out` `out_cap` writable ones,
/// `out_len` is writable.
unsafe fn same_length(
    src: *const u8,
    len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
    f: impl FnOnce(&mut [u8]) -> Result,
) -> shangmi_status {
    // `guard_out` zeroes the output when `f` fails.
    let run = || {
        // SAFETY: the caller's contract above.
        let o = unsafe { output(out, out_cap, out_len, len)? };
        // SAFETY: the caller's contract above.
        unsafe { move_in(o, src, len)? };
        f(o)
    };
    // SAFETY: the caller's contract above (`out`, `out_cap`, `out_len`).
    unsafe { guard_out(out, out_cap, out_len, run) }
}

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

/// `guard` for a computation that returns a value.
fn guard_value<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    let mut v = None;
    let s = guard(|| {
        v = Some(f()?);
        Ok(())
    });
    v.ok_or(s)
}

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

/// A streaming SM4 context for the raw modes: the library's [`Stream`], which owns its key
/// schedule and knows every call's output size.
#[derive(Clone)]
pub struct shangmi_sm4_stream {
    inner: Stream,
}

/// A streaming context for `mode` (`SHANGMI_SM4_ECB` ... `SHANGMI_SM4_CTR`); `iv` is 16
/// bytes (NULL for ECB); `padding` (ECB and CBC only) adds or checks PKCS#7 at the end.
///
/// # Safety
/// `key` 16 readable bytes, `iv` NULL or 16 readable bytes, `out` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm4_stream_new(
    mode: c_int,
    key: *const u8,
    iv: *const u8,
    encrypt: c_int,
    padding: c_int,
    out: *mut *mut shangmi_sm4_stream,
) -> shangmi_status {
    guard(|| {
        // SAFETY: the caller's contract above.
        let k = Zeroizing::new(unsafe { fixed::<16>(key)? });
        let iv = || {
            // SAFETY: the caller's contract above.
            unsafe { fixed::<16>(iv) }
        };
        let mode = match (mode, padding != 0) {
            (SHANGMI_SM4_ECB, false) => Mode::Ecb,
            (SHANGMI_SM4_ECB, true) => Mode::EcbPkcs7,
            (SHANGMI_SM4_CBC, false) => Mode::Cbc(iv()?),
            (SHANGMI_SM4_CBC, true) => Mode::CbcPkcs7(iv()?),
            (SHANGMI_SM4_CFB, false) => Mode::Cfb(iv()?),
            (SHANGMI_SM4_OFB, false) => Mode::Ofb(iv()?),
            (SHANGMI_SM4_CTR, false) => Mode::Ctr(iv()?),
            _ => return Err(shangmi_status::ErrInvalidArgument),
        };
        let dir = if encrypt != 0 {
            Direction::Encrypt
        } else {
            Direction::Decrypt
        };
        let s = shangmi_sm4_stream {
            inner: Stream::new(&k, mode, dir),
        };
        // SAFETY: the caller's contract above.
        unsafe { give(out, s) }
    })
}

/// A copy of `s` in `*out`, in the middle of a message too: both go on from where `s` is
/// (the same mode, direction, position and buffered bytes), each with its own key schedule.
/// A stream that has ended copies as ended.
///
/// # Safety
/// `s` is a live stream; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm4_stream_dup(
    s: *const shangmi_sm4_stream,
    out: *mut *mut shangmi_sm4_stream,
) -> shangmi_status {
    guard(|| {
        // SAFETY: the caller's contract above.
        let s = unsafe { handle(s)? };
        // SAFETY: the caller's contract above.
        unsafe { give(out, s.clone()) }
    })
}

/// Whether `[a, a + a_len)` and `[b, b + b_len)` share a byte.
fn overlap(a: *const u8, a_len: usize, b: *const u8, b_len: usize) -> bool {
    let (a, b) = (a as usize, b as usize);
    a_len > 0 && b_len > 0 && a < b.saturating_add(b_len) && b < a.saturating_add(a_len)
}

/// Processes `len` more bytes; `*out_len` is what this call releases (block modes hold back
/// a partial block, and decrypting with padding the last whole block, until final).
///
/// # Safety
/// `s` is a live stream used by no other thread now; `in`/`out`/`out_len` as in shangmi.h
/// (`in` and `out` may be the same buffer, or overlap).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm4_stream_update(
    s: *mut shangmi_sm4_stream,
    src: *const u8,
    len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    let run = || {
        // SAFETY: the caller's contract above.
        let s = unsafe { &mut handle_mut(s)?.inner };
        if s.is_finished() {
            return Err(shangmi_status::ErrState);
        }
        let need = s
            .update_len(len)
            .ok_or(shangmi_status::ErrInvalidArgument)?;
        // SAFETY: the caller's contract above; no slice over the output exists yet.
        unsafe { room(out, out_cap, out_len, need)? };
        if len > 0 && src.is_null() {
            return Err(shangmi_status::ErrNullPointer);
        }
        // Overlapping input is copied first (into memory that is wiped), so that no input
        // slice aliases the output slice.
        let copy;
        let data = if overlap(src, len, out, need) {
            let mut v = Zeroizing::new(Vec::new());
            v.try_reserve_exact(len)
                .map_err(|_| shangmi_status::ErrInternal)?;
            // SAFETY: the caller's contract above: `len` readable bytes at `src`.
            v.extend_from_slice(unsafe { input(src, len)? });
            copy = v;
            &copy[..]
        } else {
            // SAFETY: the caller's contract above; it does not overlap the output.
            unsafe { input(src, len)? }
        };
        // SAFETY: `room` checked `out_cap >= need`; no other slice over it exists.
        let o = unsafe { output(out, out_cap, out_len, need)? };
        s.update(data, o).map(|_| ()).map_err(mode_err)
    };
    // SAFETY: the caller's contract above (`out`, `out_cap`, `out_len`).
    unsafe { guard_out(out, out_cap, out_len, run) }
}

/// Ends the stream: block modes pad (encrypting) or check and strip the padding (decrypting),
/// and a partial block without padding is an error. Stream modes release nothing here.
///
/// # Safety
/// As `shangmi_sm4_stream_update`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm4_stream_final(
    s: *mut shangmi_sm4_stream,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    let run = || {
        // SAFETY: the caller's contract above.
        let s = unsafe { &mut handle_mut(s)?.inner };
        if s.is_finished() {
            return Err(shangmi_status::ErrState);
        }
        // The bound is checked before anything changes, so a too-small buffer can be retried.
        // SAFETY: the caller's contract above.
        let o = unsafe { output(out, out_cap, out_len, s.finish_len())? };
        let n = s.finish(o).map_err(mode_err)?;
        // SAFETY: `output` checked `out_len`.
        unsafe { written(out_len, n) };
        Ok(())
    };
    // SAFETY: the caller's contract above (`out`, `out_cap`, `out_len`).
    unsafe { guard_out(out, out_cap, out_len, run) }
}

/// Frees a stream (NULL is ignored); buffered data is wiped.
///
/// # Safety
/// `s` is NULL or a live stream, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm4_stream_free(s: *mut shangmi_sm4_stream) {
    // SAFETY: the caller's contract above.
    unsafe { release(s) }
}
