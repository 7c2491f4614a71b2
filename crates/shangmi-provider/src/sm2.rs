//! SM2 signatures and public-key encryption for OpenSSL: signatures with the distinguishing
//! ID (`distid`, defaulting as the running OpenSSL's own SM2 does, and RFC 8998's TLS ID when
//! libssl says the signature is TLS 1.3's), encryption in OpenSSL's ASN.1 layout.

use core::ffi::{CStr, c_char, c_int, c_void};
use std::sync::OnceLock;

use shangmi::sm2::Signature;
use shangmi::sm3::Sm3;

use crate::err::{Reason, fail};
use crate::keys::{
    CtxGetParams, CtxParams, CtxTable, DInit, DSignFinal, DUpdate, DVerifyFinal, Free, Init, Key,
    New, SigDup, SigNew, Sign, Tables, Verify, key, list, sm2_names,
};
use crate::params::OsslParam;
use crate::served::{self, Op};
use crate::{Algorithm, DISPATCH_END, entry, free_boxed, guarded};

mod cipher;
mod sig_params;
use cipher::{CipherCtx, ac_decrypt, ac_encrypt, ac_init, ac_new, ac_set_params, ac_settable};
use sig_params::{sig_apply_params, sig_get_params, sig_gettable, sig_set_params, sig_settable};

/// RFC 8998's SM2 ID for TLS 1.3's CertificateVerify.
const TLS13_ID: &[u8] = b"TLSv1.3+GM+Cipher+Suite";

/// TLS 1.3's version number, as libssl passes it in `tls-version`.
const TLS1_3_VERSION: u64 = 0x0304;

/// A signature operation in progress.
#[derive(Clone)]
struct SigCtx {
    key: Option<Key>,
    /// The ID set by `distid` or `tls-version`; `None` is the running OpenSSL's default.
    id: Option<Vec<u8>>,
    /// SM3(Z || message so far), started once the ID is final (at the first data).
    hash: Option<Sm3>,
}

impl SigCtx {
    fn hasher(&mut self) -> Option<&mut Sm3> {
        if self.hash.is_none() {
            let id = self
                .id
                .as_deref()
                .unwrap_or(crate::core_version::default_sm2_id());
            let z = self.key.as_ref()?.public()?.z(id).ok()?;
            let mut h = Sm3::new();
            h.update(&z);
            self.hash = Some(h);
        }
        self.hash.as_mut()
    }

    fn digest(&mut self) -> Option<[u8; 32]> {
        self.hasher()?;
        self.hash.take().map(|h| h.finalize())
    }
}

/// # Safety
/// `ctx` is NULL or a live signature context from `sig_new`.
unsafe fn sig<'a>(ctx: *mut c_void) -> Option<&'a mut SigCtx> {
    // SAFETY: the contract above.
    unsafe { ctx.cast::<SigCtx>().as_mut() }
}

unsafe extern "C" fn sig_new(_provctx: *mut c_void, _propq: *const c_char) -> *mut c_void {
    guarded(core::ptr::null_mut(), || {
        let c = SigCtx {
            key: None,
            // The default ID is the running OpenSSL's own (empty on 3.x, 1234567812345678 on
            // 4.x), so that what either provider signs the other verifies, certificates
            // included; it is resolved when the message starts.
            id: None,
            hash: None,
        };
        Box::into_raw(Box::new(c)).cast()
    })
}

unsafe extern "C" fn sig_dup(ctx: *mut c_void) -> *mut c_void {
    guarded(core::ptr::null_mut(), || {
        // SAFETY: the core passes a live context.
        match unsafe { sig(ctx) } {
            Some(c) => Box::into_raw(Box::new(c.clone())).cast(),
            None => core::ptr::null_mut(),
        }
    })
}

