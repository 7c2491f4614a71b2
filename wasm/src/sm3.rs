//! SM3: one-shot and streaming hashes, HMAC-SM3, the SM2 KDF and PBKDF2-HMAC-SM3.

use js_sys::Uint8Array;
use wasm_bindgen::prelude::*;
use zeroize::Zeroizing;

use crate::{fail, secret_out};

/// SM3 of `data` (32 bytes).
#[wasm_bindgen]
pub fn sm3(data: &[u8]) -> Vec<u8> {
    shangmi::sm3::hash(data).to_vec()
}

/// HMAC-SM3 of `data` under `key` (32 bytes).
#[wasm_bindgen(js_name = hmacSm3)]
pub fn hmac_sm3(key: Vec<u8>, data: &[u8]) -> Vec<u8> {
    let key = Zeroizing::new(key);
    shangmi::sm3::hmac(&key, data).to_vec()
}

/// A zeroed buffer of `length` bytes, or an error (not an abort that would leave the module
/// unusable) when the module cannot have that much memory.
fn buffer(length: usize, what: &str) -> Result<Vec<u8>, JsError> {
    let mut out = Vec::new();
    out.try_reserve_exact(length).map_err(|_| {
        fail(
            what,
            format!("{length} bytes is more memory than the module has"),
        )
    })?;
    out.resize(length, 0);
    Ok(out)
}

/// `length` bytes of the SM2 key-derivation function of `z` (GB/T 32918.4).
#[wasm_bindgen(js_name = sm3Kdf)]
pub fn sm3_kdf(z: Vec<u8>, length: usize) -> Result<Uint8Array, JsError> {
    let z = Zeroizing::new(z);
    let mut out = Zeroizing::new(buffer(length, "sm3Kdf")?);
    shangmi::sm3::kdf_into(&z, &mut out).map_err(|e| fail("sm3Kdf", e))?;
    Ok(secret_out(out))
}

/// PBKDF2-HMAC-SM3: `length` bytes from `password` and `salt` after `iterations` rounds.
#[wasm_bindgen(js_name = pbkdf2Sm3)]
pub fn pbkdf2_sm3(
    password: Vec<u8>,
    salt: &[u8],
    iterations: u32,
    length: usize,
) -> Result<Uint8Array, JsError> {
    let password = Zeroizing::new(password);
    let mut out = Zeroizing::new(buffer(length, "pbkdf2Sm3")?);
    shangmi::sm3::pbkdf2(&password, salt, iterations, &mut out)
        .map_err(|e| fail("pbkdf2Sm3", e))?;
    Ok(secret_out(out))
}

/// A streaming SM3 hash: `update` as often as needed, then `digest` (which resets it).
#[wasm_bindgen(js_name = Sm3)]
pub struct Sm3Hasher {
    inner: shangmi::sm3::Sm3,
}

#[wasm_bindgen(js_class = Sm3)]
impl Sm3Hasher {
    #[wasm_bindgen(constructor)]
    pub fn new() -> Sm3Hasher {
        Sm3Hasher {
            inner: shangmi::sm3::Sm3::new(),
        }
    }

    /// Absorbs `data`; returns the hasher, for chaining.
    pub fn update(&mut self, data: &[u8]) {
        self.inner.update(data);
    }

    /// The digest of everything absorbed; the hasher starts again empty.
    pub fn digest(&mut self) -> Vec<u8> {
        self.inner.finalize_reset().to_vec()
    }
}

impl Default for Sm3Hasher {
    fn default() -> Self {
        Self::new()
    }
}
