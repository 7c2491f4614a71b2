//! SM4-GCM and SM4-CCM as OpenSSL AEAD ciphers (`EVP_CTRL_AEAD_*` / the `tag`, `ivlen` and
//! `taglen` parameters), new to OpenSSL 3.0 users.
//!
//! Decryption never writes plaintext the tag has not vouched for. OpenSSL's GCM contract does
//! (DecryptUpdate returns plaintext and only DecryptFinal, which may write nothing, says
//! whether it was genuine), so here decryption asks more of the caller: the tag is set
//! before the ciphertext, the ciphertext comes in one update, and that update checks the tag
//! and writes the plaintext only if it holds; otherwise it fails with "tag mismatch" and
//! writes nothing. Encryption streams (GCM: any number of updates; CCM: one, as in OpenSSL,
//! whose CCM contract is already this one).

use core::ffi::{CStr, c_int, c_void};
use std::sync::Arc;

use shangmi::sm4::Error as ModeError;
use shangmi::sm4::modes::gcm::GcmStream;
use shangmi::sm4::modes::{ccm::Sm4Ccm, gcm::Sm4Gcm};
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::cipher::{self, Shape};
use crate::err::{self, Reason, ctx_mut, fail, result};
use crate::params::{self, OsslParam, Static};
use crate::{Dispatch, free_boxed, guarded};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Gcm,
    Ccm,
}

/// A GCM encryption in progress, owning (a share of) its key.
type GcmEnc = GcmStream<Arc<Sm4Gcm>>;

/// Shortest tag taken without the caller declaring its length first (NIST SP 800-38D's
/// 12 bytes; shorter GCM and CCM tags are forged with far less work).
const MIN_TAG_LEN: usize = 12;

/// One AEAD operation: the key, the nonce, and the message in progress.
struct Ctx {
    kind: Kind,
    encrypt: bool,
    key: Option<Zeroizing<[u8; 16]>>,
    /// GCM with full tags under `key`, shared with a running encryption.
    gcm: Option<Arc<Sm4Gcm>>,
    iv: Zeroizing<Vec<u8>>,
    iv_len: usize,
    /// An IV was given and no encryption has used it yet: no nonce serves two messages,
    /// even when a message is abandoned and the context initialised again without an IV.
    iv_ready: bool,
    aad: Zeroizing<Vec<u8>>,
    /// CCM: the tag length M; GCM: the length of the expected tag.
    tag_len: usize,
    /// Decryption: the tag the ciphertext must carry, consumed by its check.
    expected: Option<Zeroizing<Vec<u8>>>,
    /// A tag length the caller declared (`taglen`, or the tag parameter without data):
    /// the opt-in that lets decryption take a tag shorter than [`MIN_TAG_LEN`].
    declared_tag_len: Option<usize>,
    /// Encryption: the tag made at the end (GCM: the full 16 bytes).
    made: Option<Zeroizing<Vec<u8>>>,
    /// CCM: the message length declared in advance.
    msg_len: Option<usize>,
    stream: Option<GcmEnc>,
    /// The one-shot kinds (CCM, GCM decryption) have had their data.
    data_seen: bool,
    /// The result of that data's processing (a failed tag stays failed at final).
    data_ok: bool,
}

impl Ctx {
    fn new(kind: Kind) -> Self {
        Ctx {
            kind,
            encrypt: true,
            key: None,
            gcm: None,
            iv: Zeroizing::new(Vec::new()),
            iv_len: if kind == Kind::Gcm { 12 } else { 7 },
            iv_ready: false,
            aad: Zeroizing::new(Vec::new()),
            tag_len: if kind == Kind::Gcm { 16 } else { 12 },
            expected: None,
            declared_tag_len: None,
            made: None,
            msg_len: None,
            stream: None,
            data_seen: false,
            data_ok: false,
        }
    }

