//! SM2 keys' parameters: imported, exported, read and set as OpenSSL's EC key management names
//! them.

use core::ffi::{CStr, c_int, c_void};
use std::sync::Arc;

use shangmi::sm2::{SigningKey, VerifyingKey};
use zeroize::Zeroizing;

use super::{Key, ParamCallback, SELECT_PRIVATE, SELECT_PUBLIC, key};
use crate::err::{Reason, fail};
use crate::guarded;
use crate::params::{self, OsslParam, Static};

/// A BIGNUM parameter (native-endian magnitude, as OSSL_PARAM carries unsigned integers) as
/// 32 big-endian bytes.
fn bn_to_be32(p: &OsslParam) -> Option<Zeroizing<[u8; 32]>> {
    if p.data_type != params::UNSIGNED_INTEGER || p.data.is_null() || p.data_size == 0 {
        return None;
    }
    // SAFETY: the core's parameter has `data_size` readable bytes at `data`.
    let bytes = unsafe { core::slice::from_raw_parts(p.data as *const u8, p.data_size) };
    let mut le: Vec<u8> = if cfg!(target_endian = "little") {
        bytes.to_vec()
    } else {
        bytes.iter().rev().copied().collect()
    };
    while le.len() > 32 && le.last() == Some(&0) {
        le.pop();
    }
    if le.len() > 32 {
        return None;
    }
    let mut be = Zeroizing::new([0u8; 32]);
    for (i, b) in le.iter().enumerate() {
        be[31 - i] = *b;
    }
    zeroize::Zeroize::zeroize(&mut le);
    Some(be)
}

pub(super) unsafe extern "C" fn km_import(
    k: *mut c_void,
    selection: c_int,
    ps: *const OsslParam,
) -> c_int {
    const F: &CStr = c"sm2_import";
    guarded(0, || {
        // SAFETY: the core passes live key data and a terminated array.
        unsafe {
            let Some(k) = k.cast::<Key>().as_mut() else {
                return 0;
            };
            let (mut private, mut public) = (None, None);
            for p in params::entries(ps) {
                if params::is(p, c"priv") {
                    // A private part that does not parse fails the import, rather than
                    // leaving a public key where a private one was asked for.
                    private = bn_to_be32(&*p);
                    if private.is_none() && selection & SELECT_PRIVATE != 0 {
                        return fail(Reason::InvalidKey, F);
                    }
                } else if params::is(p, c"pub") {
                    let e = &*p;
                    if e.data_type != params::OCTET_STRING || e.data.is_null() {
                        return fail(Reason::InvalidKey, F);
                    }
                    public = Some(
                        core::slice::from_raw_parts(e.data as *const u8, e.data_size).to_vec(),
                    );
                } else if params::is(p, c"group") && !names_sm2(p) {
                    return fail(Reason::Unsupported, F);
                }
            }
            if selection & SELECT_PRIVATE != 0
                && let Some(d) = private
            {
                {
                    let Ok(sk) = SigningKey::from_bytes(&d) else {
                        return fail(Reason::InvalidKey, F);
                    };
                    // A public key given beside the private one must be its own.
                    if let Some(p) = &public
                        && VerifyingKey::from_sec1_bytes(p).ok() != Some(*sk.verifying_key())
                    {
                        return fail(Reason::InvalidKey, F);
                    }
                    *k = Key::Private(Arc::new(sk));
                    return 1;
                }
            }
            if selection & SELECT_PUBLIC != 0
                && let Some(p) = public
            {
                {
                    let Ok(pk) = VerifyingKey::from_sec1_bytes(&p) else {
                        return fail(Reason::InvalidKey, F);
                    };
                    *k = Key::Public(pk);
                    return 1;
                }
            }
            // Domain parameters alone: the curve is fixed, nothing to store.
            if selection & (SELECT_PRIVATE | SELECT_PUBLIC) == 0 {
                1
            } else {
                fail(Reason::InvalidKey, F)
            }
        }
    })
}

static KEY_TYPES: Static<[OsslParam; 4]> = Static([
    params::describe(c"group", params::UTF8_STRING),
    params::describe(c"pub", params::OCTET_STRING),
    params::describe(c"priv", params::UNSIGNED_INTEGER),
    params::END,
]);

pub(super) unsafe extern "C" fn km_types(_selection: c_int) -> *const OsslParam {
    KEY_TYPES.0.as_ptr()
}

