//! SM2 private keys in encrypted PKCS#8 (PBES2): written and read as OpenSSL and Tongsuo do.

use der::asn1::OctetStringRef;
use der::{Decode, Encode};
use spki::AlgorithmIdentifierRef;

use super::{
    Cipher, EncryptedPrivateKeyInfo, EncryptionParams, MAX_PBKDF2_ITERATIONS, decrypt_with,
    pbes2_encrypt,
};
use crate::sm2::encodings::keyfile::{KeyFileError, LABEL_ENCRYPTED, malformed, pem_encode};
use crate::sm2::protocols::keys::SigningKey;

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