    fn reset_message(&mut self) {
        self.aad.clear();
        self.made = None;
        self.msg_len = None;
        self.stream = None;
        self.data_seen = false;
        self.data_ok = false;
    }

    fn iv_range(&self) -> core::ops::RangeInclusive<usize> {
        match self.kind {
            Kind::Gcm => 1..=128,
            Kind::Ccm => 7..=13,
        }
    }

    /// Key and nonce are ready for a message, or a message is under way.
    fn ready(&self) -> Result<&[u8; 16], Reason> {
        let key = self.key.as_deref().ok_or(Reason::NoKey)?;
        if !(self.iv_ready || self.stream.is_some() || self.data_seen) {
            return Err(Reason::State);
        }
        Ok(key)
    }

    fn gcm_for(&self, tag_len: usize) -> Result<Arc<Sm4Gcm>, Reason> {
        let key = self.ready()?;
        match &self.gcm {
            Some(g) if tag_len == 16 => Ok(g.clone()),
            _ => Sm4Gcm::with_short_tag(key, tag_len)
                .map(Arc::new)
                .map_err(mode_reason),
        }
    }

    fn ccm(&self, tag_len: usize) -> Result<Sm4Ccm, Reason> {
        Sm4Ccm::new(self.ready()?, self.iv.len(), tag_len).map_err(mode_reason)
    }

    /// GCM encryption: the next piece, in place in `buf`.
    fn gcm_encrypt(&mut self, buf: &mut [u8]) -> Result<(), Reason> {
        if self.stream.is_none() {
            let g = self.gcm_for(16)?;
            let s = GcmStream::new(g, &self.iv, &self.aad).map_err(mode_reason)?;
            self.stream = Some(s);
            // The nonce is spent: a new message needs a new IV.
            self.iv_ready = false;
        }
        let s = self.stream.as_mut().ok_or(Reason::Internal)?;
        s.encrypt(buf).map_err(mode_reason)
    }

    /// The one-shot kinds (CCM, GCM decryption): the whole message, processed in a buffer of
    /// our own that the caller sees only if the tag held.
    fn one_shot(&mut self, input: &[u8]) -> Result<Zeroizing<Vec<u8>>, Reason> {
        let mut buf = Zeroizing::new(input.to_vec());
        match (self.kind, self.encrypt) {
            (Kind::Ccm, true) => {
                let tag = self
                    .ccm(self.tag_len)?
                    .encrypt_in_place_detached(&self.iv, &self.aad, &mut buf)
                    .map_err(mode_reason)?;
                self.made = Some(Zeroizing::new(tag));
                self.iv_ready = false;
            }
            (Kind::Ccm, false) => {
                let tag = self.expected.take().ok_or(Reason::TagFirst)?;
                self.ccm(tag.len())?
                    .decrypt_in_place_detached(&self.iv, &self.aad, &mut buf, &tag)
                    .map_err(mode_reason)?;
            }
            (Kind::Gcm, false) => {
                let tag = self.expected.take().ok_or(Reason::TagFirst)?;
                self.gcm_for(tag.len())?
                    .decrypt_in_place_detached(&self.iv, &self.aad, &mut buf, &tag)
                    .map_err(mode_reason)?;
            }
            (Kind::Gcm, true) => return Err(Reason::Internal),
        }
        Ok(buf)
    }
}

fn mode_reason(e: ModeError) -> Reason {
    match e {
        ModeError::InvalidLength => Reason::InvalidLength,
        ModeError::InvalidNonce => Reason::InvalidIvLength,
        ModeError::InvalidTagLength => Reason::InvalidTagLength,
        ModeError::InvalidKey => Reason::InvalidKey,
        ModeError::Decrypt => Reason::TagMismatch,
        _ => Reason::InvalidArgument,
    }
}

/// Tag lengths GCM accepts here: NIST SP 800-38D's 12 to 16 bytes, and its short 4 and 8.
fn gcm_tag_len_ok(n: usize) -> bool {
    matches!(n, 4 | 8 | 12..=16)
}

