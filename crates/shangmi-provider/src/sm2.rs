//! SM2 for OpenSSL: key management (import/export in the parameters OpenSSL's own EC/SM2
//! keys use, so keys decoded by the default provider move across), signatures with the
//! distinguishing ID (`distid`), and public-key encryption in OpenSSL's ASN.1 layout.

use core::ffi::{CStr, c_char, c_int, c_void};
use std::sync::OnceLock;

use shangmi::sm2::{self, Format, Signature, SigningKey, VerifyingKey};
use shangmi::sm3::Sm3;
use zeroize::Zeroizing;

use crate::err::{self, Reason, fail};
use crate::params::{self, OsslParam, Static};
use crate::{
    ALGORITHM_END, Algorithm, DISPATCH_END, Dispatch, PROPERTIES, entry, free_boxed, guarded,
};

const SELECT_PRIVATE: c_int = 0x01;
const SELECT_PUBLIC: c_int = 0x02;

/// Key data: a private key (with its public key), a public key, or nothing yet.
#[derive(Clone)]
enum Key {
    Empty,
    Private(Box<SigningKey>),
    Public(VerifyingKey),
}

impl Key {
    fn public(&self) -> Option<VerifyingKey> {
        match self {
            Key::Empty => None,
            Key::Private(k) => Some(*k.verifying_key()),
            Key::Public(p) => Some(*p),
        }
    }
}

/// # Safety
/// `p` is NULL or key data made by `km_new` (or `km_dup`), live.
unsafe fn key<'a>(p: *const c_void) -> Option<&'a Key> {
    // SAFETY: the contract above.
    unsafe { p.cast::<Key>().as_ref() }
}

unsafe extern "C" fn km_new(_provctx: *mut c_void) -> *mut c_void {
    guarded(core::ptr::null_mut(), || {
        Box::into_raw(Box::new(Key::Empty)).cast()
    })
}

unsafe extern "C" fn km_dup(k: *const c_void, _selection: c_int) -> *mut c_void {
    guarded(core::ptr::null_mut(), || {
        // SAFETY: the core passes live key data.
        match unsafe { key(k) } {
            Some(k) => Box::into_raw(Box::new(k.clone())).cast(),
            None => core::ptr::null_mut(),
        }
    })
}

unsafe extern "C" fn km_has(k: *const c_void, selection: c_int) -> c_int {
    guarded(0, || {
        // SAFETY: the core passes live key data.
        let Some(k) = (unsafe { key(k) }) else {
            return 0;
        };
        let ok = (selection & SELECT_PRIVATE == 0 || matches!(k, Key::Private(_)))
            && (selection & SELECT_PUBLIC == 0 || k.public().is_some());
        c_int::from(ok)
    })
}

unsafe extern "C" fn km_match(a: *const c_void, b: *const c_void, _selection: c_int) -> c_int {
    guarded(0, || {
        // SAFETY: the core passes live key data.
        let (Some(a), Some(b)) = (unsafe { key(a) }, unsafe { key(b) }) else {
            return 0;
        };
        c_int::from(a.public().is_some() && a.public() == b.public())
    })
}

/// Key generation: the selection asked for (the curve is fixed, so nothing else to hold).
struct GenCtx {
    selection: c_int,
}

unsafe extern "C" fn gen_init(
    _provctx: *mut c_void,
    selection: c_int,
    ps: *const OsslParam,
) -> *mut c_void {
    guarded(core::ptr::null_mut(), || {
        let g = Box::into_raw(Box::new(GenCtx { selection })).cast();
        // SAFETY: `g` is the context just made; `ps` is the core's array (or NULL).
        if unsafe { gen_set_params(g, ps) } == 1 {
            g
        } else {
            // SAFETY: made above, not shared.
            unsafe { free_boxed::<GenCtx>(g) };
            core::ptr::null_mut()
        }
    })
}

