//! SM4 for C: the raw modes, XTS, the AEADs (GCM, CCM), CMAC and a streaming context.
//!
//! Data goes from `in` to `out`, which may be the same buffer (or overlap): the input is
//! moved into the output first and transformed there, so no input slice ever aliases the
//! output. Keys, IVs, nonces and AAD must not overlap `out`.

use core::ffi::c_int;

use self_cell::self_cell;
use shangmi::sm4::modes::{self, Error as ModeError, cbc, cfb, ctr, ecb, ofb, xts};
use shangmi::sm4::{Sm4, Sm4Ccm, Sm4Gcm};
use zeroize::{Zeroize, Zeroizing};

use crate::{
    Result, fixed, fixed_out, give, guard, handle, handle_mut, input, output, release, room,
    shangmi_status, written,
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
    debug_assert!(dst.len() >= len);
    // SAFETY: `src` has `len` readable bytes, `dst` at least `len` writable ones; `copy` is
    // memmove, correct when they overlap.
    unsafe { core::ptr::copy(src, dst.as_mut_ptr(), len) };
    Ok(())
}

/// The padded length of `len` bytes (PKCS#7 always adds 1 to 16).
fn padded(len: usize) -> usize {
    len / 16 * 16 + 16
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
    guard(|| {
        // SAFETY: the caller's contract above.
        let o = unsafe { output(out, out_cap, out_len, len)? };
        // SAFETY: the caller's contract above.
        unsafe { move_in(o, src, len)? };
        let r = f(o);
        if r.is_err() {
            o.zeroize();
        }
        r
    })
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
    guard(|| {
        // SAFETY: the caller's contract above.
        let iv = unsafe { fixed::<16>(iv)? };
        // SAFETY: the caller's contract above.
        match unsafe {
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
        } {
            shangmi_status::Ok => Ok(()),
            e => Err(e),
        }
    })
}