/// A copy of a context, except in the middle of a GCM encryption: refused then. An
/// encrypting copy needs an IV of its own before it encrypts (two messages under one nonce
/// would give the key's GHASH key away); a decrypting one keeps the IV.
unsafe extern "C" fn dupctx(ctx: *mut c_void) -> *mut c_void {
    guarded(core::ptr::null_mut(), || {
        // SAFETY: `ctx` from `newctx`, not in use by another thread.
        let Ok(c) = (unsafe { ctx_mut::<Ctx>(ctx) }) else {
            return core::ptr::null_mut();
        };
        if c.stream.is_some() {
            err::raise(Reason::MidMessage, c"sm4_aead_dupctx");
            return core::ptr::null_mut();
        }
        let copy = Ctx {
            kind: c.kind,
            encrypt: c.encrypt,
            key: c.key.clone(),
            gcm: c.gcm.clone(),
            iv: c.iv.clone(),
            iv_len: c.iv_len,
            iv_ready: c.iv_ready && !c.encrypt,
            aad: c.aad.clone(),
            tag_len: c.tag_len,
            expected: c.expected.clone(),
            declared_tag_len: c.declared_tag_len,
            made: c.made.clone(),
            msg_len: c.msg_len,
            stream: None,
            data_seen: c.data_seen,
            data_ok: c.data_ok,
        };
        Box::into_raw(Box::new(copy)).cast()
    })
}

unsafe extern "C" fn newctx<const GCM: bool>(_provctx: *mut c_void) -> *mut c_void {
    guarded(core::ptr::null_mut(), || {
        let kind = if GCM { Kind::Gcm } else { Kind::Ccm };
        Box::into_raw(Box::new(Ctx::new(kind))).cast()
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
    const F: &CStr = c"sm4_aead_init";
    guarded(0, || {
        // SAFETY: the contract above.
        let c = match unsafe { ctx_mut::<Ctx>(ctx) } {
            Ok(c) => c,
            Err(r) => return fail(r, F),
        };
        if c.encrypt != encrypt {
            c.expected = None;
        }
        c.encrypt = encrypt;
        c.reset_message();
        if !key.is_null() {
            if key_len != 16 {
                return fail(Reason::InvalidKeyLength, F);
            }
            let mut k = Zeroizing::new([0u8; 16]);
            // SAFETY: 16 readable bytes by the contract.
            k.copy_from_slice(unsafe { core::slice::from_raw_parts(key, 16) });
            // Callers often pass the same key with every message (`openssl speed -aead`
            // does): the expanded key is kept then. Only whether the key changed shows.
            let same = c.key.as_ref().is_some_and(|old| old.ct_eq(&*k).into());
            if !same {
                c.gcm = (c.kind == Kind::Gcm).then(|| Arc::new(Sm4Gcm::new(&k)));
                c.key = Some(k);
            }
        }
        // SAFETY: the contract above (parameters first: they may set the IV length).
        if unsafe { apply_params(c, ps) } != 1 {
            return 0;
        }
        if !iv.is_null() {
            if !c.iv_range().contains(&iv_len) {
                return fail(Reason::InvalidIvLength, F);
            }
            c.iv_len = iv_len;
            c.iv.clear();
            // SAFETY: `iv_len` readable bytes by the contract.
            c.iv.extend_from_slice(unsafe { core::slice::from_raw_parts(iv, iv_len) });
            c.iv_ready = true;
        }
        1
    })
}

cipher::init_entries!(init);

/// One update: AAD when `out` is NULL, CCM's length declaration when `input` is too, data
/// otherwise.
///
/// # Safety
/// The core's contract: `ctx` from `newctx`; `out` NULL or `out_size` writable bytes;
/// `input` NULL or `len` readable bytes (possibly the same memory as `out`).
unsafe fn process(
    ctx: *mut c_void,
    out: *mut u8,
    out_len: *mut usize,
    out_size: usize,
    input: *const u8,
    len: usize,
) -> Result<(), Reason> {
    // SAFETY: the contract above.
    let c = unsafe { ctx_mut::<Ctx>(ctx)? };
    c.ready()?;
    if !out_len.is_null() {
        // SAFETY: writable by the contract.
        unsafe { *out_len = 0 };
    }
    if input.is_null() {
        if !out.is_null() {
            return Err(Reason::InvalidArgument);
        }
        if c.kind == Kind::Ccm && !c.data_seen {
            c.msg_len = Some(len);
        }
        return Ok(());
    }
    if out.is_null() {
        if c.data_seen || c.stream.is_some() {
            return Err(Reason::State);
        }
        // SAFETY: `len` readable bytes by the contract.
        c.aad
            .extend_from_slice(unsafe { core::slice::from_raw_parts(input, len) });
    } else {
        if out_size < len {
            return Err(Reason::BufferTooSmall);
        }
        if c.kind == Kind::Gcm && c.encrypt {
            // SAFETY: `len` readable and writable bytes by the contract; `copy` is memmove,
            // so the two may be the same memory, and the slice is made after it.
            let buf = unsafe {
                core::ptr::copy(input, out, len);
                core::slice::from_raw_parts_mut(out, len)
            };
            c.gcm_encrypt(buf)?;
        } else {
            if c.data_seen {
                return Err(Reason::OneUpdate);
            }
            if c.msg_len.is_some_and(|m| m != len) {
                return Err(Reason::InvalidLength);
            }
            if !c.encrypt && c.expected.is_none() {
                return Err(Reason::TagFirst);
            }
            c.data_seen = true;
            // SAFETY: `len` readable bytes by the contract; nothing is written to `out`
            // while this slice lives.
            let done = c.one_shot(unsafe { core::slice::from_raw_parts(input, len) })?;
            c.data_ok = true;
            // SAFETY: `out` has `out_size >= len` writable bytes; the input slice is gone.
            unsafe { core::ptr::copy_nonoverlapping(done.as_ptr(), out, len) };
        }
    }
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
        // SAFETY: the core's contract, as `process` states it.
        let r = unsafe { process(ctx, out, out_len, out_size, input, len) };
        result(r, c"sm4_aead_update")
    })
}

