//! SM4: ECB and CBC (PKCS#7 padding or none), CTR, CFB, OFB, GCM, CCM and XTS. Keys and
//! plaintexts are taken by value and wiped when the call ends; decrypted output is handed to
//! JavaScript and wiped here.

use js_sys::Uint8Array;
use shangmi::sm4::Sm4;
use shangmi::sm4::modes::{cbc, ccm::Sm4Ccm, cfb, ctr, ecb, gcm::Sm4Gcm, ofb, xts};
use wasm_bindgen::prelude::*;
use zeroize::Zeroizing;

use crate::{fail, secret_out};

fn cipher(key: &[u8]) -> Result<Sm4, JsError> {
    let k: &[u8; 16] = key
        .try_into()
        .map_err(|_| fail("SM4 key", format!("{} bytes, 16 needed", key.len())))?;
    Ok(Sm4::new(k))
}

fn block(iv: &[u8], what: &str) -> Result<[u8; 16], JsError> {
    iv.try_into()
        .map_err(|_| fail(what, format!("{} bytes, 16 needed", iv.len())))
}

/// Whole blocks, for the unpadded forms.
fn whole(data: &[u8], what: &str) -> Result<(), JsError> {
    if data.len() % 16 == 0 {
        Ok(())
    } else {
        Err(fail(
            what,
            format!(
                "{} bytes is not whole 16-byte blocks (padding is off)",
                data.len()
            ),
        ))
    }
}

/// SM4-ECB of `data` (PKCS#7 padded unless `padding` is false).
#[wasm_bindgen(js_name = sm4EncryptEcb)]
pub fn encrypt_ecb(key: Vec<u8>, data: Vec<u8>, padding: bool) -> Result<Vec<u8>, JsError> {
    let (key, mut data) = (Zeroizing::new(key), Zeroizing::new(data));
    let c = cipher(&key)?;
    if padding {
        return Ok(ecb::encrypt_padded(&c, &data));
    }
    whole(&data, "SM4-ECB")?;
    ecb::encrypt(&c, &mut data).map_err(|e| fail("SM4-ECB", e))?;
    Ok(data.to_vec())
}

/// Inverse of [`encrypt_ecb`]; a bad padding is an error and returns nothing.
#[wasm_bindgen(js_name = sm4DecryptEcb)]
pub fn decrypt_ecb(key: Vec<u8>, data: Vec<u8>, padding: bool) -> Result<Uint8Array, JsError> {
    let (key, mut data) = (Zeroizing::new(key), Zeroizing::new(data));
    let c = cipher(&key)?;
    if padding {
        let p = ecb::decrypt_padded(&c, &data).map_err(|_| fail("SM4-ECB", "bad padding"))?;
        return Ok(secret_out(Zeroizing::new(p)));
    }
    whole(&data, "SM4-ECB")?;
    ecb::decrypt(&c, &mut data).map_err(|e| fail("SM4-ECB", e))?;
    Ok(secret_out(data))
}

/// SM4-CBC of `data` under `iv` (PKCS#7 padded unless `padding` is false).
#[wasm_bindgen(js_name = sm4EncryptCbc)]
pub fn encrypt_cbc(
    key: Vec<u8>,
    iv: &[u8],
    data: Vec<u8>,
    padding: bool,
) -> Result<Vec<u8>, JsError> {
    let (key, mut data) = (Zeroizing::new(key), Zeroizing::new(data));
    let (c, iv) = (cipher(&key)?, block(iv, "SM4-CBC IV")?);
    if padding {
        return Ok(cbc::encrypt_padded(&c, &iv, &data));
    }
    whole(&data, "SM4-CBC")?;
    cbc::Encryptor::new(&c, &iv)
        .encrypt_blocks(&mut data)
        .map_err(|e| fail("SM4-CBC", e))?;
    Ok(data.to_vec())
}

