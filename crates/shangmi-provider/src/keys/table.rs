//! The key managers' dispatch tables and algorithm lists (SM2, and curveSM2 for TLS groups).

use core::ffi::{CStr, c_char, c_int, c_void};
use std::sync::OnceLock;

use super::ParamCallback;
use super::key_params::{
    OSSL_OP_KEYEXCH, km_export, km_get_params, km_gettable, km_import, km_set_params, km_settable,
    km_types,
};
use super::{
    GenCtx, Key, gen_init, gen_set_params, gen_settable, generate, km_dup, km_has, km_match, km_new,
};
use crate::params::{OsslParam, Static};
use crate::{ALGORITHM_END, Algorithm, DISPATCH_END, Dispatch, PROPERTIES, entry, free_boxed};

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

pub(super) fn table(op_name: OpName, set_params: CtxParams) -> Vec<Dispatch> {
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