/// # Safety
/// `ctx` from `newctx`; `out_len` NULL or writable.
unsafe fn finish(ctx: *mut c_void, out_len: *mut usize) -> Result<(), Reason> {
    // SAFETY: the contract above.
    let c = unsafe { ctx_mut::<Ctx>(ctx)? };
    c.ready()?;
    if !out_len.is_null() {
        // SAFETY: writable by the contract.
        unsafe { *out_len = 0 };
    }
    let r = if c.kind == Kind::Gcm && c.encrypt {
        if c.stream.is_none() {
            c.gcm_encrypt(&mut [])?;
        }
        let s = c.stream.take().ok_or(Reason::Internal)?;
        let tag = Zeroizing::new(s.finish());
        c.made = Some(Zeroizing::new(tag.to_vec()));
        Ok(())
    } else if c.data_seen {
        if c.data_ok {
            Ok(())
        } else {
            Err(Reason::TagMismatch)
        }
    } else if !c.encrypt && c.expected.is_none() {
        Err(Reason::TagFirst)
    } else {
        c.one_shot(&[]).map(drop)
    };
    c.iv_ready = false;
    c.expected = None;
    if r.is_ok() {
        crate::served::count(match c.kind {
            Kind::Gcm => crate::served::Op::Sm4Gcm,
            Kind::Ccm => crate::served::Op::Sm4Ccm,
        });
    }
    r
}

