//! Password-encrypted PKCS#8 (`EncryptedPrivateKeyInfo` with PBES2, RFC 8018).
//!
//! Written: PBKDF2 with HMAC-SM3 (or, for readers such as OpenSSL 3.0 that lack it,
//! HMAC-SHA256) and SM4-CBC. Read: PBKDF2 with HMAC-SM3 or HMAC-SHA1/224/256/384/512 (SHA-1
//! is RFC 8018's default PRF and BouncyCastle's), and SM4-CBC or AES-128/192/256-CBC
//! (OpenSSL's default is AES-256-CBC with HMAC-SHA256). The iteration count
//! of a file being read is capped, so a hostile file cannot make the reader spin; a wrong
//! password and corrupted ciphertext give the same error (CBC cannot tell them apart).

use aes::cipher::block_padding::Pkcs7;
use aes::cipher::{BlockModeDecrypt, KeyIvInit};
use der::asn1::{AnyRef, OctetStringRef};
use der::{Decode, Encode, Sequence};
use spki::AlgorithmIdentifierRef;
use zeroize::Zeroizing;

use crate::oid::{
    AES128_CBC, AES192_CBC, AES256_CBC, HMAC_SHA256, HMAC_SM3, PBES2, PBKDF2, SM4_CBC,
};
use crate::sm2::encodings::keyfile::{KeyFileError, malformed, octets};

mod key;
mod prf;
pub use prf::*;

/// The iteration count written by default.
pub const DEFAULT_PBKDF2_ITERATIONS: u32 = 100_000;
/// The most iterations a file being read may ask for, unless the caller allows more.
pub const MAX_PBKDF2_ITERATIONS: u64 = 10_000_000;

/// The PBKDF2 pseudorandom function for writing an encrypted key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Prf {
    /// HMAC-SM3 (OID 1.2.156.10197.1.401.2): the national-standard choice.
    #[default]
    HmacSm3,
    /// HMAC-SHA256: for readers without HMAC-SM3, such as OpenSSL 3.0.
    HmacSha256,
}

/// How an encrypted key is written: SM4-CBC under a PBKDF2-derived key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EncryptionParams {
    /// The PBKDF2 pseudorandom function.
    pub prf: Prf,
    /// PBKDF2 iterations, 1 to [`MAX_PBKDF2_ITERATIONS`] (what the reader accepts).
    pub iterations: u32,
}

impl Default for EncryptionParams {
    fn default() -> Self {
        EncryptionParams {
            prf: Prf::HmacSm3,
            iterations: DEFAULT_PBKDF2_ITERATIONS,
        }
    }
}

#[derive(Sequence)]
struct EncryptedPrivateKeyInfo<'a> {
    encryption_algorithm: AlgorithmIdentifierRef<'a>,
    encrypted_data: &'a OctetStringRef,
}

#[derive(Sequence)]
struct Pbes2Params<'a> {
    key_derivation_func: AlgorithmIdentifierRef<'a>,
    encryption_scheme: AlgorithmIdentifierRef<'a>,
}

#[derive(Sequence)]
struct Pbkdf2Params<'a> {
    salt: &'a OctetStringRef,
    iteration_count: u64,
    key_length: Option<u64>,
    prf: Option<AlgorithmIdentifierRef<'a>>,
}

fn derive_key(
    prf: Pbkdf2Prf,
    password: &[u8],
    salt: &[u8],
    iterations: u32,
    key: &mut [u8],
) -> Result<(), KeyFileError> {
    prf.pbkdf2(password, salt, iterations, key)
}

fn cbc_decrypt<C>(key: &[u8], iv: &[u8], data: &[u8]) -> Option<Zeroizing<Vec<u8>>>
where
    C: aes::cipher::BlockCipherDecrypt + aes::cipher::KeyInit,
{
    let mut buf = Zeroizing::new(data.to_vec());
    let dec = cbc::Decryptor::<C>::new_from_slices(key, iv).ok()?;
    let n = dec.decrypt_padded::<Pkcs7>(&mut buf).ok()?.len();
    buf.truncate(n);
    Some(buf)
}

