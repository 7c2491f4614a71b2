//! SM2: keys (generated here, or from their encodings), signatures over e = SM3(Z || M)
//! (the Java side hashes, so a message of any length streams), Z, encryption in the three
//! layouts, ECDH and the GB/T 32918.3 key exchange. Keys live behind handles; their
//! encodings cross as arrays (PKCS#8, SubjectPublicKeyInfo, the 65-byte point, the 32-byte d).

use jni::JNIEnv;
use jni::objects::{JByteArray, JClass};
use jni::sys::{jboolean, jbyteArray, jint, jlong};
use shangmi::sm2::{EphemeralSecret, Exchange, Format, Role, Signature, SigningKey, VerifyingKey};
use zeroize::Zeroizing;

use crate::arrays::{self, with_input};
use crate::handles::{self, Handle};
use crate::{Thrown, guard};

fn new_array(env: &JNIEnv<'_>, bytes: &[u8]) -> Result<jbyteArray, Thrown> {
    Ok(env.byte_array_from_slice(bytes)?.into_raw())
}

fn d32(env: &JNIEnv<'_>, a: &JByteArray<'_>) -> Result<Zeroizing<[u8; 32]>, Thrown> {
    let v = Zeroizing::new(arrays::to_vec(env, a)?);
    let mut d = Zeroizing::new([0u8; 32]);
    if v.len() != 32 {
        return Err(Thrown::arg("an SM2 private key is 32 bytes"));
    }
    d.copy_from_slice(&v);
    Ok(d)
}

fn format(f: jint) -> Result<Format, Thrown> {
    match f {
        0 => Ok(Format::C1C3C2),
        1 => Ok(Format::C1C2C3),
        2 => Ok(Format::Der),
        _ => Err(Thrown::arg("no such SM2 ciphertext layout")),
    }
}

/// A new key pair as a private key handle, its d and point (97 bytes) written to `out`: the
/// key generator's, which so does not derive the public key a second time.
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_sm2GenerateKey<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    out: JByteArray<'l>,
) -> jlong {
    guard(&mut env, 0, |env| {
        let k = SigningKey::random().map_err(|e| Thrown::state(e.to_string()))?;
        let mut both = Zeroizing::new([0u8; 97]);
        both[..32].copy_from_slice(&k.to_bytes()[..]);
        both[32..].copy_from_slice(&k.verifying_key().to_uncompressed());
        arrays::write(env, &out, 0, &both[..])?;
        Ok(handles::new(Handle::Private(k)))
    })
}

/// A private key handle from d (32 bytes, in [1, n-2]); 0 with an exception otherwise.
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_sm2Private<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    d: JByteArray<'l>,
) -> jlong {
    guard(&mut env, 0, |env| {
        let k = SigningKey::from_bytes(&*d32(env, &d)?).map_err(|e| Thrown::arg(e.to_string()))?;
        Ok(handles::new(Handle::Private(k)))
    })
}

/// A public key handle from a SEC1 point (65 or 33 bytes) on the curve.
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_sm2Public<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    point: JByteArray<'l>,
) -> jlong {
    guard(&mut env, 0, |env| {
        let p = arrays::to_vec(env, &point)?;
        let k = VerifyingKey::from_sec1_bytes(&p).map_err(|e| Thrown::arg(e.to_string()))?;
        Ok(handles::new(Handle::Public(k)))
    })
}

/// The 65-byte public point of a key handle (private or public).
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_sm2Point<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    key: jlong,
) -> jbyteArray {
    guard(&mut env, std::ptr::null_mut(), |env| {
        // SAFETY: a live key handle of the caller's.
        let k = unsafe { handles::public(key)? };
        new_array(env, &k.to_uncompressed())
    })
}

