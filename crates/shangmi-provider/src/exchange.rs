//! ECDH on the SM2 curve as an OpenSSL key exchange: what libssl runs for TLS 1.3's curveSM2
//! (RFC 8998) once the provider's curveSM2 keys are preferred. The secret is the x coordinate
//! of d Q, 32 bytes, as for every ECDHE group of TLS 1.3; the peer's point was validated when
//! it became a key (on the curve, not infinity: a `VerifyingKey`).

use core::ffi::{CStr, c_int, c_void};
use std::sync::{Arc, OnceLock};

use shangmi::sm2::{SigningKey, VerifyingKey};

use crate::err::{Reason, ctx_mut, fail, result};
use crate::keys::{CtxParams, CtxTable, Free, Key, New, Tables, key, list};
use crate::params::{self, OsslParam, Static};
use crate::served::{self, Op};
use crate::{DISPATCH_END, entry, free_boxed, guarded};

/// The key exchange's name, which the provider's SM2 and curveSM2 keys give for it. Not
/// "ECDH": that name would put this exchange in front of every EC key of the default
/// provider too, and it serves the SM2 curve only.
pub(crate) const NAME: &CStr = c"SM2-ECDH";

/// One exchange: our private key, then the peer's public key.
#[derive(Clone, Default)]
struct Ctx {
    own: Option<Arc<SigningKey>>,
    peer: Option<VerifyingKey>,
}

unsafe extern "C" fn newctx(_provctx: *mut c_void) -> *mut c_void {
    guarded(core::ptr::null_mut(), || {
        Box::into_raw(Box::new(Ctx::default())).cast()
    })
}

unsafe extern "C" fn dupctx(ctx: *mut c_void) -> *mut c_void {
    guarded(core::ptr::null_mut(), || {
        // SAFETY: the core passes a live context.
        match unsafe { ctx.cast::<Ctx>().as_ref() } {
            Some(c) => Box::into_raw(Box::new(c.clone())).cast(),
            None => core::ptr::null_mut(),
        }
    })
}

unsafe extern "C" fn init(ctx: *mut c_void, k: *mut c_void, ps: *const OsslParam) -> c_int {
    const F: &CStr = c"sm2_ecdh_init";
    guarded(0, || {
        // SAFETY: the core passes a live context and live key data.
        let (c, k) = match (unsafe { ctx_mut::<Ctx>(ctx) }, unsafe { key(k) }) {
            (Ok(c), Some(k)) => (c, k),
            (Err(r), _) => return fail(r, F),
            (_, None) => return fail(Reason::NoKey, F),
        };
        let Key::Private(own) = k else {
            return fail(Reason::InvalidKey, F);
        };
        c.own = Some(own.clone());
        c.peer = None;
        // SAFETY: the core's terminated array (or NULL).
        unsafe { set_params(ctx, ps) }
    })
}

unsafe extern "C" fn set_peer(ctx: *mut c_void, k: *mut c_void) -> c_int {
    const F: &CStr = c"sm2_ecdh_set_peer";
    guarded(0, || {
        // SAFETY: the core passes a live context and live key data.
        let (c, k) = match (unsafe { ctx_mut::<Ctx>(ctx) }, unsafe { key(k) }) {
            (Ok(c), Some(k)) => (c, k),
            (Err(r), _) => return fail(r, F),
            (_, None) => return fail(Reason::NoKey, F),
        };
        match k.public() {
            Some(p) => {
                c.peer = Some(p);
                1
            }
            // A key object with no point yet (its share never arrived or was refused).
            None => fail(Reason::NoPeerKey, F),
        }
    })
}

unsafe extern "C" fn derive(
    ctx: *mut c_void,
    secret: *mut u8,
    secret_len: *mut usize,
    out_size: usize,
) -> c_int {
    const F: &CStr = c"sm2_ecdh_derive";
    guarded(0, || {
        // SAFETY: the core passes a live context.
        let c = match unsafe { ctx_mut::<Ctx>(ctx) } {
            Ok(c) => c,
            Err(r) => return fail(r, F),
        };
        if secret_len.is_null() {
            return fail(Reason::InvalidArgument, F);
        }
        if secret.is_null() {
            // SAFETY: writable by the core's contract.
            unsafe { *secret_len = 32 };
            return 1;
        }
        let Some(own) = &c.own else {
            return fail(Reason::NoKey, F);
        };
        let Some(peer) = &c.peer else {
            return fail(Reason::NoPeerKey, F);
        };
        if out_size < 32 {
            return fail(Reason::BufferTooSmall, F);
        }
        let r = own.diffie_hellman(peer).map(|z| {
            // SAFETY: `out_size` >= 32 writable bytes; `secret_len` writable.
            unsafe {
                core::ptr::copy_nonoverlapping(z.as_bytes().as_ptr(), secret, 32);
                *secret_len = 32;
            }
            served::count(Op::Sm2Derive);
        });
        result(r.map_err(|_| Reason::KeyExchange), F)
    })
}

/// Only the parameters every ECDH caller may pass with no effect here; a KDF or cofactor
/// mode asked for is refused rather than ignored (the secret would not be what was asked).
unsafe extern "C" fn set_params(_ctx: *mut c_void, ps: *const OsslParam) -> c_int {
    const F: &CStr = c"sm2_ecdh_set_params";
    guarded(0, || {
        // SAFETY: the core passes a terminated array (or NULL).
        unsafe {
            for p in params::entries(ps) {
                let refused = (params::is(p, c"kdf-type")
                    && !(params::names(p, b"") || params::names(p, b"NONE")))
                    || (params::is(p, c"ecdh-cofactor-mode")
                        && !matches!(params::get_int(p), Some(-1..=1)));
                if refused {
                    return fail(Reason::Unsupported, F);
                }
            }
        }
        1
    })
}

static SETTABLE: Static<[OsslParam; 3]> = Static([
    params::describe(c"kdf-type", params::UTF8_STRING),
    params::describe(c"ecdh-cofactor-mode", params::INTEGER),
    params::END,
]);

unsafe extern "C" fn settable(_ctx: *mut c_void, _provctx: *mut c_void) -> *const OsslParam {
    SETTABLE.0.as_ptr()
}

type Derive = unsafe extern "C" fn(*mut c_void, *mut u8, *mut usize, usize) -> c_int;
type SetPeer = unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int;
type Init = unsafe extern "C" fn(*mut c_void, *mut c_void, *const OsslParam) -> c_int;

/// The SM2 ECDH key exchange.
pub(crate) fn algorithms() -> *const crate::Algorithm {
    static T: OnceLock<Tables> = OnceLock::new();
    list(
        &T,
        || {
            vec![
                entry::<New>(1, newctx),
                entry::<Init>(2, init),
                entry::<Derive>(3, derive),
                entry::<SetPeer>(4, set_peer),
                entry::<Free>(5, free_boxed::<Ctx>),
                entry::<New>(6, dupctx),
                entry::<CtxParams>(7, set_params),
                entry::<CtxTable>(8, settable),
                DISPATCH_END,
            ]
        },
        NAME,
        c"shangmi ECDH on the SM2 curve",
    )
}