/// Inverse of [`encrypt_cbc`]; a bad padding is an error and returns nothing.
#[wasm_bindgen(js_name = sm4DecryptCbc)]
pub fn decrypt_cbc(
    key: Vec<u8>,
    iv: &[u8],
    data: Vec<u8>,
    padding: bool,
) -> Result<Uint8Array, JsError> {
    let (key, mut data) = (Zeroizing::new(key), Zeroizing::new(data));
    let (c, iv) = (cipher(&key)?, block(iv, "SM4-CBC IV")?);
    if padding {
        let p = cbc::decrypt_padded(&c, &iv, &data).map_err(|_| fail("SM4-CBC", "bad padding"))?;
        return Ok(secret_out(Zeroizing::new(p)));
    }
    whole(&data, "SM4-CBC")?;
    cbc::Decryptor::new(&c, &iv)
        .decrypt_blocks(&mut data)
        .map_err(|e| fail("SM4-CBC", e))?;
    Ok(secret_out(data))
}

/// SM4-CTR keystream applied to `data` (the same call encrypts and decrypts), the IV the
/// initial 128-bit big-endian counter.
#[wasm_bindgen(js_name = sm4Ctr)]
pub fn apply_ctr(key: Vec<u8>, iv: &[u8], data: Vec<u8>) -> Result<Uint8Array, JsError> {
    let (key, mut data) = (Zeroizing::new(key), Zeroizing::new(data));
    let (c, iv) = (cipher(&key)?, block(iv, "SM4-CTR IV")?);
    ctr::apply_keystream(&c, &iv, &mut data).map_err(|e| fail("SM4-CTR", e))?;
    Ok(secret_out(data))
}

/// SM4-OFB keystream applied to `data` (encrypts and decrypts).
#[wasm_bindgen(js_name = sm4Ofb)]
pub fn apply_ofb(key: Vec<u8>, iv: &[u8], data: Vec<u8>) -> Result<Uint8Array, JsError> {
    let (key, mut data) = (Zeroizing::new(key), Zeroizing::new(data));
    let (c, iv) = (cipher(&key)?, block(iv, "SM4-OFB IV")?);
    ofb::Ofb::new(&c, &iv).apply_keystream(&mut data);
    Ok(secret_out(data))
}

/// SM4-CFB (full-block feedback) encryption of `data`.
#[wasm_bindgen(js_name = sm4EncryptCfb)]
pub fn encrypt_cfb(key: Vec<u8>, iv: &[u8], data: Vec<u8>) -> Result<Vec<u8>, JsError> {
    let (key, mut data) = (Zeroizing::new(key), Zeroizing::new(data));
    let (c, iv) = (cipher(&key)?, block(iv, "SM4-CFB IV")?);
    cfb::Cfb::new(&c, &iv).encrypt(&mut data);
    Ok(data.to_vec())
}

/// SM4-CFB decryption of `data`.
#[wasm_bindgen(js_name = sm4DecryptCfb)]
pub fn decrypt_cfb(key: Vec<u8>, iv: &[u8], data: Vec<u8>) -> Result<Uint8Array, JsError> {
    let (key, mut data) = (Zeroizing::new(key), Zeroizing::new(data));
    let (c, iv) = (cipher(&key)?, block(iv, "SM4-CFB IV")?);
    cfb::Cfb::new(&c, &iv).decrypt(&mut data);
    Ok(secret_out(data))
}

fn key16(key: &[u8]) -> Result<&[u8; 16], JsError> {
    key.try_into()
        .map_err(|_| fail("SM4 key", format!("{} bytes, 16 needed", key.len())))
}

/// SM4-GCM: ciphertext || tag (`tagLength` 12 to 16 bytes).
#[wasm_bindgen(js_name = sm4GcmEncrypt)]
pub fn gcm_encrypt(
    key: Vec<u8>,
    nonce: &[u8],
    data: Vec<u8>,
    aad: &[u8],
    tag_length: usize,
) -> Result<Vec<u8>, JsError> {
    let (key, data) = (Zeroizing::new(key), Zeroizing::new(data));
    let g = Sm4Gcm::with_tag_len(key16(&key)?, tag_length).map_err(|e| fail("SM4-GCM", e))?;
    g.encrypt(nonce, aad, &data).map_err(|e| fail("SM4-GCM", e))
}

