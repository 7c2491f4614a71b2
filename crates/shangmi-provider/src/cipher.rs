//! The SM4 modes ECB, CBC, CFB, OFB and CTR as OpenSSL ciphers, over the library's owning
//! SM4 stream (which buffers partial blocks and handles PKCS#7); and what every SM4 cipher
//! here shares: the dispatch ids and function types, the algorithm list (with the AEADs from
//! `aead.rs` and XTS from `xts.rs`).

use core::ffi::{CStr, c_int, c_void};

use shangmi::sm4::{Direction, Error as ModeError, Mode, Stream};
use zeroize::Zeroizing;

use crate::err::{Reason, fail};
use crate::guarded;
use crate::params::OsslParam;

/// The raw modes, as the const parameter of each one's entry points.
const ECB: c_int = 0;
const CBC: c_int = 1;
const CFB: c_int = 2;
const OFB: c_int = 3;
const CTR: c_int = 4;

/// `encrypt_init` and `decrypt_init` over a module's `init(ctx, key, key_len, iv, iv_len,
/// params, encrypt) -> c_int`.
macro_rules! init_entries {
    ($init:ident) => {
        unsafe extern "C" fn encrypt_init(
            ctx: *mut c_void,
            key: *const u8,
            kl: usize,
            iv: *const u8,
            il: usize,
            ps: *const OsslParam,
        ) -> c_int {
            // SAFETY: forwarded under the same contract.
            unsafe { $init(ctx, key, kl, iv, il, ps, true) }
        }

        unsafe extern "C" fn decrypt_init(
            ctx: *mut c_void,
            key: *const u8,
            kl: usize,
            iv: *const u8,
            il: usize,
            ps: *const OsslParam,
        ) -> c_int {
            // SAFETY: forwarded under the same contract.
            unsafe { $init(ctx, key, kl, iv, il, ps, false) }
        }
    };
}
pub(crate) use init_entries;

mod settings;
mod table;
pub(crate) use settings::*;
pub(crate) use table::*;

/// How a message is being processed: through update/final (with the padding setting), or
/// through `EVP_Cipher`, which as in OpenSSL's own ciphers transforms exactly the bytes given
/// (whole blocks for ECB and CBC), with no padding and nothing held back.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Use {
    Update,
    Cipher,
}

/// One cipher operation in progress.
#[derive(Clone)]
struct Ctx {
    mode: c_int,
    key: Option<Zeroizing<[u8; 16]>>,
    iv: [u8; 16],
    encrypt: bool,
    padding: bool,
    /// Made at the first update, once key, IV and padding are all settled (OpenSSL sets the
    /// padding through a parameter after init).
    stream: Option<(Use, Stream)>,
}

impl Ctx {
    fn stream(&mut self, usage: Use) -> Result<&mut Stream, Reason> {
        if let Some((u, _)) = &self.stream
            && *u != usage
        {
            return Err(Reason::State);
        }
        let key = self.key.as_ref().ok_or(Reason::NoKey)?;
        let pad = self.padding && usage == Use::Update;
        let mode = match (self.mode, pad) {
            (ECB, false) => Mode::Ecb,
            (ECB, true) => Mode::EcbPkcs7,
            (CBC, false) => Mode::Cbc(self.iv),
            (CBC, true) => Mode::CbcPkcs7(self.iv),
            (CFB, _) => Mode::Cfb(self.iv),
            (OFB, _) => Mode::Ofb(self.iv),
            _ => Mode::Ctr(self.iv),
        };
        let dir = if self.encrypt {
            Direction::Encrypt
        } else {
            Direction::Decrypt
        };
        let (_, s) = self
            .stream
            .get_or_insert_with(|| (usage, Stream::new(key, mode, dir)));
        Ok(s)
    }
}

fn mode_reason(e: ModeError) -> Reason {
    match e {
        ModeError::InvalidLength => Reason::InvalidLength,
        ModeError::Decrypt => Reason::BadPadding,
        ModeError::BufferTooSmall => Reason::BufferTooSmall,
        ModeError::Finished => Reason::State,
        _ => Reason::InvalidArgument,
    }
}

/// A copy of a context, between messages (the usual use: key once, copy per message) or in the
/// middle of one (`EVP_MAC_CTX_dup` of a CMAC running over SM4-CBC): the stream is copied with
/// its position and buffered bytes, and both contexts go on independently.
unsafe extern "C" fn dupctx(ctx: *mut c_void) -> *mut c_void {
    guarded(core::ptr::null_mut(), || {
        // SAFETY: `ctx` from `newctx`, not in use by another thread.
        let Some(c) = (unsafe { ctx.cast::<Ctx>().as_ref() }) else {
            return core::ptr::null_mut();
        };
        Box::into_raw(Box::new(c.clone())).cast()
    })
}

