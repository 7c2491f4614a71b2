//! SM2 key management: the key objects OpenSSL holds for SM2 signatures and encryption
//! (`SM2`) and for TLS 1.3's curveSM2 key shares (`curveSM2`), imported and exported in the
//! parameters OpenSSL's own EC/SM2 keys use, so keys decoded by the default provider move
//! across. The two differ only in the operation they name for key exchange and in how
//! strictly they take an encoded public key (TLS allows only the 65-byte uncompressed form).

use core::ffi::{c_int, c_void};
use std::sync::Arc;

use shangmi::sm2::{SigningKey, VerifyingKey};

use crate::err::{self, Reason, fail};
use crate::params::{self, OsslParam, Static};
use crate::served::{self, Op};
use crate::{free_boxed, guarded};

mod key_params;
mod table;
use key_params::names_sm2;
pub(crate) use table::*;

pub(crate) type ParamCallback = unsafe extern "C" fn(*const OsslParam, *mut c_void) -> c_int;

const SELECT_PRIVATE: c_int = 0x01;
const SELECT_PUBLIC: c_int = 0x02;
const SELECT_KEYPAIR: c_int = SELECT_PRIVATE | SELECT_PUBLIC;

/// Key data: a private key (with its public key), a public key, or nothing yet (domain
/// parameters only: the curve is fixed). A private key is shared, not copied, by the
/// operations that use it, so what signing precomputes from it is computed once per key.
#[derive(Clone)]
pub(crate) enum Key {
    Empty,
    Private(Arc<SigningKey>),
    Public(VerifyingKey),
}

impl Key {
    pub(crate) fn public(&self) -> Option<VerifyingKey> {
        match self {
            Key::Empty => None,
            Key::Private(k) => Some(*k.verifying_key()),
            Key::Public(p) => Some(*p),
        }
    }
}

/// # Safety
/// `p` is NULL or key data made by `km_new` (or `km_dup`), live.
pub(crate) unsafe fn key<'a>(p: *const c_void) -> Option<&'a Key> {
    // SAFETY: the contract above.
    unsafe { p.cast::<Key>().as_ref() }
}

unsafe extern "C" fn km_new(_provctx: *mut c_void) -> *mut c_void {
    guarded(core::ptr::null_mut(), || {
        Box::into_raw(Box::new(Key::Empty)).cast()
    })
}

/// A copy of the parts `selection` names: `EVP_PKEY_copy_parameters` (libssl's way to make
/// the object a peer's key share goes into) asks for the domain parameters alone, and must not
/// get the private key with them.
unsafe extern "C" fn km_dup(k: *const c_void, selection: c_int) -> *mut c_void {
    guarded(core::ptr::null_mut(), || {
        // SAFETY: the core passes live key data.
        let Some(k) = (unsafe { key(k) }) else {
            return core::ptr::null_mut();
        };
        let copy = match k {
            Key::Private(_) if selection & SELECT_PRIVATE != 0 => k.clone(),
            _ if selection & SELECT_PUBLIC != 0 => k.public().map_or(Key::Empty, Key::Public),
            _ => Key::Empty,
        };
        Box::into_raw(Box::new(copy)).cast()
    })
}

unsafe extern "C" fn km_has(k: *const c_void, selection: c_int) -> c_int {
    guarded(0, || {
        // SAFETY: the core passes live key data.
        let Some(k) = (unsafe { key(k) }) else {
            return 0;
        };
        let ok = (selection & SELECT_PRIVATE == 0 || matches!(k, Key::Private(_)))
            && (selection & SELECT_PUBLIC == 0 || k.public().is_some());
        c_int::from(ok)
    })
}

unsafe extern "C" fn km_match(a: *const c_void, b: *const c_void, selection: c_int) -> c_int {
    guarded(0, || {
        // SAFETY: the core passes live key data.
        let (Some(a), Some(b)) = (unsafe { key(a) }, unsafe { key(b) }) else {
            return 0;
        };
        // Domain parameters always match (one curve); keys match by their public halves.
        if selection & SELECT_KEYPAIR == 0 {
            return 1;
        }
        c_int::from(a.public().is_some() && a.public() == b.public())
    })
}

/// Key generation: the selection asked for (the curve is fixed, so nothing else to hold).
struct GenCtx {
    selection: c_int,
}

unsafe extern "C" fn gen_init(
    _provctx: *mut c_void,
    selection: c_int,
    ps: *const OsslParam,
) -> *mut c_void {
    guarded(core::ptr::null_mut(), || {
        let g = Box::into_raw(Box::new(GenCtx { selection })).cast();
        // SAFETY: `g` is the context just made; `ps` is the core's array (or NULL).
        if unsafe { gen_set_params(g, ps) } == 1 {
            g
        } else {
            // SAFETY: made above, not shared.
            unsafe { free_boxed::<GenCtx>(g) };
            core::ptr::null_mut()
        }
    })
}

unsafe extern "C" fn gen_set_params(_g: *mut c_void, ps: *const OsslParam) -> c_int {
    guarded(0, || {
        // SAFETY: the core passes a terminated array (or NULL).
        unsafe {
            for p in params::entries(ps) {
                if params::is(p, c"group") && !names_sm2(p) {
                    return fail(Reason::Unsupported, c"sm2_gen_set_params");
                }
            }
        }
        1
    })
}

static GEN_SETTABLE: Static<[OsslParam; 2]> =
    Static([params::describe(c"group", params::UTF8_STRING), params::END]);

unsafe extern "C" fn gen_settable(_g: *mut c_void, _provctx: *mut c_void) -> *const OsslParam {
    GEN_SETTABLE.0.as_ptr()
}

unsafe extern "C" fn generate(
    g: *mut c_void,
    _cb: Option<ParamCallback>,
    _arg: *mut c_void,
) -> *mut c_void {
    guarded(core::ptr::null_mut(), || {
        // SAFETY: the core passes the context from `gen_init`.
        let Some(g) = (unsafe { g.cast::<GenCtx>().as_ref() }) else {
            return core::ptr::null_mut();
        };
        let k = if g.selection & SELECT_KEYPAIR != 0 {
            match SigningKey::random() {
                Ok(k) => {
                    served::count(Op::Sm2Keygen);
                    Key::Private(Arc::new(k))
                }
                Err(_) => {
                    err::raise(Reason::Rng, c"sm2_keygen");
                    return core::ptr::null_mut();
                }
            }
        } else {
            Key::Empty
        };
        Box::into_raw(Box::new(k)).cast()
    })
}
