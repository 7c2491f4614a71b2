//! SM4: key schedules, the raw modes as one stream type (with PKCS#7 padding for ECB and
//! CBC), GCM and CCM one-shot (the AEAD is applied at `doFinal`, so nothing is released
//! before the tag is checked), GCM streams for messages longer than one pinned call, and
//! CMAC. Return values below zero are the failures a caller expects: -1 for a bad tag or bad
//! padding, -2 for a length the mode cannot take.

use std::sync::Arc;

use jni::JNIEnv;
use jni::objects::{JByteArray, JClass};
use jni::sys::{jboolean, jint, jlong};
use shangmi::sm4::modes::ccm::Sm4Ccm;
use shangmi::sm4::modes::gcm::{GcmStream, Sm4Gcm};
use shangmi::sm4::modes::mac::Cmac;
use shangmi::sm4::{Direction, Error, Mode, Sm4, Stream};
use zeroize::Zeroizing;

use crate::arrays::{self, with_input, with_io};
use crate::handles::{self, Handle};
use crate::{Thrown, guard};

/// The caller's expected failures.
const BAD: jint = -1;
const BAD_LENGTH: jint = -2;

fn key16(env: &JNIEnv<'_>, key: &JByteArray<'_>) -> Result<Zeroizing<[u8; 16]>, Thrown> {
    let k = Zeroizing::new(arrays::to_vec(env, key)?);
    let mut out = Zeroizing::new([0u8; 16]);
    if k.len() != 16 {
        return Err(Thrown::arg("an SM4 key is 16 bytes"));
    }
    out.copy_from_slice(&k);
    Ok(out)
}

fn block(env: &JNIEnv<'_>, iv: &JByteArray<'_>) -> Result<[u8; 16], Thrown> {
    arrays::to_vec(env, iv)?
        .try_into()
        .map_err(|_| Thrown::arg("an SM4 IV is 16 bytes"))
}

fn expected(e: Error) -> jint {
    match e {
        Error::Decrypt => BAD,
        _ => BAD_LENGTH,
    }
}

/// An SM4 key schedule.
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_sm4Key<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    key: JByteArray<'l>,
) -> jlong {
    guard(&mut env, 0, |env| {
        Ok(handles::new(Handle::Sm4(Sm4::new(&*key16(env, &key)?))))
    })
}

/// A raw-mode stream under `key`: mode 0 ECB, 1 CBC, 2 CFB, 3 OFB, 4 CTR; `padding` (PKCS#7)
/// for ECB and CBC only; `iv` 16 bytes except for ECB.
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_sm4Stream<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    key: jlong,
    mode: jint,
    padding: jboolean,
    encrypt: jboolean,
    iv: JByteArray<'l>,
) -> jlong {
    guard(&mut env, 0, |env| {
        // SAFETY: a live SM4 key handle of the caller's.
        let cipher = unsafe { handles::sm4(key)? }.clone();
        let padding = padding != 0;
        let mode = match (mode, padding) {
            (0, false) => Mode::Ecb,
            (0, true) => Mode::EcbPkcs7,
            (1, false) => Mode::Cbc(block(env, &iv)?),
            (1, true) => Mode::CbcPkcs7(block(env, &iv)?),
            (2, false) => Mode::Cfb(block(env, &iv)?),
            (3, false) => Mode::Ofb(block(env, &iv)?),
            (4, false) => Mode::Ctr(block(env, &iv)?),
            _ => return Err(Thrown::arg("no such SM4 mode and padding")),
        };
        let direction = if encrypt != 0 {
            Direction::Encrypt
        } else {
            Direction::Decrypt
        };
        Ok(handles::new(Handle::Stream(Stream::with_cipher(
            cipher, mode, direction,
        ))))
    })
}

/// # Safety
/// A live stream handle, used by its one owner.
unsafe fn stream<'a>(h: jlong) -> Result<&'a mut Stream, Thrown> {
    // SAFETY: the caller's contract.
    match unsafe { handles::get_mut(h)? } {
        Handle::Stream(s) => Ok(s),
        _ => Err(Thrown::arg("not an SM4 stream handle")),
    }
}

/// The output an update of `len` bytes writes; -2 if the sizes overflow.
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_streamUpdateLen<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    s: jlong,
    len: jint,
) -> jint {
    guard(&mut env, BAD_LENGTH, |_| {
        // SAFETY: the owner's live stream.
        let s = unsafe { stream(s)? };
        let n = usize::try_from(len).map_err(|_| Thrown::bounds())?;
        Ok(s.update_len(n)
            .and_then(|n| jint::try_from(n).ok())
            .unwrap_or(BAD_LENGTH))
    })
}

/// The output `streamFinish` may write at most.
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_streamFinishLen<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    s: jlong,
) -> jint {
    guard(&mut env, BAD_LENGTH, |_| {
        // SAFETY: the owner's live stream.
        Ok(unsafe { stream(s)? }.finish_len() as jint)
    })
}

/// Runs `input[off..off+len]` through the stream into `out` from `out_off` (room for
/// `out_len` bytes); the bytes written.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_rs_shangmi_jca_Native_streamUpdate<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    s: jlong,
    input: JByteArray<'l>,
    off: jint,
    len: jint,
    out: JByteArray<'l>,
    out_off: jint,
    out_len: jint,
) -> jint {
    guard(&mut env, BAD_LENGTH, |env| {
        // SAFETY: the owner's live stream.
        let s = unsafe { stream(s)? };
        let r = with_io(
            env,
            &input,
            off,
            len,
            &out,
            out_off,
            out_len,
            |i, o| match s.update(i, o) {
                Ok(n) => Ok((n as jint, n)),
                Err(e) => Err(expected(e)),
            },
        )?;
        Ok(r.unwrap_or_else(|e| e))
    })
}

