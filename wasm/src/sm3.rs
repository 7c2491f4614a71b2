//! SM3: one-shot and streaming hashes, HMAC-SM3, the SM2 KDF and PBKDF2-HMAC-SM3.

use wasm_bindgen::prelude::*;

use crate::fail;

/// SM3 of `data` (32 bytes).
#[wasm_bindgen]
pub fn sm3(data: &[u8]) -> Vec<u8> {
    shangmi::sm3::hash(data).to_vec()
}

/// HMAC-SM3 of `data` under `key` (32 bytes).
#[wasm_bindgen(js_name = hmacSm3)]
pub fn hmac_sm3(key: &[u8], data: &[u8]) -> Vec<u8> {
    shangmi::sm3::hmac(key, data).to_vec()
}

/// `length` bytes of the SM2 key-derivation function of `z` (GB/T 32918.4).
#[wasm_bindgen(js_name = sm3Kdf)]
pub fn sm3_kdf(z: &[u8], length: usize) -> Result<Vec<u8>, JsError> {
    shangmi::sm3::kdf(z, length).map_err(|e| fail("sm3Kdf", e))
}

/// PBKDF2-HMAC-SM3: `length` bytes from `password` and `salt` after `iterations` rounds.
#[wasm_bindgen(js_name = pbkdf2Sm3)]
pub fn pbkdf2_sm3(
    password: &[u8],
    salt: &[u8],
    iterations: u32,
    length: usize,
) -> Result<Vec<u8>, JsError> {
    let mut out = vec![0u8; length];
    shangmi::sm3::pbkdf2(password, salt, iterations, &mut out).map_err(|e| fail("pbkdf2Sm3", e))?;
    Ok(out)
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