/// Z = SM3(ENTL || ID || a || b || G || P) of the public key under `id`, into `out` (32).
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_sm2Z<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    key: jlong,
    id: JByteArray<'l>,
    out: JByteArray<'l>,
) {
    guard(&mut env, (), |env| {
        // SAFETY: a live key handle of the caller's.
        let k = unsafe { handles::public(key)? };
        let id = arrays::to_vec(env, &id)?;
        let z = k.z(&id).map_err(|e| Thrown::arg(e.to_string()))?;
        arrays::write(env, &out, 0, &z)
    })
}

/// Signs e (32 bytes) with the private key; the DER signature into `out` at `out_off` (room
/// for 72 bytes); its length.
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_sm2SignDigest<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    key: jlong,
    e: JByteArray<'l>,
    out: JByteArray<'l>,
    out_off: jint,
) -> jint {
    guard(&mut env, -1, |env| {
        // SAFETY: a live private key handle of the caller's.
        let k = unsafe { handles::private(key)? };
        let e: [u8; 32] = arrays::to_vec(env, &e)?
            .try_into()
            .map_err(|_| Thrown::arg("e is 32 bytes"))?;
        let sig = k
            .sign_digest(&e)
            .map_err(|e| Thrown::state(e.to_string()))?;
        let der = sig.to_der();
        arrays::write(env, &out, out_off as usize, &der)?;
        Ok(der.len() as jint)
    })
}

/// Whether `sig[off..off+len]` (DER) is the public key's signature of e.
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_sm2VerifyDigest<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    key: jlong,
    e: JByteArray<'l>,
    sig: JByteArray<'l>,
    off: jint,
    len: jint,
) -> jboolean {
    guard(&mut env, 0, |env| {
        // SAFETY: a live key handle of the caller's.
        let k = unsafe { handles::public(key)? };
        let e: [u8; 32] = arrays::to_vec(env, &e)?
            .try_into()
            .map_err(|_| Thrown::arg("e is 32 bytes"))?;
        let ok = with_input(env, &sig, off, len, |s| {
            Signature::from_der(s).is_ok_and(|s| k.verify_digest(&e, &s).is_ok())
        })?;
        Ok(ok as jboolean)
    })
}

/// Encrypts `msg[off..off+len]` to the public key in layout `fmt` (0 C1C3C2, 1 C1C2C3, 2 DER).
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_sm2Encrypt<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    key: jlong,
    msg: JByteArray<'l>,
    off: jint,
    len: jint,
    fmt: jint,
) -> jbyteArray {
    guard(&mut env, std::ptr::null_mut(), |env| {
        // SAFETY: a live key handle of the caller's.
        let k = unsafe { handles::public(key)? };
        let f = format(fmt)?;
        let ct = with_input(env, &msg, off, len, |m| k.encrypt(m, f))?
            .map_err(|e| Thrown::arg(e.to_string()))?;
        new_array(env, &ct)
    })
}

/// Decrypts `ct[off..off+len]` in layout `fmt`; null when it does not decrypt (one answer for
/// every cause).
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_sm2Decrypt<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    key: jlong,
    ct: JByteArray<'l>,
    off: jint,
    len: jint,
    fmt: jint,
) -> jbyteArray {
    guard(&mut env, std::ptr::null_mut(), |env| {
        // SAFETY: a live private key handle of the caller's.
        let k = unsafe { handles::private(key)? };
        let f = format(fmt)?;
        match with_input(env, &ct, off, len, |c| k.decrypt(c, f).map(Zeroizing::new))? {
            Ok(pt) => new_array(env, &pt),
            Err(_) => Ok(std::ptr::null_mut()),
        }
    })
}

/// ECDH: x(d Q) of the private key and the peer's public key, 32 bytes.
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_sm2Ecdh<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    key: jlong,
    peer: jlong,
) -> jbyteArray {
    guard(&mut env, std::ptr::null_mut(), |env| {
        // SAFETY: live key handles of the caller's.
        let (k, p) = unsafe { (handles::private(key)?, handles::public(peer)?) };
        let shared = k
            .diffie_hellman(p)
            .map_err(|e| Thrown::arg(e.to_string()))?;
        new_array(env, shared.as_bytes())
    })
}

