//! SM4-GCM and SM4-CCM's parameters (tag, IV length, TLS AAD) and dispatch tables.

use core::ffi::{CStr, c_int, c_void};

use zeroize::Zeroizing;

use super::run::{cipher_, final_, update};
use super::{Ctx, Kind, MIN_TAG_LEN, decrypt_init, dupctx, encrypt_init, gcm_tag_len_ok, newctx};
use crate::cipher::{self, Shape};
use crate::err::{Reason, ctx_mut, fail};
use crate::params::{self, OsslParam, Static};
use crate::{Dispatch, free_boxed, guarded};

const GCM_SHAPE: Shape = Shape {
    mode: 6,
    key_len: 16,
    iv_len: 12,
    block: 1,
    aead: true,
    custom_iv: true,
};

const CCM_SHAPE: Shape = Shape {
    mode: 7,
    key_len: 16,
    iv_len: 7,
    block: 1,
    aead: true,
    custom_iv: true,
};

unsafe extern "C" fn get_params<const GCM: bool>(ps: *mut OsslParam) -> c_int {
    let shape = if GCM { &GCM_SHAPE } else { &CCM_SHAPE };
    // SAFETY: the core passes a terminated array whose entries fit their types.
    guarded(0, || unsafe { shape.write(ps) })
}

unsafe extern "C" fn get_ctx_params(ctx: *mut c_void, ps: *const OsslParam) -> c_int {
    const F: &CStr = c"sm4_aead_get_ctx_params";
    guarded(0, || {
        // SAFETY: `ctx` from `newctx`; `ps` a terminated array whose entries fit their types.
        unsafe {
            let c = match ctx_mut::<Ctx>(ctx) {
                Ok(c) => c,
                Err(r) => return fail(r, F),
            };
            for p in params::entries(ps) {
                let ok = if params::is(p, c"keylen") {
                    params::set_uint(p, 16)
                } else if params::is(p, c"ivlen") {
                    params::set_uint(p, c.iv_len as u64)
                } else if params::is(p, c"taglen") {
                    params::set_uint(p, c.tag_len as u64)
                } else if params::is(p, c"iv") {
                    params::set_octets(p, &c.iv)
                } else if params::is(p, c"tag") {
                    let n = (*p).data_size;
                    let Some(t) = c.made.as_ref().filter(|_| c.encrypt) else {
                        return fail(Reason::State, F);
                    };
                    let fits = match c.kind {
                        Kind::Gcm => gcm_tag_len_ok(n),
                        Kind::Ccm => n == c.tag_len,
                    };
                    if !fits {
                        return fail(Reason::InvalidTagLength, F);
                    }
                    params::set_octets(p, &t[..n])
                } else {
                    true
                };
                if !ok {
                    return fail(Reason::InvalidArgument, F);
                }
            }
        }
        1
    })
}

unsafe extern "C" fn set_ctx_params(ctx: *mut c_void, ps: *const OsslParam) -> c_int {
    guarded(0, || {
        // SAFETY: `ctx` from `newctx`; `ps` NULL or a terminated array.
        match unsafe { ctx_mut::<Ctx>(ctx) } {
            // SAFETY: as above.
            Ok(c) => unsafe { apply_params(c, ps) },
            Err(r) => fail(r, c"sm4_aead_set_ctx_params"),
        }
    })
}

/// The parameters in `ps` applied to `c` (from `set_ctx_params`, and from `init` on the
/// context it already holds, so no second reference to it is made).
///
/// # Safety
/// `ps` NULL or a terminated array whose entries fit their types.
pub(super) unsafe fn apply_params(c: &mut Ctx, ps: *const OsslParam) -> c_int {
    const F: &CStr = c"sm4_aead_set_ctx_params";
    // SAFETY: the contract above.
    unsafe {
        for p in params::entries(ps) {
            if params::is(p, c"ivlen") {
                let n = params::get_uint(p).and_then(|v| usize::try_from(v).ok());
                let Some(n) = n.filter(|n| c.iv_range().contains(n)) else {
                    return fail(Reason::InvalidIvLength, F);
                };
                if n != c.iv_len {
                    c.iv_len = n;
                    c.iv.clear();
                    c.iv_ready = false;
                }
            } else if params::is(p, c"tag") {
                let e = &*p;
                let n = e.data_size;
                let ok = match c.kind {
                    Kind::Gcm => gcm_tag_len_ok(n),
                    Kind::Ccm => (4..=16).contains(&n) && n % 2 == 0,
                };
                if e.data_type != params::OCTET_STRING || !ok {
                    return fail(Reason::InvalidTagLength, F);
                }
                if e.data.is_null() {
                    c.declared_tag_len = Some(n);
                } else {
                    if c.encrypt {
                        return fail(Reason::State, F);
                    }
                    // A short tag only where the caller fixed that length beforehand:
                    // the length comes from the caller, never from the received data.
                    if n < MIN_TAG_LEN && c.declared_tag_len != Some(n) {
                        return fail(Reason::ShortTag, F);
                    }
                    let t = core::slice::from_raw_parts(e.data as *const u8, n);
                    c.expected = Some(Zeroizing::new(t.to_vec()));
                }
                c.tag_len = n;
            } else if params::is(p, c"taglen") {
                let n = params::get_uint(p).and_then(|v| usize::try_from(v).ok());
                let ok = n.is_some_and(|n| match c.kind {
                    Kind::Gcm => gcm_tag_len_ok(n),
                    Kind::Ccm => (4..=16).contains(&n) && n % 2 == 0,
                });
                let Some(n) = n.filter(|_| ok) else {
                    return fail(Reason::InvalidTagLength, F);
                };
                c.declared_tag_len = Some(n);
                c.tag_len = n;
            } else if params::is(p, c"keylen") && params::get_uint(p) != Some(16) {
                return fail(Reason::InvalidKeyLength, F);
            }
        }
    }
    1
}

static CTX_GETTABLE: Static<[OsslParam; 6]> = Static([
    params::describe(c"keylen", params::UNSIGNED_INTEGER),
    params::describe(c"ivlen", params::UNSIGNED_INTEGER),
    params::describe(c"taglen", params::UNSIGNED_INTEGER),
    params::describe(c"iv", params::OCTET_STRING),
    params::describe(c"tag", params::OCTET_STRING),
    params::END,
]);

static CTX_SETTABLE: Static<[OsslParam; 5]> = Static([
    params::describe(c"ivlen", params::UNSIGNED_INTEGER),
    params::describe(c"tag", params::OCTET_STRING),
    params::describe(c"taglen", params::UNSIGNED_INTEGER),
    params::describe(c"keylen", params::UNSIGNED_INTEGER),
    params::END,
]);

unsafe extern "C" fn gettable_ctx_params(_ctx: *mut c_void, _p: *mut c_void) -> *const OsslParam {
    CTX_GETTABLE.0.as_ptr()
}

unsafe extern "C" fn settable_ctx_params(_ctx: *mut c_void, _p: *mut c_void) -> *const OsslParam {
    CTX_SETTABLE.0.as_ptr()
}

/// The dispatch table of SM4-GCM (`GCM`) or SM4-CCM.
pub(crate) fn table<const GCM: bool>() -> Vec<Dispatch> {
    cipher::dispatch(cipher::Entries {
        newctx: newctx::<GCM>,
        encrypt_init,
        decrypt_init,
        update,
        final_,
        cipher: cipher_,
        freectx: free_boxed::<Ctx>,
        dupctx,
        get_params: get_params::<GCM>,
        get_ctx_params,
        set_ctx_params,
        gettable_ctx_params,
        settable_ctx_params,
    })
}