/// The cipher of a PBES2 encryption being written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Cipher {
    /// SM4-CBC (OID 1.2.156.10197.1.104.2).
    #[default]
    Sm4Cbc,
    /// AES-256-CBC: OpenSSL's default, for readers without SM4.
    Aes256Cbc,
}

/// PBES2 (RFC 8018) decryption: `algorithm` is the AlgorithmIdentifier (DER) naming PBES2 and
/// its parameters, `data` the ciphertext. `Ok(None)` when the padding does not check: a wrong
/// password or damaged data, which the caller reports as one error together with a plaintext
/// it cannot read (telling them apart would make it an oracle on the decrypted bytes). At most
/// `max_iterations` PBKDF2 iterations are run.
pub fn pbes2_decrypt(
    algorithm: &[u8],
    password: &[u8],
    data: &[u8],
    max_iterations: u64,
) -> Result<Option<Zeroizing<Vec<u8>>>, KeyFileError> {
    let alg = AlgorithmIdentifierRef::from_der(algorithm).map_err(malformed("PBES2 algorithm"))?;
    decrypt_with(alg, password, data, max_iterations)
}

fn decrypt_with(
    alg: AlgorithmIdentifierRef<'_>,
    password: &[u8],
    data: &[u8],
    max_iterations: u64,
) -> Result<Option<Zeroizing<Vec<u8>>>, KeyFileError> {
    if alg.oid != PBES2 {
        return Err(KeyFileError::Unsupported(format!(
            "encryption scheme {} (only PBES2 is read)",
            alg.oid
        )));
    }
    let params: Pbes2Params<'_> = alg
        .parameters
        .ok_or(KeyFileError::Malformed("PBES2 without parameters"))?
        .decode_as()
        .map_err(malformed("PBES2 parameters"))?;
    let kdf = params.key_derivation_func;
    if kdf.oid != PBKDF2 {
        return Err(KeyFileError::Unsupported(format!(
            "key derivation {} (only PBKDF2 is read)",
            kdf.oid
        )));
    }
    let kdf_params: Pbkdf2Params<'_> = kdf
        .parameters
        .ok_or(KeyFileError::Malformed("PBKDF2 without parameters"))?
        .decode_as()
        .map_err(malformed("PBKDF2 parameters"))?;
    let prf = Pbkdf2Prf::from_params(kdf_params.prf)?;
    let iterations = kdf_params.iteration_count;
    if iterations == 0 {
        return Err(KeyFileError::Malformed("PBKDF2 iteration count of 0"));
    }
    if iterations > max_iterations || iterations > u64::from(u32::MAX) {
        return Err(KeyFileError::TooManyIterations(iterations));
    }
    let scheme = params.encryption_scheme;
    let key_len = match scheme.oid {
        o if o == SM4_CBC || o == AES128_CBC => 16,
        o if o == AES192_CBC => 24,
        o if o == AES256_CBC => 32,
        o => return Err(KeyFileError::Unsupported(format!("cipher {o}"))),
    };
    if kdf_params.key_length.is_some_and(|l| l != key_len as u64) {
        return Err(KeyFileError::Malformed(
            "PBKDF2 key length does not fit the cipher",
        ));
    }
    let iv = octets(
        scheme
            .parameters
            .ok_or(KeyFileError::Malformed("cipher without IV"))?,
        "cipher IV",
    )?;
    if iv.len() != 16 {
        return Err(KeyFileError::Malformed("IV is not 16 bytes"));
    }
    if data.is_empty() || !data.len().is_multiple_of(16) {
        return Err(KeyFileError::Malformed(
            "encrypted data is not whole blocks",
        ));
    }
    let mut key = Zeroizing::new(vec![0u8; key_len]);
    derive_key(
        prf,
        password,
        kdf_params.salt.as_bytes(),
        iterations as u32,
        &mut key,
    )?;
    let plain = if scheme.oid == SM4_CBC {
        let cipher = crate::sm4::Sm4::new(key[..].try_into().expect("16 bytes"));
        crate::sm4::modes::cbc::decrypt_padded(&cipher, iv.try_into().expect("16 bytes"), data)
            .ok()
            .map(Zeroizing::new)
    } else {
        match key_len {
            16 => cbc_decrypt::<aes::Aes128>(&key, iv, data),
            24 => cbc_decrypt::<aes::Aes192>(&key, iv, data),
            _ => cbc_decrypt::<aes::Aes256>(&key, iv, data),
        }
    };
    Ok(plain)
}

