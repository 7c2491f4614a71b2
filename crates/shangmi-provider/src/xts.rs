//! SM4-XTS as an OpenSSL cipher, as OpenSSL 3.2 defines it: a 32-byte key (data key ||
//! tweak key, equal halves refused), the 16-byte tweak as the IV, each update one whole data
//! unit of 16 bytes to 16 MiB under that tweak, and the `xts_standard` parameter choosing
//! "GB" (GB/T 17964-2021, the default) or "IEEE" (IEEE 1619).

use core::ffi::{CStr, c_int, c_void};

use shangmi::sm4::modes::xts::{MAX_UNIT, Variant, Xts};
use zeroize::Zeroizing;

use crate::cipher::{self, Shape};
use crate::err::{Reason, ctx_mut, fail, result};
use crate::params::{self, OsslParam, Static};
use crate::{Dispatch, free_boxed, guarded};

#[derive(Clone)]
struct Ctx {
    encrypt: bool,
    variant: Variant,
    key: Option<Zeroizing<[u8; 32]>>,
    xts: Option<Xts>,
    tweak: Option<[u8; 16]>,
}

impl Ctx {
    /// The expanded key, made once key and variant are settled.
    fn xts(&mut self) -> Result<&Xts, Reason> {
        if self.xts.is_none() {
            let key = self.key.as_ref().ok_or(Reason::NoKey)?;
            self.xts = Some(Xts::new(key, self.variant).map_err(|_| Reason::InvalidKey)?);
        }
        self.xts.as_ref().ok_or(Reason::Internal)
    }
}

unsafe extern "C" fn dupctx(ctx: *mut c_void) -> *mut c_void {
    guarded(core::ptr::null_mut(), || {
        // SAFETY: `ctx` from `newctx`, not in use by another thread.
        match unsafe { ctx_mut::<Ctx>(ctx) } {
            Ok(c) => Box::into_raw(Box::new(c.clone())).cast(),
            Err(_) => core::ptr::null_mut(),
        }
    })
}

unsafe extern "C" fn newctx(_provctx: *mut c_void) -> *mut c_void {
    guarded(core::ptr::null_mut(), || {
        let c = Ctx {
            encrypt: true,
            variant: Variant::Gb,
            key: None,
            xts: None,
            tweak: None,
        };
        Box::into_raw(Box::new(c)).cast()
    })
}

/// # Safety
/// The core's contract for `cipher_encrypt_init`.
unsafe fn init(
    ctx: *mut c_void,
    key: *const u8,
    key_len: usize,
    iv: *const u8,
    iv_len: usize,
    ps: *const OsslParam,
    encrypt: bool,
) -> Result<(), Reason> {
    // SAFETY: the contract above.
    let c = unsafe { ctx_mut::<Ctx>(ctx)? };
    c.encrypt = encrypt;
    // SAFETY: the contract above (parameters first: the variant shapes the expanded key).
    unsafe { set_params(c, ps)? };
    if !key.is_null() {
        if key_len != 32 {
            return Err(Reason::InvalidKeyLength);
        }
        let mut k = Zeroizing::new([0u8; 32]);
        // SAFETY: 32 readable bytes by the contract.
        k.copy_from_slice(unsafe { core::slice::from_raw_parts(key, 32) });
        c.key = Some(k);
        c.xts = None;
        c.xts()?;
    }
    if !iv.is_null() {
        if iv_len != 16 {
            return Err(Reason::InvalidIvLength);
        }
        let mut t = [0u8; 16];
        // SAFETY: 16 readable bytes by the contract.
        t.copy_from_slice(unsafe { core::slice::from_raw_parts(iv, 16) });
        c.tweak = Some(t);
    }
    Ok(())
}

/// `init` as an entry point: failures become OpenSSL's 0 with the reason pushed.
///
/// # Safety
/// As `init`.
unsafe fn init_entry(
    ctx: *mut c_void,
    key: *const u8,
    kl: usize,
    iv: *const u8,
    il: usize,
    ps: *const OsslParam,
    encrypt: bool,
) -> c_int {
    guarded(0, || {
        // SAFETY: forwarded under the same contract.
        let r = unsafe { init(ctx, key, kl, iv, il, ps, encrypt) };
        if r.is_ok() {
            crate::served::count(crate::served::Op::Sm4);
        }
        result(r, c"sm4_xts_init")
    })
}

cipher::init_entries!(init_entry);

/// # Safety
/// The core's contract: `ctx` from `newctx`, `out` `out_size` writable bytes, `input` `len`
/// readable ones (possibly the same memory).
unsafe fn unit(
    ctx: *mut c_void,
    out: *mut u8,
    out_len: *mut usize,
    out_size: usize,
    input: *const u8,
    len: usize,
) -> Result<(), Reason> {
    // SAFETY: the contract above.
    let c = unsafe { ctx_mut::<Ctx>(ctx)? };
    let tweak = c.tweak.ok_or(Reason::State)?;
    let encrypt = c.encrypt;
    let xts = c.xts()?;
    if !(16..=MAX_UNIT).contains(&len) {
        return Err(Reason::InvalidLength);
    }
    if out.is_null() || input.is_null() {
        return Err(Reason::InvalidArgument);
    }
    if out_size < len {
        return Err(Reason::BufferTooSmall);
    }
    // SAFETY: `len` readable and writable bytes; `copy` is memmove, so the two may be the
    // same memory, and the slice over the output is made after it.
    let buf = unsafe {
        core::ptr::copy(input, out, len);
        core::slice::from_raw_parts_mut(out, len)
    };
    let r = if encrypt {
        xts.encrypt(&tweak, buf)
    } else {
        xts.decrypt(&tweak, buf)
    };
    r.map_err(|_| Reason::InvalidLength)?;
    if !out_len.is_null() {
        // SAFETY: writable by the contract.
        unsafe { *out_len = len };
    }
    Ok(())
}

