//! SM4 for C: the raw modes, XTS, the AEADs (GCM, CCM), CMAC and a streaming context.
//!
//! Data goes from `in` to `out`, which may be the same buffer (or overlap): the input is
//! moved into the output first and transformed there, so no input slice ever aliases the
//! output. Keys, IVs, nonces and AAD must not overlap `out`.

use core::ffi::c_int;

use shangmi::sm4::Error as ModeError;

use crate::{Result, guard, guard_out, output, shangmi_status};

mod aead;
mod block;
mod stream;

pub use aead::*;
pub use block::*;
pub use stream::*;

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

/// `guard` for a computation that returns a value.
fn guard_value<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    let mut v = None;
    let s = guard(|| {
        v = Some(f()?);
        Ok(())
    });
    v.ok_or(s)
}
