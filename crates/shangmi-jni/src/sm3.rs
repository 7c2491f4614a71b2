//! SM3, HMAC-SM3 and PBKDF2-HMAC-SM3. The hash's chaining state lives in Java (`int[8]`, and
//! the count of blocks absorbed), so the Java side buffers small updates, clones and resets
//! without native memory, and calls here only for whole blocks and to finish.

use jni::JNIEnv;
use jni::objects::{JByteArray, JClass, JIntArray};
use jni::sys::{jint, jlong};
use shangmi::sm3::{HmacSm3, Sm3};

use crate::arrays::{self, set_state, state, with_input};
use crate::{Thrown, guard};

fn blocks_of(n: jlong) -> Result<u64, Thrown> {
    u64::try_from(n).map_err(|_| Thrown::arg("a negative block count"))
}

/// Absorbs `blocks` whole blocks of `input` from `off` into `state`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_sm3Blocks<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    st: JIntArray<'l>,
    input: JByteArray<'l>,
    off: jint,
    blocks: jint,
) {
    guard(&mut env, (), |env| {
        let s = state(env, &st)?;
        let len = blocks.checked_mul(64).ok_or_else(Thrown::bounds)?;
        let next = with_input(env, &input, off, len, |data| {
            let mut h = Sm3::resume(s, 0);
            h.update(data);
            h.chaining_state().map(|(s, _)| s)
        })?
        .ok_or_else(|| Thrown::state("a partial block"))?;
        set_state(env, &st, &next)
    })
}

/// Finishes the hash that reached `state` after `blocks` blocks, with `input[off..off+len]`
/// still to absorb; writes the 32-byte digest to `out` at `out_off`.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_rs_shangmi_jca_Native_sm3Finish<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    st: JIntArray<'l>,
    blocks: jlong,
    input: JByteArray<'l>,
    off: jint,
    len: jint,
    out: JByteArray<'l>,
    out_off: jint,
) {
    guard(&mut env, (), |env| {
        let (s, n) = (state(env, &st)?, blocks_of(blocks)?);
        let digest = with_input(env, &input, off, len, |data| {
            let mut h = Sm3::resume(s, n);
            h.update(data);
            h.finalize()
        })?;
        arrays::write(env, &out, out_off as usize, &digest)
    })
}

/// Keys HMAC-SM3: the chaining states after the ipad and opad blocks into `inner` and
/// `outer`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_hmacKey<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    key: JByteArray<'l>,
    inner: JIntArray<'l>,
    outer: JIntArray<'l>,
) {
    guard(&mut env, (), |env| {
        let k = zeroize::Zeroizing::new(arrays::to_vec(env, &key)?);
        let (i, o) = HmacSm3::new(&k).keyed_states();
        set_state(env, &inner, &i)?;
        set_state(env, &outer, &o)
    })
}

/// Finishes HMAC-SM3: the inner hash from `inner` after `blocks` blocks (the ipad block
/// among them) over `input[off..off+len]`, then the outer one from `outer`; the 32-byte tag
/// to `out`.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_rs_shangmi_jca_Native_hmacFinish<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    inner: JIntArray<'l>,
    blocks: jlong,
    input: JByteArray<'l>,
    off: jint,
    len: jint,
    outer: JIntArray<'l>,
    out: JByteArray<'l>,
    out_off: jint,
) {
    guard(&mut env, (), |env| {
        let (i, n, o) = (state(env, &inner)?, blocks_of(blocks)?, state(env, &outer)?);
        let tag = with_input(env, &input, off, len, |data| {
            let mut h = Sm3::resume(i, n);
            h.update(data);
            let inner_digest = h.finalize();
            let mut h = Sm3::resume(o, 1);
            h.update(&inner_digest);
            h.finalize()
        })?;
        arrays::write(env, &out, out_off as usize, &tag)
    })
}

/// PBKDF2 with HMAC-SM3: `out.length` bytes from `password` and `salt`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_pbkdf2Sm3<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    password: JByteArray<'l>,
    salt: JByteArray<'l>,
    iterations: jint,
    out: JByteArray<'l>,
) {
    guard(&mut env, (), |env| {
        let pw = zeroize::Zeroizing::new(arrays::to_vec(env, &password)?);
        let salt = arrays::to_vec(env, &salt)?;
        let n = arrays::len(env, &out)?;
        let rounds = u32::try_from(iterations)
            .ok()
            .filter(|&r| r > 0)
            .ok_or_else(|| Thrown::arg("the iteration count must be positive"))?;
        let mut key = zeroize::Zeroizing::new(vec![0u8; n]);
        shangmi::sm3::pbkdf2(&pw, &salt, rounds, &mut key)
            .map_err(|e| Thrown::arg(e.to_string()))?;
        arrays::write(env, &out, 0, &key)
    })
}
