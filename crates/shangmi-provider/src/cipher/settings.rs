//! The SM4 ciphers' parameters: what `get_params` reports for each mode, and the context's
//! parameters read and set.

use core::ffi::{CStr, c_int, c_void};

use super::{CBC, CFB, Ctx, ECB, OFB};
use crate::err::{Reason, fail};
use crate::guarded;
use crate::params::{self, OsslParam, Static};

/// What `get_params` reports for one cipher: constant for an algorithm.
pub(crate) struct Shape {
    /// EVP_CIPH_*_MODE.
    pub mode: u64,
    pub key_len: u64,
    pub iv_len: u64,
    pub block: u64,
    pub aead: bool,
    pub custom_iv: bool,
}

impl Shape {
    /// Writes the requested entries.
    ///
    /// # Safety
    /// `ps` is a terminated array whose entries fit their types.
    pub(crate) unsafe fn write(&self, ps: *mut OsslParam) -> c_int {
        // SAFETY: the contract above.
        unsafe {
            for p in params::entries(ps) {
                let v = if params::is(p, c"mode") {
                    self.mode
                } else if params::is(p, c"keylen") {
                    self.key_len
                } else if params::is(p, c"ivlen") {
                    self.iv_len
                } else if params::is(p, c"blocksize") {
                    self.block
                } else if params::is(p, c"aead") {
                    u64::from(self.aead)
                } else if params::is(p, c"custom-iv") {
                    u64::from(self.custom_iv)
                } else if [c"cts", c"tls-multi", c"has-randkey"]
                    .iter()
                    .any(|k| params::is(p, k))
                {
                    0
                } else {
                    continue;
                };
                if !params::set_uint(p, v) {
                    return 0;
                }
            }
        }
        1
    }
}

pub(super) const fn shape(mode: c_int) -> Shape {
    let (evp, block) = match mode {
        ECB => (1, 16),
        CBC => (2, 16),
        CFB => (3, 1),
        OFB => (4, 1),
        _ => (5, 1),
    };
    Shape {
        mode: evp,
        key_len: 16,
        iv_len: if mode == ECB { 0 } else { 16 },
        block,
        aead: false,
        custom_iv: false,
    }
}

pub(super) unsafe extern "C" fn get_params<const MODE: c_int>(ps: *mut OsslParam) -> c_int {
    // SAFETY: the core passes a terminated array whose entries fit their types.
    guarded(0, || unsafe { shape(MODE).write(ps) })
}

pub(super) unsafe extern "C" fn get_ctx_params(ctx: *mut c_void, ps: *const OsslParam) -> c_int {
    guarded(0, || {
        // SAFETY: `ctx` from `newctx`; `ps` a terminated array whose entries fit their types.
        unsafe {
            let Some(c) = ctx.cast::<Ctx>().as_ref() else {
                return fail(Reason::State, c"sm4_cipher_get_ctx_params");
            };
            for p in params::entries(ps) {
                let ok = if params::is(p, c"keylen") {
                    params::set_uint(p, 16)
                } else if params::is(p, c"ivlen") {
                    params::set_uint(p, if c.mode == ECB { 0 } else { 16 })
                } else if params::is(p, c"padding") {
                    params::set_uint(p, u64::from(c.padding))
                } else if params::is(p, c"iv") {
                    params::set_octets(p, &c.iv)
                } else {
                    true
                };
                if !ok {
                    return 0;
                }
            }
        }
        1
    })
}

pub(super) unsafe extern "C" fn set_ctx_params(ctx: *mut c_void, ps: *const OsslParam) -> c_int {
    guarded(0, || {
        // SAFETY: `ctx` from `newctx`; `ps` NULL or a terminated array.
        match unsafe { ctx.cast::<Ctx>().as_mut() } {
            // SAFETY: as above.
            Some(c) => unsafe { apply_params(c, ps) },
            None => fail(Reason::State, c"sm4_cipher_set_ctx_params"),
        }
    })
}

/// The parameters in `ps` applied to `c` (from `set_ctx_params`, and from `init` on the
/// context it already holds).
///
/// # Safety
/// `ps` NULL or a terminated array whose entries fit their types.
pub(super) unsafe fn apply_params(c: &mut Ctx, ps: *const OsslParam) -> c_int {
    const F: &CStr = c"sm4_cipher_set_ctx_params";
    // SAFETY: the contract above.
    for p in unsafe { params::entries(ps) } {
        // SAFETY: as above.
        if unsafe { params::is(p, c"padding") } {
            // SAFETY: as above.
            let Some(v) = (unsafe { params::get_uint(p) }) else {
                return fail(Reason::InvalidArgument, F);
            };
            if c.padding != (v != 0) {
                c.padding = v != 0;
                // Applies to the next stream (OpenSSL sets it before any data).
                c.stream = None;
            }
        // SAFETY: as above.
        } else if unsafe { params::is(p, c"keylen") && params::get_uint(p) != Some(16) } {
            return fail(Reason::InvalidKeyLength, F);
        }
    }
    1
}

pub(crate) static GETTABLE: Static<[OsslParam; 10]> = Static([
    params::describe(c"mode", params::UNSIGNED_INTEGER),
    params::describe(c"keylen", params::UNSIGNED_INTEGER),
    params::describe(c"ivlen", params::UNSIGNED_INTEGER),
    params::describe(c"blocksize", params::UNSIGNED_INTEGER),
    params::describe(c"aead", params::INTEGER),
    params::describe(c"custom-iv", params::INTEGER),
    params::describe(c"cts", params::INTEGER),
    params::describe(c"tls-multi", params::INTEGER),
    params::describe(c"has-randkey", params::INTEGER),
    params::END,
]);

static CTX_GETTABLE: Static<[OsslParam; 5]> = Static([
    params::describe(c"keylen", params::UNSIGNED_INTEGER),
    params::describe(c"ivlen", params::UNSIGNED_INTEGER),
    params::describe(c"padding", params::UNSIGNED_INTEGER),
    params::describe(c"iv", params::OCTET_STRING),
    params::END,
]);

static CTX_SETTABLE: Static<[OsslParam; 3]> = Static([
    params::describe(c"padding", params::UNSIGNED_INTEGER),
    params::describe(c"keylen", params::UNSIGNED_INTEGER),
    params::END,
]);

pub(crate) unsafe extern "C" fn gettable_params(_provctx: *mut c_void) -> *const OsslParam {
    GETTABLE.0.as_ptr()
}

pub(super) unsafe extern "C" fn gettable_ctx_params(
    _ctx: *mut c_void,
    _provctx: *mut c_void,
) -> *const OsslParam {
    CTX_GETTABLE.0.as_ptr()
}

pub(super) unsafe extern "C" fn settable_ctx_params(
    _ctx: *mut c_void,
    _provctx: *mut c_void,
) -> *const OsslParam {
    CTX_SETTABLE.0.as_ptr()
}
