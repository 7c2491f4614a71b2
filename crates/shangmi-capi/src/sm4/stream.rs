//! A streaming SM4 context for C: the raw modes fed in pieces, with the padding done at the end.

use core::ffi::c_int;

use shangmi::sm4::{Direction, Mode, Stream};
use zeroize::Zeroizing;

use super::{
    SHANGMI_SM4_CBC, SHANGMI_SM4_CFB, SHANGMI_SM4_CTR, SHANGMI_SM4_ECB, SHANGMI_SM4_OFB, mode_err,
};
use crate::{
    fixed, give, guard, guard_out, handle, handle_mut, input, output, release, room,
    shangmi_status, written,
};

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
