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

use crate::cipher::{self};
use crate::err::{self, Reason, ctx_mut, fail};
use crate::guarded;
use crate::params::OsslParam;

mod run;
mod settings;
use settings::apply_params;
pub(crate) use settings::table;

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