/// # Safety
/// The core's contract for the init functions.
unsafe fn sig_init(
    ctx: *mut c_void,
    md: *const c_char,
    k: *mut c_void,
    ps: *const OsslParam,
    private: bool,
) -> c_int {
    const F: &CStr = c"sm2_signature_init";
    guarded(0, || {
        // SAFETY: the contract above.
        unsafe {
            let Some(c) = sig(ctx) else {
                return fail(Reason::State, F);
            };
            if !md.is_null() {
                let name = CStr::from_ptr(md).to_bytes();
                if !name.eq_ignore_ascii_case(b"SM3")
                    && name != shangmi::oid::SM3.to_string().as_bytes()
                {
                    return fail(Reason::Unsupported, F);
                }
            }
            // No key: the one this context already holds, as OpenSSL's own SM2 reuses it
            // (an EVP_PKEY_CTX or EVP_MD_CTX initialised again for the next message).
            let k = match key(k) {
                Some(k) => k.clone(),
                None => match c.key.take() {
                    Some(k) => k,
                    None => return fail(Reason::NoKey, F),
                },
            };
            if private && !matches!(k, Key::Private(_)) || k.public().is_none() {
                return fail(Reason::InvalidKey, F);
            }
            c.key = Some(k);
            c.hash = None;
            sig_apply_params(c, ps)
        }
    })
}

unsafe extern "C" fn sign_init(ctx: *mut c_void, k: *mut c_void, ps: *const OsslParam) -> c_int {
    // SAFETY: forwarded under the same contract.
    unsafe { sig_init(ctx, core::ptr::null(), k, ps, true) }
}

unsafe extern "C" fn verify_init(ctx: *mut c_void, k: *mut c_void, ps: *const OsslParam) -> c_int {
    // SAFETY: forwarded under the same contract.
    unsafe { sig_init(ctx, core::ptr::null(), k, ps, false) }
}

unsafe extern "C" fn dsign_init(
    ctx: *mut c_void,
    md: *const c_char,
    k: *mut c_void,
    ps: *const OsslParam,
) -> c_int {
    // SAFETY: forwarded under the same contract.
    unsafe { sig_init(ctx, md, k, ps, true) }
}

unsafe extern "C" fn dverify_init(
    ctx: *mut c_void,
    md: *const c_char,
    k: *mut c_void,
    ps: *const OsslParam,
) -> c_int {
    // SAFETY: forwarded under the same contract.
    unsafe { sig_init(ctx, md, k, ps, false) }
}

/// Writes a DER signature of digest `e`, or its maximum size when `out` is NULL.
///
/// # Safety
/// `out` NULL or `out_size` writable bytes; `out_len` writable.
unsafe fn write_sig(
    c: &SigCtx,
    e: &[u8; 32],
    out: *mut u8,
    out_len: *mut usize,
    out_size: usize,
) -> c_int {
    const F: &CStr = c"sm2_sign";
    let Some(Key::Private(k)) = &c.key else {
        return fail(Reason::NoKey, F);
    };
    let Ok(s) = k.sign_digest(e) else {
        return fail(Reason::Rng, F);
    };
    served::count(Op::Sm2Sign);
    let der = s.to_der();
    if out.is_null() || out_len.is_null() || out_size < der.len() {
        return fail(Reason::BufferTooSmall, F);
    }
    // SAFETY: the contract above; the size was checked.
    unsafe {
        core::ptr::copy_nonoverlapping(der.as_ptr(), out, der.len());
        *out_len = der.len();
    }
    1
}

unsafe extern "C" fn sign(
    ctx: *mut c_void,
    out: *mut u8,
    out_len: *mut usize,
    out_size: usize,
    tbs: *const u8,
    tbs_len: usize,
) -> c_int {
    guarded(0, || {
        // SAFETY: the core's contract: live context, `tbs` `tbs_len` bytes, buffers as sized.
        unsafe {
            let Some(c) = sig(ctx) else { return 0 };
            if out_len.is_null() {
                return 0;
            }
            if out.is_null() {
                *out_len = 72;
                return 1;
            }
            if tbs.is_null() || tbs_len != 32 {
                return fail(Reason::InvalidLength, c"sm2_sign");
            }
            let e: [u8; 32] = core::slice::from_raw_parts(tbs, 32)
                .try_into()
                .expect("32 bytes");
            write_sig(c, &e, out, out_len, out_size)
        }
    })
}

unsafe extern "C" fn verify(
    ctx: *mut c_void,
    s: *const u8,
    s_len: usize,
    tbs: *const u8,
    tbs_len: usize,
) -> c_int {
    guarded(0, || {
        // SAFETY: the core's contract: live context, buffers of the given lengths.
        unsafe {
            let Some(c) = sig(ctx) else { return 0 };
            if tbs.is_null() || tbs_len != 32 || s.is_null() {
                return fail(Reason::InvalidLength, c"sm2_verify");
            }
            let e: [u8; 32] = core::slice::from_raw_parts(tbs, 32)
                .try_into()
                .expect("32 bytes");
            check(c, &e, core::slice::from_raw_parts(s, s_len))
        }
    })
}

