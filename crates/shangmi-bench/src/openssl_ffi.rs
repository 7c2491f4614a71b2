//! What the bench needs of OpenSSL 3 that the `openssl` crate does not wrap: the X9.63 KDF
//! (with SM3 and no shared info exactly the SM2 KDF: SM3(Z || counter) for counters from 1),
//! and a certificate's SM2 distinguishing ID.
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
    fn X509_set0_distinguishing_id(x: *mut ffi::X509, id: *mut ffi::ASN1_STRING);
}

/// Makes OpenSSL check `x`'s signature with the SM2 ID `id` (3.0 uses an empty ID unless the
/// certificate carries one).
pub fn set_distinguishing_id(x: &openssl::x509::X509, id: &[u8]) {
    use foreign_types::ForeignType;
    // SAFETY: a fresh OCTET STRING takes a copy of `id`; X509_set0_distinguishing_id takes
    // ownership of it, and `x` outlives the call.
    unsafe {
        let s = ffi::ASN1_STRING_type_new(ffi::V_ASN1_OCTET_STRING);
        assert!(!s.is_null());
        assert_eq!(
            ffi::ASN1_STRING_set(s, id.as_ptr().cast(), id.len() as _),
            1
        );
        X509_set0_distinguishing_id(x.as_ptr(), s);
    }
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