pub(crate) type NewCtx = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
pub(crate) type Init = unsafe extern "C" fn(
    *mut c_void,
    *const u8,
    usize,
    *const u8,
    usize,
    *const OsslParam,
) -> c_int;
pub(crate) type Update =
    unsafe extern "C" fn(*mut c_void, *mut u8, *mut usize, usize, *const u8, usize) -> c_int;
pub(crate) type Final = unsafe extern "C" fn(*mut c_void, *mut u8, *mut usize, usize) -> c_int;
pub(crate) type FreeCtx = unsafe extern "C" fn(*mut c_void);
pub(crate) type DupCtx = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
pub(crate) type GetParams = unsafe extern "C" fn(*mut OsslParam) -> c_int;
pub(crate) type CtxParams = unsafe extern "C" fn(*mut c_void, *const OsslParam) -> c_int;
pub(crate) type Gettable = unsafe extern "C" fn(*mut c_void) -> *const OsslParam;
pub(crate) type CtxGettable = unsafe extern "C" fn(*mut c_void, *mut c_void) -> *const OsslParam;

unsafe extern "C" fn newctx<const MODE: c_int>(_provctx: *mut c_void) -> *mut c_void {
    guarded(core::ptr::null_mut(), || {
        let c = Ctx {
            mode: MODE,
            key: None,
            iv: [0; 16],
            encrypt: true,
            padding: true,
            stream: None,
        };
        Box::into_raw(Box::new(c)).cast()
    })
}

/// # Safety
/// The core's contract for `cipher_encrypt_init`: `ctx` from `newctx`, key and IV NULL or
/// of the given lengths, `ps` NULL or a terminated array.
unsafe fn init(
    ctx: *mut c_void,
    key: *const u8,
    key_len: usize,
    iv: *const u8,
    iv_len: usize,
    ps: *const OsslParam,
    encrypt: bool,
) -> c_int {
    const F: &CStr = c"sm4_cipher_init";
    guarded(0, || {
        // SAFETY: the contract above.
        let Some(c) = (unsafe { ctx.cast::<Ctx>().as_mut() }) else {
            return fail(Reason::State, F);
        };
        c.stream = None;
        c.encrypt = encrypt;
        if !key.is_null() {
            if key_len != 16 {
                return fail(Reason::InvalidKeyLength, F);
            }
            let mut k = Zeroizing::new([0u8; 16]);
            // SAFETY: 16 readable bytes by the contract.
            k.copy_from_slice(unsafe { core::slice::from_raw_parts(key, 16) });
            c.key = Some(k);
        }
        if !iv.is_null() && c.mode != ECB {
            if iv_len != 16 {
                return fail(Reason::InvalidIvLength, F);
            }
            // SAFETY: 16 readable bytes by the contract.
            c.iv.copy_from_slice(unsafe { core::slice::from_raw_parts(iv, 16) });
        }
        // SAFETY: the contract above.
        let ok = unsafe { apply_params(c, ps) };
        if ok == 1 {
            crate::served::count(crate::served::Op::Sm4);
        }
        ok
    })
}

init_entries!(init);

/// Whether `[a, a + a_len)` and `[b, b + b_len)` share a byte.
pub(crate) fn overlap(a: *const u8, a_len: usize, b: *const u8, b_len: usize) -> bool {
    let (a, b) = (a as usize, b as usize);
    a_len > 0 && b_len > 0 && a < b.saturating_add(b_len) && b < a.saturating_add(a_len)
}

