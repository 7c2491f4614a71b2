//! SM2 key management: the key objects OpenSSL holds for SM2 signatures and encryption
//! (`SM2`) and for TLS 1.3's curveSM2 key shares (`curveSM2`), imported and exported in the
//! parameters OpenSSL's own EC/SM2 keys use, so keys decoded by the default provider move
//! across. The two differ only in the operation they name for key exchange and in how
//! strictly they take an encoded public key (TLS allows only the 65-byte uncompressed form).

use core::ffi::{CStr, c_char, c_int, c_void};
use std::sync::{Arc, OnceLock};

use shangmi::sm2::{SigningKey, VerifyingKey};
use zeroize::Zeroizing;

use crate::err::{self, Reason, fail};
use crate::params::{self, OsslParam, Static};
use crate::served::{self, Op};
use crate::{
    ALGORITHM_END, Algorithm, DISPATCH_END, Dispatch, PROPERTIES, entry, free_boxed, guarded,
};

const SELECT_PRIVATE: c_int = 0x01;
const SELECT_PUBLIC: c_int = 0x02;
const SELECT_KEYPAIR: c_int = SELECT_PRIVATE | SELECT_PUBLIC;

/// Key data: a private key (with its public key), a public key, or nothing yet (domain
/// parameters only: the curve is fixed). A private key is shared, not copied, by the
/// operations that use it, so what signing precomputes from it is computed once per key.
#[derive(Clone)]
pub(crate) enum Key {
    Empty,
    Private(Arc<SigningKey>),
    Public(VerifyingKey),
}

impl Key {
    pub(crate) fn public(&self) -> Option<VerifyingKey> {
        match self {
            Key::Empty => None,
            Key::Private(k) => Some(*k.verifying_key()),
            Key::Public(p) => Some(*p),
        }
    }
}

/// # Safety
/// `p` is NULL or key data made by `km_new` (or `km_dup`), live.
pub(crate) unsafe fn key<'a>(p: *const c_void) -> Option<&'a Key> {
    // SAFETY: the contract above.
    unsafe { p.cast::<Key>().as_ref() }
}

unsafe extern "C" fn km_new(_provctx: *mut c_void) -> *mut c_void {
    guarded(core::ptr::null_mut(), || {
        Box::into_raw(Box::new(Key::Empty)).cast()
    })
}

