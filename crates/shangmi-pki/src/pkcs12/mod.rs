//! PKCS#12 keystores (RFC 7292) holding SM2 keys and their certificates, as OpenSSL, Tongsuo,
//! BouncyCastle and Java's keytool write and read them.
//!
//! Read: the MAC (HMAC with SHA-1, SHA-256 or SM3 under the PKCS#12 key derivation) checked
//! before anything is decrypted; key bags plain or shrouded (PBES2: PBKDF2 with HMAC-SM3 or
//! HMAC-SHA*, SM4-CBC or AES-CBC), certificate bags plain or in PBES2-encrypted SafeContents,
//! DER or BER (Java writes indefinite lengths); friendly names and local key IDs kept. The
//! legacy PKCS#12 PBEs (3DES, RC2 with SHA-1: Java's and BouncyCastle's defaults, OpenSSL 1.x)
//! are read, not written.
//! Written: one shrouded key bag per key and the certificates in one encrypted SafeContents,
//! PBES2 with the chosen PRF and cipher (SM4-CBC under hmacWithSHA256 by default, as OpenSSL
//! and Tongsuo write and read it), and a MAC with SM3 or SHA-256.
//!
//! A wrong password, a failed MAC and a damaged file are one error
//! ([`Error::Decryption`]), and nothing is returned with it.

use der::asn1::{Any, BmpString, ObjectIdentifier, OctetString, SetOfVec};
use der::{Decode, Encode, Sequence};
use shangmi::sm2::{Cipher, Prf, SigningKey};
use spki::AlgorithmIdentifierOwned;
use subtle::ConstantTimeEq;
use x509_cert::attr::Attribute;
use zeroize::Zeroizing;

use crate::Error;

use crate::oid::CERT_BAG;
use crate::oid::DATA;
use crate::oid::ENCRYPTED_DATA;
use crate::oid::FRIENDLY_NAME;
use crate::oid::KEY_BAG;
use crate::oid::LOCAL_KEY_ID;
use crate::oid::PBES2;
use crate::oid::PBMAC1;
use crate::oid::SHA1;
use crate::oid::SHA256;
use crate::oid::SHROUDED_KEY_BAG;
use crate::oid::SM3;
use crate::oid::X509_CERTIFICATE as X509_CERT;

mod asn1;
mod mac;
mod pbe;
mod read;
#[cfg(test)]
mod tests;
mod write;

use asn1::*;
pub use mac::MacHash;
use mac::*;
use pbe::*;
pub use read::{read, read_with_limit};
pub use write::{Pkcs12Entry, Pkcs12Params, write};

/// What a bag says of itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BagAttributes {
    /// `friendlyName`, the alias keytool shows.
    pub friendly_name: Option<String>,
    /// `localKeyId`, which pairs a key with its certificate.
    pub local_key_id: Option<Vec<u8>>,
}

/// A key read from a keystore.
pub struct Pkcs12Key {
    /// The key.
    pub key: SigningKey,
    /// Its attributes.
    pub attributes: BagAttributes,
    /// How it was protected: "PBES2 (PBKDF2 hmacWithSM3, SM4-CBC)", "none", ...
    pub protection: String,
}

/// A certificate read from a keystore, as the bytes it was stored as.
pub struct Pkcs12Cert {
    /// The certificate's DER.
    pub der: Vec<u8>,
    /// Its attributes.
    pub attributes: BagAttributes,
    /// How its SafeContents was protected.
    pub protection: String,
}

/// A keystore's contents.
pub struct Pkcs12 {
    /// The keys, in file order.
    pub keys: Vec<Pkcs12Key>,
    /// The certificates, in file order.
    pub certs: Vec<Pkcs12Cert>,
    /// The MAC: "SM3, 2048 iterations", "SHA-256, ...", or "none".
    pub mac: String,
}

/// A key with its certificate chain: its own certificate first (found by local key ID, else by
/// public key), then the certificates that belong to no key (the CAs).
pub struct KeyWithChain {
    /// The key.
    pub key: SigningKey,
    /// The chain's DER, leaf first.
    pub chain: Vec<Vec<u8>>,
    /// The key's alias.
    pub alias: Option<String>,
}

impl Pkcs12 {
    /// Each key with its chain, in file order: what a server serves from a keystore.
    pub fn key_chains(self) -> Result<Vec<KeyWithChain>, Error> {
        let public_of = |der: &[u8]| {
            crate::Certificate::from_der(der).ok().and_then(|c| {
                crate::public_key(c.tbs_certificate().subject_public_key_info())
                    .ok()
                    .map(|k| k.to_uncompressed())
            })
        };
        let mut claimed = vec![false; self.certs.len()];
        let mut found = Vec::new();
        for k in self.keys {
            let own = k.key.verifying_key().to_uncompressed();
            let by_id = self.certs.iter().position(|c| {
                c.attributes.local_key_id.is_some()
                    && c.attributes.local_key_id == k.attributes.local_key_id
            });
            let i = by_id
                .filter(|&i| public_of(&self.certs[i].der) == Some(own))
                .or_else(|| {
                    self.certs
                        .iter()
                        .position(|c| public_of(&c.der) == Some(own))
                })
                .ok_or_else(|| {
                    Error::InvalidArgument("a key in the keystore has no certificate".into())
                })?;
            claimed[i] = true;
            found.push((k, i));
        }
        let rest: Vec<Vec<u8>> = self
            .certs
            .iter()
            .zip(&claimed)
            .filter(|(c, claimed)| !**claimed && c.attributes.local_key_id.is_none())
            .map(|(c, _)| c.der.clone())
            .collect();
        Ok(found
            .into_iter()
            .map(|(k, i)| {
                let mut chain = vec![self.certs[i].der.clone()];
                chain.extend(rest.iter().cloned());
                KeyWithChain {
                    key: k.key,
                    chain,
                    alias: k.attributes.friendly_name,
                }
            })
            .collect())
    }

    /// A TLCP pair from a keystore: the keys aliased "sign" and "enc", else the first and the
    /// second key. `(sign, enc)`.
    pub fn tlcp_pair(self) -> Result<(KeyWithChain, KeyWithChain), Error> {
        let mut keys = self.key_chains()?;
        if keys.len() < 2 {
            return Err(Error::InvalidArgument(
                "a TLCP keystore holds two keys (sign and enc)".into(),
            ));
        }
        let pos = |name: &str, keys: &[KeyWithChain]| {
            keys.iter().position(|k| k.alias.as_deref() == Some(name))
        };
        let sign = keys.remove(pos("sign", &keys).unwrap_or(0));
        let enc = keys.remove(pos("enc", &keys).unwrap_or(0));
        Ok((sign, enc))
    }
}

pub(super) fn failed() -> Error {
    Error::Decryption("wrong password, or the file is damaged (the MAC does not verify)".into())
}

pub(super) fn malformed(what: &str) -> impl Fn(der::Error) -> Error + '_ {
    move |e| Error::Malformed(format!("PKCS#12 {what}: {e}"))
}

pub(super) fn attributes(set: Option<&SetOfVec<Attribute>>) -> BagAttributes {
    let mut out = BagAttributes::default();
    for a in set.iter().flat_map(|s| s.iter()) {
        let Some(v) = a.values.iter().next() else {
            continue;
        };
        if a.oid == FRIENDLY_NAME {
            out.friendly_name = v.decode_as::<BmpString>().ok().map(|b| b.to_string());
        } else if a.oid == LOCAL_KEY_ID {
            out.local_key_id = v
                .decode_as::<OctetString>()
                .ok()
                .map(|o| o.as_bytes().to_vec());
        }
    }
    out
}
