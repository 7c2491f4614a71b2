//! The TLS capabilities libssl discovers providers' groups and signature schemes by: curveSM2
//! (TLS-GROUP) and sm2sig_sm3 (TLS-SIGALG), as RFC 8998 assigns them. libssl takes a
//! signature scheme from a provider only if that provider also serves the scheme's key type
//! for the configured properties, so once this provider's SM2 keys are preferred, sm2sig_sm3
//! exists in a handshake only because it is listed here. The values are those of OpenSSL
//! 4.0's default provider, so libssl treats both the same.

use core::ffi::{CStr, c_char, c_int, c_void};
use std::sync::OnceLock;

use crate::keys::ParamCallback;
use crate::params::{self, OsslParam, Static};

const TLS1_3_VERSION: i32 = 0x0304;
/// "Not for DTLS", in the capability's terms.
const NONE: i32 = -1;

/// The numbers a capability entry points at; static, so the entries may point into them.
struct Numbers {
    group_id: u32,
    code_point: u32,
    security_bits: u32,
    is_kem: u32,
    min_tls: i32,
    max_tls: i32,
    no_dtls: i32,
}

static N: Numbers = Numbers {
    group_id: 41,
    code_point: 0x0708,
    security_bits: 128,
    is_kem: 0,
    min_tls: TLS1_3_VERSION,
    max_tls: 0,
    no_dtls: NONE,
};

fn utf8(key: &'static CStr, value: &'static CStr) -> OsslParam {
    OsslParam {
        key: key.as_ptr(),
        data_type: params::UTF8_STRING,
        data: value.as_ptr() as *mut c_void,
        data_size: value.to_bytes().len() + 1,
        return_size: usize::MAX,
    }
}

fn uint(key: &'static CStr, value: &'static u32) -> OsslParam {
    OsslParam {
        key: key.as_ptr(),
        data_type: params::UNSIGNED_INTEGER,
        data: (value as *const u32) as *mut c_void,
        data_size: 4,
        return_size: usize::MAX,
    }
}

fn int(key: &'static CStr, value: &'static i32) -> OsslParam {
    OsslParam {
        key: key.as_ptr(),
        data_type: params::INTEGER,
        data: (value as *const i32) as *mut c_void,
        data_size: 4,
        return_size: usize::MAX,
    }
}

fn group() -> &'static [OsslParam] {
    static G: OnceLock<Static<Vec<OsslParam>>> = OnceLock::new();
    &G.get_or_init(|| {
        Static(vec![
            utf8(c"tls-group-name", c"curveSM2"),
            // What libssl passes as the key generation's group name.
            utf8(c"tls-group-name-internal", c"SM2"),
            // The key management serving it: this provider's curveSM2 keys.
            utf8(c"tls-group-alg", c"curveSM2"),
            uint(c"tls-group-id", &N.group_id),
            uint(c"tls-group-sec-bits", &N.security_bits),
            int(c"tls-min-tls", &N.min_tls),
            int(c"tls-max-tls", &N.max_tls),
            int(c"tls-min-dtls", &N.no_dtls),
            int(c"tls-max-dtls", &N.no_dtls),
            uint(c"tls-group-is-kem", &N.is_kem),
            params::END,
        ])
    })
    .0
}

fn sigalg() -> &'static [OsslParam] {
    static S: OnceLock<Static<Vec<OsslParam>>> = OnceLock::new();
    &S.get_or_init(|| {
        Static(vec![
            utf8(c"tls-sigalg-iana-name", c"sm2sig_sm3"),
            // The signature algorithm (and, with no key type given, the key type) by name.
            utf8(c"tls-sigalg-name", c"SM2"),
            utf8(
                c"tls-sigalg-oid",
                crate::params::dotted(&shangmi::oid::SM2_WITH_SM3),
            ),
            uint(c"tls-sigalg-code-point", &N.code_point),
            uint(c"tls-sigalg-sec-bits", &N.security_bits),
            int(c"tls-min-tls", &N.min_tls),
            int(c"tls-max-tls", &N.max_tls),
            int(c"tls-min-dtls", &N.no_dtls),
            int(c"tls-max-dtls", &N.no_dtls),
            params::END,
        ])
    })
    .0
}

/// `provider_get_capabilities`: each entry of the capability asked for, through `cb`.
///
/// # Safety
/// `capability` NULL or a NUL-terminated string; `cb` the core's callback for `arg`.
pub(crate) unsafe extern "C" fn get(
    _provctx: *mut c_void,
    capability: *const c_char,
    cb: Option<ParamCallback>,
    arg: *mut c_void,
) -> c_int {
    crate::guarded(0, || {
        let Some(cb) = cb else { return 0 };
        if capability.is_null() {
            return 0;
        }
        // SAFETY: the contract above.
        let name = unsafe { CStr::from_ptr(capability) }.to_bytes();
        let list = if name.eq_ignore_ascii_case(b"TLS-GROUP") {
            group()
        } else if name.eq_ignore_ascii_case(b"TLS-SIGALG") {
            sigalg()
        } else {
            // A capability not offered: nothing to list, and not an error.
            return 1;
        };
        // SAFETY: a terminated array of parameters pointing at static data.
        unsafe { cb(list.as_ptr(), arg) }
    })
}
