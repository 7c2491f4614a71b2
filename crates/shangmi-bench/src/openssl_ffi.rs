//! OpenSSL 3's X9.63 KDF, which the `openssl` crate does not wrap. With SM3 and no shared info
//! it is exactly the SM2 KDF: SM3(Z || counter) for counters from 1.
#![allow(unsafe_code)]

use std::ffi::{CStr, c_void};
use std::ptr;

use openssl_sys as ffi;

// Exported by libcrypto 3 (which openssl-sys links) but not declared by openssl-sys.
unsafe extern "C" {
    fn OSSL_PARAM_construct_utf8_string(
        key: *const std::ffi::c_char,
        buf: *mut std::ffi::c_char,
        bsize: usize,
    ) -> ffi::OSSL_PARAM;
}

/// Fills `out` with X963KDF-SM3(z). Panics if OpenSSL lacks the KDF (the bench is then
/// misconfigured, not measuring).
pub fn x963_kdf_sm3(z: &[u8], out: &mut [u8]) {
    const NAME: &CStr = c"X963KDF";
    const DIGEST: &CStr = c"digest";
    const KEY: &CStr = c"key";
    const SM3: &CStr = c"SM3";
    // SAFETY: every pointer handed to OpenSSL outlives the call that uses it; the context and
    // the fetched KDF are freed on every path; return codes are checked.
    unsafe {
        let kdf = ffi::EVP_KDF_fetch(ptr::null_mut(), NAME.as_ptr(), ptr::null());
        assert!(!kdf.is_null(), "OpenSSL has no X963KDF");
        let ctx = ffi::EVP_KDF_CTX_new(kdf);
        assert!(!ctx.is_null(), "EVP_KDF_CTX_new failed");
        let params = [
            OSSL_PARAM_construct_utf8_string(DIGEST.as_ptr(), SM3.as_ptr().cast_mut(), 0),
            ffi::OSSL_PARAM_construct_octet_string(
                KEY.as_ptr(),
                z.as_ptr().cast_mut().cast::<c_void>(),
                z.len(),
            ),
            ffi::OSSL_PARAM_construct_end(),
        ];
        let rc = ffi::EVP_KDF_derive(ctx, out.as_mut_ptr(), out.len(), params.as_ptr());
        ffi::EVP_KDF_CTX_free(ctx);
        ffi::EVP_KDF_free(kdf);
        assert_eq!(rc, 1, "EVP_KDF_derive failed");
    }
}
