//! SM4-GCM for the provider: one-shot seal and open, and streams for messages longer than one
//! pinned call (a decrypting stream releases nothing before its tag verifies).

use std::sync::Arc;

use jni::JNIEnv;
use jni::objects::{JByteArray, JClass};
use jni::sys::{jboolean, jint, jlong};
use shangmi::sm4::modes::gcm::{GcmStream, Sm4Gcm};

use super::{BAD, BAD_LENGTH, expected, key16};
use crate::arrays::{self, with_input, with_io};
use crate::handles::{self, Handle};
use crate::{Thrown, guard};

/// An SM4-GCM key with tags of `tag_len` bytes (4, 8 or 12 to 16).
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_gcmKey<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    key: JByteArray<'l>,
    tag_len: jint,
) -> jlong {
    guard(&mut env, 0, |env| {
        let k = key16(env, &key)?;
        let gcm = Sm4Gcm::with_short_tag(&k, tag_len as usize)
            .map_err(|_| Thrown::arg("an SM4-GCM tag is 4, 8 or 12 to 16 bytes"))?;
        Ok(handles::new(Handle::Gcm(Arc::new(gcm))))
    })
}

/// # Safety
/// A live GCM key handle.
pub(super) unsafe fn gcm<'a>(h: jlong) -> Result<&'a Arc<Sm4Gcm>, Thrown> {
    // SAFETY: the caller's contract.
    match unsafe { handles::get(h)? } {
        Handle::Gcm(g) => Ok(g),
        _ => Err(Thrown::arg("not an SM4-GCM key handle")),
    }
}

/// Seals `input[off..off+len]` into `out` from `out_off`: ciphertext then tag; their length,
/// or -2 for a nonce or length GCM refuses.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_rs_shangmi_jca_Native_gcmSeal<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    g: jlong,
    iv: JByteArray<'l>,
    aad: JByteArray<'l>,
    input: JByteArray<'l>,
    off: jint,
    len: jint,
    out: JByteArray<'l>,
    out_off: jint,
) -> jint {
    guard(&mut env, BAD_LENGTH, |env| {
        // SAFETY: a live GCM key handle.
        let g = unsafe { gcm(g)? };
        let (nonce, aad) = (arrays::to_vec(env, &iv)?, arrays::to_vec(env, &aad)?);
        let t = g.tag_len();
        let out_len = len.checked_add(t as jint).ok_or_else(Thrown::bounds)?;
        let r = with_io(env, &input, off, len, &out, out_off, out_len, |i, o| {
            let (ct, tag) = o.split_at_mut(i.len());
            ct.copy_from_slice(i);
            match g.encrypt_in_place_detached(&nonce, &aad, ct) {
                Ok(full) => {
                    tag.copy_from_slice(&full[..t]);
                    Ok((out_len, out_len as usize))
                }
                Err(e) => {
                    zeroize::Zeroize::zeroize(ct);
                    Err(expected(e))
                }
            }
        })?;
        Ok(r.unwrap_or_else(|e| e))
    })
}

/// Opens ciphertext-then-tag `input[off..off+len]` into `out` from `out_off`: the plaintext's
/// length, -1 for a message that is not authentic (nothing written), -2 for a bad length.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_rs_shangmi_jca_Native_gcmOpen<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    g: jlong,
    iv: JByteArray<'l>,
    aad: JByteArray<'l>,
    input: JByteArray<'l>,
    off: jint,
    len: jint,
    out: JByteArray<'l>,
    out_off: jint,
) -> jint {
    guard(&mut env, BAD_LENGTH, |env| {
        // SAFETY: a live GCM key handle.
        let g = unsafe { gcm(g)? };
        let (nonce, aad) = (arrays::to_vec(env, &iv)?, arrays::to_vec(env, &aad)?);
        let t = g.tag_len() as jint;
        if len < t {
            return Ok(BAD);
        }
        let r = with_io(env, &input, off, len, &out, out_off, len - t, |i, o| {
            let (ct, tag) = i.split_at(i.len() - t as usize);
            match g.decrypt_detached(&nonce, &aad, ct, tag, o) {
                Ok(()) => Ok((ct.len() as jint, ct.len())),
                Err(e) => Err(expected(e)),
            }
        })?;
        Ok(r.unwrap_or_else(|e| e))
    })
}

/// A GCM message in pieces, for messages too long to pin: started under `iv` and `aad`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_gcmStart<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    g: jlong,
    iv: JByteArray<'l>,
    aad: JByteArray<'l>,
) -> jlong {
    guard(&mut env, 0, |env| {
        // SAFETY: a live GCM key handle.
        let g = unsafe { gcm(g)? }.clone();
        let (nonce, aad) = (arrays::to_vec(env, &iv)?, arrays::to_vec(env, &aad)?);
        let s = GcmStream::new(g, &nonce, &aad).map_err(|e| Thrown::arg(e.to_string()))?;
        Ok(handles::new(Handle::GcmStream(Some(s))))
    })
}