unsafe extern "C" fn final_(
    ctx: *mut c_void,
    _out: *mut u8,
    out_len: *mut usize,
    _out_size: usize,
) -> c_int {
    guarded(0, || {
        // SAFETY: the core's contract, as `finish` states it.
        let r = unsafe { finish(ctx, out_len) };
        result(r, c"sm4_aead_final")
    })
}

/// `EVP_Cipher`: an update, or the end when `input` is NULL (OpenSSL's AEAD convention).
unsafe extern "C" fn cipher_(
    ctx: *mut c_void,
    out: *mut u8,
    out_len: *mut usize,
    out_size: usize,
    input: *const u8,
    len: usize,
) -> c_int {
    if input.is_null() && !out.is_null() {
        // SAFETY: forwarded under the same contract.
        unsafe { final_(ctx, out, out_len, out_size) }
    } else {
        // SAFETY: forwarded under the same contract.
        unsafe { update(ctx, out, out_len, out_size, input, len) }
    }
}

const GCM_SHAPE: Shape = Shape {
    mode: 6,
    key_len: 16,
    iv_len: 12,
    block: 1,
    aead: true,
    custom_iv: true,
};

const CCM_SHAPE: Shape = Shape {
    mode: 7,
    key_len: 16,
    iv_len: 7,
    block: 1,
    aead: true,
    custom_iv: true,
};

unsafe extern "C" fn get_params<const GCM: bool>(ps: *mut OsslParam) -> c_int {
    let shape = if GCM { &GCM_SHAPE } else { &CCM_SHAPE };
    // SAFETY: the core passes a terminated array whose entries fit their types.
    guarded(0, || unsafe { shape.write(ps) })
}