fn check(c: &SigCtx, e: &[u8; 32], s: &[u8]) -> c_int {
    const F: &CStr = c"sm2_verify";
    let Some(pk) = c.key.as_ref().and_then(Key::public) else {
        return fail(Reason::NoKey, F);
    };
    served::count(Op::Sm2Verify);
    match Signature::from_der(s).map(|sig| pk.verify_digest(e, &sig)) {
        Ok(Ok(())) => 1,
        _ => fail(Reason::BadSignature, F),
    }
}

unsafe extern "C" fn dupdate(ctx: *mut c_void, data: *const u8, len: usize) -> c_int {
    guarded(0, || {
        // SAFETY: the core's contract: live context, `data` `len` readable bytes.
        unsafe {
            let Some(c) = sig(ctx) else { return 0 };
            let Some(h) = c.hasher() else {
                return fail(Reason::NoKey, c"sm2_digest_update");
            };
            if len > 0 {
                if data.is_null() {
                    return 0;
                }
                h.update(core::slice::from_raw_parts(data, len));
            }
            1
        }
    })
}

unsafe extern "C" fn dsign_final(
    ctx: *mut c_void,
    out: *mut u8,
    out_len: *mut usize,
    out_size: usize,
) -> c_int {
    guarded(0, || {
        // SAFETY: the core's contract: live context, buffers as sized.
        unsafe {
            let Some(c) = sig(ctx) else { return 0 };
            if out_len.is_null() {
                return 0;
            }
            if out.is_null() {
                // A size query must not end the message.
                *out_len = 72;
                return 1;
            }
            let Some(e) = c.digest() else {
                return fail(Reason::NoKey, c"sm2_sign");
            };
            write_sig(c, &e, out, out_len, out_size)
        }
    })
}

unsafe extern "C" fn dverify_final(ctx: *mut c_void, s: *const u8, s_len: usize) -> c_int {
    guarded(0, || {
        // SAFETY: the core's contract: live context, `s` `s_len` readable bytes.
        unsafe {
            let Some(c) = sig(ctx) else { return 0 };
            if s.is_null() {
                return 0;
            }
            let Some(e) = c.digest() else {
                return fail(Reason::NoKey, c"sm2_verify");
            };
            check(c, &e, core::slice::from_raw_parts(s, s_len))
        }
    })
}

/// SM2 signatures (SM2 with SM3, `distid` settable).
pub(crate) fn signature() -> *const Algorithm {
    static T: OnceLock<Tables> = OnceLock::new();
    list(
        &T,
        || {
            vec![
                entry::<SigNew>(1, sig_new),
                entry::<Init>(2, sign_init),
                entry::<Sign>(3, sign),
                entry::<Init>(4, verify_init),
                entry::<Verify>(5, verify),
                entry::<DInit>(8, dsign_init),
                entry::<DUpdate>(9, dupdate),
                entry::<DSignFinal>(10, dsign_final),
                entry::<DInit>(12, dverify_init),
                entry::<DUpdate>(13, dupdate),
                entry::<DVerifyFinal>(14, dverify_final),
                entry::<Free>(16, free_boxed::<SigCtx>),
                entry::<SigDup>(17, sig_dup),
                entry::<CtxGetParams>(18, sig_get_params),
                entry::<CtxTable>(19, sig_gettable),
                entry::<CtxParams>(20, sig_set_params),
                entry::<CtxTable>(21, sig_settable),
                DISPATCH_END,
            ]
        },
        sm2_names(),
        c"shangmi SM2 signature",
    )
}

/// SM2 public-key encryption in OpenSSL's ASN.1 layout.
pub(crate) fn asym_cipher() -> *const Algorithm {
    static T: OnceLock<Tables> = OnceLock::new();
    list(
        &T,
        || {
            vec![
                entry::<New>(1, ac_new),
                entry::<Init>(2, ac_init),
                entry::<Sign>(3, ac_encrypt),
                entry::<Init>(4, ac_init),
                entry::<Sign>(5, ac_decrypt),
                entry::<Free>(6, free_boxed::<CipherCtx>),
                entry::<CtxParams>(10, ac_set_params),
                entry::<CtxTable>(11, ac_settable),
                DISPATCH_END,
            ]
        },
        sm2_names(),
        c"shangmi SM2 encryption",
    )
}