unsafe extern "C" fn update(
    ctx: *mut c_void,
    out: *mut u8,
    out_len: *mut usize,
    out_size: usize,
    input: *const u8,
    len: usize,
) -> c_int {
    guarded(0, || {
        // SAFETY: the core's contract, as `unit` states it.
        let r = unsafe { unit(ctx, out, out_len, out_size, input, len) };
        result(r, c"sm4_xts_update")
    })
}

unsafe extern "C" fn final_(
    ctx: *mut c_void,
    _out: *mut u8,
    out_len: *mut usize,
    _out_size: usize,
) -> c_int {
    guarded(0, || {
        if ctx.is_null() {
            return fail(Reason::State, c"sm4_xts_final");
        }
        if !out_len.is_null() {
            // SAFETY: writable by the core's contract.
            unsafe { *out_len = 0 };
        }
        1
    })
}

const SHAPE: Shape = Shape {
    mode: 0x10001,
    key_len: 32,
    iv_len: 16,
    block: 1,
    aead: false,
    custom_iv: true,
};

unsafe extern "C" fn get_params(ps: *mut OsslParam) -> c_int {
    // SAFETY: the core passes a terminated array whose entries fit their types.
    guarded(0, || unsafe { SHAPE.write(ps) })
}

unsafe extern "C" fn get_ctx_params(ctx: *mut c_void, ps: *const OsslParam) -> c_int {
    const F: &CStr = c"sm4_xts_get_ctx_params";
    guarded(0, || {
        // SAFETY: `ctx` from `newctx`; `ps` a terminated array whose entries fit their types.
        unsafe {
            let c = match ctx_mut::<Ctx>(ctx) {
                Ok(c) => c,
                Err(r) => return fail(r, F),
            };
            for p in params::entries(ps) {
                let ok = if params::is(p, c"keylen") {
                    params::set_uint(p, 32)
                } else if params::is(p, c"ivlen") {
                    params::set_uint(p, 16)
                } else if params::is(p, c"iv") {
                    params::set_octets(p, &c.tweak.unwrap_or_default())
                } else if params::is(p, c"xts_standard") {
                    params::set_str(
                        p,
                        if c.variant == Variant::Gb {
                            c"GB"
                        } else {
                            c"IEEE"
                        },
                    )
                } else {
                    true
                };
                if !ok {
                    return fail(Reason::InvalidArgument, F);
                }
            }
        }
        1
    })
}

/// # Safety
/// `ps` NULL or a terminated array.
unsafe fn set_params(c: &mut Ctx, ps: *const OsslParam) -> Result<(), Reason> {
    // SAFETY: the contract above.
    unsafe {
        for p in params::entries(ps) {
            if params::is(p, c"xts_standard") {
                let v = if params::names(p, b"GB") {
                    Variant::Gb
                } else if params::names(p, b"IEEE") {
                    Variant::Ieee
                } else {
                    return Err(Reason::Unsupported);
                };
                if v != c.variant {
                    c.variant = v;
                    c.xts = None;
                }
            } else if params::is(p, c"keylen") && params::get_uint(p) != Some(32) {
                return Err(Reason::InvalidKeyLength);
            }
        }
    }
    Ok(())
}

unsafe extern "C" fn set_ctx_params(ctx: *mut c_void, ps: *const OsslParam) -> c_int {
    guarded(0, || {
        // SAFETY: `ctx` from `newctx`; `ps` NULL or a terminated array.
        let r = unsafe { ctx_mut::<Ctx>(ctx).and_then(|c| set_params(c, ps)) };
        result(r, c"sm4_xts_set_ctx_params")
    })
}

static CTX_GETTABLE: Static<[OsslParam; 5]> = Static([
    params::describe(c"keylen", params::UNSIGNED_INTEGER),
    params::describe(c"ivlen", params::UNSIGNED_INTEGER),
    params::describe(c"iv", params::OCTET_STRING),
    params::describe(c"xts_standard", params::UTF8_STRING),
    params::END,
]);

static CTX_SETTABLE: Static<[OsslParam; 3]> = Static([
    params::describe(c"xts_standard", params::UTF8_STRING),
    params::describe(c"keylen", params::UNSIGNED_INTEGER),
    params::END,
]);

unsafe extern "C" fn gettable_ctx_params(_ctx: *mut c_void, _p: *mut c_void) -> *const OsslParam {
    CTX_GETTABLE.0.as_ptr()
}

unsafe extern "C" fn settable_ctx_params(_ctx: *mut c_void, _p: *mut c_void) -> *const OsslParam {
    CTX_SETTABLE.0.as_ptr()
}

/// SM4-XTS's dispatch table.
pub(crate) fn table() -> Vec<Dispatch> {
    cipher::dispatch(cipher::Entries {
        newctx,
        encrypt_init,
        decrypt_init,
        update,
        final_,
        cipher: update,
        freectx: free_boxed::<Ctx>,
        dupctx,
        get_params,
        get_ctx_params,
        set_ctx_params,
        gettable_ctx_params,
        settable_ctx_params,
    })
}