unsafe extern "C" fn get_ctx_params(ctx: *mut c_void, ps: *const OsslParam) -> c_int {
    const F: &CStr = c"sm4_aead_get_ctx_params";
    guarded(0, || {
        // SAFETY: `ctx` from `newctx`; `ps` a terminated array whose entries fit their types.
        unsafe {
            let c = match ctx_mut::<Ctx>(ctx) {
                Ok(c) => c,
                Err(r) => return fail(r, F),
            };
            for p in params::entries(ps) {
                let ok = if params::is(p, c"keylen") {
                    params::set_uint(p, 16)
                } else if params::is(p, c"ivlen") {
                    params::set_uint(p, c.iv_len as u64)
                } else if params::is(p, c"taglen") {
                    params::set_uint(p, c.tag_len as u64)
                } else if params::is(p, c"iv") {
                    params::set_octets(p, &c.iv)
                } else if params::is(p, c"tag") {
                    let n = (*p).data_size;
                    let Some(t) = c.made.as_ref().filter(|_| c.encrypt) else {
                        return fail(Reason::State, F);
                    };
                    let fits = match c.kind {
                        Kind::Gcm => gcm_tag_len_ok(n),
                        Kind::Ccm => n == c.tag_len,
                    };
                    if !fits {
                        return fail(Reason::InvalidTagLength, F);
                    }
                    params::set_octets(p, &t[..n])
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

unsafe extern "C" fn set_ctx_params(ctx: *mut c_void, ps: *const OsslParam) -> c_int {
    guarded(0, || {
        // SAFETY: `ctx` from `newctx`; `ps` NULL or a terminated array.
        match unsafe { ctx_mut::<Ctx>(ctx) } {
            // SAFETY: as above.
            Ok(c) => unsafe { apply_params(c, ps) },
            Err(r) => fail(r, c"sm4_aead_set_ctx_params"),
        }
    })
}

/// The parameters in `ps` applied to `c` (from `set_ctx_params`, and from `init` on the
/// context it already holds, so no second reference to it is made).
///
/// # Safety
/// `ps` NULL or a terminated array whose entries fit their types.
unsafe fn apply_params(c: &mut Ctx, ps: *const OsslParam) -> c_int {
    const F: &CStr = c"sm4_aead_set_ctx_params";
    // SAFETY: the contract above.
    unsafe {
        for p in params::entries(ps) {
            if params::is(p, c"ivlen") {
                let n = params::get_uint(p).and_then(|v| usize::try_from(v).ok());
                let Some(n) = n.filter(|n| c.iv_range().contains(n)) else {
                    return fail(Reason::InvalidIvLength, F);
                };
                if n != c.iv_len {
                    c.iv_len = n;
                    c.iv.clear();
                    c.iv_ready = false;
                }
            } else if params::is(p, c"tag") {
                let e = &*p;
                let n = e.data_size;
                let ok = match c.kind {
                    Kind::Gcm => gcm_tag_len_ok(n),
                    Kind::Ccm => (4..=16).contains(&n) && n % 2 == 0,
                };
                if e.data_type != params::OCTET_STRING || !ok {
                    return fail(Reason::InvalidTagLength, F);
                }
                if e.data.is_null() {
                    c.declared_tag_len = Some(n);
                } else {
                    if c.encrypt {
                        return fail(Reason::State, F);
                    }
                    // A short tag only where the caller fixed that length beforehand:
                    // the length comes from the caller, never from the received data.
                    if n < MIN_TAG_LEN && c.declared_tag_len != Some(n) {
                        return fail(Reason::ShortTag, F);
                    }
                    let t = core::slice::from_raw_parts(e.data as *const u8, n);
                    c.expected = Some(Zeroizing::new(t.to_vec()));
                }
                c.tag_len = n;
            } else if params::is(p, c"taglen") {
                let n = params::get_uint(p).and_then(|v| usize::try_from(v).ok());
                let ok = n.is_some_and(|n| match c.kind {
                    Kind::Gcm => gcm_tag_len_ok(n),
                    Kind::Ccm => (4..=16).contains(&n) && n % 2 == 0,
                });
                let Some(n) = n.filter(|_| ok) else {
                    return fail(Reason::InvalidTagLength, F);
                };
                c.declared_tag_len = Some(n);
                c.tag_len = n;
            } else if params::is(p, c"keylen") && params::get_uint(p) != Some(16) {
                return fail(Reason::InvalidKeyLength, F);
            }
        }
    }
    1
}

static CTX_GETTABLE: Static<[OsslParam; 6]> = Static([
    params::describe(c"keylen", params::UNSIGNED_INTEGER),
    params::describe(c"ivlen", params::UNSIGNED_INTEGER),
    params::describe(c"taglen", params::UNSIGNED_INTEGER),
    params::describe(c"iv", params::OCTET_STRING),
    params::describe(c"tag", params::OCTET_STRING),
    params::END,
]);

static CTX_SETTABLE: Static<[OsslParam; 5]> = Static([
    params::describe(c"ivlen", params::UNSIGNED_INTEGER),
    params::describe(c"tag", params::OCTET_STRING),
    params::describe(c"taglen", params::UNSIGNED_INTEGER),
    params::describe(c"keylen", params::UNSIGNED_INTEGER),
    params::END,
]);

unsafe extern "C" fn gettable_ctx_params(_ctx: *mut c_void, _p: *mut c_void) -> *const OsslParam {
    CTX_GETTABLE.0.as_ptr()
}

unsafe extern "C" fn settable_ctx_params(_ctx: *mut c_void, _p: *mut c_void) -> *const OsslParam {
    CTX_SETTABLE.0.as_ptr()
}

/// The dispatch table of SM4-GCM (`GCM`) or SM4-CCM.
pub(crate) fn table<const GCM: bool>() -> Vec<Dispatch> {
    cipher::dispatch(cipher::Entries {
        newctx: newctx::<GCM>,
        encrypt_init,
        decrypt_init,
        update,
        final_,
        cipher: cipher_,
        freectx: free_boxed::<Ctx>,
        dupctx,
        get_params: get_params::<GCM>,
        get_ctx_params,
        set_ctx_params,
        gettable_ctx_params,
        settable_ctx_params,
    })
}
