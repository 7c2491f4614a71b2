//! OpenSSL's ciphers as `openssl speed -evp` runs them: one context, keyed once outside the
//! timed calls, re-initialised with the IV or nonce for each message (no key schedule, and
//! the same output every call, so the agreement check holds), padding off, buffers reused.

use openssl::cipher::CipherRef;
use openssl::cipher_ctx::CipherCtx;

/// Encrypt or decrypt.
#[derive(Clone, Copy)]
pub enum Dir {
    Encrypt,
    Decrypt,
}

/// A block or stream mode (ECB, CBC, CTR) over `data`: the job writes the result into its
/// output buffer.
pub fn mode(
    cipher: &'static CipherRef,
    dir: Dir,
    key: &'static [u8],
    iv: Option<&'static [u8]>,
    data: Vec<u8>,
) -> impl FnMut(&mut [u8]) + 'static {
    let mut ctx = CipherCtx::new().expect("openssl context");
    match dir {
        Dir::Encrypt => ctx.encrypt_init(Some(cipher), Some(key), iv),
        Dir::Decrypt => ctx.decrypt_init(Some(cipher), Some(key), iv),
    }
    .expect("openssl init");
    ctx.set_padding(false);
    let mut tmp = vec![0u8; data.len() + 32];
    move |out: &mut [u8]| {
        match dir {
            Dir::Encrypt => ctx.encrypt_init(None, None, iv),
            Dir::Decrypt => ctx.decrypt_init(None, None, iv),
        }
        .expect("openssl re-init");
        let n = ctx
            .cipher_update(&data, Some(&mut tmp))
            .expect("openssl update");
        out.copy_from_slice(&tmp[..n]);
    }
}

/// GCM sealing of `data` with a fresh nonce set per call (the same one here, for the check):
/// the job writes the ciphertext into its output buffer.
pub fn gcm_seal(
    cipher: &'static CipherRef,
    key: &'static [u8],
    nonce: &'static [u8],
    aad: &'static [u8],
    data: Vec<u8>,
) -> impl FnMut(&mut [u8]) + 'static {
    let mut ctx = CipherCtx::new().expect("openssl context");
    ctx.encrypt_init(Some(cipher), Some(key), None)
        .expect("openssl init");
    let mut tmp = vec![0u8; data.len() + 32];
    let mut tag = [0u8; 16];
    move |out: &mut [u8]| {
        ctx.encrypt_init(None, None, Some(nonce))
            .expect("openssl nonce");
        ctx.cipher_update(aad, None).expect("openssl aad");
        let n = ctx
            .cipher_update(&data, Some(&mut tmp))
            .expect("openssl update");
        ctx.cipher_final(&mut tmp[n..]).expect("openssl final");
        ctx.tag(&mut tag).expect("openssl tag");
        out.copy_from_slice(&tmp[..n]);
    }
}
