//! SM2 public-key encryption (OpenSSL's asym-cipher operation), C1C3C2 in DER as OpenSSL
//! writes it.

use core::ffi::{CStr, c_int, c_void};

use shangmi::sm2::Format;
use zeroize::Zeroizing;

use crate::err::{Reason, fail};
use crate::guarded;
use crate::keys::{Key, key};
use crate::params::{self, OsslParam, Static};
use crate::served::{self, Op};

/// An encryption operation: the key, nothing else.
pub(super) struct CipherCtx {
    key: Option<Key>,
}

pub(super) unsafe extern "C" fn ac_new(_provctx: *mut c_void) -> *mut c_void {
    guarded(core::ptr::null_mut(), || {
        Box::into_raw(Box::new(CipherCtx { key: None })).cast()
    })
}

pub(super) unsafe extern "C" fn ac_init(
    ctx: *mut c_void,
    k: *mut c_void,
    _ps: *const OsslParam,
) -> c_int {
    guarded(0, || {
        // SAFETY: the core passes a live context and live key data.
        unsafe {
            let (Some(c), Some(k)) = (ctx.cast::<CipherCtx>().as_mut(), key(k)) else {
                return 0;
            };
            c.key = Some(k.clone());
            1
        }
    })
}

pub(super) unsafe extern "C" fn ac_encrypt(
    ctx: *mut c_void,
    out: *mut u8,
    out_len: *mut usize,
    out_size: usize,
    input: *const u8,
    len: usize,
) -> c_int {
    guarded(0, || {
        // SAFETY: the core's contract: live context, buffers of the given sizes.
        unsafe {
            let Some(c) = ctx.cast::<CipherCtx>().as_ref() else {
                return 0;
            };
            if out_len.is_null() {
                return 0;
            }
            if out.is_null() {
                // The ASN.1 layout's bound: the C library documents 126 bytes over the message.
                *out_len = len.saturating_add(126);
                return 1;
            }
            const F: &CStr = c"sm2_encrypt";
            let Some(pk) = c.key.as_ref().and_then(Key::public) else {
                return fail(Reason::NoKey, F);
            };
            if len > 0 && input.is_null() {
                return fail(Reason::InvalidArgument, F);
            }
            let m = if len == 0 {
                &[][..]
            } else {
                core::slice::from_raw_parts(input, len)
            };
            let Ok(ct) = pk.encrypt(m, Format::Der) else {
                return fail(Reason::Rng, F);
            };
            served::count(Op::Sm2Encrypt);
            if ct.len() > out_size {
                return fail(Reason::BufferTooSmall, F);
            }
            core::ptr::copy_nonoverlapping(ct.as_ptr(), out, ct.len());
            *out_len = ct.len();
            1
        }
    })
}

pub(super) unsafe extern "C" fn ac_decrypt(
    ctx: *mut c_void,
    out: *mut u8,
    out_len: *mut usize,
    out_size: usize,
    input: *const u8,
    len: usize,
) -> c_int {
    guarded(0, || {
        // SAFETY: the core's contract: live context, buffers of the given sizes.
        unsafe {
            let Some(c) = ctx.cast::<CipherCtx>().as_ref() else {
                return 0;
            };
            if out_len.is_null() || input.is_null() {
                return 0;
            }
            if out.is_null() {
                *out_len = len;
                return 1;
            }
            const F: &CStr = c"sm2_decrypt";
            let Some(Key::Private(k)) = &c.key else {
                return fail(Reason::NoKey, F);
            };
            served::count(Op::Sm2Decrypt);
            let Ok(pt) = k.decrypt(core::slice::from_raw_parts(input, len), Format::Der) else {
                return fail(Reason::DecryptionFailed, F);
            };
            let pt = Zeroizing::new(pt);
            if pt.len() > out_size {
                return fail(Reason::BufferTooSmall, F);
            }
            core::ptr::copy_nonoverlapping(pt.as_ptr(), out, pt.len());
            *out_len = pt.len();
            1
        }
    })
}

pub(super) unsafe extern "C" fn ac_set_params(_ctx: *mut c_void, ps: *const OsslParam) -> c_int {
    guarded(0, || {
        // SAFETY: the core passes a terminated array (or NULL).
        unsafe {
            for p in params::entries(ps) {
                if params::is(p, c"digest") && !params::names(p, b"SM3") {
                    return fail(Reason::Unsupported, c"sm2_cipher_set_params");
                }
            }
        }
        1
    })
}

static AC_SETTABLE: Static<[OsslParam; 2]> = Static([
    params::describe(c"digest", params::UTF8_STRING),
    params::END,
]);

pub(super) unsafe extern "C" fn ac_settable(
    _ctx: *mut c_void,
    _provctx: *mut c_void,
) -> *const OsslParam {
    AC_SETTABLE.0.as_ptr()
}
