//! The SM4 ciphers' dispatch tables and the algorithm list OpenSSL queries.

use core::ffi::c_int;
use std::sync::OnceLock;

use super::settings::{
    get_ctx_params, get_params, gettable_ctx_params, gettable_params, set_ctx_params,
    settable_ctx_params,
};
use super::{
    CBC, CFB, CTR, Ctx, CtxGettable, CtxParams, DupCtx, ECB, Final, FreeCtx, GetParams, Gettable,
    Init, NewCtx, OFB, Update, cipher, decrypt_init, dupctx, encrypt_init, final_, newctx, update,
};
use crate::params::{self, Static};
use crate::{ALGORITHM_END, Algorithm, DISPATCH_END, Dispatch, PROPERTIES, entry, free_boxed};

pub(crate) const OSSL_FUNC_CIPHER_NEWCTX: c_int = 1;
pub(crate) const OSSL_FUNC_CIPHER_ENCRYPT_INIT: c_int = 2;
pub(crate) const OSSL_FUNC_CIPHER_DECRYPT_INIT: c_int = 3;
pub(crate) const OSSL_FUNC_CIPHER_UPDATE: c_int = 4;
pub(crate) const OSSL_FUNC_CIPHER_FINAL: c_int = 5;
pub(crate) const OSSL_FUNC_CIPHER_CIPHER: c_int = 6;
pub(crate) const OSSL_FUNC_CIPHER_FREECTX: c_int = 7;
pub(crate) const OSSL_FUNC_CIPHER_DUPCTX: c_int = 8;
pub(crate) const OSSL_FUNC_CIPHER_GET_PARAMS: c_int = 9;
pub(crate) const OSSL_FUNC_CIPHER_GET_CTX_PARAMS: c_int = 10;
pub(crate) const OSSL_FUNC_CIPHER_SET_CTX_PARAMS: c_int = 11;
pub(crate) const OSSL_FUNC_CIPHER_GETTABLE_PARAMS: c_int = 12;
pub(crate) const OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS: c_int = 13;
pub(crate) const OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS: c_int = 14;

/// One SM4 cipher's entry points; `dispatch` makes its table (the shape every cipher shares).
pub(crate) struct Entries {
    pub newctx: NewCtx,
    pub encrypt_init: Init,
    pub decrypt_init: Init,
    pub update: Update,
    pub final_: Final,
    /// `EVP_Cipher`.
    pub cipher: Update,
    pub freectx: FreeCtx,
    /// `EVP_CIPHER_CTX_copy`: keyed contexts copy; one in the middle of a message may refuse.
    pub dupctx: DupCtx,
    pub get_params: GetParams,
    pub get_ctx_params: CtxParams,
    pub set_ctx_params: CtxParams,
    pub gettable_ctx_params: CtxGettable,
    pub settable_ctx_params: CtxGettable,
}

pub(crate) fn dispatch(e: Entries) -> Vec<Dispatch> {
    vec![
        entry::<NewCtx>(OSSL_FUNC_CIPHER_NEWCTX, e.newctx),
        entry::<Init>(OSSL_FUNC_CIPHER_ENCRYPT_INIT, e.encrypt_init),
        entry::<Init>(OSSL_FUNC_CIPHER_DECRYPT_INIT, e.decrypt_init),
        entry::<Update>(OSSL_FUNC_CIPHER_UPDATE, e.update),
        entry::<Final>(OSSL_FUNC_CIPHER_FINAL, e.final_),
        entry::<Update>(OSSL_FUNC_CIPHER_CIPHER, e.cipher),
        entry::<FreeCtx>(OSSL_FUNC_CIPHER_FREECTX, e.freectx),
        entry::<DupCtx>(OSSL_FUNC_CIPHER_DUPCTX, e.dupctx),
        entry::<GetParams>(OSSL_FUNC_CIPHER_GET_PARAMS, e.get_params),
        entry::<CtxParams>(OSSL_FUNC_CIPHER_GET_CTX_PARAMS, e.get_ctx_params),
        entry::<CtxParams>(OSSL_FUNC_CIPHER_SET_CTX_PARAMS, e.set_ctx_params),
        entry::<Gettable>(OSSL_FUNC_CIPHER_GETTABLE_PARAMS, gettable_params),
        entry::<CtxGettable>(OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS, e.gettable_ctx_params),
        entry::<CtxGettable>(OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS, e.settable_ctx_params),
        DISPATCH_END,
    ]
}

pub(super) fn table<const MODE: c_int>() -> Vec<Dispatch> {
    dispatch(Entries {
        newctx: newctx::<MODE>,
        encrypt_init,
        decrypt_init,
        update,
        final_,
        cipher,
        freectx: free_boxed::<Ctx>,
        dupctx,
        get_params: get_params::<MODE>,
        get_ctx_params,
        set_ctx_params,
        gettable_ctx_params,
        settable_ctx_params,
    })
}

/// The ciphers this provider offers, under OpenSSL's names and OIDs for them.
pub(crate) fn algorithms() -> *const Algorithm {
    /// The dispatch tables and the algorithm list that points into them.
    type Tables = Static<(Vec<Vec<Dispatch>>, Vec<Algorithm>)>;
    static T: OnceLock<Tables> = OnceLock::new();
    let t = T.get_or_init(|| {
        let tables = vec![
            table::<ECB>(),
            table::<CBC>(),
            table::<CFB>(),
            table::<OFB>(),
            table::<CTR>(),
            crate::aead::table::<true>(),
            crate::aead::table::<false>(),
            crate::xts::table(),
        ];
        use shangmi::oid;
        let names = [
            (
                params::name_list("SM4-ECB", &oid::SM4_ECB),
                c"shangmi SM4-ECB",
            ),
            (
                params::name_list("SM4-CBC:SM4", &oid::SM4_CBC),
                c"shangmi SM4-CBC",
            ),
            (
                params::name_list("SM4-CFB:SM4-CFB128", &oid::SM4_CFB),
                c"shangmi SM4-CFB128",
            ),
            (
                params::name_list("SM4-OFB:SM4-OFB128", &oid::SM4_OFB),
                c"shangmi SM4-OFB",
            ),
            (
                params::name_list("SM4-CTR", &oid::SM4_CTR),
                c"shangmi SM4-CTR",
            ),
            (
                params::name_list("SM4-GCM", &oid::SM4_GCM),
                c"shangmi SM4-GCM",
            ),
            (
                params::name_list("SM4-CCM", &oid::SM4_CCM),
                c"shangmi SM4-CCM",
            ),
            (
                params::name_list("SM4-XTS", &oid::SM4_XTS),
                c"shangmi SM4-XTS",
            ),
        ];
        let mut algs: Vec<Algorithm> = names
            .iter()
            .zip(&tables)
            .map(|((n, d), t)| Algorithm {
                names: n.as_ptr(),
                properties: PROPERTIES.as_ptr(),
                implementation: t.as_ptr(),
                description: d.as_ptr(),
            })
            .collect();
        algs.push(ALGORITHM_END);
        Static((tables, algs))
    });
    t.0.1.as_ptr()
}