/// Update (`Use::Update`) or `EVP_Cipher` (`Use::Cipher`): `input` into `out`.
///
/// # Safety
/// `ctx` from `newctx`; `out` NULL or `out_size` writable bytes, `input` NULL or `len`
/// readable ones (possibly the same memory); `out_len` NULL or writable.
unsafe fn run(
    usage: Use,
    ctx: *mut c_void,
    out: *mut u8,
    out_len: *mut usize,
    out_size: usize,
    input: *const u8,
    len: usize,
) -> Result<(), Reason> {
    if !out_len.is_null() {
        // SAFETY: writable by the contract.
        unsafe { *out_len = 0 };
    }
    // SAFETY: the contract above.
    let c = unsafe { ctx.cast::<Ctx>().as_mut() }.ok_or(Reason::State)?;
    let s = c.stream(usage)?;
    if usage == Use::Cipher && s.is_block_mode() && !len.is_multiple_of(16) {
        return Err(Reason::InvalidLength);
    }
    let need = s.update_len(len).ok_or(Reason::InvalidLength)?;
    if need > 0 && (out.is_null() || out_size < need) {
        return Err(Reason::BufferTooSmall);
    }
    if len > 0 && input.is_null() {
        return Err(Reason::InvalidArgument);
    }
    let n = if len > 0 && core::ptr::eq(input, out) {
        // In place (`openssl enc` and `openssl speed` work so): `out` holds the input, and
        // `out_size` bytes, at least `need`.
        let span = need.max(len);
        // SAFETY: `input` == `out`: `len` readable and writable bytes, `out_size` writable.
        let buf = unsafe { core::slice::from_raw_parts_mut(out, span) };
        s.update_in_place(buf, len).map_err(mode_reason)?
    } else if len > 0 && overlap(input, len, out, need) {
        // Overlapping otherwise: the input is copied first (into memory that is wiped), so no
        // slice over one aliases a slice over the other.
        let mut data = Zeroizing::new(Vec::new());
        data.try_reserve_exact(len).map_err(|_| Reason::Internal)?;
        // SAFETY: `len` readable bytes by the contract.
        data.extend_from_slice(unsafe { core::slice::from_raw_parts(input, len) });
        // SAFETY: `out` has `out_size >= need` writable bytes; the input was copied.
        let o = unsafe { core::slice::from_raw_parts_mut(out, need) };
        s.update(&data, o).map_err(mode_reason)?
    } else {
        let data: &[u8] = if len == 0 {
            &[]
        } else {
            // SAFETY: `len` readable bytes by the contract, apart from the output.
            unsafe { core::slice::from_raw_parts(input, len) }
        };
        let o: &mut [u8] = if need == 0 {
            &mut []
        } else {
            // SAFETY: `out` has `out_size >= need` writable bytes, apart from the input.
            unsafe { core::slice::from_raw_parts_mut(out, need) }
        };
        s.update(data, o).map_err(mode_reason)?
    };
    if !out_len.is_null() {
        // SAFETY: writable by the contract.
        unsafe { *out_len = n };
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
        // SAFETY: the core's contract, as `run` states it.
        let r = unsafe { run(Use::Update, ctx, out, out_len, out_size, input, len) };
        crate::err::result(r, c"sm4_cipher_update")
    })
}

/// `EVP_Cipher`: exactly `len` bytes out for `len` in, as OpenSSL's own ciphers do.
unsafe extern "C" fn cipher(
    ctx: *mut c_void,
    out: *mut u8,
    out_len: *mut usize,
    out_size: usize,
    input: *const u8,
    len: usize,
) -> c_int {
    guarded(0, || {
        // SAFETY: the core's contract, as `run` states it.
        let r = unsafe { run(Use::Cipher, ctx, out, out_len, out_size, input, len) };
        crate::err::result(r, c"sm4_cipher_cipher")
    })
}

unsafe extern "C" fn final_(
    ctx: *mut c_void,
    out: *mut u8,
    out_len: *mut usize,
    out_size: usize,
) -> c_int {
    const F: &CStr = c"sm4_cipher_final";
    guarded(0, || {
        if !out_len.is_null() {
            // SAFETY: writable by the core's contract.
            unsafe { *out_len = 0 };
        }
        // SAFETY: `ctx` from `newctx`.
        let Some(c) = (unsafe { ctx.cast::<Ctx>().as_mut() }) else {
            return fail(Reason::State, F);
        };
        let r = c.stream(Use::Update).and_then(|s| {
            let bound = s.finish_len();
            if bound > 0 && (out.is_null() || out_size < bound) {
                return Err(Reason::BufferTooSmall);
            }
            let o: &mut [u8] = if bound == 0 {
                &mut []
            } else {
                // SAFETY: `out` has `out_size >= bound` writable bytes.
                unsafe { core::slice::from_raw_parts_mut(out, bound) }
            };
            s.finish(o).map_err(mode_reason)
        });
        c.stream = None;
        match r {
            Ok(n) => {
                if !out_len.is_null() {
                    // SAFETY: as above.
                    unsafe { *out_len = n };
                }
                1
            }
            Err(reason) => fail(reason, F),
        }
    })
}