/// A copy of the parts `selection` names: `EVP_PKEY_copy_parameters` (libssl's way to make
/// the object a peer's key share goes into) asks for the domain parameters alone, and must not
/// get the private key with them.
unsafe extern "C" fn km_dup(k: *const c_void, selection: c_int) -> *mut c_void {
    guarded(core::ptr::null_mut(), || {
        // SAFETY: the core passes live key data.
        let Some(k) = (unsafe { key(k) }) else {
            return core::ptr::null_mut();
        };
        let copy = match k {
            Key::Private(_) if selection & SELECT_PRIVATE != 0 => k.clone(),
            _ if selection & SELECT_PUBLIC != 0 => k.public().map_or(Key::Empty, Key::Public),
            _ => Key::Empty,
        };
        Box::into_raw(Box::new(copy)).cast()
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

unsafe extern "C" fn km_match(a: *const c_void, b: *const c_void, selection: c_int) -> c_int {
    guarded(0, || {
        // SAFETY: the core passes live key data.
        let (Some(a), Some(b)) = (unsafe { key(a) }, unsafe { key(b) }) else {
            return 0;
        };
        // Domain parameters always match (one curve); keys match by their public halves.
        if selection & SELECT_KEYPAIR == 0 {
            return 1;
        }
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
                if params::is(p, c"group") && !names_sm2(p) {
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
        let k = if g.selection & SELECT_KEYPAIR != 0 {
            match SigningKey::random() {
                Ok(k) => {
                    served::count(Op::Sm2Keygen);
                    Key::Private(Arc::new(k))
                }
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
                } else if params::is(p, c"group") && !names_sm2(p) {
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
                    *k = Key::Private(Arc::new(sk));
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

pub(crate) type ParamCallback = unsafe extern "C" fn(*const OsslParam, *mut c_void) -> c_int;

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

static KEY_GETTABLE: Static<[OsslParam; 7]> = Static([
    params::describe(c"group", params::UTF8_STRING),
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
                } else if params::is(p, c"group") {
                    params::set_str(p, c"SM2")
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

/// Whether a `group` parameter names the one curve: `SM2` (OpenSSL's name, and the one its
/// TLS group table passes) or `curveSM2` (the TLS name).
///
/// # Safety
/// As [`params::names`].
unsafe fn names_sm2(p: *const OsslParam) -> bool {
    // SAFETY: the caller's contract.
    unsafe { params::names(p, b"SM2") || params::names(p, b"curveSM2") }
}

/// `encoded-pub-key`: the peer's key share written into a key object that holds domain
/// parameters (or a public key) only. `TLS`: the 65-byte uncompressed point and nothing else,
/// as RFC 8446 and RFC 8998 require of a key share; otherwise any SEC1 form.
unsafe extern "C" fn km_set_params<const TLS: bool>(k: *mut c_void, ps: *const OsslParam) -> c_int {
    const F: &CStr = c"sm2_set_params";
    guarded(0, || {
        // SAFETY: the core passes live key data and a terminated array.
        unsafe {
            let Some(k) = k.cast::<Key>().as_mut() else {
                return fail(Reason::NoKey, F);
            };
            for p in params::entries(ps) {
                if !params::is(p, c"encoded-pub-key") {
                    continue;
                }
                let e = &*p;
                if e.data_type != params::OCTET_STRING || e.data.is_null() {
                    return fail(Reason::InvalidArgument, F);
                }
                let point = core::slice::from_raw_parts(e.data as *const u8, e.data_size);
                if TLS && (point.len() != 65 || point[0] != 4) {
                    return fail(Reason::BadKeyShare, F);
                }
                // A private key keeps its own public half: replacing it would pair the
                // private key with someone else's point.
                if matches!(k, Key::Private(_)) {
                    return fail(Reason::State, F);
                }
                match VerifyingKey::from_sec1_bytes(point) {
                    Ok(pk) => *k = Key::Public(pk),
                    Err(_) if TLS => return fail(Reason::BadKeyShare, F),
                    Err(_) => return fail(Reason::InvalidKey, F),
                }
            }
            1
        }
    })
}

static KEY_SETTABLE: Static<[OsslParam; 2]> = Static([
    params::describe(c"encoded-pub-key", params::OCTET_STRING),
    params::END,
]);

unsafe extern "C" fn km_settable(_provctx: *mut c_void) -> *const OsslParam {
    KEY_SETTABLE.0.as_ptr()
}

const OSSL_OP_KEYEXCH: c_int = 11;

/// The algorithm an operation on an `SM2` key is fetched by: key exchange runs as the
/// provider's ECDH, everything else is SM2 itself.
unsafe extern "C" fn sm2_operation_name(operation: c_int) -> *const c_char {
    if operation == OSSL_OP_KEYEXCH {
        crate::exchange::NAME.as_ptr()
    } else {
        c"SM2".as_ptr()
    }
}

/// A curveSM2 key share serves key exchange only, as OpenSSL's own curveSM2 does.
unsafe extern "C" fn curve_sm2_operation_name(operation: c_int) -> *const c_char {
    if operation == OSSL_OP_KEYEXCH {
        crate::exchange::NAME.as_ptr()
    } else {
        core::ptr::null()
    }
}

pub(crate) type New = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
pub(crate) type GenInit = unsafe extern "C" fn(*mut c_void, c_int, *const OsslParam) -> *mut c_void;
pub(crate) type Gen =
    unsafe extern "C" fn(*mut c_void, Option<ParamCallback>, *mut c_void) -> *mut c_void;
pub(crate) type Free = unsafe extern "C" fn(*mut c_void);
pub(crate) type Dup = unsafe extern "C" fn(*const c_void, c_int) -> *mut c_void;
pub(crate) type Has = unsafe extern "C" fn(*const c_void, c_int) -> c_int;
pub(crate) type Match = unsafe extern "C" fn(*const c_void, *const c_void, c_int) -> c_int;
pub(crate) type Import = unsafe extern "C" fn(*mut c_void, c_int, *const OsslParam) -> c_int;
pub(crate) type Types = unsafe extern "C" fn(c_int) -> *const OsslParam;
pub(crate) type Export =
    unsafe extern "C" fn(*mut c_void, c_int, Option<ParamCallback>, *mut c_void) -> c_int;
pub(crate) type GetParams = unsafe extern "C" fn(*mut c_void, *mut OsslParam) -> c_int;
pub(crate) type Gettable = unsafe extern "C" fn(*mut c_void) -> *const OsslParam;
pub(crate) type OpName = unsafe extern "C" fn(c_int) -> *const c_char;
pub(crate) type SigNew = unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void;
pub(crate) type SigDup = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
pub(crate) type Init = unsafe extern "C" fn(*mut c_void, *mut c_void, *const OsslParam) -> c_int;
pub(crate) type DInit =
    unsafe extern "C" fn(*mut c_void, *const c_char, *mut c_void, *const OsslParam) -> c_int;
pub(crate) type Sign =
    unsafe extern "C" fn(*mut c_void, *mut u8, *mut usize, usize, *const u8, usize) -> c_int;
pub(crate) type Verify =
    unsafe extern "C" fn(*mut c_void, *const u8, usize, *const u8, usize) -> c_int;
pub(crate) type DUpdate = unsafe extern "C" fn(*mut c_void, *const u8, usize) -> c_int;
pub(crate) type DSignFinal = unsafe extern "C" fn(*mut c_void, *mut u8, *mut usize, usize) -> c_int;
pub(crate) type DVerifyFinal = unsafe extern "C" fn(*mut c_void, *const u8, usize) -> c_int;
pub(crate) type CtxParams = unsafe extern "C" fn(*mut c_void, *const OsslParam) -> c_int;
pub(crate) type CtxGetParams = unsafe extern "C" fn(*mut c_void, *mut OsslParam) -> c_int;
pub(crate) type CtxTable = unsafe extern "C" fn(*mut c_void, *mut c_void) -> *const OsslParam;

/// One operation's dispatch table and algorithm list (pointing into it).
pub(crate) type Tables = Static<(Vec<Dispatch>, Vec<Algorithm>)>;

fn algorithm(table: Vec<Dispatch>, names: &'static CStr, description: &'static CStr) -> Tables {
    let algs = vec![
        Algorithm {
            names: names.as_ptr(),
            properties: PROPERTIES.as_ptr(),
            implementation: table.as_ptr(),
            description: description.as_ptr(),
        },
        ALGORITHM_END,
    ];
    Static((table, algs))
}

/// The names SM2's operations answer to.
pub(crate) fn sm2_names() -> &'static CStr {
    static NAMES: OnceLock<&'static CStr> = OnceLock::new();
    NAMES.get_or_init(|| crate::params::name_list("SM2", &shangmi::oid::SM2))
}

/// The algorithm list of one operation, built on first use.
pub(crate) fn list(
    cell: &'static OnceLock<Tables>,
    table: impl FnOnce() -> Vec<Dispatch>,
    names: &'static CStr,
    description: &'static CStr,
) -> *const Algorithm {
    cell.get_or_init(|| algorithm(table(), names, description))
        .0
        .1
        .as_ptr()
}

/// The key managements: `SM2` and `curveSM2` (TLS key shares).
pub(crate) fn keymgmt() -> *const Algorithm {
    /// The two dispatch tables, and the list pointing into them.
    type Both = Static<(Vec<Dispatch>, Vec<Dispatch>, Vec<Algorithm>)>;
    static T: OnceLock<Both> = OnceLock::new();
    T.get_or_init(|| {
        let sm2 = table(sm2_operation_name, km_set_params::<false>);
        let curve = table(curve_sm2_operation_name, km_set_params::<true>);
        let algs = vec![
            Algorithm {
                names: sm2_names().as_ptr(),
                properties: PROPERTIES.as_ptr(),
                implementation: sm2.as_ptr(),
                description: c"shangmi SM2 keys".as_ptr(),
            },
            Algorithm {
                names: c"curveSM2".as_ptr(),
                properties: PROPERTIES.as_ptr(),
                implementation: curve.as_ptr(),
                description: c"shangmi curveSM2 key shares (TLS 1.3, RFC 8998)".as_ptr(),
            },
            ALGORITHM_END,
        ];
        Static((sm2, curve, algs))
    })
    .0
    .2
    .as_ptr()
}

fn table(op_name: OpName, set_params: CtxParams) -> Vec<Dispatch> {
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
        entry::<CtxParams>(13, set_params),
        entry::<Gettable>(14, km_settable),
        entry::<OpName>(20, op_name),
        entry::<Has>(21, km_has),
        entry::<Match>(23, km_match),
        entry::<Import>(40, km_import),
        entry::<Types>(41, km_types),
        entry::<Export>(42, km_export),
        entry::<Types>(43, km_types),
        entry::<Dup>(44, km_dup),
        DISPATCH_END,
    ]
}