/// Ends the stream into `out` from `out_off` (room for `out_len`): the bytes written, -1 for
/// bad padding, -2 for a partial block where the mode takes whole ones.
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_streamFinish<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    s: jlong,
    out: JByteArray<'l>,
    out_off: jint,
    out_len: jint,
) -> jint {
    guard(&mut env, BAD_LENGTH, |env| {
        // SAFETY: the owner's live stream.
        let s = unsafe { stream(s)? };
        let none = JByteArray::default();
        let r = with_io(env, &none, 0, 0, &out, out_off, out_len, |_, o| {
            match s.finish(o) {
                Ok(n) => Ok((n as jint, n)),
                Err(e) => Err(expected(e)),
            }
        })?;
        Ok(r.unwrap_or_else(|e| e))
    })
}

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
unsafe fn gcm<'a>(h: jlong) -> Result<&'a Arc<Sm4Gcm>, Thrown> {
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

fn ccm(key: jlong, nonce_len: usize, tag_len: jint) -> Result<Sm4Ccm, Thrown> {
    // SAFETY: a live SM4 key handle.
    let cipher = unsafe { handles::sm4(key)? }.clone();
    Sm4Ccm::with_cipher(cipher, nonce_len, tag_len as usize)
        .map_err(|e| Thrown::arg(format!("SM4-CCM: {e}")))
}

/// SM4-CCM under `key` with tags of `tag_len` bytes: seals `input[off..off+len]` into `out`
/// at `out_off` (ciphertext then tag); their length.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_rs_shangmi_jca_Native_ccmSeal<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    key: jlong,
    tag_len: jint,
    nonce: JByteArray<'l>,
    aad: JByteArray<'l>,
    input: JByteArray<'l>,
    off: jint,
    len: jint,
    out: JByteArray<'l>,
    out_off: jint,
) -> jint {
    guard(&mut env, BAD_LENGTH, |env| {
        let (n, aad) = (arrays::to_vec(env, &nonce)?, arrays::to_vec(env, &aad)?);
        let c = ccm(key, n.len(), tag_len)?;
        let out_len = len.checked_add(tag_len).ok_or_else(Thrown::bounds)?;
        let r = with_io(env, &input, off, len, &out, out_off, out_len, |i, o| {
            let (ct, tag) = o.split_at_mut(i.len());
            ct.copy_from_slice(i);
            match c.encrypt_in_place_detached(&n, &aad, ct) {
                Ok(t) => {
                    tag.copy_from_slice(&t);
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

/// Opens SM4-CCM ciphertext-then-tag into `out` at `out_off`: the plaintext's length, -1 for
/// a message that is not authentic. CCM authenticates the plaintext, so it is decrypted
/// into a buffer of its own and copied out only once the tag checks.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_rs_shangmi_jca_Native_ccmOpen<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    key: jlong,
    tag_len: jint,
    nonce: JByteArray<'l>,
    aad: JByteArray<'l>,
    input: JByteArray<'l>,
    off: jint,
    len: jint,
    out: JByteArray<'l>,
    out_off: jint,
) -> jint {
    guard(&mut env, BAD_LENGTH, |env| {
        let (n, aad) = (arrays::to_vec(env, &nonce)?, arrays::to_vec(env, &aad)?);
        let c = ccm(key, n.len(), tag_len)?;
        if len < tag_len {
            return Ok(BAD);
        }
        let r = with_io(
            env,
            &input,
            off,
            len,
            &out,
            out_off,
            len - tag_len,
            |i, o| {
                let (ct, tag) = i.split_at(i.len() - tag_len as usize);
                let mut buf = Zeroizing::new(ct.to_vec());
                match c.decrypt_in_place_detached(&n, &aad, &mut buf, tag) {
                    Ok(()) => {
                        o.copy_from_slice(&buf);
                        Ok((ct.len() as jint, ct.len()))
                    }
                    Err(e) => Err(expected(e)),
                }
            },
        )?;
        Ok(r.unwrap_or_else(|e| e))
    })
}

/// An SM4-CMAC under `key`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_cmacNew<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    key: jlong,
) -> jlong {
    guard(&mut env, 0, |_| {
        // SAFETY: a live SM4 key handle.
        let cipher = unsafe { handles::sm4(key)? }.clone();
        let mac = Cmac::with_cipher(cipher.clone());
        Ok(handles::new(Handle::Cmac(cipher, mac)))
    })
}

/// # Safety
/// A live CMAC handle, used by its one owner.
unsafe fn cmac<'a>(h: jlong) -> Result<(&'a Sm4, &'a mut Cmac), Thrown> {
    // SAFETY: the caller's contract.
    match unsafe { handles::get_mut(h)? } {
        Handle::Cmac(k, m) => Ok((k, m)),
        _ => Err(Thrown::arg("not a CMAC handle")),
    }
}

/// Absorbs `input[off..off+len]`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_cmacUpdate<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    c: jlong,
    input: JByteArray<'l>,
    off: jint,
    len: jint,
) {
    guard(&mut env, (), |env| {
        // SAFETY: the owner's live CMAC.
        let (_, mac) = unsafe { cmac(c)? };
        with_input(env, &input, off, len, |i| mac.update(i))
    })
}

/// The 16-byte tag into `out` at `out_off`; the MAC starts over.
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_cmacFinish<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    c: jlong,
    out: JByteArray<'l>,
    out_off: jint,
) {
    guard(&mut env, (), |env| {
        // SAFETY: the owner's live CMAC.
        let (key, mac) = unsafe { cmac(c)? };
        let done = std::mem::replace(mac, Cmac::with_cipher(key.clone()));
        let tag = Zeroizing::new(done.finalize());
        arrays::write(env, &out, out_off as usize, &tag[..])
    })
}
