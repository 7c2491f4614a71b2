//! The SM2 key envelope of GB/T 35276 (GM/T 0009's `SM2EnvelopedKey`): an SM2 key pair
//! delivered to a recipient, its private key encrypted with SM4-ECB under a fresh key that is
//! itself SM2-encrypted to the recipient, as CAs deliver encryption key pairs.
//!
//! ```text
//! SM2EnvelopedKey ::= SEQUENCE {
//!   symAlgID               AlgorithmIdentifier,  -- SM4-ECB (or the bare SM4 OID)
//!   symEncryptedKey        SM2Cipher,            -- the SM4 key, to the recipient
//!   sm2PublicKey           BIT STRING,           -- 04 || x || y of the enveloped pair
//!   sm2EncryptedPrivateKey BIT STRING }          -- d (32 bytes) under SM4-ECB, no padding
//! ```

use der::asn1::{Any, BitString};
use der::{Decode, Encode, Sequence};
use shangmi::sm2::{Format, SigningKey, VerifyingKey};
use shangmi::sm4::{Sm4, modes::ecb};
use spki::AlgorithmIdentifierOwned;
use zeroize::Zeroizing;

use crate::Error;

use crate::oid::SM4;
use crate::oid::SM4_ECB;

#[derive(Sequence)]
struct Sm2EnvelopedKey {
    sym_alg: AlgorithmIdentifierOwned,
    sym_encrypted_key: Any,
    public_key: BitString,
    encrypted_private_key: BitString,
}

/// `key` enveloped to `recipient` (DER `SM2EnvelopedKey`).
pub fn envelope_key(key: &SigningKey, recipient: &VerifyingKey) -> Result<Vec<u8>, Error> {
    let mut sym = Zeroizing::new([0u8; 16]);
    getrandom::fill(&mut sym[..]).map_err(|e| Error::Crypto(format!("random generator: {e}")))?;
    let mut d = key.to_bytes();
    ecb::encrypt(&Sm4::new(&sym), &mut d[..]).map_err(|e| Error::Crypto(e.to_string()))?;
    let wrapped = recipient
        .encrypt(&sym[..], Format::Der)
        .map_err(|e| Error::Crypto(e.to_string()))?;
    let env = Sm2EnvelopedKey {
        sym_alg: AlgorithmIdentifierOwned {
            oid: SM4_ECB,
            parameters: Some(Any::null()),
        },
        sym_encrypted_key: Any::from_der(&wrapped)?,
        public_key: BitString::from_bytes(&key.verifying_key().to_uncompressed())?,
        encrypted_private_key: BitString::from_bytes(&d[..])?,
    };
    Ok(env.to_der()?)
}

/// The key pair inside an `SM2EnvelopedKey` (DER, or PEM of any label), opened with the
/// recipient's key. Its private key must match the public key the envelope states. Any
/// failure to open is one error.
///
/// CFCA's escrowed encryption keys (see [`crate::cfca::open_escrowed_key`]) are recognised and
/// opened the same way, `recipient` then the request's temporary key.
pub fn open_enveloped_key(envelope: &[u8], recipient: &SigningKey) -> Result<SigningKey, Error> {
    if crate::cfca::is_escrowed(envelope) {
        return crate::cfca::open_escrowed_key(envelope, recipient);
    }
    let der = crate::read::der_of_any(envelope, "SM2 enveloped key")?;
    let env = Sm2EnvelopedKey::from_der(&der)?;
    if env.sym_alg.oid != SM4_ECB && env.sym_alg.oid != SM4 {
        return Err(Error::Unsupported(format!(
            "key envelope cipher {} (only SM4-ECB)",
            env.sym_alg.oid
        )));
    }
    let failed = || Error::Decryption("the key envelope does not open with this key".into());
    let sym = Zeroizing::new(
        recipient
            .decrypt(&env.sym_encrypted_key.to_der()?, Format::Der)
            .map_err(|_| failed())?,
    );
    let sym: &[u8; 16] = sym.as_slice().try_into().map_err(|_| failed())?;
    let encrypted = env
        .encrypted_private_key
        .as_bytes()
        .ok_or_else(|| Error::Malformed("private key BIT STRING with unused bits".into()))?;
    let mut d = Zeroizing::new(<[u8; 32]>::try_from(encrypted).map_err(|_| failed())?);
    ecb::decrypt(&Sm4::new(sym), &mut d[..]).map_err(|_| failed())?;
    let key = SigningKey::from_bytes(&d).map_err(|_| failed())?;
    let stated = env
        .public_key
        .as_bytes()
        .and_then(|p| VerifyingKey::from_sec1_bytes(p).ok())
        .ok_or_else(|| Error::Malformed("the enveloped public key".into()))?;
    if stated != *key.verifying_key() {
        return Err(failed());
    }
    Ok(key)
}