/// Opens SM4-GCM ciphertext || tag; a tag that does not match is an error and returns
/// nothing.
#[wasm_bindgen(js_name = sm4GcmDecrypt)]
pub fn gcm_decrypt(
    key: Vec<u8>,
    nonce: &[u8],
    sealed: &[u8],
    aad: &[u8],
    tag_length: usize,
) -> Result<Uint8Array, JsError> {
    let key = Zeroizing::new(key);
    let g = Sm4Gcm::with_tag_len(key16(&key)?, tag_length).map_err(|e| fail("SM4-GCM", e))?;
    let p = g
        .decrypt(nonce, aad, sealed)
        .map_err(|_| fail("SM4-GCM", "authentication failed"))?;
    Ok(secret_out(Zeroizing::new(p)))
}

/// SM4-CCM: ciphertext || tag (nonce 7 to 13 bytes, `tagLength` 4 to 16, even).
#[wasm_bindgen(js_name = sm4CcmEncrypt)]
pub fn ccm_encrypt(
    key: Vec<u8>,
    nonce: &[u8],
    data: Vec<u8>,
    aad: &[u8],
    tag_length: usize,
) -> Result<Vec<u8>, JsError> {
    let (key, data) = (Zeroizing::new(key), Zeroizing::new(data));
    let c = Sm4Ccm::new(key16(&key)?, nonce.len(), tag_length).map_err(|e| fail("SM4-CCM", e))?;
    c.encrypt(nonce, aad, &data).map_err(|e| fail("SM4-CCM", e))
}

/// Opens SM4-CCM ciphertext || tag; a tag that does not match is an error and returns
/// nothing.
#[wasm_bindgen(js_name = sm4CcmDecrypt)]
pub fn ccm_decrypt(
    key: Vec<u8>,
    nonce: &[u8],
    sealed: &[u8],
    aad: &[u8],
    tag_length: usize,
) -> Result<Uint8Array, JsError> {
    let key = Zeroizing::new(key);
    let c = Sm4Ccm::new(key16(&key)?, nonce.len(), tag_length).map_err(|e| fail("SM4-CCM", e))?;
    let p = c
        .decrypt(nonce, aad, sealed)
        .map_err(|_| fail("SM4-CCM", "authentication failed"))?;
    Ok(secret_out(Zeroizing::new(p)))
}

fn xts_mode(key: &[u8], variant: &str) -> Result<xts::Xts, JsError> {
    let k: &[u8; 32] = key
        .try_into()
        .map_err(|_| fail("SM4-XTS key", format!("{} bytes, 32 needed", key.len())))?;
    let v = match variant {
        "ieee" => xts::Variant::Ieee,
        "gb" => xts::Variant::Gb,
        other => {
            return Err(fail(
                "SM4-XTS variant",
                format!("{other:?}: \"ieee\" or \"gb\""),
            ));
        }
    };
    xts::Xts::new(k, v).map_err(|e| fail("SM4-XTS", e))
}

/// SM4-XTS encryption of one data unit (at least 16 bytes) under a 32-byte key and `tweak`;
/// `variant` "ieee" (IEEE 1619) or "gb" (GB/T 17964-2021).
#[wasm_bindgen(js_name = sm4XtsEncrypt)]
pub fn xts_encrypt(
    key: Vec<u8>,
    tweak: &[u8],
    data: Vec<u8>,
    variant: &str,
) -> Result<Vec<u8>, JsError> {
    let (key, mut data) = (Zeroizing::new(key), Zeroizing::new(data));
    let t = block(tweak, "SM4-XTS tweak")?;
    xts_mode(&key, variant)?
        .encrypt(&t, &mut data)
        .map_err(|e| fail("SM4-XTS", e))?;
    Ok(data.to_vec())
}

/// SM4-XTS decryption of one data unit.
#[wasm_bindgen(js_name = sm4XtsDecrypt)]
pub fn xts_decrypt(
    key: Vec<u8>,
    tweak: &[u8],
    data: Vec<u8>,
    variant: &str,
) -> Result<Uint8Array, JsError> {
    let (key, mut data) = (Zeroizing::new(key), Zeroizing::new(data));
    let t = block(tweak, "SM4-XTS tweak")?;
    xts_mode(&key, variant)?
        .decrypt(&t, &mut data)
        .map_err(|e| fail("SM4-XTS", e))?;
    Ok(secret_out(data))
}
