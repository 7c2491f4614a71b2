//! Certificates and CMS for C: chain verification, SignedData and EnvelopedData (GM/T 0010).
//! Certificates, CRLs and messages are PEM (a buffer may hold several certificates) or DER.
//! A failed check (a chain rule, a signature, a decryption) is
//! `SHANGMI_STATUS_ERR_AUTHENTICATION` with no output; malformed input
//! `SHANGMI_STATUS_ERR_INVALID_ARGUMENT`.

use core::ffi::c_int;
use std::time::{Duration, UNIX_EPOCH};

use shangmi_pki::cms::{CmsSigner, Flavor};
use shangmi_pki::{Cert, Error, Verifier};

use crate::sm2::shangmi_sm2_private_key;
use crate::{Result, guard, guard_out, handle, input, output, room, shangmi_status};

mod envelope;
pub use envelope::*;

fn err(e: Error) -> shangmi_status {
    match e {
        Error::Chain { .. } | Error::BadSignature(_) | Error::Decryption(_) => {
            shangmi_status::ErrAuthentication
        }
        Error::Crypto(_) => shangmi_status::ErrRng,
        _ => shangmi_status::ErrInvalidArgument,
    }
}

/// Certificates from a C buffer (PEM or DER; NULL with length 0: none), each as encoded there.
///
/// # Safety
/// `p` NULL or `len` readable bytes.
unsafe fn certs(p: *const u8, len: usize) -> Result<Vec<Cert>> {
    // SAFETY: the caller's contract.
    let data = unsafe { input(p, len)? };
    if data.is_empty() {
        return Ok(Vec::new());
    }
    shangmi_pki::certificates(data).map_err(err)
}

fn flavor(gm: c_int) -> Flavor {
    if gm != 0 { Flavor::Gm } else { Flavor::Pkcs7 }
}

/// Verifies `cert` up to one of `anchors` through `untrusted`, against `crls`, every
/// signature with the SM2 ID `id` (NULL for 1234567812345678), validity at Unix time `at`
/// (0 for now). `SHANGMI_STATUS_ERR_AUTHENTICATION` when any rule fails.
///
/// # Safety
/// Each pointer NULL (with its length 0; `cert` and `anchors` are required) or its length in
/// readable bytes.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn shangmi_x509_verify(
    cert: *const u8,
    cert_len: usize,
    anchors: *const u8,
    anchors_len: usize,
    untrusted: *const u8,
    untrusted_len: usize,
    crls: *const u8,
    crls_len: usize,
    id: *const u8,
    id_len: usize,
    at: u64,
) -> shangmi_status {
    guard(|| {
        // SAFETY: the caller's contract above.
        let (leaf, anchors, others) = unsafe {
            (
                certs(cert, cert_len)?,
                certs(anchors, anchors_len)?,
                certs(untrusted, untrusted_len)?,
            )
        };
        let leaf = leaf
            .into_iter()
            .next()
            .ok_or(shangmi_status::ErrNullPointer)?;
        if anchors.is_empty() {
            return Err(shangmi_status::ErrNullPointer);
        }
        // SAFETY: the caller's contract above.
        let crl_data = unsafe { input(crls, crls_len)? };
        let mut v = Verifier::new(anchors);
        if !crl_data.is_empty() {
            v = v.with_crls(shangmi_pki::crls(crl_data).map_err(err)?);
        }
        if !id.is_null() {
            // SAFETY: the caller's contract above.
            v = v.with_id(unsafe { input(id, id_len)? });
        }
        if at != 0 {
            v = v.at(UNIX_EPOCH + Duration::from_secs(at));
        }
        v.verify(&leaf, &others).map(drop).map_err(err)
    })
}

/// Writes `msg`, whose length varies from call to call (random signatures and SM2 ciphertexts
/// encode a byte or two longer or shorter): when `out` is too small, the size asked for is
/// `msg.len() + slack`, room for any other call's.
///
/// # Safety
/// `out`, `out_cap`, `out_len` as in shangmi.h.
unsafe fn put_varying(
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
    msg: &[u8],
    slack: usize,
) -> Result<()> {
    if out.is_null() || out_cap < msg.len() {
        // SAFETY: the caller's contract; nothing is written.
        unsafe { room(out, out_cap, out_len, msg.len() + slack)? };
    }
    // SAFETY: the caller's contract.
    unsafe { output(out, out_cap, out_len, msg.len())? }.copy_from_slice(msg);
    Ok(())
}

/// SignedData (DER) over `data`, signed by `key` with its certificate `cert`; `detached`
/// non-zero leaves the content out, `gm` non-zero writes GM/T 0010's OIDs. `*out_len` is an
/// upper bound (the signature's DER length varies by a byte or two) until the call succeeds.
///
/// # Safety
/// `data`, `cert` their lengths in readable bytes; `key` a live key; `out`/`out_len` as in
/// shangmi.h.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn shangmi_cms_sign(
    data: *const u8,
    len: usize,
    cert: *const u8,
    cert_len: usize,
    key: *const shangmi_sm2_private_key,
    detached: c_int,
    gm: c_int,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    let run = || {
        // SAFETY: the caller's contract above.
        let (d, c, k) = unsafe { (input(data, len)?, certs(cert, cert_len)?, handle(key)?) };
        let c = c.first().ok_or(shangmi_status::ErrNullPointer)?;
        let signers = [CmsSigner {
            cert: c,
            key: &k.inner,
        }];
        let msg =
            shangmi_pki::cms::sign(d, &signers, &[], detached != 0, flavor(gm)).map_err(err)?;
        // Another signature's encoding is at most two bytes longer.
        // SAFETY: the caller's contract above; the inputs are no longer read.
        unsafe { put_varying(out, out_cap, out_len, &msg, 2)? };
        Ok(())
    };
    // SAFETY: the caller's contract above (`out`, `out_cap`, `out_len`).
    unsafe { guard_out(out, out_cap, out_len, run) }
}

/// Verifies SignedData with its signers' chains to `anchors` (validity at Unix time `at`, 0 for
/// now) and writes the content (the attached one, or `content` when given for a detached
/// signature) to `out`; `*out_len` is its exact length.
///
/// # Safety
/// Pointers NULL (with length 0; `content` optional) or their lengths in readable bytes;
/// `out`/`out_len` as in shangmi.h.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn shangmi_cms_verify(
    msg: *const u8,
    msg_len: usize,
    anchors: *const u8,
    anchors_len: usize,
    content: *const u8,
    content_len: usize,
    at: u64,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    let run = || {
        // SAFETY: the caller's contract above.
        let (m, a) = unsafe { (input(msg, msg_len)?, certs(anchors, anchors_len)?) };
        let detached = if content.is_null() {
            None
        } else {
            // SAFETY: the caller's contract above.
            Some(unsafe { input(content, content_len)? })
        };
        let mut v = Verifier::new(a);
        if at != 0 {
            v = v.at(UNIX_EPOCH + Duration::from_secs(at));
        }
        let got = shangmi_pki::cms::verify(m, detached, &v).map_err(err)?;
        // SAFETY: the caller's contract above; the input slices are no longer read.
        unsafe { output(out, out_cap, out_len, got.content.len())? }.copy_from_slice(&got.content);
        Ok(())
    };
    // SAFETY: the caller's contract above (`out`, `out_cap`, `out_len`).
    unsafe { guard_out(out, out_cap, out_len, run) }
}
