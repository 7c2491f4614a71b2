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
    AES128_CBC, AES192_CBC, AES256_CBC, HMAC_SHA1, HMAC_SHA224, HMAC_SHA256, HMAC_SHA384,
    HMAC_SHA512, HMAC_SM3, HMAC_SM3_OPENSSL, PBES2, PBKDF2, SM4_CBC,
};
use crate::sm2::encodings::keyfile::{
    KeyFileError, LABEL_ENCRYPTED, malformed, null_or_absent, octets, pem_encode,
};
use crate::sm2::protocols::keys::SigningKey;

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

/// The PBKDF2 PRFs (HMAC with a hash) a file being read may name: the one table of them, which
/// shangmi-pki's PKCS#12 reads its PBKDF2 and PBMAC1 parameters with too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pbkdf2Prf {
    /// HMAC-SM3 (1.2.156.10197.1.401.2, or OpenSSL's 1.2.156.10197.1.401.3.1).
    Sm3,
    /// HMAC-SHA1 (also what an absent PRF means, RFC 8018).
    Sha1,
    /// HMAC-SHA224.
    Sha224,
    /// HMAC-SHA256.
    Sha256,
    /// HMAC-SHA384.
    Sha384,
    /// HMAC-SHA512.
    Sha512,
}

impl Pbkdf2Prf {
    /// The PRF an HMAC OID names, if it is one of these.
    pub fn from_oid(oid: &der::asn1::ObjectIdentifier) -> Option<Self> {
        Some(match *oid {
            o if o == HMAC_SM3 || o == HMAC_SM3_OPENSSL => Pbkdf2Prf::Sm3,
            o if o == HMAC_SHA1 => Pbkdf2Prf::Sha1,
            o if o == HMAC_SHA224 => Pbkdf2Prf::Sha224,
            o if o == HMAC_SHA256 => Pbkdf2Prf::Sha256,
            o if o == HMAC_SHA384 => Pbkdf2Prf::Sha384,
            o if o == HMAC_SHA512 => Pbkdf2Prf::Sha512,
            _ => return None,
        })
    }

    /// Its name: "HMAC-SM3", "HMAC-SHA256", ...
    pub fn name(self) -> &'static str {
        match self {
            Pbkdf2Prf::Sm3 => "HMAC-SM3",
            Pbkdf2Prf::Sha1 => "HMAC-SHA1",
            Pbkdf2Prf::Sha224 => "HMAC-SHA224",
            Pbkdf2Prf::Sha256 => "HMAC-SHA256",
            Pbkdf2Prf::Sha384 => "HMAC-SHA384",
            Pbkdf2Prf::Sha512 => "HMAC-SHA512",
        }
    }

    /// The PRF of a PBKDF2 parameter block: absent means HMAC-SHA1 (RFC 8018).
    fn from_params(prf: Option<AlgorithmIdentifierRef<'_>>) -> Result<Self, KeyFileError> {
        let Some(p) = prf else {
            return Ok(Pbkdf2Prf::Sha1);
        };
        if !null_or_absent(p.parameters) {
            return Err(KeyFileError::Malformed("PBKDF2 PRF parameters"));
        }
        Pbkdf2Prf::from_oid(&p.oid)
            .ok_or_else(|| KeyFileError::Unsupported(format!("PBKDF2 PRF {}", p.oid)))
    }

    /// PBKDF2 with this PRF into `out`; an error only for zero iterations.
    pub fn pbkdf2(
        self,
        password: &[u8],
        salt: &[u8],
        iterations: u32,
        out: &mut [u8],
    ) -> Result<(), KeyFileError> {
        use pbkdf2::pbkdf2_hmac;
        if iterations == 0 {
            return Err(KeyFileError::Malformed("PBKDF2 parameters"));
        }
        match self {
            Pbkdf2Prf::Sm3 => {
                return crate::sm3::pbkdf2(password, salt, iterations, out)
                    .map_err(|_| KeyFileError::Malformed("PBKDF2 parameters"));
            }
            Pbkdf2Prf::Sha1 => pbkdf2_hmac::<sha1::Sha1>(password, salt, iterations, out),
            Pbkdf2Prf::Sha224 => pbkdf2_hmac::<sha2::Sha224>(password, salt, iterations, out),
            Pbkdf2Prf::Sha256 => pbkdf2_hmac::<sha2::Sha256>(password, salt, iterations, out),
            Pbkdf2Prf::Sha384 => pbkdf2_hmac::<sha2::Sha384>(password, salt, iterations, out),
            Pbkdf2Prf::Sha512 => pbkdf2_hmac::<sha2::Sha512>(password, salt, iterations, out),
        }
        Ok(())
    }

    /// The HMAC itself, of `data` under `key`.
    pub fn hmac(self, key: &[u8], data: &[u8]) -> Vec<u8> {
        use hmac::{KeyInit, Mac};
        fn with<M: Mac + KeyInit>(key: &[u8], data: &[u8]) -> Vec<u8> {
            let mut m = <M as KeyInit>::new_from_slice(key).expect("HMAC takes any key");
            m.update(data);
            m.finalize().into_bytes().to_vec()
        }
        match self {
            Pbkdf2Prf::Sm3 => crate::sm3::hmac(key, data).to_vec(),
            Pbkdf2Prf::Sha1 => with::<hmac::Hmac<sha1::Sha1>>(key, data),
            Pbkdf2Prf::Sha224 => with::<hmac::Hmac<sha2::Sha224>>(key, data),
            Pbkdf2Prf::Sha256 => with::<hmac::Hmac<sha2::Sha256>>(key, data),
            Pbkdf2Prf::Sha384 => with::<hmac::Hmac<sha2::Sha384>>(key, data),
            Pbkdf2Prf::Sha512 => with::<hmac::Hmac<sha2::Sha512>>(key, data),
        }
    }
}