/// PBES2 encryption of `plain` under `password`: PBKDF2 with `prf`, `cipher`, a fresh 16-byte
/// salt and IV. Returns the AlgorithmIdentifier (DER) and the ciphertext.
pub fn pbes2_encrypt(
    password: &[u8],
    plain: &[u8],
    prf: Prf,
    cipher: Cipher,
    iterations: u32,
) -> Result<(Vec<u8>, Vec<u8>), KeyFileError> {
    // What this library's own reader would refuse is data locked out for good.
    if iterations == 0 {
        return Err(KeyFileError::Malformed("PBKDF2 iteration count of 0"));
    }
    if u64::from(iterations) > MAX_PBKDF2_ITERATIONS {
        return Err(KeyFileError::TooManyIterations(iterations.into()));
    }
    let mut salt_iv = [0u8; 32];
    getrandom::fill(&mut salt_iv).map_err(|_| KeyFileError::Rng)?;
    let (salt, iv) = salt_iv.split_at(16);
    let iv16: &[u8; 16] = iv.try_into().expect("16 bytes");
    let (data, cipher_oid) = match cipher {
        Cipher::Sm4Cbc => {
            let mut key = Zeroizing::new([0u8; 16]);
            derive_key(prf.into(), password, salt, iterations, &mut key[..])?;
            let c = crate::sm4::Sm4::new(&key);
            (
                crate::sm4::modes::cbc::encrypt_padded(&c, iv16, plain),
                SM4_CBC,
            )
        }
        Cipher::Aes256Cbc => {
            use aes::cipher::BlockModeEncrypt;
            let mut key = Zeroizing::new([0u8; 32]);
            derive_key(prf.into(), password, salt, iterations, &mut key[..])?;
            let enc = cbc::Encryptor::<aes::Aes256>::new_from_slices(&key[..], iv)
                .map_err(|_| KeyFileError::Malformed("AES key"))?;
            (enc.encrypt_padded_vec::<Pkcs7>(plain), AES256_CBC)
        }
    };
    let enc = |_: der::Error| KeyFileError::Malformed("encoding PBES2 parameters");
    // HMAC-SM3 with its parameters absent, as GmSSL writes it and requires; HMAC-SHA256 with
    // NULL, as OpenSSL writes it. Both forms are read.
    let (prf_oid, prf_params) = match prf {
        Prf::HmacSm3 => (HMAC_SM3, None),
        Prf::HmacSha256 => (HMAC_SHA256, Some(AnyRef::NULL)),
    };
    let kdf_params = Pbkdf2Params {
        salt: OctetStringRef::new(salt).map_err(enc)?,
        iteration_count: u64::from(iterations),
        key_length: None,
        prf: Some(AlgorithmIdentifierRef {
            oid: prf_oid,
            parameters: prf_params,
        }),
    }
    .to_der()
    .map_err(enc)?;
    let iv_der = OctetStringRef::new(iv)
        .map_err(enc)?
        .to_der()
        .map_err(enc)?;
    let pbes2 = Pbes2Params {
        key_derivation_func: AlgorithmIdentifierRef {
            oid: PBKDF2,
            parameters: Some(AnyRef::from_der(&kdf_params).map_err(enc)?),
        },
        encryption_scheme: AlgorithmIdentifierRef {
            oid: cipher_oid,
            parameters: Some(AnyRef::from_der(&iv_der).map_err(enc)?),
        },
    }
    .to_der()
    .map_err(enc)?;
    let alg = AlgorithmIdentifierRef {
        oid: PBES2,
        parameters: Some(AnyRef::from_der(&pbes2).map_err(enc)?),
    }
    .to_der()
    .map_err(enc)?;
    Ok((alg, data))
}

/// Whether `der` is structurally an `EncryptedPrivateKeyInfo` (without decrypting it): lets a
/// reader of DER files know to ask for a password.
pub fn is_encrypted_pkcs8_der(der: &[u8]) -> bool {
    EncryptedPrivateKeyInfo::from_der(der).is_ok()
}