pub(super) unsafe extern "C" fn km_export(
    k: *mut c_void,
    selection: c_int,
    cb: Option<ParamCallback>,
    arg: *mut c_void,
) -> c_int {
    guarded(0, || {
        // SAFETY: the core passes live key data.
        let Some(k) = (unsafe { key(k) }) else {
            return 0;
        };
        let Some(cb) = cb else { return 0 };
        let mut group = *b"SM2\0";
        let mut public = k
            .public()
            .map(|p| p.to_sec1_bytes(false))
            .unwrap_or_default();
        let mut private = Zeroizing::new([0u8; 32]);
        let mut list = vec![OsslParam {
            key: c"group".as_ptr(),
            data_type: params::UTF8_STRING,
            data: group.as_mut_ptr().cast(),
            data_size: 3,
            return_size: usize::MAX,
        }];
        if selection & SELECT_PUBLIC != 0 && !public.is_empty() {
            list.push(OsslParam {
                key: c"pub".as_ptr(),
                data_type: params::OCTET_STRING,
                data: public.as_mut_ptr().cast(),
                data_size: public.len(),
                return_size: usize::MAX,
            });
        }
        if selection & SELECT_PRIVATE != 0
            && let Key::Private(sk) = k
        {
            // OSSL_PARAM unsigned integers are native-endian.
            let be = sk.to_bytes();
            for i in 0..32 {
                private[i] = if cfg!(target_endian = "little") {
                    be[31 - i]
                } else {
                    be[i]
                };
            }
            list.push(OsslParam {
                key: c"priv".as_ptr(),
                data_type: params::UNSIGNED_INTEGER,
                data: private.as_mut_ptr().cast(),
                data_size: 32,
                return_size: usize::MAX,
            });
        }
        list.push(params::END);
        // SAFETY: a terminated array of parameters whose buffers live until the call returns.
        unsafe { cb(list.as_ptr(), arg) }
    })
}

static KEY_GETTABLE: Static<[OsslParam; 7]> = Static([
    params::describe(c"group", params::UTF8_STRING),
    params::describe(c"bits", params::INTEGER),
    params::describe(c"security-bits", params::INTEGER),
    params::describe(c"max-size", params::INTEGER),
    params::describe(c"default-digest", params::UTF8_STRING),
    params::describe(c"encoded-pub-key", params::OCTET_STRING),
    params::END,
]);

pub(super) unsafe extern "C" fn km_gettable(_provctx: *mut c_void) -> *const OsslParam {
    KEY_GETTABLE.0.as_ptr()
}

pub(super) unsafe extern "C" fn km_get_params(k: *mut c_void, ps: *mut OsslParam) -> c_int {
    guarded(0, || {
        // SAFETY: the core passes live key data and a terminated array.
        unsafe {
            let Some(k) = key(k) else { return 0 };
            for p in params::entries(ps) {
                let ok = if params::is(p, c"bits") {
                    params::set_uint(p, 256)
                } else if params::is(p, c"security-bits") {
                    params::set_uint(p, 128)
                } else if params::is(p, c"max-size") {
                    // The larger of a DER signature (72) and a short ciphertext bound.
                    params::set_uint(p, 72)
                } else if params::is(p, c"group") {
                    params::set_str(p, c"SM2")
                } else if params::is(p, c"default-digest") || params::is(p, c"mandatory-digest") {
                    params::set_str(p, c"SM3")
                } else if params::is(p, c"encoded-pub-key") {
                    match k.public() {
                        Some(pk) => params::set_octets(p, &pk.to_sec1_bytes(false)),
                        None => false,
                    }
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

/// Whether a `group` parameter names the one curve: `SM2` (OpenSSL's name, and the one its
/// TLS group table passes) or `curveSM2` (the TLS name).
///
/// # Safety
/// As [`params::names`].
pub(super) unsafe fn names_sm2(p: *const OsslParam) -> bool {
    // SAFETY: the caller's contract.
    unsafe { params::names(p, b"SM2") || params::names(p, b"curveSM2") }
}

/// `encoded-pub-key`: the peer's key share written into a key object that holds domain
/// parameters (or a public key) only. `TLS`: the 65-byte uncompressed point and nothing else,
/// as RFC 8446 and RFC 8998 require of a key share; otherwise any SEC1 form.
pub(super) unsafe extern "C" fn km_set_params<const TLS: bool>(
    k: *mut c_void,
    ps: *const OsslParam,
) -> c_int {
    const F: &CStr = c"sm2_set_params";
    guarded(0, || {
        // SAFETY: the core passes live key data and a terminated array.
        unsafe {
            let Some(k) = k.cast::<Key>().as_mut() else {
                return fail(Reason::NoKey, F);
            };
            for p in params::entries(ps) {
                if !params::is(p, c"encoded-pub-key") {
                    continue;
                }
                let e = &*p;
                if e.data_type != params::OCTET_STRING || e.data.is_null() {
                    return fail(Reason::InvalidArgument, F);
                }
                let point = core::slice::from_raw_parts(e.data as *const u8, e.data_size);
                if TLS && (point.len() != 65 || point[0] != 4) {
                    return fail(Reason::BadKeyShare, F);
                }
                // A private key keeps its own public half: replacing it would pair the
                // private key with someone else's point.
                if matches!(k, Key::Private(_)) {
                    return fail(Reason::State, F);
                }
                match VerifyingKey::from_sec1_bytes(point) {
                    Ok(pk) => *k = Key::Public(pk),
                    Err(_) if TLS => return fail(Reason::BadKeyShare, F),
                    Err(_) => return fail(Reason::InvalidKey, F),
                }
            }
            1
        }
    })
}

static KEY_SETTABLE: Static<[OsslParam; 2]> = Static([
    params::describe(c"encoded-pub-key", params::OCTET_STRING),
    params::END,
]);

pub(super) unsafe extern "C" fn km_settable(_provctx: *mut c_void) -> *const OsslParam {
    KEY_SETTABLE.0.as_ptr()
}

pub(super) const OSSL_OP_KEYEXCH: c_int = 11;
