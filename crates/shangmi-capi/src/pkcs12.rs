//! PKCS#12 keystores: the first key of a .p12/.pfx with its chain, and a keystore written for
//! a key and its certificates (see shangmi-pki's `pkcs12` for the algorithms read and written).
#![allow(unsafe_code)]

use core::ffi::c_int;

use shangmi_pki::pkcs12::{self, Pkcs12Entry, Pkcs12Params};
use zeroize::Zeroizing;

use crate::sm2::shangmi_sm2_private_key;
use crate::{Result, give, guard_out, handle, input, output, shangmi_status};

fn err(e: shangmi_pki::Error) -> shangmi_status {
    match e {
        shangmi_pki::Error::Decryption(_) => shangmi_status::ErrAuthentication,
        shangmi_pki::Error::Crypto(_) => shangmi_status::ErrRng,
        _ => shangmi_status::ErrInvalidArgument,
    }
}

/// Reads a PKCS#12 keystore with `password`: `*key` receives its first key (a new handle, to
/// free with `shangmi_sm2_private_key_free`) and `chain_pem` that key's certificates as PEM,
/// leaf first, NUL-terminated (`*chain_len` counts the NUL). A wrong password, a failed MAC
/// and a damaged file are `SHANGMI_STATUS_ERR_AUTHENTICATION`; on any failure, and when
/// `chain_pem` is too small (`*chain_len` is then the size needed), no key is returned.
///
/// # Safety
/// `p12` `p12_len` readable bytes; `password` `password_len` readable bytes (NULL with 0 for
/// an empty password); `key` writable; `chain_pem`/`chain_len` as in shangmi.h.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn shangmi_pkcs12_read(
    p12: *const u8,
    p12_len: usize,
    password: *const u8,
    password_len: usize,
    key: *mut *mut shangmi_sm2_private_key,
    chain_pem: *mut u8,
    chain_cap: usize,
    chain_len: *mut usize,
) -> shangmi_status {
    let run = || {
        if key.is_null() {
            return Err(shangmi_status::ErrNullPointer);
        }
        // SAFETY: the caller's contract above.
        let (data, pw) = unsafe { (input(p12, p12_len)?, input(password, password_len)?) };
        let held = pkcs12::read(data, pw)
            .and_then(|p| p.key_chains())
            .map_err(err)?
            .into_iter()
            .next()
            .ok_or(shangmi_status::ErrInvalidKey)?;
        let mut pem = String::new();
        for der in &held.chain {
            let block = der::pem::encode_string("CERTIFICATE", der::pem::LineEnding::LF, der)
                .map_err(|_| shangmi_status::ErrInvalidArgument)?;
            pem.push_str(&block);
        }
        // SAFETY: the caller's contract above; the inputs are no longer read.
        let o = unsafe { output(chain_pem, chain_cap, chain_len, pem.len() + 1)? };
        o[..pem.len()].copy_from_slice(pem.as_bytes());
        o[pem.len()] = 0;
        // SAFETY: `key` is non-null and writable by the caller's contract.
        unsafe { give(key, shangmi_sm2_private_key { inner: held.key }) }
    };
    // SAFETY: the caller's contract above (`chain_pem`, `chain_cap`, `chain_len`).
    unsafe { guard_out(chain_pem, chain_cap, chain_len, run) }
}

/// Writes a PKCS#12 keystore holding `key`, the first certificate of `certs` (PEM or DER;
/// the key's own) and the rest as its chain, under `password`, named `name` (NUL-terminated,
/// or NULL for none). `compat` 0: SM4-CBC key and certificate bags, PBKDF2 with
/// hmacWithSHA256 and an SM3 MAC (what OpenSSL 4.0 and Tongsuo read); non-zero: AES-256-CBC
/// and a SHA-256 MAC (OpenSSL 3's defaults, for Java and Windows). `*out_len` is the exact
/// size; every call draws new salts, and each keystore of the same inputs has the same size.
///
/// # Safety
/// `key` a live key; `certs` `certs_len` readable bytes; `password` as in
/// `shangmi_pkcs12_read`; `name` NULL or NUL-terminated; `out`/`out_len` as in shangmi.h.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn shangmi_pkcs12_write(
    key: *const shangmi_sm2_private_key,
    certs: *const u8,
    certs_len: usize,
    password: *const u8,
    password_len: usize,
    name: *const core::ffi::c_char,
    compat: c_int,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    let run = || -> Result {
        // SAFETY: the caller's contract above.
        let (k, data, pw) = unsafe {
            (
                handle(key)?,
                input(certs, certs_len)?,
                input(password, password_len)?,
            )
        };
        let name = if name.is_null() {
            None
        } else {
            // SAFETY: non-null and NUL-terminated by the caller's contract.
            let c = unsafe { core::ffi::CStr::from_ptr(name) };
            Some(c.to_str().map_err(|_| shangmi_status::ErrInvalidArgument)?)
        };
        let ders = shangmi_pki::certificate_ders(data).map_err(err)?;
        let (leaf, chain) = ders.split_first().ok_or(shangmi_status::ErrNullPointer)?;
        let params = if compat != 0 {
            Pkcs12Params::international()
        } else {
            Pkcs12Params::sm()
        };
        let entry = Pkcs12Entry {
            key: &k.inner,
            cert: leaf,
            name,
        };
        let file = Zeroizing::new(pkcs12::write(&[entry], chain, pw, params).map_err(err)?);
        // SAFETY: the caller's contract above; the inputs are no longer read.
        unsafe { output(out, out_cap, out_len, file.len())? }.copy_from_slice(&file);
        Ok(())
    };
    // SAFETY: the caller's contract above (`out`, `out_cap`, `out_len`).
    unsafe { guard_out(out, out_cap, out_len, run) }
}