impl From<Prf> for Pbkdf2Prf {
    fn from(p: Prf) -> Self {
        match p {
            Prf::HmacSm3 => Pbkdf2Prf::Sm3,
            Prf::HmacSha256 => Pbkdf2Prf::Sha256,
        }
    }
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

impl SigningKey {
    /// Reads an encrypted PKCS#8 key (`EncryptedPrivateKeyInfo` DER), allowing at most
    /// [`MAX_PBKDF2_ITERATIONS`].
    pub fn from_pkcs8_encrypted_der(der: &[u8], password: &[u8]) -> Result<Self, KeyFileError> {
        Self::from_pkcs8_encrypted_der_with_limit(der, password, MAX_PBKDF2_ITERATIONS)
    }

    /// Reads an encrypted PKCS#8 key, allowing at most `max_iterations` PBKDF2 iterations.
    pub fn from_pkcs8_encrypted_der_with_limit(
        der: &[u8],
        password: &[u8],
        max_iterations: u64,
    ) -> Result<Self, KeyFileError> {
        let info =
            EncryptedPrivateKeyInfo::from_der(der).map_err(malformed("EncryptedPrivateKeyInfo"))?;
        let plain = decrypt_with(
            info.encryption_algorithm,
            password,
            info.encrypted_data.as_bytes(),
            max_iterations,
        )?;
        // Past this point every failure is the same error: bad padding, a plaintext that does
        // not parse, names an algorithm or holds an invalid key all mean a wrong password or
        // damaged data, and telling them apart (or echoing what the plaintext holds) would make
        // the reader an oracle on the decrypted bytes.
        plain
            .and_then(|p| Self::from_pkcs8_der(&p).ok())
            .ok_or(KeyFileError::WrongPassword)
    }

    /// Reads encrypted PKCS#8 PEM (`ENCRYPTED PRIVATE KEY`).
    pub fn from_pkcs8_encrypted_pem(pem: &str, password: &[u8]) -> Result<Self, KeyFileError> {
        let (_, der) = crate::pem::select(pem, &[LABEL_ENCRYPTED])?;
        Self::from_pkcs8_encrypted_der(&der, password)
    }

    /// Encrypted PKCS#8 DER: PBES2 with PBKDF2 (HMAC-SM3 by default) and SM4-CBC, a fresh
    /// 16-byte salt and IV.
    pub fn to_pkcs8_encrypted_der(
        &self,
        password: &[u8],
        params: EncryptionParams,
    ) -> Result<Vec<u8>, KeyFileError> {
        let plain = self.to_pkcs8_der()?;
        let (alg, data) = pbes2_encrypt(
            password,
            &plain,
            params.prf,
            Cipher::Sm4Cbc,
            params.iterations,
        )?;
        let enc = |_: der::Error| KeyFileError::Malformed("encoding the encrypted key");
        EncryptedPrivateKeyInfo {
            encryption_algorithm: AlgorithmIdentifierRef::from_der(&alg).map_err(enc)?,
            encrypted_data: OctetStringRef::new(&data).map_err(enc)?,
        }
        .to_der()
        .map_err(enc)
    }

    /// Encrypted PKCS#8 PEM (`-----BEGIN ENCRYPTED PRIVATE KEY-----`).
    pub fn to_pkcs8_encrypted_pem(
        &self,
        password: &[u8],
        params: EncryptionParams,
    ) -> Result<String, KeyFileError> {
        Ok(pem_encode(
            LABEL_ENCRYPTED,
            &self.to_pkcs8_encrypted_der(password, params)?,
        )
        .to_string())
    }
}
