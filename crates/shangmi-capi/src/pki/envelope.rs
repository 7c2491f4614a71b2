//! CMS EnvelopedData for C: encryption to certificates, decryption, and signed and enveloped
//! data, with the layouts other peers write chosen by options.

use core::ffi::c_int;
use std::time::{Duration, UNIX_EPOCH};

use shangmi_pki::cms::CmsSigner;
use shangmi_pki::{Cert, Verifier};

use super::{certs, err, flavor, put_varying};
use crate::sm2::shangmi_sm2_private_key;
use crate::{guard_out, handle, input, output, shangmi_status};

/// `shangmi_cms_encrypt` option: GM/T 0010's content-type OIDs instead of PKCS#7's.
pub const SHANGMI_CMS_GM: c_int = 1;
/// `shangmi_cms_encrypt` option: SM4-GCM content (gmsm's form) instead of SM4-CBC.
pub const SHANGMI_CMS_SM4_GCM: c_int = 2;
/// `shangmi_cms_encrypt` option: wrapped keys as raw C1C2C3 without the 04 (CFCA SADK).
pub const SHANGMI_CMS_CFCA: c_int = 4;
/// `shangmi_cms_encrypt` option: recipients named by subject key identifier.
pub const SHANGMI_CMS_BY_KEY_ID: c_int = 8;
/// `shangmi_cms_encrypt` option: GmSSL 3's form (GM/T 0010 OIDs, its key-transport label).
pub const SHANGMI_CMS_GMSSL: c_int = 16;

/// The envelope `options` (an OR of `SHANGMI_CMS_*`) ask for; None for an unknown bit.
pub(super) fn envelope(options: c_int) -> Option<shangmi_pki::envelope::Envelope> {
    use shangmi_pki::envelope::{ContentCipher, Envelope, RecipientName, WrappedKey};
    let known = SHANGMI_CMS_GM
        | SHANGMI_CMS_SM4_GCM
        | SHANGMI_CMS_CFCA
        | SHANGMI_CMS_BY_KEY_ID
        | SHANGMI_CMS_GMSSL;
    let gmssl = options & SHANGMI_CMS_GMSSL != 0;
    if options & !known != 0 || (gmssl && options & (SHANGMI_CMS_CFCA | SHANGMI_CMS_BY_KEY_ID) != 0)
    {
        return None;
    }
    let has = |bit| options & bit != 0;
    Some(Envelope {
        flavor: flavor(options & (SHANGMI_CMS_GM | SHANGMI_CMS_CFCA | SHANGMI_CMS_GMSSL)),
        cipher: if has(SHANGMI_CMS_SM4_GCM) {
            ContentCipher::Sm4Gcm
        } else {
            ContentCipher::Sm4Cbc
        },
        wrapped_key: if has(SHANGMI_CMS_CFCA) {
            WrappedKey::CfcaRaw
        } else if gmssl {
            WrappedKey::Gmssl
        } else {
            WrappedKey::Der
        },
        recipient_name: if has(SHANGMI_CMS_BY_KEY_ID) {
            RecipientName::SubjectKeyId
        } else {
            RecipientName::IssuerAndSerial
        },
    })
}

/// EnvelopedData (DER) of `data` for every certificate in `recipients`. `options` is 0 (PKCS#7
/// OIDs, SM4-CBC, DER wrapped keys, recipients by issuer and serial) or an OR of
/// `SHANGMI_CMS_GM`, `SHANGMI_CMS_SM4_GCM`, `SHANGMI_CMS_CFCA`, `SHANGMI_CMS_BY_KEY_ID` and
/// `SHANGMI_CMS_GMSSL` (1 is GM/T 0010's OIDs, as before options existed); other bits, or
/// GmSSL's form with CFCA's or key identifiers, are `SHANGMI_STATUS_ERR_INVALID_ARGUMENT`. `*out_len` is an upper bound until the call succeeds.
///
/// # Safety
/// As `shangmi_cms_sign`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shangmi_cms_encrypt(
    data: *const u8,
    len: usize,
    recipients: *const u8,
    recipients_len: usize,
    options: c_int,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    let run = || {
        // SAFETY: the caller's contract above.
        let (d, r) = unsafe { (input(data, len)?, certs(recipients, recipients_len)?) };
        if r.is_empty() {
            return Err(shangmi_status::ErrNullPointer);
        }
        let how = envelope(options).ok_or(shangmi_status::ErrInvalidArgument)?;
        let msg = shangmi_pki::envelope::encrypt_with(d, &r, &how).map_err(err)?;
        // Each recipient's SM2 ciphertext may encode a few bytes longer another time.
        // SAFETY: the caller's contract above; the inputs are no longer read.
        unsafe { put_varying(out, out_cap, out_len, &msg, 4 * r.len())? };
        Ok(())
    };
    // SAFETY: the caller's contract above (`out`, `out_cap`, `out_len`).
    unsafe { guard_out(out, out_cap, out_len, run) }
}

/// Decrypts EnvelopedData with `key` (the recipient `cert` names, or each one tried when
/// `cert` is NULL) into `out`; `*out_len` is the content's exact length.
/// `SHANGMI_STATUS_ERR_AUTHENTICATION`, with nothing written, when it does not open.
///
/// # Safety
/// As `shangmi_cms_verify`; `key` a live key.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn shangmi_cms_decrypt(
    msg: *const u8,
    msg_len: usize,
    key: *const shangmi_sm2_private_key,
    cert: *const u8,
    cert_len: usize,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    let run = || {
        // SAFETY: the caller's contract above.
        let (m, k, c) = unsafe { (input(msg, msg_len)?, handle(key)?, certs(cert, cert_len)?) };
        let content = shangmi_pki::envelope::decrypt(m, &k.inner, c.first().map(Cert::certificate))
            .map_err(err)?;
        // SAFETY: the caller's contract above; the input slices are no longer read.
        unsafe { output(out, out_cap, out_len, content.len())? }.copy_from_slice(&content);
        Ok(())
    };
    // SAFETY: the caller's contract above (`out`, `out_cap`, `out_len`).
    unsafe { guard_out(out, out_cap, out_len, run) }
}