unsafe extern "C" fn gen_set_params(_g: *mut c_void, ps: *const OsslParam) -> c_int {
    guarded(0, || {
        // SAFETY: the core passes a terminated array (or NULL).
        unsafe {
            for p in params::entries(ps) {
                if params::is(p, c"group") && !params::names(p, b"SM2") {
                    return fail(Reason::Unsupported, c"sm2_gen_set_params");
                }
            }
        }
        1
    })
}

static GEN_SETTABLE: Static<[OsslParam; 2]> =
    Static([params::describe(c"group", params::UTF8_STRING), params::END]);

unsafe extern "C" fn gen_settable(_g: *mut c_void, _provctx: *mut c_void) -> *const OsslParam {
    GEN_SETTABLE.0.as_ptr()
}

unsafe extern "C" fn generate(
    g: *mut c_void,
    _cb: Option<ParamCallback>,
    _arg: *mut c_void,
) -> *mut c_void {
    guarded(core::ptr::null_mut(), || {
        // SAFETY: the core passes the context from `gen_init`.
        let Some(g) = (unsafe { g.cast::<GenCtx>().as_ref() }) else {
            return core::ptr::null_mut();
        };
        let k = if g.selection & SELECT_PRIVATE != 0 || g.selection & SELECT_PUBLIC != 0 {
            match SigningKey::random() {
                Ok(k) => Key::Private(Box::new(k)),
                Err(_) => {
                    err::raise(Reason::Rng, c"sm2_keygen");
                    return core::ptr::null_mut();
                }
            }
        } else {
            Key::Empty
        };
        Box::into_raw(Box::new(k)).cast()
    })
}

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