/// # Safety
/// A live GCM stream handle, used by its one owner.
unsafe fn gcm_stream<'a>(h: jlong) -> Result<&'a mut GcmStream<Arc<Sm4Gcm>>, Thrown> {
    // SAFETY: the caller's contract.
    match unsafe { handles::get_mut(h)? } {
        Handle::GcmStream(Some(s)) => Ok(s),
        Handle::GcmStream(None) => Err(Thrown::state("the GCM message is finished")),
        _ => Err(Thrown::arg("not a GCM stream handle")),
    }
}

/// What a GCM stream does to one piece.
#[derive(Clone, Copy)]
enum Piece {
    Encrypt,
    /// After the tag was checked by an earlier pass over the same message.
    DecryptVerified,
}

fn gcm_piece(
    env: &mut JNIEnv<'_>,
    st: jlong,
    (input, off, len): (&JByteArray<'_>, jint, jint),
    (out, out_off): (&JByteArray<'_>, jint),
    piece: Piece,
) -> Result<(), Thrown> {
    // SAFETY: the owner's live stream.
    let s = unsafe { gcm_stream(st)? };
    let r = with_io(env, input, off, len, out, out_off, len, |i, o| {
        o.copy_from_slice(i);
        let r = match piece {
            Piece::Encrypt => s.encrypt(o),
            Piece::DecryptVerified => s.decrypt_unverified(o),
        };
        r.map(|()| ((), o.len())).map_err(|_| ())
    })?;
    r.map_err(|()| Thrown::arg("the GCM message is too long"))
}

/// Encrypts the next piece of a long message.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_rs_shangmi_jca_Native_gcmEncrypt<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    st: jlong,
    input: JByteArray<'l>,
    off: jint,
    len: jint,
    out: JByteArray<'l>,
    out_off: jint,
) {
    guard(&mut env, (), |env| {
        gcm_piece(env, st, (&input, off, len), (&out, out_off), Piece::Encrypt)
    })
}

/// Decrypts the next piece of a long message whose tag an earlier stream over the same
/// message has verified (the Java side's second pass).
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_rs_shangmi_jca_Native_gcmDecryptVerified<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    st: jlong,
    input: JByteArray<'l>,
    off: jint,
    len: jint,
    out: JByteArray<'l>,
    out_off: jint,
) {
    guard(&mut env, (), |env| {
        gcm_piece(
            env,
            st,
            (&input, off, len),
            (&out, out_off),
            Piece::DecryptVerified,
        )
    })
}

/// Authenticates the next piece of a long message's ciphertext (the first pass).
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_gcmAbsorb<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    st: jlong,
    input: JByteArray<'l>,
    off: jint,
    len: jint,
) {
    guard(&mut env, (), |env| {
        // SAFETY: the owner's live stream.
        let s = unsafe { gcm_stream(st)? };
        with_input(env, &input, off, len, |i| s.absorb_ciphertext(i))?
            .map_err(|_| Thrown::arg("the GCM message is too long"))
    })
}

/// Ends an encrypting stream: its tag into `out` at `out_off`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_gcmTag<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    st: jlong,
    out: JByteArray<'l>,
    out_off: jint,
) {
    guard(&mut env, (), |env| {
        // SAFETY: the owner's live stream handle.
        let Handle::GcmStream(slot) = (unsafe { handles::get_mut(st)? }) else {
            return Err(Thrown::arg("not a GCM stream handle"));
        };
        let s = slot
            .take()
            .ok_or_else(|| Thrown::state("the GCM message is finished"))?;
        let t = s.tag_len();
        let full = s.finish();
        arrays::write(env, &out, out_off as usize, &full[..t])
    })
}

/// Ends an authenticating stream: whether `tag[off..off+len]` is the message's.
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_gcmVerify<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    st: jlong,
    tag: JByteArray<'l>,
    off: jint,
    len: jint,
) -> jboolean {
    guard(&mut env, 0, |env| {
        // SAFETY: the owner's live stream handle.
        let Handle::GcmStream(slot) = (unsafe { handles::get_mut(st)? }) else {
            return Err(Thrown::arg("not a GCM stream handle"));
        };
        let s = slot
            .take()
            .ok_or_else(|| Thrown::state("the GCM message is finished"))?;
        let ok = with_input(env, &tag, off, len, |t| s.verify(t).is_ok())?;
        Ok(ok as jboolean)
    })
}
