//! SM4: key schedules, the raw modes as one stream type (with PKCS#7 padding for ECB and
//! CBC), GCM and CCM one-shot (the AEAD is applied at `doFinal`, so nothing is released
//! before the tag is checked), GCM streams for messages longer than one pinned call, and
//! CMAC. Return values below zero are the failures a caller expects: -1 for a bad tag or bad
//! padding, -2 for a length the mode cannot take.

use jni::JNIEnv;
use jni::objects::{JByteArray, JClass};
use jni::sys::{jboolean, jint, jlong};
use shangmi::sm4::{Direction, Error, Mode, Sm4, Stream};
use zeroize::Zeroizing;

use crate::arrays::{self, with_io};
use crate::handles::{self, Handle};
use crate::{Thrown, guard};

mod ccm_cmac;
mod gcm;

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
