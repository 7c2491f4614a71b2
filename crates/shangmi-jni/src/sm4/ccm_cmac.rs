//! SM4-CCM one-shot seal and open, and SM4-CMAC, for the provider.

use jni::JNIEnv;
use jni::objects::{JByteArray, JClass};
use jni::sys::{jint, jlong};
use shangmi::sm4::Sm4;
use shangmi::sm4::modes::ccm::Sm4Ccm;
use shangmi::sm4::modes::mac::Cmac;
use zeroize::Zeroizing;

use super::{BAD, BAD_LENGTH, expected};
use crate::arrays::{self, with_input, with_io};
use crate::handles::{self, Handle};
use crate::{Thrown, guard};

pub(super) fn ccm(key: jlong, nonce_len: usize, tag_len: jint) -> Result<Sm4Ccm, Thrown> {
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
