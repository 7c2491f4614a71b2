//! OSSL_PARAM arrays, read and written by hand: the provider links nothing from libcrypto, so
//! the same module loads into any OpenSSL 3.x process.

use core::ffi::{CStr, c_char, c_uint, c_void};

/// `OSSL_PARAM` (openssl/core.h).
#[repr(C)]
pub struct OsslParam {
    pub key: *const c_char,
    pub data_type: c_uint,
    pub data: *mut c_void,
    pub data_size: usize,
    pub return_size: usize,
}

pub const INTEGER: c_uint = 1;
pub const UNSIGNED_INTEGER: c_uint = 2;
pub const UTF8_STRING: c_uint = 4;
pub const OCTET_STRING: c_uint = 5;
pub const UTF8_PTR: c_uint = 6;
/// OSSL_PARAM_UNMODIFIED: what `return_size` holds until a value is written.
const UNMODIFIED: usize = usize::MAX;

/// OpenSSL's name list of an algorithm: `names` (colon-separated), then its OID from the
/// table, built once per algorithm table and kept for the provider's life (OpenSSL holds the
/// pointer).
pub(crate) fn name_list(names: &str, oid: &impl core::fmt::Display) -> &'static CStr {
    let list = std::ffi::CString::new(format!("{names}:{oid}"))
        .expect("names and dotted OIDs hold no NUL");
    Box::leak(list.into_boxed_c_str())
}

/// A dotted OID from the table as a C string for a parameter, kept as [`name_list`] keeps its.
pub(crate) fn dotted(oid: &impl core::fmt::Display) -> &'static CStr {
    let text = std::ffi::CString::new(oid.to_string()).expect("a dotted OID holds no NUL");
    Box::leak(text.into_boxed_c_str())
}

/// A static descriptor table (gettable/settable lists) and other tables of pointers to static
/// data, shared read-only by every thread.
#[repr(transparent)]
pub struct Static<T>(pub T);
// SAFETY: the wrapped tables point only at static, immutable data (names, functions), and
// are never written after they are built.
unsafe impl<T> Sync for Static<T> {}
// SAFETY: as for `Sync`: moving such a table between threads moves only pointers to statics.
unsafe impl<T> Send for Static<T> {}

/// A descriptor entry for a gettable/settable list.
pub const fn describe(key: &'static CStr, data_type: c_uint) -> OsslParam {
    OsslParam {
        key: key.as_ptr(),
        data_type,
        data: core::ptr::null_mut(),
        data_size: 0,
        return_size: UNMODIFIED,
    }
}

/// The terminating entry.
pub const END: OsslParam = OsslParam {
    key: core::ptr::null(),
    data_type: 0,
    data: core::ptr::null_mut(),
    data_size: 0,
    return_size: 0,
};

/// The entries of a caller's array (NULL is an empty array).
///
/// # Safety
/// `params` is NULL or an array terminated by an entry with a NULL key.
pub unsafe fn entries<'a>(params: *const OsslParam) -> impl Iterator<Item = *mut OsslParam> + 'a {
    let mut p = params as *mut OsslParam;
    core::iter::from_fn(move || {
        // SAFETY: the array is terminated, and we stop at the terminator.
        if p.is_null() || unsafe { (*p).key.is_null() } {
            return None;
        }
        let cur = p;
        // SAFETY: `cur` is not the terminator, so the next entry exists.
        p = unsafe { p.add(1) };
        Some(cur)
    })
}

/// Whether entry `p` has key `key`.
///
/// # Safety
/// `p` is an entry of a valid array.
pub unsafe fn is(p: *const OsslParam, key: &CStr) -> bool {
    // SAFETY: entries have NUL-terminated keys.
    unsafe { CStr::from_ptr((*p).key) == key }
}

/// Writes an integer into an entry of either integer type, 4 or 8 bytes.
///
/// # Safety
/// `p` is an entry whose `data` has `data_size` writable bytes.
pub unsafe fn set_uint(p: *mut OsslParam, v: u64) -> bool {
    // SAFETY: the caller's contract; sizes checked before each write.
    unsafe {
        let e = &mut *p;
        if e.data_type != UNSIGNED_INTEGER && e.data_type != INTEGER || e.data.is_null() {
            return false;
        }
        match e.data_size {
            4 => match u32::try_from(v) {
                Ok(x) => (e.data as *mut u32).write_unaligned(x),
                Err(_) => return false,
            },
            8 => (e.data as *mut u64).write_unaligned(v),
            _ => return false,
        }
        e.return_size = e.data_size;
    }
    true
}

