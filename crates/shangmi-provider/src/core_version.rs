//! The version of the OpenSSL that loaded the provider, asked of the core once at load: the
//! SM2 defaults follow it, because OpenSSL changed them. OpenSSL 3.x hashes an empty SM2 ID
//! when none is set; 4.0 hashes GM/T 0009's 1234567812345678 (what every other SM2
//! implementation does). A provider that kept either default under the other would sign
//! certificates the host's own SM2 cannot verify.

use core::ffi::{CStr, c_char, c_int, c_void};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::Dispatch;
use crate::params::{self, OsslParam};

/// The major version; 3 until the core says otherwise (every 3.x answers, so a missing
/// answer means an unusual core, and 3.x's behaviour is the one this provider began with).
static MAJOR: AtomicU32 = AtomicU32::new(3);

const OSSL_FUNC_CORE_GET_PARAMS: c_int = 2;
type CoreGetParams = unsafe extern "C" fn(*const c_void, *mut OsslParam) -> c_int;

/// Asks the core for `openssl-version` and keeps its major number.
///
/// # Safety
/// `core` is NULL or the core's dispatch table, terminated by a zero id; `handle` is the
/// handle the core gave with it.
pub(crate) unsafe fn learn(handle: *const c_void, core: *const Dispatch) {
    let mut d = core;
    let mut get = None;
    // SAFETY: a terminated table read up to its terminator; the pointer for this id has the
    // type openssl/core_dispatch.h gives it.
    unsafe {
        while !d.is_null() && (*d).id != 0 {
            if (*d).id == OSSL_FUNC_CORE_GET_PARAMS {
                get = (*d).f.map(|f| core::mem::transmute::<_, CoreGetParams>(f));
            }
            d = d.add(1);
        }
    }
    let Some(get) = get else { return };
    let mut version: *const c_char = core::ptr::null();
    let mut ps = [
        OsslParam {
            key: c"openssl-version".as_ptr(),
            data_type: params::UTF8_PTR,
            data: (&raw mut version).cast(),
            data_size: size_of::<*const c_char>(),
            return_size: usize::MAX,
        },
        params::END,
    ];
    // SAFETY: a terminated array whose one entry points at a writable pointer; the string the
    // core points it at is static in libcrypto.
    let ok = unsafe { get(handle, ps.as_mut_ptr()) } == 1;
    if !ok || version.is_null() {
        return;
    }
    // SAFETY: the core's NUL-terminated version string ("3.0.13", "4.0.3").
    let text = unsafe { CStr::from_ptr(version) }.to_bytes();
    if let Some(major) = parse_major(text) {
        MAJOR.store(major, Ordering::Relaxed);
    }
}

fn parse_major(text: &[u8]) -> Option<u32> {
    let digits = text.split(|&b| b == b'.').next()?;
    core::str::from_utf8(digits).ok()?.parse().ok()
}

/// The ID an SM2 signature hashes when the caller set none, as the host's own SM2 would.
pub(crate) fn default_sm2_id() -> &'static [u8] {
    if MAJOR.load(Ordering::Relaxed) >= 4 {
        b"1234567812345678"
    } else {
        b""
    }
}
