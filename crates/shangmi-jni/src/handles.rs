//! The native objects Java holds by handle: a `long` that is the address of a boxed
//! [`Handle`]. The variant is checked on every use, so a handle of one kind passed where
//! another is expected is an exception, not a confusion of types. Keys are only ever
//! borrowed shared (one key may sign on many threads at once); stateful objects (a stream, a
//! MAC) mutably, by the one Java object that owns them.

use std::sync::Arc;

use jni::sys::jlong;
use shangmi::sm2::{SigningKey, VerifyingKey};
use shangmi::sm4::modes::gcm::{GcmStream, Sm4Gcm};
use shangmi::sm4::modes::mac::Cmac;
use shangmi::sm4::{Sm4, Stream};

use crate::Thrown;

/// What a handle holds (boxed once, so the variants' sizes do not matter).
#[allow(clippy::large_enum_variant)]
pub(crate) enum Handle {
    /// An SM4 key schedule.
    Sm4(Sm4),
    /// A raw-mode message in progress.
    Stream(Stream),
    /// An SM4-GCM key with its tag length.
    Gcm(Arc<Sm4Gcm>),
    /// A long GCM message in progress (`None` once its tag was taken).
    GcmStream(Option<GcmStream<Arc<Sm4Gcm>>>),
    /// An SM4-CMAC in progress, and its key to start the next.
    Cmac(Sm4, Cmac),
    /// An SM2 private key.
    Private(SigningKey),
    /// An SM2 public key.
    Public(VerifyingKey),
}

/// A new handle owning `h`.
pub(crate) fn new(h: Handle) -> jlong {
    Box::into_raw(Box::new(h)) as jlong
}

/// The handle behind `h`, shared.
///
/// # Safety
/// `h` is 0 or a handle from [`new`] not yet freed.
pub(crate) unsafe fn get<'a>(h: jlong) -> Result<&'a Handle, Thrown> {
    let p = h as *const Handle;
    if p.is_null() {
        return Err(Thrown::state("the key or cipher was destroyed"));
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { &*p })
}

/// The handle behind `h`, to change (its one owner's call).
///
/// # Safety
/// As [`get`], and no other reference to it is alive.
pub(crate) unsafe fn get_mut<'a>(h: jlong) -> Result<&'a mut Handle, Thrown> {
    let p = h as *mut Handle;
    if p.is_null() {
        return Err(Thrown::state("the cipher was destroyed"));
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { &mut *p })
}

/// Frees `h` (0 is ignored); dropping wipes what it held.
///
/// # Safety
/// As [`get`]; `h` is not used again.
pub(crate) unsafe fn free(h: jlong) {
    let p = h as *mut Handle;
    if !p.is_null() {
        // SAFETY: the caller's contract: made by `new`, freed once.
        drop(unsafe { Box::from_raw(p) });
    }
}

/// The handle's SM2 private key.
///
/// # Safety
/// As [`get`].
pub(crate) unsafe fn private<'a>(h: jlong) -> Result<&'a SigningKey, Thrown> {
    // SAFETY: the caller's contract.
    match unsafe { get(h)? } {
        Handle::Private(k) => Ok(k),
        _ => Err(Thrown::arg("not an SM2 private key handle")),
    }
}

/// The handle's SM2 public key.
///
/// # Safety
/// As [`get`].
pub(crate) unsafe fn public<'a>(h: jlong) -> Result<&'a VerifyingKey, Thrown> {
    // SAFETY: the caller's contract.
    match unsafe { get(h)? } {
        Handle::Public(k) => Ok(k),
        Handle::Private(k) => Ok(k.verifying_key()),
        _ => Err(Thrown::arg("not an SM2 key handle")),
    }
}

/// The handle's SM4 key.
///
/// # Safety
/// As [`get`].
pub(crate) unsafe fn sm4<'a>(h: jlong) -> Result<&'a Sm4, Thrown> {
    // SAFETY: the caller's contract.
    match unsafe { get(h)? } {
        Handle::Sm4(k) => Ok(k),
        _ => Err(Thrown::arg("not an SM4 key handle")),
    }
}
