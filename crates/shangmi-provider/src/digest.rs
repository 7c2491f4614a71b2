//! SM3 as an OpenSSL digest.

use core::ffi::{c_int, c_void};
use std::sync::OnceLock;

use shangmi::sm3::{self, Sm3};

use crate::params::{self, OsslParam, Static};
use crate::{
    ALGORITHM_END, Algorithm, DISPATCH_END, Dispatch, PROPERTIES, entry, free_boxed, guarded,
};

type NewCtx = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
type Init = unsafe extern "C" fn(*mut c_void, *const OsslParam) -> c_int;
type Update = unsafe extern "C" fn(*mut c_void, *const u8, usize) -> c_int;
type Final = unsafe extern "C" fn(*mut c_void, *mut u8, *mut usize, usize) -> c_int;
type FreeCtx = unsafe extern "C" fn(*mut c_void);
type DupCtx = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
type GetParams = unsafe extern "C" fn(*mut OsslParam) -> c_int;
type Gettable = unsafe extern "C" fn(*mut c_void) -> *const OsslParam;

unsafe extern "C" fn newctx(_provctx: *mut c_void) -> *mut c_void {
    guarded(core::ptr::null_mut(), || {
        Box::into_raw(Box::new(Sm3::new())).cast()
    })
}

unsafe extern "C" fn init(ctx: *mut c_void, _params: *const OsslParam) -> c_int {
    guarded(0, || {
        // SAFETY: `ctx` came from `newctx`/`dupctx` and the core serialises calls on it.
        match unsafe { ctx.cast::<Sm3>().as_mut() } {
            Some(h) => {
                h.reset();
                1
            }
            None => 0,
        }
    })
}

unsafe extern "C" fn update(ctx: *mut c_void, data: *const u8, len: usize) -> c_int {
    guarded(0, || {
        // SAFETY: as `init`; `data` has `len` readable bytes (NULL only with 0).
        unsafe {
            let Some(h) = ctx.cast::<Sm3>().as_mut() else {
                return 0;
            };
            if len > 0 {
                if data.is_null() {
                    return 0;
                }
                h.update(core::slice::from_raw_parts(data, len));
            }
        }
        1
    })
}

unsafe extern "C" fn final_(
    ctx: *mut c_void,
    out: *mut u8,
    out_len: *mut usize,
    out_size: usize,
) -> c_int {
    guarded(0, || {
        if out.is_null() || out_size < sm3::DIGEST_SIZE {
            return crate::err::fail(crate::err::Reason::BufferTooSmall, c"sm3_final");
        }
        // SAFETY: as `init`; `out` has `out_size` >= 32 writable bytes; `out_len` NULL or writable.
        unsafe {
            let Some(h) = ctx.cast::<Sm3>().as_mut() else {
                return 0;
            };
            let d = h.finalize_reset();
            crate::served::count(crate::served::Op::Sm3);
            core::ptr::copy_nonoverlapping(d.as_ptr(), out, d.len());
            if !out_len.is_null() {
                *out_len = d.len();
            }
        }
        1
    })
}

unsafe extern "C" fn dupctx(ctx: *mut c_void) -> *mut c_void {
    guarded(core::ptr::null_mut(), || {
        // SAFETY: as `init`.
        match unsafe { ctx.cast::<Sm3>().as_ref() } {
            Some(h) => Box::into_raw(Box::new(h.clone())).cast(),
            None => core::ptr::null_mut(),
        }
    })
}

static GETTABLE: Static<[OsslParam; 5]> = Static([
    params::describe(c"blocksize", params::UNSIGNED_INTEGER),
    params::describe(c"size", params::UNSIGNED_INTEGER),
    params::describe(c"xof", params::INTEGER),
    params::describe(c"algid-absent", params::INTEGER),
    params::END,
]);

unsafe extern "C" fn gettable_params(_provctx: *mut c_void) -> *const OsslParam {
    GETTABLE.0.as_ptr()
}

unsafe extern "C" fn get_params(ps: *mut OsslParam) -> c_int {
    guarded(0, || {
        // SAFETY: the core passes a terminated array whose entries fit their types.
        unsafe {
            for p in params::entries(ps) {
                let v = if params::is(p, c"blocksize") {
                    sm3::BLOCK_SIZE as u64
                } else if params::is(p, c"size") {
                    sm3::DIGEST_SIZE as u64
                } else if params::is(p, c"xof") || params::is(p, c"algid-absent") {
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
    })
}

const OSSL_FUNC_DIGEST_NEWCTX: c_int = 1;
const OSSL_FUNC_DIGEST_INIT: c_int = 2;
const OSSL_FUNC_DIGEST_UPDATE: c_int = 3;
const OSSL_FUNC_DIGEST_FINAL: c_int = 4;
const OSSL_FUNC_DIGEST_FREECTX: c_int = 6;
const OSSL_FUNC_DIGEST_DUPCTX: c_int = 7;
const OSSL_FUNC_DIGEST_GET_PARAMS: c_int = 8;
const OSSL_FUNC_DIGEST_GETTABLE_PARAMS: c_int = 11;

/// The digests this provider offers (SM3).
pub(crate) fn algorithms() -> *const Algorithm {
    static T: OnceLock<Static<(Vec<Dispatch>, Vec<Algorithm>)>> = OnceLock::new();
    let t = T.get_or_init(|| {
        let sm3 = vec![
            entry::<NewCtx>(OSSL_FUNC_DIGEST_NEWCTX, newctx),
            entry::<Init>(OSSL_FUNC_DIGEST_INIT, init),
            entry::<Update>(OSSL_FUNC_DIGEST_UPDATE, update),
            entry::<Final>(OSSL_FUNC_DIGEST_FINAL, final_),
            entry::<FreeCtx>(OSSL_FUNC_DIGEST_FREECTX, free_boxed::<Sm3>),
            entry::<DupCtx>(OSSL_FUNC_DIGEST_DUPCTX, dupctx),
            entry::<GetParams>(OSSL_FUNC_DIGEST_GET_PARAMS, get_params),
            entry::<Gettable>(OSSL_FUNC_DIGEST_GETTABLE_PARAMS, gettable_params),
            DISPATCH_END,
        ];
        let algs = vec![
            Algorithm {
                names: crate::params::name_list("SM3", &shangmi::oid::SM3).as_ptr(),
                properties: PROPERTIES.as_ptr(),
                implementation: sm3.as_ptr(),
                description: c"shangmi SM3".as_ptr(),
            },
            ALGORITHM_END,
        ];
        Static((sm3, algs))
    });
    t.0.1.as_ptr()
}
