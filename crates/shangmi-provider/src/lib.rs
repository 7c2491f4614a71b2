//! An OpenSSL 3 provider: `shangmi.so`, loaded by the stock `openssl` and libcrypto (with
//! `-provider-path DIR -provider shangmi`, or from `openssl.cnf`), answering for SM3, the
//! SM4 modes and SM2 (keys, signatures, encryption, ECDH) with the property
//! `provider=shangmi`, and for OpenSSL 4.0's libssl the TLS 1.3 group curveSM2 and signature
//! scheme sm2sig_sm3 (RFC 8998). It links nothing from libcrypto (the OSSL_PARAM arrays are
//! read and written in `params.rs`), so one build loads into OpenSSL 3.0, every later 3.x and
//! 4.x; where OpenSSL changed SM2's defaults it follows the running version
//! (`core_version.rs`). `scripts/build-provider.sh` puts it at `target/ossl-modules/`.
//!
//! Every entry point catches panics (OpenSSL sees a failure, never an unwind) and treats its
//! pointers as the core's contract says (`openssl/core_dispatch.h`).

#![allow(non_snake_case)]

use core::ffi::{CStr, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

mod aead;
mod capabilities;
mod cipher;
mod core_version;
mod digest;
mod err;
mod exchange;
mod keys;
mod params;
mod served;
mod sm2;
mod xts;

use params::{OsslParam, Static};

/// `OSSL_DISPATCH`: a function id and a type-erased function pointer.
#[repr(C)]
pub struct Dispatch {
    id: c_int,
    f: Option<unsafe extern "C" fn()>,
}

/// `OSSL_ALGORITHM`.
#[repr(C)]
pub struct Algorithm {
    names: *const core::ffi::c_char,
    properties: *const core::ffi::c_char,
    implementation: *const Dispatch,
    description: *const core::ffi::c_char,
}

/// A dispatch entry for `f`, whose type `F` is a function-pointer type spelled at the call.
pub(crate) fn entry<F: Copy>(id: c_int, f: F) -> Dispatch {
    assert_eq!(size_of::<F>(), size_of::<unsafe extern "C" fn()>());
    // SAFETY: F is an `unsafe extern "C" fn` pointer type (the callers name one), the same size
    // as the erased type; the core casts it back to the type its id prescribes.
    let f = unsafe { core::mem::transmute_copy::<F, unsafe extern "C" fn()>(&f) };
    Dispatch { id, f: Some(f) }
}

pub(crate) const DISPATCH_END: Dispatch = Dispatch { id: 0, f: None };

pub(crate) const ALGORITHM_END: Algorithm = Algorithm {
    names: core::ptr::null(),
    properties: core::ptr::null(),
    implementation: core::ptr::null(),
    description: core::ptr::null(),
};

pub(crate) const PROPERTIES: &CStr = c"provider=shangmi";

/// Frees a context or key object made by `Box::into_raw(Box::new(T))` (NULL is ignored):
/// every `freectx`/`free` entry point.
///
/// # Safety
/// `p` is NULL or such a pointer, freed once, by the core.
pub(crate) unsafe extern "C" fn free_boxed<T>(p: *mut c_void) {
    if !p.is_null() {
        // SAFETY: the contract above.
        drop(unsafe { Box::from_raw(p.cast::<T>()) });
    }
}

/// Runs an entry point's body; a panic becomes `fail` (and an internal error on the queue).
pub(crate) fn guarded<T>(fail: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| {
        err::raise(err::Reason::Internal, c"shangmi");
        fail
    })
}

const OSSL_FUNC_PROVIDER_TEARDOWN: c_int = 1024;
const OSSL_FUNC_PROVIDER_GETTABLE_PARAMS: c_int = 1025;
const OSSL_FUNC_PROVIDER_GET_PARAMS: c_int = 1026;
const OSSL_FUNC_PROVIDER_QUERY_OPERATION: c_int = 1027;
const OSSL_FUNC_PROVIDER_GET_REASON_STRINGS: c_int = 1029;
const OSSL_FUNC_PROVIDER_GET_CAPABILITIES: c_int = 1030;
const OSSL_OP_DIGEST: c_int = 1;
const OSSL_OP_CIPHER: c_int = 2;
const OSSL_OP_KEYMGMT: c_int = 10;
const OSSL_OP_KEYEXCH: c_int = 11;
const OSSL_OP_SIGNATURE: c_int = 12;
const OSSL_OP_ASYM_CIPHER: c_int = 13;