/// SignedAndEnvelopedData (DER) of `data`: signed by `key` with its certificate `cert` over
/// the content, SM4-CBC encrypted to every certificate in `recipients`; `gm` non-zero writes
/// GM/T 0010's OIDs. `*out_len` is an upper bound until the call succeeds.
///
/// # Safety
/// As `shangmi_cms_sign`, `recipients` as in `shangmi_cms_encrypt`.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn shangmi_cms_sign_encrypt(
    data: *const u8,
    len: usize,
    cert: *const u8,
    cert_len: usize,
    key: *const shangmi_sm2_private_key,
    recipients: *const u8,
    recipients_len: usize,
    gm: c_int,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    let run = || {
        // SAFETY: the caller's contract above.
        let (d, c, k, r) = unsafe {
            (
                input(data, len)?,
                certs(cert, cert_len)?,
                handle(key)?,
                certs(recipients, recipients_len)?,
            )
        };
        let c = c.first().ok_or(shangmi_status::ErrNullPointer)?;
        if r.is_empty() {
            return Err(shangmi_status::ErrNullPointer);
        }
        let signers = [CmsSigner {
            cert: c,
            key: &k.inner,
        }];
        let msg = shangmi_pki::signed_envelope::sign_and_encrypt(d, &signers, &r, flavor(gm))
            .map_err(err)?;
        // The signature's and each wrapped key's length vary.
        // SAFETY: the caller's contract above; the inputs are no longer read.
        unsafe { put_varying(out, out_cap, out_len, &msg, 2 + 4 * r.len())? };
        Ok(())
    };
    // SAFETY: the caller's contract above (`out`, `out_cap`, `out_len`).
    unsafe { guard_out(out, out_cap, out_len, run) }
}

/// Opens SignedAndEnvelopedData with `key` and verifies its signers' signatures and chains to
/// `anchors` (validity at Unix time `at`, 0 for now); writes the content to `out` only when
/// every check holds (`SHANGMI_STATUS_ERR_AUTHENTICATION`, nothing written, otherwise). A
/// signer needs digitalSignature or nonRepudiation when its certificate states a key usage;
/// `shangmi_cms_decrypt_verify_opts` with `SHANGMI_CMS_ALLOW_CA_SIGNER` lets an anchor sign
/// with its certificate-signing key.
///
/// # Safety
/// As `shangmi_cms_verify`; `key` a live key.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn shangmi_cms_decrypt_verify(
    msg: *const u8,
    msg_len: usize,
    key: *const shangmi_sm2_private_key,
    anchors: *const u8,
    anchors_len: usize,
    at: u64,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    // SAFETY: the caller's contract, passed on unchanged.
    unsafe {
        shangmi_cms_decrypt_verify_opts(
            msg,
            msg_len,
            key,
            anchors,
            anchors_len,
            at,
            0,
            out,
            out_cap,
            out_len,
        )
    }
}

/// `shangmi_cms_decrypt_verify` and `shangmi_cms_decrypt_verify_opts` option: a trust anchor
/// may sign the message with a key whose usage is certificate and CRL signing only, as CAs
/// that deliver encryption keys do.
pub const SHANGMI_CMS_ALLOW_CA_SIGNER: c_int = 32;

/// `shangmi_cms_decrypt_verify` with `options`: 0, or `SHANGMI_CMS_ALLOW_CA_SIGNER`; any
/// other bit is `SHANGMI_STATUS_ERR_INVALID_ARGUMENT`.
///
/// # Safety
/// As `shangmi_cms_decrypt_verify`.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn shangmi_cms_decrypt_verify_opts(
    msg: *const u8,
    msg_len: usize,
    key: *const shangmi_sm2_private_key,
    anchors: *const u8,
    anchors_len: usize,
    at: u64,
    options: c_int,
    out: *mut u8,
    out_cap: usize,
    out_len: *mut usize,
) -> shangmi_status {
    let run = || {
        if options & !SHANGMI_CMS_ALLOW_CA_SIGNER != 0 {
            return Err(shangmi_status::ErrInvalidArgument);
        }
        // SAFETY: the caller's contract above.
        let (m, k, a) = unsafe {
            (
                input(msg, msg_len)?,
                handle(key)?,
                certs(anchors, anchors_len)?,
            )
        };
        let mut v = Verifier::new(a);
        if at != 0 {
            v = v.at(UNIX_EPOCH + Duration::from_secs(at));
        }
        if options & SHANGMI_CMS_ALLOW_CA_SIGNER != 0 {
            v = v.allowing_anchor_signers();
        }
        let got = shangmi_pki::signed_envelope::decrypt_and_verify(m, &k.inner, &v).map_err(err)?;
        // SAFETY: the caller's contract above; the input slices are no longer read.
        unsafe { output(out, out_cap, out_len, got.content.len())? }.copy_from_slice(&got.content);
        Ok(())
    };
    // SAFETY: the caller's contract above (`out`, `out_cap`, `out_len`).
    unsafe { guard_out(out, out_cap, out_len, run) }
}
