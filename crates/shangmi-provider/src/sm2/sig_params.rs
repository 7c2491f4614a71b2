//! The SM2 signature context's parameters: the distinguishing ID, the digest, the algorithm ID.

use core::ffi::{CStr, c_int, c_void};

use shangmi::sm2::{self};

use super::{SigCtx, TLS1_3_VERSION, TLS13_ID, sig};
use crate::err::{Reason, fail};
use crate::guarded;
use crate::params::{self, OsslParam, Static};

pub(super) unsafe extern "C" fn sig_set_params(ctx: *mut c_void, ps: *const OsslParam) -> c_int {
    guarded(0, || {
        // SAFETY: the core passes a live context and a terminated array (or NULL).
        unsafe {
            let Some(c) = sig(ctx) else { return 0 };
            sig_apply_params(c, ps)
        }
    })
}

/// The parameters in `ps` applied to `c` (from `set_params`, and from init on the context it
/// already holds, so no second reference to it is made).
///
/// # Safety
/// `ps` NULL or a terminated array whose entries fit their types.
pub(super) unsafe fn sig_apply_params(c: &mut SigCtx, ps: *const OsslParam) -> c_int {
    const F: &CStr = c"sm2_signature_set_params";
    // SAFETY: the contract above.
    unsafe {
        for p in params::entries(ps) {
            if params::is(p, c"distid") {
                let e = &*p;
                if e.data_type != params::OCTET_STRING || (e.data.is_null() && e.data_size > 0) {
                    return fail(Reason::InvalidArgument, F);
                }
                // The ID is part of Z: it cannot change once the message has started.
                if c.hash.is_some() {
                    return fail(Reason::State, F);
                }
                if e.data_size > sm2::MAX_ID_LEN {
                    return fail(Reason::InvalidArgument, F);
                }
                // No data at all is "no ID set" (the default), as OpenSSL reads it; data of
                // length 0 is the empty ID.
                c.id = if e.data.is_null() {
                    None
                } else {
                    Some(core::slice::from_raw_parts(e.data as *const u8, e.data_size).to_vec())
                };
            } else if params::is(p, c"tls-version") {
                // libssl (4.0 on) names the protocol a signature is for: TLS 1.3's
                // CertificateVerify takes RFC 8998's ID; other versions keep the ID set.
                let Some(v) = params::get_uint(p) else {
                    return fail(Reason::InvalidArgument, F);
                };
                if c.hash.is_some() {
                    return fail(Reason::State, F);
                }
                if v == TLS1_3_VERSION {
                    c.id = Some(TLS13_ID.to_vec());
                }
            } else if params::is(p, c"digest") && !params::names(p, b"SM3") {
                return fail(Reason::Unsupported, F);
            }
        }
    }
    1
}

/// DER AlgorithmIdentifier of SM2-with-SM3, no parameters.
const SM2_WITH_SM3: [u8; 12] =
    shangmi::oid::algorithm_identifier(&shangmi::oid::SM2_WITH_SM3, None, false);

pub(super) unsafe extern "C" fn sig_get_params(ctx: *mut c_void, ps: *mut OsslParam) -> c_int {
    guarded(0, || {
        // SAFETY: the core passes a live context and a terminated array.
        unsafe {
            if sig(ctx).is_none() {
                return 0;
            }
            for p in params::entries(ps) {
                let ok = if params::is(p, c"algorithm-id") {
                    params::set_octets(p, &SM2_WITH_SM3)
                } else if params::is(p, c"digest") {
                    params::set_str(p, c"SM3")
                } else if params::is(p, c"size") {
                    params::set_uint(p, 32)
                } else {
                    true
                };
                if !ok {
                    return 0;
                }
            }
            1
        }
    })
}

static SIG_SETTABLE: Static<[OsslParam; 4]> = Static([
    params::describe(c"distid", params::OCTET_STRING),
    params::describe(c"tls-version", params::UNSIGNED_INTEGER),
    params::describe(c"digest", params::UTF8_STRING),
    params::END,
]);

static SIG_GETTABLE: Static<[OsslParam; 4]> = Static([
    params::describe(c"algorithm-id", params::OCTET_STRING),
    params::describe(c"digest", params::UTF8_STRING),
    params::describe(c"size", params::UNSIGNED_INTEGER),
    params::END,
]);

pub(super) unsafe extern "C" fn sig_settable(
    _ctx: *mut c_void,
    _provctx: *mut c_void,
) -> *const OsslParam {
    SIG_SETTABLE.0.as_ptr()
}

pub(super) unsafe extern "C" fn sig_gettable(
    _ctx: *mut c_void,
    _provctx: *mut c_void,
) -> *const OsslParam {
    SIG_GETTABLE.0.as_ptr()
}