type Teardown = unsafe extern "C" fn(*mut c_void);
type Gettable = unsafe extern "C" fn(*mut c_void) -> *const OsslParam;
type GetParams = unsafe extern "C" fn(*mut c_void, *mut OsslParam) -> c_int;
type Query = unsafe extern "C" fn(*mut c_void, c_int, *mut c_int) -> *const Algorithm;
type Reasons = unsafe extern "C" fn(*mut c_void) -> *const err::Item;
type Capabilities = unsafe extern "C" fn(
    *mut c_void,
    *const core::ffi::c_char,
    Option<keys::ParamCallback>,
    *mut c_void,
) -> c_int;

unsafe extern "C" fn teardown(provctx: *mut c_void) {
    guarded((), || {
        err::detach(provctx);
        served::write_if_asked();
    });
}

static PROVIDER_PARAMS: Static<[OsslParam; 6]> = Static([
    params::describe(c"name", params::UTF8_PTR),
    params::describe(c"version", params::UTF8_PTR),
    params::describe(c"buildinfo", params::UTF8_PTR),
    params::describe(c"status", params::INTEGER),
    params::describe(c"served", params::UTF8_STRING),
    params::END,
]);

unsafe extern "C" fn gettable_params(_provctx: *mut c_void) -> *const OsslParam {
    PROVIDER_PARAMS.0.as_ptr()
}

const VERSION: &CStr =
    match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
        Ok(s) => s,
        Err(_) => panic!("version has no NUL"),
    };

unsafe extern "C" fn get_params(_provctx: *mut c_void, ps: *mut OsslParam) -> c_int {
    guarded(0, || {
        // SAFETY: the core passes a terminated array whose entries fit their types.
        unsafe {
            for p in params::entries(ps) {
                let ok = if params::is(p, c"name") {
                    params::set_str(p, c"shangmi")
                } else if params::is(p, c"version") || params::is(p, c"buildinfo") {
                    params::set_str(p, VERSION)
                } else if params::is(p, c"status") {
                    params::set_uint(p, 1)
                } else if params::is(p, c"served") {
                    params::set_string(p, &served::report())
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

unsafe extern "C" fn query_operation(
    _provctx: *mut c_void,
    operation: c_int,
    no_store: *mut c_int,
) -> *const Algorithm {
    guarded(core::ptr::null(), || {
        if !no_store.is_null() {
            // SAFETY: the core passes a writable int.
            unsafe { *no_store = 0 };
        }
        match operation {
            OSSL_OP_DIGEST => digest::algorithms(),
            OSSL_OP_CIPHER => cipher::algorithms(),
            OSSL_OP_KEYMGMT => keys::keymgmt(),
            OSSL_OP_KEYEXCH => exchange::algorithms(),
            OSSL_OP_SIGNATURE => sm2::signature(),
            OSSL_OP_ASYM_CIPHER => sm2::asym_cipher(),
            _ => core::ptr::null(),
        }
    })
}

fn provider_table() -> &'static [Dispatch] {
    static T: OnceLock<Static<Vec<Dispatch>>> = OnceLock::new();
    &T.get_or_init(|| {
        Static(vec![
            entry::<Teardown>(OSSL_FUNC_PROVIDER_TEARDOWN, teardown),
            entry::<Gettable>(OSSL_FUNC_PROVIDER_GETTABLE_PARAMS, gettable_params),
            entry::<GetParams>(OSSL_FUNC_PROVIDER_GET_PARAMS, get_params),
            entry::<Query>(OSSL_FUNC_PROVIDER_QUERY_OPERATION, query_operation),
            entry::<Reasons>(OSSL_FUNC_PROVIDER_GET_REASON_STRINGS, err::reason_strings),
            entry::<Capabilities>(OSSL_FUNC_PROVIDER_GET_CAPABILITIES, capabilities::get),
            DISPATCH_END,
        ])
    })
    .0
}

/// The provider's entry point, found by name when OpenSSL loads the module.
///
/// # Safety
/// Called by OpenSSL's core with its handle, its dispatch table, and a writable `out` and
/// `provctx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn OSSL_provider_init(
    handle: *const c_void,
    core: *const Dispatch,
    out: *mut *const Dispatch,
    provctx: *mut *mut c_void,
) -> c_int {
    guarded(0, || {
        if out.is_null() || provctx.is_null() {
            return 0;
        }
        // SAFETY: the core's table, terminated as its contract says, and its handle.
        unsafe {
            err::attach(handle, core);
            core_version::learn(handle, core);
        }
        // SAFETY: both are writable by the core's contract; the table is static.
        unsafe {
            *out = provider_table().as_ptr();
            // Nothing per-instance: the handle serves as a non-NULL context.
            *provctx = handle as *mut c_void;
        }
        1
    })
}