/// Reads an integer entry (4 or 8 bytes, signed values must be non-negative).
///
/// # Safety
/// `p` is an entry whose `data` has `data_size` readable bytes.
pub unsafe fn get_uint(p: *const OsslParam) -> Option<u64> {
    // SAFETY: the caller's contract; sizes checked before each read.
    unsafe {
        let e = &*p;
        if e.data.is_null() {
            return None;
        }
        match (e.data_type, e.data_size) {
            (UNSIGNED_INTEGER, 4) => Some(u64::from((e.data as *const u32).read_unaligned())),
            (UNSIGNED_INTEGER, 8) => Some((e.data as *const u64).read_unaligned()),
            (INTEGER, 4) => u64::try_from((e.data as *const i32).read_unaligned()).ok(),
            (INTEGER, 8) => u64::try_from((e.data as *const i64).read_unaligned()).ok(),
            _ => None,
        }
    }
}

/// Reads a signed integer entry (4 or 8 bytes; unsigned ones that fit).
///
/// # Safety
/// `p` is an entry whose `data` has `data_size` readable bytes.
pub unsafe fn get_int(p: *const OsslParam) -> Option<i64> {
    // SAFETY: the caller's contract; sizes checked before each read.
    unsafe {
        let e = &*p;
        if e.data.is_null() {
            return None;
        }
        match (e.data_type, e.data_size) {
            (INTEGER, 4) => Some(i64::from((e.data as *const i32).read_unaligned())),
            (INTEGER, 8) => Some((e.data as *const i64).read_unaligned()),
            (UNSIGNED_INTEGER, 4) => Some(i64::from((e.data as *const u32).read_unaligned())),
            (UNSIGNED_INTEGER, 8) => i64::try_from((e.data as *const u64).read_unaligned()).ok(),
            _ => None,
        }
    }
}

/// Copies `s` (no NUL inside) into a UTF8_STRING entry, NUL-terminated.
///
/// # Safety
/// `p` is an entry whose `data` has `data_size` writable bytes.
pub unsafe fn set_string(p: *mut OsslParam, s: &str) -> bool {
    // SAFETY: the caller's contract; the size is checked before the copy.
    unsafe {
        let e = &mut *p;
        if e.data_type != UTF8_STRING || e.data.is_null() || e.data_size <= s.len() {
            return false;
        }
        core::ptr::copy_nonoverlapping(s.as_ptr(), e.data as *mut u8, s.len());
        *(e.data as *mut u8).add(s.len()) = 0;
        e.return_size = s.len();
    }
    true
}

/// Points a UTF8_PTR entry at a static string (or copies into a UTF8_STRING one).
///
/// # Safety
/// `p` is an entry whose `data` fits its type and `data_size`.
pub unsafe fn set_str(p: *mut OsslParam, s: &'static CStr) -> bool {
    // SAFETY: the caller's contract; sizes checked before each write.
    unsafe {
        let e = &mut *p;
        let len = s.to_bytes().len();
        match e.data_type {
            UTF8_PTR if !e.data.is_null() => *(e.data as *mut *const c_char) = s.as_ptr(),
            UTF8_STRING if !e.data.is_null() && e.data_size > len => {
                core::ptr::copy_nonoverlapping(s.as_ptr(), e.data as *mut c_char, len + 1);
            }
            _ => return false,
        }
        e.return_size = len;
    }
    true
}

/// Copies bytes into an OCTET_STRING entry, or answers a size query (no buffer).
///
/// # Safety
/// `p` is an entry whose `data` has `data_size` writable bytes.
pub unsafe fn set_octets(p: *mut OsslParam, v: &[u8]) -> bool {
    // SAFETY: the caller's contract; the size is checked before the copy.
    unsafe {
        let e = &mut *p;
        if e.data_type != OCTET_STRING {
            return false;
        }
        // No buffer: a size query, answered in `return_size` (OpenSSL's convention).
        if e.data.is_null() {
            e.return_size = v.len();
            return true;
        }
        if e.data_size < v.len() {
            return false;
        }
        core::ptr::copy_nonoverlapping(v.as_ptr(), e.data as *mut u8, v.len());
        e.return_size = v.len();
    }
    true
}

/// Whether a UTF8_STRING entry names `want` (ASCII case ignored; a trailing NUL allowed):
/// how the group and digest names OpenSSL passes are checked. False for any other type.
///
/// # Safety
/// `p` is an entry whose `data` has `data_size` readable bytes.
pub unsafe fn names(p: *const OsslParam, want: &[u8]) -> bool {
    // SAFETY: the caller's contract.
    unsafe {
        let e = &*p;
        if e.data_type != UTF8_STRING || e.data.is_null() {
            return false;
        }
        let v = core::slice::from_raw_parts(e.data as *const u8, e.data_size);
        v.strip_suffix(b"\0")
            .unwrap_or(v)
            .eq_ignore_ascii_case(want)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn name_lists_end_with_the_tables_oid() {
        assert_eq!(
            super::name_list("SM4-CBC:SM4", &shangmi::oid::SM4_CBC),
            c"SM4-CBC:SM4:1.2.156.10197.1.104.2"
        );
        assert_eq!(
            super::dotted(&shangmi::oid::SM2_WITH_SM3),
            c"1.2.156.10197.1.501"
        );
    }
}