/// The GB/T 32918.3 key exchange from this party's side: its static key and its ephemeral
/// d (which the exchange consumes), its role and ID, the peer's static key, ID and
/// ephemeral point; the shared key of `key_len` bytes.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_rs_shangmi_jca_Native_sm2Exchange<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    key: jlong,
    ephemeral: JByteArray<'l>,
    initiator: jboolean,
    id: JByteArray<'l>,
    peer: jlong,
    peer_id: JByteArray<'l>,
    peer_ephemeral: JByteArray<'l>,
    key_len: jint,
) -> jbyteArray {
    guard(&mut env, std::ptr::null_mut(), |env| {
        // SAFETY: live key handles of the caller's.
        let (k, p) = unsafe { (handles::private(key)?, handles::public(peer)?) };
        let r = SigningKey::from_bytes(&*d32(env, &ephemeral)?)
            .map_err(|e| Thrown::arg(format!("the ephemeral key: {e}")))?;
        let (id, peer_id) = (arrays::to_vec(env, &id)?, arrays::to_vec(env, &peer_id)?);
        let peer_r = VerifyingKey::from_sec1_bytes(&arrays::to_vec(env, &peer_ephemeral)?)
            .map_err(|e| Thrown::arg(format!("the peer's ephemeral key: {e}")))?;
        let ex = Exchange {
            role: if initiator != 0 {
                Role::Initiator
            } else {
                Role::Responder
            },
            own_id: &id,
            peer: p,
            peer_id: &peer_id,
            peer_ephemeral: &peer_r,
            key_len: usize::try_from(key_len).map_err(|_| Thrown::arg("a negative key length"))?,
        };
        let agreed = k
            .key_exchange(EphemeralSecret::from_signing_key(r), &ex)
            .map_err(|e| Thrown::arg(e.to_string()))?;
        new_array(env, agreed.key())
    })
}

/// d (32 bytes) of a private key in DER: PKCS#8 (as BouncyCastle, Kona, OpenSSL and
/// shangmi write it) or SEC1.
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_sm2PrivateFromDer<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    der: JByteArray<'l>,
) -> jbyteArray {
    guard(&mut env, std::ptr::null_mut(), |env| {
        let der = Zeroizing::new(arrays::to_vec(env, &der)?);
        let k = SigningKey::from_der(&der, None).map_err(|e| Thrown::arg(e.to_string()))?;
        new_array(env, &k.to_bytes()[..])
    })
}

/// The 65-byte point of a SubjectPublicKeyInfo (id-ecPublicKey on the SM2 curve, or the SM2
/// algorithm).
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_sm2PublicFromDer<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    der: JByteArray<'l>,
) -> jbyteArray {
    guard(&mut env, std::ptr::null_mut(), |env| {
        let der = arrays::to_vec(env, &der)?;
        let k = VerifyingKey::from_public_key_der(&der).map_err(|e| Thrown::arg(e.to_string()))?;
        new_array(env, &k.to_uncompressed())
    })
}

/// The PKCS#8 encoding of a private key handle.
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_sm2PrivateToPkcs8<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    key: jlong,
) -> jbyteArray {
    guard(&mut env, std::ptr::null_mut(), |env| {
        // SAFETY: a live private key handle of the caller's.
        let k = unsafe { handles::private(key)? };
        let der = k.to_pkcs8_der().map_err(|e| Thrown::state(e.to_string()))?;
        new_array(env, &der)
    })
}

/// The SubjectPublicKeyInfo encoding of a key handle's public key.
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_sm2PublicToSpki<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    key: jlong,
) -> jbyteArray {
    guard(&mut env, std::ptr::null_mut(), |env| {
        // SAFETY: a live key handle of the caller's.
        let k = unsafe { handles::public(key)? };
        let der = k
            .to_public_key_der()
            .map_err(|e| Thrown::state(e.to_string()))?;
        new_array(env, &der)
    })
}