unsafe extern "C" fn km_import(k: *mut c_void, selection: c_int, ps: *const OsslParam) -> c_int {
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
                } else if params::is(p, c"group") && !params::names(p, b"SM2") {
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
                    *k = Key::Private(Box::new(sk));
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

unsafe extern "C" fn km_types(_selection: c_int) -> *const OsslParam {
    KEY_TYPES.0.as_ptr()
}

type ParamCallback = unsafe extern "C" fn(*const OsslParam, *mut c_void) -> c_int;

unsafe extern "C" fn km_export(
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

static KEY_GETTABLE: Static<[OsslParam; 6]> = Static([
    params::describe(c"bits", params::INTEGER),
    params::describe(c"security-bits", params::INTEGER),
    params::describe(c"max-size", params::INTEGER),
    params::describe(c"default-digest", params::UTF8_STRING),
    params::describe(c"encoded-pub-key", params::OCTET_STRING),
    params::END,
]);

unsafe extern "C" fn km_gettable(_provctx: *mut c_void) -> *const OsslParam {
    KEY_GETTABLE.0.as_ptr()
}

unsafe extern "C" fn km_get_params(k: *mut c_void, ps: *mut OsslParam) -> c_int {
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

unsafe extern "C" fn km_operation_name(_operation: c_int) -> *const c_char {
    c"SM2".as_ptr()
}

/// A signature operation in progress.
#[derive(Clone)]
struct SigCtx {
    key: Option<Key>,
    id: Vec<u8>,
    /// SM3(Z || message so far), started once the ID is final (at the first data).
    hash: Option<Sm3>,
}

impl SigCtx {
    fn hasher(&mut self) -> Option<&mut Sm3> {
        if self.hash.is_none() {
            let z = self.key.as_ref()?.public()?.z(&self.id).ok()?;
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
            // OpenSSL 3's own SM2 hashes an empty ID when none is set (X.509 certificates and
            // requests included), not GM/T 0009's 1234567812345678: the same default here, so
            // that what either provider signs the other verifies. `distid` sets any other.
            id: Vec::new(),
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
                if !name.eq_ignore_ascii_case(b"SM3") && name != b"1.2.156.10197.1.401" {
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

unsafe extern "C" fn sig_set_params(ctx: *mut c_void, ps: *const OsslParam) -> c_int {
    guarded(0, || {
        // SAFETY: the core passes a live context and a terminated array (or NULL).
        unsafe {
            let Some(c) = sig(ctx) else { return 0 };
            sig_apply_params(c, ps)
        }
    })
}

/// The parameters in `ps` applied to `c` (from `set_params`, and from init on the context it
/// already holds, so no second reference to it is made).
///
/// # Safety
/// `ps` NULL or a terminated array whose entries fit their types.
unsafe fn sig_apply_params(c: &mut SigCtx, ps: *const OsslParam) -> c_int {
    const F: &CStr = c"sm2_signature_set_params";
    // SAFETY: the contract above.
    unsafe {
        for p in params::entries(ps) {
            if params::is(p, c"distid") {
                let e = &*p;
                if e.data_type != params::OCTET_STRING || (e.data.is_null() && e.data_size > 0) {
                    return fail(Reason::InvalidArgument, F);
                }
                // The ID is part of Z: it cannot change once the message has started.
                if c.hash.is_some() {
                    return fail(Reason::State, F);
                }
                if e.data_size > sm2::MAX_ID_LEN {
                    return fail(Reason::InvalidArgument, F);
                }
                c.id = if e.data_size == 0 {
                    Vec::new()
                } else {
                    core::slice::from_raw_parts(e.data as *const u8, e.data_size).to_vec()
                };
            } else if params::is(p, c"digest") && !params::names(p, b"SM3") {
                return fail(Reason::Unsupported, F);
            }
        }
    }
    1
}

/// DER AlgorithmIdentifier of SM2-with-SM3 (1.2.156.10197.1.501), no parameters.
const SM2_WITH_SM3: [u8; 12] = [
    0x30, 0x0a, 0x06, 0x08, 0x2a, 0x81, 0x1c, 0xcf, 0x55, 0x01, 0x83, 0x75,
];

unsafe extern "C" fn sig_get_params(ctx: *mut c_void, ps: *mut OsslParam) -> c_int {
    guarded(0, || {
        // SAFETY: the core passes a live context and a terminated array.
        unsafe {
            if sig(ctx).is_none() {
                return 0;
            }
            for p in params::entries(ps) {
                let ok = if params::is(p, c"algorithm-id") {
                    params::set_octets(p, &SM2_WITH_SM3)
                } else if params::is(p, c"digest") {
                    params::set_str(p, c"SM3")
                } else if params::is(p, c"size") {
                    params::set_uint(p, 32)
                } else {
                    true
                };
                if !ok {
                    return 0;
                }
            }
            1
        }
    })
}

static SIG_SETTABLE: Static<[OsslParam; 3]> = Static([
    params::describe(c"distid", params::OCTET_STRING),
    params::describe(c"digest", params::UTF8_STRING),
    params::END,
]);

static SIG_GETTABLE: Static<[OsslParam; 4]> = Static([
    params::describe(c"algorithm-id", params::OCTET_STRING),
    params::describe(c"digest", params::UTF8_STRING),
    params::describe(c"size", params::UNSIGNED_INTEGER),
    params::END,
]);

unsafe extern "C" fn sig_settable(_ctx: *mut c_void, _provctx: *mut c_void) -> *const OsslParam {
    SIG_SETTABLE.0.as_ptr()
}

unsafe extern "C" fn sig_gettable(_ctx: *mut c_void, _provctx: *mut c_void) -> *const OsslParam {
    SIG_GETTABLE.0.as_ptr()
}

/// An encryption operation: the key, nothing else.
struct CipherCtx {
    key: Option<Key>,
}

unsafe extern "C" fn ac_new(_provctx: *mut c_void) -> *mut c_void {
    guarded(core::ptr::null_mut(), || {
        Box::into_raw(Box::new(CipherCtx { key: None })).cast()
    })
}

unsafe extern "C" fn ac_init(ctx: *mut c_void, k: *mut c_void, _ps: *const OsslParam) -> c_int {
    guarded(0, || {
        // SAFETY: the core passes a live context and live key data.
        unsafe {
            let (Some(c), Some(k)) = (ctx.cast::<CipherCtx>().as_mut(), key(k)) else {
                return 0;
            };
            c.key = Some(k.clone());
            1
        }
    })
}

unsafe extern "C" fn ac_encrypt(
    ctx: *mut c_void,
    out: *mut u8,
    out_len: *mut usize,
    out_size: usize,
    input: *const u8,
    len: usize,
) -> c_int {
    guarded(0, || {
        // SAFETY: the core's contract: live context, buffers of the given sizes.
        unsafe {
            let Some(c) = ctx.cast::<CipherCtx>().as_ref() else {
                return 0;
            };
            if out_len.is_null() {
                return 0;
            }
            if out.is_null() {
                // The ASN.1 layout's bound: the C library documents 126 bytes over the message.
                *out_len = len.saturating_add(126);
                return 1;
            }
            const F: &CStr = c"sm2_encrypt";
            let Some(pk) = c.key.as_ref().and_then(Key::public) else {
                return fail(Reason::NoKey, F);
            };
            if len > 0 && input.is_null() {
                return fail(Reason::InvalidArgument, F);
            }
            let m = if len == 0 {
                &[][..]
            } else {
                core::slice::from_raw_parts(input, len)
            };
            let Ok(ct) = pk.encrypt(m, Format::Der) else {
                return fail(Reason::Rng, F);
            };
            if ct.len() > out_size {
                return fail(Reason::BufferTooSmall, F);
            }
            core::ptr::copy_nonoverlapping(ct.as_ptr(), out, ct.len());
            *out_len = ct.len();
            1
        }
    })
}

unsafe extern "C" fn ac_decrypt(
    ctx: *mut c_void,
    out: *mut u8,
    out_len: *mut usize,
    out_size: usize,
    input: *const u8,
    len: usize,
) -> c_int {
    guarded(0, || {
        // SAFETY: the core's contract: live context, buffers of the given sizes.
        unsafe {
            let Some(c) = ctx.cast::<CipherCtx>().as_ref() else {
                return 0;
            };
            if out_len.is_null() || input.is_null() {
                return 0;
            }
            if out.is_null() {
                *out_len = len;
                return 1;
            }
            const F: &CStr = c"sm2_decrypt";
            let Some(Key::Private(k)) = &c.key else {
                return fail(Reason::NoKey, F);
            };
            let Ok(pt) = k.decrypt(core::slice::from_raw_parts(input, len), Format::Der) else {
                return fail(Reason::DecryptionFailed, F);
            };
            let pt = Zeroizing::new(pt);
            if pt.len() > out_size {
                return fail(Reason::BufferTooSmall, F);
            }
            core::ptr::copy_nonoverlapping(pt.as_ptr(), out, pt.len());
            *out_len = pt.len();
            1
        }
    })
}

unsafe extern "C" fn ac_set_params(_ctx: *mut c_void, ps: *const OsslParam) -> c_int {
    guarded(0, || {
        // SAFETY: the core passes a terminated array (or NULL).
        unsafe {
            for p in params::entries(ps) {
                if params::is(p, c"digest") && !params::names(p, b"SM3") {
                    return fail(Reason::Unsupported, c"sm2_cipher_set_params");
                }
            }
        }
        1
    })
}

static AC_SETTABLE: Static<[OsslParam; 2]> = Static([
    params::describe(c"digest", params::UTF8_STRING),
    params::END,
]);

unsafe extern "C" fn ac_settable(_ctx: *mut c_void, _provctx: *mut c_void) -> *const OsslParam {
    AC_SETTABLE.0.as_ptr()
}

type New = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
type GenInit = unsafe extern "C" fn(*mut c_void, c_int, *const OsslParam) -> *mut c_void;
type Gen = unsafe extern "C" fn(*mut c_void, Option<ParamCallback>, *mut c_void) -> *mut c_void;
type Free = unsafe extern "C" fn(*mut c_void);
type Dup = unsafe extern "C" fn(*const c_void, c_int) -> *mut c_void;
type Has = unsafe extern "C" fn(*const c_void, c_int) -> c_int;
type Match = unsafe extern "C" fn(*const c_void, *const c_void, c_int) -> c_int;
type Import = unsafe extern "C" fn(*mut c_void, c_int, *const OsslParam) -> c_int;
type Types = unsafe extern "C" fn(c_int) -> *const OsslParam;
type Export = unsafe extern "C" fn(*mut c_void, c_int, Option<ParamCallback>, *mut c_void) -> c_int;
type GetParams = unsafe extern "C" fn(*mut c_void, *mut OsslParam) -> c_int;
type Gettable = unsafe extern "C" fn(*mut c_void) -> *const OsslParam;
type OpName = unsafe extern "C" fn(c_int) -> *const c_char;
type SigNew = unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void;
type SigDup = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
type Init = unsafe extern "C" fn(*mut c_void, *mut c_void, *const OsslParam) -> c_int;
type DInit =
    unsafe extern "C" fn(*mut c_void, *const c_char, *mut c_void, *const OsslParam) -> c_int;
type Sign =
    unsafe extern "C" fn(*mut c_void, *mut u8, *mut usize, usize, *const u8, usize) -> c_int;
type Verify = unsafe extern "C" fn(*mut c_void, *const u8, usize, *const u8, usize) -> c_int;
type DUpdate = unsafe extern "C" fn(*mut c_void, *const u8, usize) -> c_int;
type DSignFinal = unsafe extern "C" fn(*mut c_void, *mut u8, *mut usize, usize) -> c_int;
type DVerifyFinal = unsafe extern "C" fn(*mut c_void, *const u8, usize) -> c_int;
type CtxParams = unsafe extern "C" fn(*mut c_void, *const OsslParam) -> c_int;
type CtxGetParams = unsafe extern "C" fn(*mut c_void, *mut OsslParam) -> c_int;
type CtxTable = unsafe extern "C" fn(*mut c_void, *mut c_void) -> *const OsslParam;

/// One operation's dispatch table and algorithm list (pointing into it).
type Tables = Static<(Vec<Dispatch>, Vec<Algorithm>)>;

fn algorithm(table: Vec<Dispatch>, description: &'static CStr) -> Tables {
    let algs = vec![
        Algorithm {
            names: c"SM2:1.2.156.10197.1.301".as_ptr(),
            properties: PROPERTIES.as_ptr(),
            implementation: table.as_ptr(),
            description: description.as_ptr(),
        },
        ALGORITHM_END,
    ];
    Static((table, algs))
}

/// The algorithm list of one SM2 operation, built on first use.
fn list(
    cell: &'static OnceLock<Tables>,
    table: impl FnOnce() -> Vec<Dispatch>,
    description: &'static CStr,
) -> *const Algorithm {
    cell.get_or_init(|| algorithm(table(), description))
        .0
        .1
        .as_ptr()
}

/// The SM2 key management.
pub(crate) fn keymgmt() -> *const Algorithm {
    static T: OnceLock<Tables> = OnceLock::new();
    list(
        &T,
        || {
            vec![
                entry::<New>(1, km_new),
                entry::<GenInit>(2, gen_init),
                entry::<CtxParams>(4, gen_set_params),
                entry::<CtxTable>(5, gen_settable),
                entry::<Gen>(6, generate),
                entry::<Free>(7, free_boxed::<GenCtx>),
                entry::<Free>(10, free_boxed::<Key>),
                entry::<GetParams>(11, km_get_params),
                entry::<Gettable>(12, km_gettable),
                entry::<OpName>(20, km_operation_name),
                entry::<Has>(21, km_has),
                entry::<Match>(23, km_match),
                entry::<Import>(40, km_import),
                entry::<Types>(41, km_types),
                entry::<Export>(42, km_export),
                entry::<Types>(43, km_types),
                entry::<Dup>(44, km_dup),
                DISPATCH_END,
            ]
        },
        c"shangmi SM2 keys",
    )
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
        c"shangmi SM2 encryption",
    )
}