/// ECB (`iv` None) or CBC, with or without padding.
///
/// # Safety
/// As the callers.
#[allow(clippy::too_many_arguments)]
unsafe fn block_mode(
    key: *const u8,
    iv: Option<[u8; 16]>,
    encrypt: bool,
    padding: bool,
    src: *const u8,
    len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    guard(|| {
        // SAFETY: the caller's contract.
        let c = Sm4::new(&Zeroizing::new(unsafe { fixed::<16>(key)? }));
        let run = |buf: &mut [u8], enc: bool| match (iv, enc) {
            (None, true) => ecb::encrypt(&c, buf),
            (None, false) => ecb::decrypt(&c, buf),
            (Some(iv), true) => cbc::Encryptor::new(&c, &iv).encrypt_blocks(buf),
            (Some(iv), false) => cbc::Decryptor::new(&c, &iv).decrypt_blocks(buf),
        };
        if !padding {
            if !len.is_multiple_of(16) {
                return Err(shangmi_status::ErrInvalidArgument);
            }
            // SAFETY: the caller's contract.
            let o = unsafe { output(out, out_cap, out_len, len)? };
            // SAFETY: the caller's contract.
            unsafe { move_in(o, src, len)? };
            return run(o, encrypt).map_err(mode_err);
        }
        if encrypt {
            let need = padded(len);
            // SAFETY: the caller's contract.
            let o = unsafe { output(out, out_cap, out_len, need)? };
            // SAFETY: the caller's contract.
            unsafe { move_in(o, src, len)? };
            o[len..].fill((need - len) as u8);
            return run(o, true).map_err(mode_err);
        }
        // Decrypting with padding: the plaintext is at most len - 1 bytes; decrypt into a
        // private buffer, check the padding, and only then copy out what fits.
        if len == 0 || !len.is_multiple_of(16) {
            return Err(shangmi_status::ErrInvalidArgument);
        }
        // SAFETY: the caller's contract.
        let mut buf = Zeroizing::new(unsafe { crate::input(src, len)? }.to_vec());
        run(&mut buf, false).map_err(mode_err)?;
        let last: &[u8; 16] = buf[len - 16..].try_into().expect("16 bytes");
        let pad = modes::padding::unpad_len(last).map_err(mode_err)?;
        // SAFETY: the caller's contract.
        let o = unsafe { output(out, out_cap, out_len, len - pad)? };
        o.copy_from_slice(&buf[..len - pad]);
        Ok(())
    })
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
        Err(e) => return e,
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
        Err(e) => return e,
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
    guard(|| {
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
    })
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
    guard(|| {
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
        // The tag is read before the output is written: `out` may overlap it.
        // SAFETY: `src` has `len` = body + t readable bytes.
        let tag = unsafe { input(src.add(body), t)? }.to_vec();
        // SAFETY: the caller's contract.
        let o = unsafe { output(out, out_cap, out_len, body)? };
        // SAFETY: the caller's contract.
        unsafe { move_in(o, src, body)? };
        // Both decryptions zero the buffer when the tag is wrong.
        match &a {
            Aead::Gcm(g) => g.decrypt_in_place_detached(n, ad, o, &tag),
            Aead::Ccm(c) => c.decrypt_in_place_detached(n, ad, o, &tag),
        }
        .map_err(|e| {
            o.zeroize();
            mode_err(e)
        })
    })
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

enum Mode<'a> {
    Ecb(&'a Sm4),
    CbcEnc(cbc::Encryptor<'a>),
    CbcDec(cbc::Decryptor<'a>),
    Cfb(cfb::Cfb<'a>),
    Ofb(ofb::Ofb<'a>),
    Ctr(ctr::Ctr<'a>),
}

self_cell!(
    struct ModeCell {
        owner: Box<Sm4>,
        #[covariant]
        dependent: Mode,
    }
);

/// A streaming SM4 context for the raw modes.
pub struct shangmi_sm4_stream {
    cell: ModeCell,
    encrypt: bool,
    padding: bool,
    pending: Zeroizing<Vec<u8>>,
    done: bool,
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
        let iv = if mode == SHANGMI_SM4_ECB {
            [0; 16]
        } else {
            // SAFETY: the caller's contract above.
            unsafe { fixed::<16>(iv)? }
        };
        if padding != 0 && !matches!(mode, SHANGMI_SM4_ECB | SHANGMI_SM4_CBC) {
            return Err(shangmi_status::ErrInvalidArgument);
        }
        let enc = encrypt != 0;
        let cell = ModeCell::try_new(Box::new(Sm4::new(&k)), |c| match mode {
            SHANGMI_SM4_ECB => Ok(Mode::Ecb(c)),
            SHANGMI_SM4_CBC if enc => Ok(Mode::CbcEnc(cbc::Encryptor::new(c, &iv))),
            SHANGMI_SM4_CBC => Ok(Mode::CbcDec(cbc::Decryptor::new(c, &iv))),
            SHANGMI_SM4_CFB => Ok(Mode::Cfb(cfb::Cfb::new(c, &iv))),
            SHANGMI_SM4_OFB => Ok(Mode::Ofb(ofb::Ofb::new(c, &iv))),
            SHANGMI_SM4_CTR => Ok(Mode::Ctr(ctr::Ctr::new(c, &iv))),
            _ => Err(shangmi_status::ErrInvalidArgument),
        })?;
        let s = shangmi_sm4_stream {
            cell,
            encrypt: enc,
            padding: padding != 0,
            pending: Zeroizing::new(Vec::with_capacity(16)),
            done: false,
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
        let cell = s.cell.with_dependent(|owner, m| {
            ModeCell::new(Box::new(Sm4::clone(owner)), |c| match m {
                Mode::Ecb(_) => Mode::Ecb(c),
                Mode::CbcEnc(e) => Mode::CbcEnc(e.clone_onto(c)),
                Mode::CbcDec(d) => Mode::CbcDec(d.clone_onto(c)),
                Mode::Cfb(f) => Mode::Cfb(f.clone_onto(c)),
                Mode::Ofb(o) => Mode::Ofb(o.clone_onto(c)),
                Mode::Ctr(t) => Mode::Ctr(t.clone_onto(c)),
            })
        });
        let copy = shangmi_sm4_stream {
            cell,
            encrypt: s.encrypt,
            padding: s.padding,
            pending: s.pending.clone(),
            done: s.done,
        };
        // SAFETY: the caller's contract above.
        unsafe { give(out, copy) }
    })
}

impl shangmi_sm4_stream {
    fn block_mode(&mut self) -> bool {
        self.cell.with_dependent_mut(|_, m| {
            matches!(m, Mode::Ecb(_) | Mode::CbcEnc(_) | Mode::CbcDec(_))
        })
    }

    fn apply(&mut self, buf: &mut [u8]) -> Result {
        let enc = self.encrypt;
        self.cell
            .with_dependent_mut(|_, m| match m {
                Mode::Ecb(c) if enc => ecb::encrypt(c, buf),
                Mode::Ecb(c) => ecb::decrypt(c, buf),
                Mode::CbcEnc(e) => e.encrypt_blocks(buf),
                Mode::CbcDec(d) => d.decrypt_blocks(buf),
                Mode::Cfb(f) => {
                    if enc {
                        f.encrypt(buf)
                    } else {
                        f.decrypt(buf)
                    }
                    Ok(())
                }
                Mode::Ofb(o) => {
                    o.apply_keystream(buf);
                    Ok(())
                }
                Mode::Ctr(c) => {
                    c.apply_keystream(buf);
                    Ok(())
                }
            })
            .map_err(mode_err)
    }

    /// How many bytes an update of `len` more bytes releases.
    fn ready(&self, len: usize, block: bool) -> usize {
        if !block {
            return len;
        }
        let total = self.pending.len().saturating_add(len);
        let mut take = total / 16 * 16;
        if !self.encrypt && self.padding && take == total {
            take = take.saturating_sub(16);
        }
        take
    }
}

/// Processes `len` more bytes; `*out_len` is what this call releases (block modes hold back
/// a partial block, and decrypting with padding the last whole block, until final).
///
/// # Safety
/// `s` is a live stream used by no other thread now; `in`/`out`/`out_len` as in shangmi.h
/// (`in` and `out` may be the same buffer).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_sm4_stream_update(
    s: *mut shangmi_sm4_stream,
    src: *const u8,
    len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    guard(|| {
        // SAFETY: the caller's contract above.
        let s = unsafe { handle_mut(s)? };
        if s.done {
            return Err(shangmi_status::ErrState);
        }
        let block = s.block_mode();
        let need = s.ready(len, block);
        if !block {
            // SAFETY: the caller's contract above; the input is moved in by raw copy (no
            // slice over it), so it may be the output buffer itself.
            let o = unsafe { output(out, out_cap, out_len, need)? };
            // SAFETY: as above.
            unsafe { move_in(o, src, len)? };
            return s.apply(o);
        }
        if len > 0 && src.is_null() {
            return Err(shangmi_status::ErrNullPointer);
        }
        // SAFETY: the caller's contract above; no slice over the output exists yet.
        unsafe { room(out, out_cap, out_len, need)? };
        if need == 0 {
            // SAFETY: the caller's contract above; nothing is written to `out`.
            let d = unsafe { input(src, len)? };
            s.pending.extend_from_slice(d);
            return Ok(());
        }
        // `need` is a positive multiple of 16 and at least the (at most one block) pending,
        // so what is held back, `keep` bytes, is the input's tail. Input and output may be the
        // same memory, with the output running `p` bytes ahead: the tail is saved first, the
        // rest moved with memmove, and only then does a slice over the output exist.
        let p = s.pending.len();
        // At most one block: a partial block, or the last whole one held for its padding.
        let keep = p
            .checked_add(len)
            .and_then(|t| t.checked_sub(need))
            .filter(|&k| k <= 16)
            .ok_or(shangmi_status::ErrInvalidArgument)?;
        let mut tail = Zeroizing::new([0u8; 16]);
        // SAFETY: `src` has `len >= keep` readable bytes (non-null when `len > 0`); `out` has
        // `need` writable bytes (checked by `room`), `src` the `need - p <= len` read here;
        // `copy` is memmove, correct when they overlap.
        let o = unsafe {
            if keep > 0 {
                core::ptr::copy_nonoverlapping(src.add(len - keep), tail.as_mut_ptr(), keep);
            }
            if need > p {
                core::ptr::copy(src, out.add(p), need - p);
            }
            core::slice::from_raw_parts_mut(out, need)
        };
        o[..p].copy_from_slice(&s.pending);
        s.pending.clear();
        s.pending.extend_from_slice(&tail[..keep]);
        s.apply(o)
    })
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
    guard(|| {
        // SAFETY: the caller's contract above.
        let s = unsafe { handle_mut(s)? };
        if s.done {
            return Err(shangmi_status::ErrState);
        }
        if !s.block_mode() {
            // SAFETY: the caller's contract above.
            unsafe { output(out, out_cap, out_len, 0)? };
            s.done = true;
            return Ok(());
        }
        // The output bound is checked before anything changes, so a too-small buffer can be
        // retried: padding adds 1..=16 bytes; stripping it leaves at most 15.
        let bound = match (s.padding, s.encrypt) {
            (false, _) if !s.pending.is_empty() => return Err(shangmi_status::ErrInvalidArgument),
            (false, _) => 0,
            (true, true) => padded(s.pending.len()),
            (true, false) if s.pending.len() != 16 => {
                return Err(shangmi_status::ErrInvalidArgument);
            }
            (true, false) => 15,
        };
        // SAFETY: the caller's contract above.
        let o = unsafe { output(out, out_cap, out_len, bound)? };
        let mut last = Zeroizing::new(core::mem::take(&mut *s.pending));
        if s.padding && s.encrypt {
            modes::padding::pad(&mut last);
        }
        s.done = true;
        s.apply(&mut last)?;
        let keep = if s.padding && !s.encrypt {
            let block: &[u8; 16] = last[..].try_into().expect("one block");
            16 - modes::padding::unpad_len(block).map_err(mode_err)?
        } else {
            last.len()
        };
        o[..keep].copy_from_slice(&last[..keep]);
        // SAFETY: `output` checked `out_len`.
        unsafe { written(out_len, keep) };
        Ok(())
    })
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
