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

/// The most iterations a file being read may ask for (MAC and PBKDF2).
const MAX_ITERATIONS: u64 = 10_000_000;

#[derive(Sequence)]
struct Pfx {
    version: u8,
    auth_safe: cms::content_info::ContentInfo,
    mac_data: Option<MacData>,
}

#[derive(Sequence)]
struct MacData {
    mac: DigestInfo,
    mac_salt: OctetString,
    #[asn1(default = "one")]
    iterations: u64,
}

fn one() -> u64 {
    1
}

#[derive(Sequence)]
struct DigestInfo {
    algorithm: AlgorithmIdentifierOwned,
    digest: OctetString,
}

#[derive(Sequence)]
struct SafeBag {
    bag_id: ObjectIdentifier,
    #[asn1(context_specific = "0", tag_mode = "EXPLICIT")]
    bag_value: Any,
    bag_attributes: Option<SetOfVec<Attribute>>,
}

#[derive(Sequence)]
struct CertBag {
    cert_id: ObjectIdentifier,
    #[asn1(context_specific = "0", tag_mode = "EXPLICIT")]
    cert_value: OctetString,
}

#[derive(Sequence)]
struct EncryptedPrivateKeyInfo {
    algorithm: Any,
    data: OctetString,
}

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

/// The hashes of PKCS#12 MACs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MacHash {
    /// SM3 (OpenSSL and Tongsuo `-macalg SM3`).
    Sm3,
    /// SHA-256 (OpenSSL 3's default).
    Sha256,
    /// SHA-1 (read only: older files).
    Sha1,
}

impl MacHash {
    fn name(self) -> &'static str {
        match self {
            MacHash::Sm3 => "SM3",
            MacHash::Sha256 => "SHA-256",
            MacHash::Sha1 => "SHA-1",
        }
    }

    fn oid(self) -> ObjectIdentifier {
        match self {
            MacHash::Sm3 => SM3,
            MacHash::Sha256 => SHA256,
            MacHash::Sha1 => SHA1,
        }
    }

    fn hash(self, parts: &[&[u8]]) -> Vec<u8> {
        use sha2::Digest;
        match self {
            MacHash::Sm3 => {
                let mut h = shangmi::sm3::Sm3::new();
                for p in parts {
                    h.update(p);
                }
                h.finalize().to_vec()
            }
            MacHash::Sha256 => {
                let mut h = sha2::Sha256::new();
                for p in parts {
                    h.update(p);
                }
                h.finalize().to_vec()
            }
            MacHash::Sha1 => {
                let mut h = sha1::Sha1::new();
                for p in parts {
                    h.update(p);
                }
                h.finalize().to_vec()
            }
        }
    }

    fn hmac(self, key: &[u8], data: &[u8]) -> Vec<u8> {
        match self {
            MacHash::Sm3 => Hmac::Sm3,
            MacHash::Sha256 => Hmac::Sha256,
            MacHash::Sha1 => Hmac::Sha1,
        }
        .mac(key, data)
    }

    /// Output bytes (u) and block bytes (v) of RFC 7292 appendix B.
    fn sizes(self) -> (usize, usize) {
        match self {
            MacHash::Sm3 | MacHash::Sha256 => (32, 64),
            MacHash::Sha1 => (20, 64),
        }
    }
}

/// The password as PKCS#12 derives keys from it: BMPString, big-endian, with a final zero.
fn bmp_password(password: &[u8]) -> Result<Zeroizing<Vec<u8>>, Error> {
    let text = std::str::from_utf8(password)
        .map_err(|_| Error::InvalidArgument("the password is not UTF-8".into()))?;
    let mut out = Zeroizing::new(Vec::with_capacity(2 * text.len() + 2));
    for unit in text.encode_utf16() {
        out.extend_from_slice(&unit.to_be_bytes());
    }
    out.extend_from_slice(&[0, 0]);
    Ok(out)
}

/// RFC 7292 appendix B.2: `n` bytes of key material of purpose `id` (3: MAC key).
fn pkcs12_kdf(
    hash: MacHash,
    password: &[u8],
    salt: &[u8],
    iterations: u64,
    id: u8,
    n: usize,
) -> Zeroizing<Vec<u8>> {
    let (u, v) = hash.sizes();
    let d = vec![id; v];
    let fill = |src: &[u8]| -> Vec<u8> {
        if src.is_empty() {
            return Vec::new();
        }
        let len = v * src.len().div_ceil(v);
        src.iter().copied().cycle().take(len).collect()
    };
    let mut i = Zeroizing::new([fill(salt), fill(password)].concat());
    let mut out = Zeroizing::new(Vec::with_capacity(n + u));
    while out.len() < n {
        // A and B are key material derived from the password: wiped when dropped.
        let mut a = Zeroizing::new(hash.hash(&[&d, &i]));
        for _ in 1..iterations {
            a = Zeroizing::new(hash.hash(&[&a]));
        }
        out.extend_from_slice(&a);
        if out.len() >= n {
            break;
        }
        let b: Zeroizing<Vec<u8>> = Zeroizing::new(a.iter().copied().cycle().take(v).collect());
        for block in i.chunks_mut(v) {
            // block = block + b + 1, big-endian, mod 2^(8v).
            let mut carry = 1u16;
            for (x, y) in block.iter_mut().zip(b.iter()).rev() {
                let s = u16::from(*x) + u16::from(*y) + carry;
                *x = s as u8;
                carry = s >> 8;
            }
        }
    }
    out.truncate(n);
    out
}

fn mac_of(
    hash: MacHash,
    password: &[u8],
    salt: &[u8],
    iterations: u64,
    data: &[u8],
) -> Result<Vec<u8>, Error> {
    let bmp = bmp_password(password)?;
    let key = pkcs12_kdf(hash, &bmp, salt, iterations, 3, hash.sizes().0);
    Ok(hash.hmac(&key, data))
}

/// The MAC of RFC 7292 (HMAC keyed by PKCS#12's own key derivation) of `data`, and its
/// description.
fn classic_mac(
    m: &MacData,
    password: &[u8],
    data: &[u8],
    max_iterations: u64,
) -> Result<(Zeroizing<Vec<u8>>, String), Error> {
    let hash = match m.mac.algorithm.oid {
        o if o == SM3 => MacHash::Sm3,
        o if o == SHA256 => MacHash::Sha256,
        o if o == SHA1 => MacHash::Sha1,
        o => return Err(Error::Unsupported(format!("MAC digest {o}"))),
    };
    if m.iterations == 0 || m.iterations > max_iterations {
        return Err(Error::Malformed(format!(
            "PKCS#12 MAC iteration count {}",
            m.iterations
        )));
    }
    let want = mac_of(hash, password, m.mac_salt.as_bytes(), m.iterations, data)?;
    let plural = if m.iterations == 1 { "" } else { "s" };
    Ok((
        Zeroizing::new(want),
        format!("{}, {} iteration{plural}", hash.name(), m.iterations),
    ))
}

/// A PBKDF2 PRF or PBMAC1 MAC: HMAC with one of these.
#[derive(Clone, Copy)]
enum Hmac {
    Sm3,
    Sha1,
    Sha256,
    Sha384,
    Sha512,
}

impl Hmac {
    fn from_oid(oid: ObjectIdentifier) -> Option<(Hmac, &'static str)> {
        use crate::oid::{
            HMAC_SHA1, HMAC_SHA256, HMAC_SHA384, HMAC_SHA512, HMAC_SM3, HMAC_SM3_OPENSSL,
        };
        Some(match oid {
            o if o == HMAC_SM3 || o == HMAC_SM3_OPENSSL => (Hmac::Sm3, "HMAC-SM3"),
            o if o == HMAC_SHA1 => (Hmac::Sha1, "HMAC-SHA1"),
            o if o == HMAC_SHA256 => (Hmac::Sha256, "HMAC-SHA256"),
            o if o == HMAC_SHA384 => (Hmac::Sha384, "HMAC-SHA384"),
            o if o == HMAC_SHA512 => (Hmac::Sha512, "HMAC-SHA512"),
            _ => return None,
        })
    }

    fn pbkdf2(self, password: &[u8], salt: &[u8], iterations: u32, out: &mut [u8]) {
        use pbkdf2::pbkdf2_hmac;
        match self {
            // Errors only on a zero iteration count, refused before.
            Hmac::Sm3 => shangmi::sm3::pbkdf2(password, salt, iterations, out).unwrap_or(()),
            Hmac::Sha1 => pbkdf2_hmac::<sha1::Sha1>(password, salt, iterations, out),
            Hmac::Sha256 => pbkdf2_hmac::<sha2::Sha256>(password, salt, iterations, out),
            Hmac::Sha384 => pbkdf2_hmac::<sha2::Sha384>(password, salt, iterations, out),
            Hmac::Sha512 => pbkdf2_hmac::<sha2::Sha512>(password, salt, iterations, out),
        }
    }

    fn mac(self, key: &[u8], data: &[u8]) -> Vec<u8> {
        use hmac::{KeyInit, Mac};
        fn with<M: Mac + KeyInit>(key: &[u8], data: &[u8]) -> Vec<u8> {
            let mut m = <M as KeyInit>::new_from_slice(key).expect("HMAC takes any key");
            m.update(data);
            m.finalize().into_bytes().to_vec()
        }
        match self {
            Hmac::Sm3 => shangmi::sm3::hmac(key, data).to_vec(),
            Hmac::Sha1 => with::<hmac::Hmac<sha1::Sha1>>(key, data),
            Hmac::Sha256 => with::<hmac::Hmac<sha2::Sha256>>(key, data),
            Hmac::Sha384 => with::<hmac::Hmac<sha2::Sha384>>(key, data),
            Hmac::Sha512 => with::<hmac::Hmac<sha2::Sha512>>(key, data),
        }
    }
}

#[derive(Sequence)]
struct Pbmac1Params {
    key_derivation_func: AlgorithmIdentifierOwned,
    message_auth_scheme: AlgorithmIdentifierOwned,
}

#[derive(Sequence)]
struct Pbkdf2Params {
    salt: OctetString,
    iteration_count: u64,
    key_length: Option<u64>,
    prf: Option<AlgorithmIdentifierOwned>,
}

/// The PBMAC1 MAC (RFC 9579, OpenSSL's `-pbmac1_pbkdf2`) of `data` under `password` as the
/// algorithm identifier describes it, and its description: HMAC keyed by PBKDF2 of the
/// password as given (UTF-8), not PKCS#12's own key derivation; the MacData's salt and
/// iteration count are not used.
fn pbmac1(
    alg: &AlgorithmIdentifierOwned,
    password: &[u8],
    data: &[u8],
    max_iterations: u64,
) -> Result<(Zeroizing<Vec<u8>>, String), Error> {
    let params: Pbmac1Params = alg
        .parameters
        .as_ref()
        .ok_or_else(|| Error::Malformed("PKCS#12 PBMAC1 without parameters".into()))?
        .decode_as()
        .map_err(malformed("PBMAC1 parameters"))?;
    if params.key_derivation_func.oid != crate::oid::PBKDF2 {
        return Err(Error::Unsupported(format!(
            "PBMAC1 key derivation {} (PBKDF2 is read)",
            params.key_derivation_func.oid
        )));
    }
    let kdf: Pbkdf2Params = params
        .key_derivation_func
        .parameters
        .as_ref()
        .ok_or_else(|| Error::Malformed("PKCS#12 PBMAC1 PBKDF2 without parameters".into()))?
        .decode_as()
        .map_err(malformed("PBMAC1 PBKDF2 parameters"))?;
    let unsupported = |o: ObjectIdentifier| Error::Unsupported(format!("PBMAC1 HMAC {o}"));
    let prf = match &kdf.prf {
        None => Hmac::Sha1,
        Some(p) => Hmac::from_oid(p.oid).ok_or_else(|| unsupported(p.oid))?.0,
    };
    let (mac, mac_name) = Hmac::from_oid(params.message_auth_scheme.oid)
        .ok_or_else(|| unsupported(params.message_auth_scheme.oid))?;
    // RFC 9579 requires the key length; 64 bytes covers every HMAC here.
    let key_len = kdf
        .key_length
        .filter(|n| (1..=64).contains(n))
        .ok_or_else(|| Error::Malformed("PKCS#12 PBMAC1 key length".into()))?;
    let iterations = u32::try_from(kdf.iteration_count)
        .ok()
        .filter(|&n| n >= 1 && u64::from(n) <= max_iterations)
        .ok_or_else(|| {
            Error::Malformed(format!(
                "PKCS#12 MAC iteration count {}",
                kdf.iteration_count
            ))
        })?;
    let mut key = Zeroizing::new(vec![0u8; key_len as usize]);
    prf.pbkdf2(password, kdf.salt.as_bytes(), iterations, &mut key);
    let plural = if iterations == 1 { "" } else { "s" };
    Ok((
        Zeroizing::new(mac.mac(&key, data)),
        format!("PBMAC1 ({mac_name}, PBKDF2, {iterations} iteration{plural})"),
    ))
}

/// The MacData of a PBMAC1 MAC (RFC 9579) over `data`: PBKDF2 with HMAC-`hash` over the
/// password as given, then HMAC-`hash` under the 32-byte key. The outer salt and iteration
/// count are unused placeholders, as RFC 9579 has them and OpenSSL writes them.
fn pbmac1_data(
    hash: MacHash,
    password: &[u8],
    salt: &[u8],
    iterations: u32,
    data: &[u8],
) -> Result<MacData, Error> {
    let (hmac, oid) = match hash {
        MacHash::Sm3 => (Hmac::Sm3, crate::oid::HMAC_SM3),
        MacHash::Sha256 => (Hmac::Sha256, crate::oid::HMAC_SHA256),
        MacHash::Sha1 => {
            return Err(Error::Unsupported(
                "PBMAC1 with SHA-1 is not written".into(),
            ));
        }
    };
    if iterations == 0 {
        return Err(Error::Malformed("PKCS#12 MAC iteration count 0".into()));
    }
    const KEY_LEN: u64 = 32;
    let mut key = Zeroizing::new([0u8; KEY_LEN as usize]);
    hmac.pbkdf2(password, salt, iterations, &mut key[..]);
    let hmac_alg = || AlgorithmIdentifierOwned {
        oid,
        parameters: Some(Any::null()),
    };
    let kdf = Pbkdf2Params {
        salt: OctetString::new(salt)?,
        iteration_count: u64::from(iterations),
        key_length: Some(KEY_LEN),
        prf: Some(hmac_alg()),
    };
    let params = Pbmac1Params {
        key_derivation_func: AlgorithmIdentifierOwned {
            oid: crate::oid::PBKDF2,
            parameters: Some(Any::encode_from(&kdf)?),
        },
        message_auth_scheme: hmac_alg(),
    };
    Ok(MacData {
        mac: DigestInfo {
            algorithm: AlgorithmIdentifierOwned {
                oid: crate::oid::PBMAC1,
                parameters: Some(Any::encode_from(&params)?),
            },
            digest: OctetString::new(hmac.mac(&key[..], data))?,
        },
        mac_salt: OctetString::new(&b"NOT USED"[..])?,
        iterations: 1,
    })
}

fn failed() -> Error {
    Error::Decryption("wrong password, or the file is damaged (the MAC does not verify)".into())
}

fn malformed(what: &str) -> impl Fn(der::Error) -> Error + '_ {
    move |e| Error::Malformed(format!("PKCS#12 {what}: {e}"))
}

/// Describes a PBES2 AlgorithmIdentifier ("PBES2 (PBKDF2 hmacWithSM3, SM4-CBC)"), or says why
/// it is not read.
fn pbes2_name(alg: &Any) -> Result<String, Error> {
    let a: AlgorithmIdentifierOwned = alg.decode_as().map_err(malformed("algorithm"))?;
    if a.oid == PBES2 {
        let text = a
            .parameters
            .as_ref()
            .map(|p| p.value().to_vec())
            .unwrap_or_default();
        // The parameters' OIDs, looked for in their encoding: only a description is made.
        let has = |oid: &der::asn1::ObjectIdentifier| {
            let b = oid.as_bytes();
            text.windows(b.len()).any(|w| w == b)
        };
        let prf = if has(&crate::oid::HMAC_SM3) || has(&crate::oid::HMAC_SM3_OPENSSL) {
            "hmacWithSM3"
        } else if has(&crate::oid::HMAC_SHA256) {
            "hmacWithSHA256"
        } else {
            "another PRF"
        };
        let cipher = if has(&crate::oid::SM4_CBC) {
            "SM4-CBC"
        } else if has(&crate::oid::AES256_CBC) {
            "AES-256-CBC"
        } else if has(&crate::oid::AES128_CBC) {
            "AES-128-CBC"
        } else {
            "another cipher"
        };
        return Ok(format!("PBES2 (PBKDF2 {prf}, {cipher})"));
    }
    if let Some(l) = Legacy::of(&a.oid) {
        return Ok(format!("PKCS#12 PBE (SHA-1, {})", l.name()));
    }
    Err(Error::Unsupported(format!("encryption {}", a.oid)))
}

/// The legacy PKCS#12 encryptions (RFC 7292 appendix C) still met: BouncyCastle's and Java's
/// default keystores, and files from OpenSSL 1.x. Read only.
#[derive(Clone, Copy)]
enum Legacy {
    TripleDes3Key,
    TripleDes2Key,
    Rc2_128,
    Rc2_40,
}

#[derive(Sequence)]
struct Pkcs12PbeParams {
    salt: OctetString,
    iterations: u64,
}

impl Legacy {
    fn of(oid: &ObjectIdentifier) -> Option<Legacy> {
        use crate::oid::{
            PBE_SHA1_2KEY_3DES, PBE_SHA1_3KEY_3DES, PBE_SHA1_RC2_40, PBE_SHA1_RC2_128,
        };
        Some(match *oid {
            o if o == PBE_SHA1_3KEY_3DES => Legacy::TripleDes3Key,
            o if o == PBE_SHA1_2KEY_3DES => Legacy::TripleDes2Key,
            o if o == PBE_SHA1_RC2_128 => Legacy::Rc2_128,
            o if o == PBE_SHA1_RC2_40 => Legacy::Rc2_40,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Legacy::TripleDes3Key => "3-key 3DES-CBC",
            Legacy::TripleDes2Key => "2-key 3DES-CBC",
            Legacy::Rc2_128 => "128-bit RC2-CBC",
            Legacy::Rc2_40 => "40-bit RC2-CBC",
        }
    }

    fn key_len(self) -> usize {
        match self {
            Legacy::TripleDes3Key => 24,
            Legacy::TripleDes2Key | Legacy::Rc2_128 => 16,
            Legacy::Rc2_40 => 5,
        }
    }

    /// Decrypts `data`; `Ok(None)` when the padding does not check.
    fn decrypt(
        self,
        params: &Any,
        password: &[u8],
        data: &[u8],
        max_iterations: u64,
    ) -> Result<Option<Zeroizing<Vec<u8>>>, Error> {
        use cbc::cipher::block_padding::Pkcs7;
        use cbc::cipher::{BlockModeDecrypt, InnerIvInit, KeyInit, KeyIvInit};
        let p: Pkcs12PbeParams = params.decode_as().map_err(malformed("PBE parameters"))?;
        if p.iterations == 0 || p.iterations > max_iterations {
            return Err(Error::Malformed(format!(
                "PKCS#12 PBE iteration count {}",
                p.iterations
            )));
        }
        if data.is_empty() || !data.len().is_multiple_of(8) {
            return Ok(None);
        }
        let bmp = bmp_password(password)?;
        let salt = p.salt.as_bytes();
        let key = pkcs12_kdf(MacHash::Sha1, &bmp, salt, p.iterations, 1, self.key_len());
        let iv = pkcs12_kdf(MacHash::Sha1, &bmp, salt, p.iterations, 2, 8);
        let mut buf = Zeroizing::new(data.to_vec());
        let n = match self {
            Legacy::TripleDes3Key => cbc::Decryptor::<des::TdesEde3>::new_from_slices(&key, &iv)
                .map_err(|_| Error::Malformed("3DES key".into()))?
                .decrypt_padded::<Pkcs7>(&mut buf)
                .ok()
                .map(|p| p.len()),
            Legacy::TripleDes2Key => cbc::Decryptor::<des::TdesEde2>::new_from_slices(&key, &iv)
                .map_err(|_| Error::Malformed("3DES key".into()))?
                .decrypt_padded::<Pkcs7>(&mut buf)
                .ok()
                .map(|p| p.len()),
            Legacy::Rc2_128 | Legacy::Rc2_40 => {
                let bits = 8 * self.key_len();
                let rc2 = if bits == 128 {
                    rc2::Rc2::new_from_slice(&key)
                        .map_err(|_| Error::Malformed("RC2 key".into()))?
                } else {
                    rc2::Rc2::new_with_eff_key_len(&key, bits)
                };
                cbc::Decryptor::<rc2::Rc2>::inner_iv_slice_init(rc2, &iv)
                    .map_err(|_| Error::Malformed("RC2 IV".into()))?
                    .decrypt_padded::<Pkcs7>(&mut buf)
                    .ok()
                    .map(|p| p.len())
            }
        };
        Ok(n.map(|n| {
            buf.truncate(n);
            buf
        }))
    }
}

/// Decrypts with whichever scheme `alg` names (PBES2 or a legacy PKCS#12 PBE).
fn decrypt_any(
    alg: &Any,
    password: &[u8],
    data: &[u8],
    max_iterations: u64,
) -> Result<Option<Zeroizing<Vec<u8>>>, Error> {
    let a: AlgorithmIdentifierOwned = alg.decode_as().map_err(malformed("algorithm"))?;
    if let Some(l) = Legacy::of(&a.oid) {
        let params = a
            .parameters
            .ok_or_else(|| Error::Malformed("PKCS#12 PBE without parameters".into()))?;
        return l.decrypt(&params, password, data, max_iterations);
    }
    let alg_der = alg.to_der().map_err(malformed("algorithm"))?;
    shangmi::sm2::pbes2_decrypt(&alg_der, password, data, max_iterations)
        .map_err(|e| Error::Unsupported(format!("PKCS#12 encryption: {e}")))
}

fn attributes(set: Option<&SetOfVec<Attribute>>) -> BagAttributes {
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

/// Reads a PKCS#12 file (DER or BER) with `password` (UTF-8), allowing at most 10,000,000
/// MAC and PBKDF2 iterations.
pub fn read(data: &[u8], password: &[u8]) -> Result<Pkcs12, Error> {
    read_with_limit(data, password, MAX_ITERATIONS)
}

/// [`read`] allowing at most `max_iterations` MAC and PBKDF2 iterations (a file that asks for
/// more is refused before any is run).
pub fn read_with_limit(data: &[u8], password: &[u8], max_iterations: u64) -> Result<Pkcs12, Error> {
    let der = crate::ber::to_der(data)?;
    let pfx = Pfx::from_der(&der).map_err(malformed("PFX"))?;
    if pfx.version != 3 {
        return Err(Error::Unsupported(format!(
            "PKCS#12 version {} (3 is read)",
            pfx.version
        )));
    }
    if pfx.auth_safe.content_type != DATA {
        return Err(Error::Unsupported(format!(
            "authSafe of type {} (only password integrity, type data, is read)",
            pfx.auth_safe.content_type
        )));
    }
    let safe = pfx
        .auth_safe
        .content
        .decode_as::<OctetString>()
        .map_err(malformed("authSafe"))?;
    let mac = match &pfx.mac_data {
        None => "none".to_string(),
        Some(m) => {
            let (want, name) = if m.mac.algorithm.oid == PBMAC1 {
                pbmac1(&m.mac.algorithm, password, safe.as_bytes(), max_iterations)?
            } else {
                classic_mac(m, password, safe.as_bytes(), max_iterations)?
            };
            if !bool::from(want.ct_eq(m.mac.digest.as_bytes())) {
                return Err(failed());
            }
            name
        }
    };
    // The MAC covers the octets as received; what they hold may itself be BER (Java).
    let safe_der = crate::ber::to_der(safe.as_bytes())?;
    let infos: Vec<cms::content_info::ContentInfo> =
        Vec::from_der(&safe_der).map_err(malformed("AuthenticatedSafe"))?;
    let mut out = Pkcs12 {
        keys: Vec::new(),
        certs: Vec::new(),
        mac,
    };
    for ci in &infos {
        let (contents, protection) = match ci.content_type {
            o if o == DATA => (
                Zeroizing::new(
                    ci.content
                        .decode_as::<OctetString>()
                        .map_err(malformed("SafeContents"))?
                        .as_bytes()
                        .to_vec(),
                ),
                "none".to_string(),
            ),
            o if o == ENCRYPTED_DATA => {
                let ed: cms::encrypted_data::EncryptedData =
                    ci.content.decode_as().map_err(malformed("EncryptedData"))?;
                let eci = &ed.enc_content_info;
                let alg = Any::encode_from(&eci.content_enc_alg).map_err(malformed("algorithm"))?;
                let name = pbes2_name(&alg)?;
                let ct = eci.encrypted_content.as_ref().ok_or_else(|| {
                    Error::Malformed("PKCS#12 EncryptedData without content".into())
                })?;
                let plain = decrypt_any(&alg, password, ct.as_bytes(), max_iterations)?
                    .ok_or_else(failed)?;
                (plain, name)
            }
            o => {
                return Err(Error::Unsupported(format!(
                    "PKCS#12 content of type {o} (public-key privacy is not read)"
                )));
            }
        };
        let contents = Zeroizing::new(crate::ber::to_der(&contents).map_err(|_| failed())?);
        let bags: Vec<SafeBag> = Vec::from_der(&contents).map_err(|_| failed())?;
        for bag in bags {
            let attributes = attributes(bag.bag_attributes.as_ref());
            match bag.bag_id {
                o if o == SHROUDED_KEY_BAG => {
                    let epki: EncryptedPrivateKeyInfo = bag
                        .bag_value
                        .decode_as()
                        .map_err(malformed("shrouded key"))?;
                    let protection = pbes2_name(&epki.algorithm)?;
                    let plain = decrypt_any(
                        &epki.algorithm,
                        password,
                        epki.data.as_bytes(),
                        max_iterations,
                    )?
                    .ok_or_else(failed)?;
                    // A plaintext that is not a key is a wrong password too (CBC cannot tell).
                    let key = SigningKey::from_pkcs8_der(&plain).map_err(|_| failed())?;
                    out.keys.push(Pkcs12Key {
                        key,
                        attributes,
                        protection,
                    });
                }
                o if o == KEY_BAG => {
                    let der = Zeroizing::new(bag.bag_value.to_der().map_err(malformed("key"))?);
                    let key = SigningKey::from_pkcs8_der(&der)
                        .map_err(|e| Error::Unsupported(format!("a key bag: {e}")))?;
                    out.keys.push(Pkcs12Key {
                        key,
                        attributes,
                        protection: "none".into(),
                    });
                }
                o if o == CERT_BAG => {
                    let cb: CertBag = bag.bag_value.decode_as().map_err(malformed("CertBag"))?;
                    if cb.cert_id != X509_CERT {
                        continue;
                    }
                    let der = cb.cert_value.as_bytes().to_vec();
                    crate::Certificate::from_der(&der)
                        .map_err(|e| Error::Malformed(format!("a certificate bag: {e}")))?;
                    out.certs.push(Pkcs12Cert {
                        der,
                        attributes,
                        protection: protection.clone(),
                    });
                }
                // CRL, secret and nested bags: not what SM users keep here; skipped.
                _ => {}
            }
        }
    }
    Ok(out)
}

/// How a keystore is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pkcs12Params {
    /// The PBKDF2 PRF of the key and certificate encryption.
    pub prf: Prf,
    /// Their cipher.
    pub cipher: Cipher,
    /// PBKDF2 iterations.
    pub iterations: u32,
    /// The MAC's hash.
    pub mac: MacHash,
    /// The MAC's iterations.
    pub mac_iterations: u32,
    /// The MAC as PBMAC1 (RFC 9579): HMAC with `mac`'s hash, keyed by PBKDF2 with that HMAC
    /// over the password as given, instead of PKCS#12's own key derivation. OpenSSL 3.4 and
    /// 4.0 read it (and write it with `-pbmac1_pbkdf2`); older readers and the JDK do not.
    pub pbmac1: bool,
}

impl Pkcs12Params {
    /// SM4-CBC under PBKDF2 hmacWithSHA256, MAC with SM3, 10,000 iterations each: what
    /// OpenSSL 4.0 and Tongsuo write with `-keypbe SM4-CBC -certpbe SM4-CBC -macalg SM3`, and
    /// read (neither knows hmacWithSM3 as a PBKDF2 PRF; set `prf` to it for readers that do).
    pub fn sm() -> Self {
        Pkcs12Params {
            prf: Prf::HmacSha256,
            cipher: Cipher::Sm4Cbc,
            iterations: 10_000,
            mac: MacHash::Sm3,
            mac_iterations: 10_000,
            pbmac1: false,
        }
    }

    /// OpenSSL 3's defaults: hmacWithSHA256, AES-256-CBC, MAC with SHA-256, for readers
    /// without SM algorithms (the JDK alone, OpenSSL 3.0).
    pub fn international() -> Self {
        Pkcs12Params {
            prf: Prf::HmacSha256,
            cipher: Cipher::Aes256Cbc,
            iterations: 10_000,
            mac: MacHash::Sha256,
            mac_iterations: 10_000,
            pbmac1: false,
        }
    }
}

/// One key to store, with the certificate it belongs to and the alias it goes by.
pub struct Pkcs12Entry<'a> {
    /// The key.
    pub key: &'a SigningKey,
    /// Its certificate's DER (first in the chain).
    pub cert: &'a [u8],
    /// The alias (`friendlyName`), if any.
    pub name: Option<&'a str>,
}

fn attribute_set(name: Option<&str>, key_id: &[u8]) -> Result<SetOfVec<Attribute>, Error> {
    let mut set = SetOfVec::new();
    let mut id_values = SetOfVec::new();
    id_values.insert(Any::encode_from(&OctetString::new(key_id)?)?)?;
    set.insert(Attribute {
        oid: LOCAL_KEY_ID,
        values: id_values,
    })?;
    if let Some(n) = name {
        let mut values = SetOfVec::new();
        let bmp = BmpString::from_utf8(n)
            .map_err(|e| Error::InvalidArgument(format!("the alias: {e}")))?;
        values.insert(Any::encode_from(&bmp)?)?;
        set.insert(Attribute {
            oid: FRIENDLY_NAME,
            values,
        })?;
    }
    Ok(set)
}

fn content_info(oid: ObjectIdentifier, content: Any) -> cms::content_info::ContentInfo {
    cms::content_info::ContentInfo {
        content_type: oid,
        content,
    }
}

/// Writes a keystore: each entry's key in a shrouded key bag and its certificate (paired by a
/// local key ID, named by the alias), then `chain`'s certificates, all protected by
/// `password` as `params` says.
pub fn write(
    entries: &[Pkcs12Entry<'_>],
    chain: &[Vec<u8>],
    password: &[u8],
    params: Pkcs12Params,
) -> Result<Vec<u8>, Error> {
    if params.iterations == 0 || params.mac_iterations == 0 {
        return Err(Error::InvalidArgument("iteration counts start at 1".into()));
    }
    let crypto = |e: shangmi::sm2::KeyFileError| Error::Crypto(e.to_string());
    let mut key_bags = Vec::new();
    let mut cert_bags = Vec::new();
    for e in entries {
        crate::Certificate::from_der(e.cert)
            .map_err(|err| Error::InvalidArgument(format!("a certificate: {err}")))?;
        let key_id = shangmi::sm3::hash(e.cert);
        let plain = Zeroizing::new(e.key.to_pkcs8_der().map_err(crypto)?);
        let (alg, data) = shangmi::sm2::pbes2_encrypt(
            password,
            &plain,
            params.prf,
            params.cipher,
            params.iterations,
        )
        .map_err(crypto)?;
        let epki = EncryptedPrivateKeyInfo {
            algorithm: Any::from_der(&alg)?,
            data: OctetString::new(data)?,
        };
        key_bags.push(SafeBag {
            bag_id: SHROUDED_KEY_BAG,
            bag_value: Any::encode_from(&epki)?,
            bag_attributes: Some(attribute_set(e.name, &key_id)?),
        });
        cert_bags.push(SafeBag {
            bag_id: CERT_BAG,
            bag_value: Any::encode_from(&CertBag {
                cert_id: X509_CERT,
                cert_value: OctetString::new(e.cert)?,
            })?,
            bag_attributes: Some(attribute_set(e.name, &key_id)?),
        });
    }
    for c in chain {
        crate::Certificate::from_der(c)
            .map_err(|err| Error::InvalidArgument(format!("a chain certificate: {err}")))?;
        cert_bags.push(SafeBag {
            bag_id: CERT_BAG,
            bag_value: Any::encode_from(&CertBag {
                cert_id: X509_CERT,
                cert_value: OctetString::new(c.as_slice())?,
            })?,
            bag_attributes: None,
        });
    }
    // Certificates first, encrypted (OpenSSL's order); then the keys, shrouded, in plain data.
    let certs_plain = cert_bags.to_der()?;
    let (alg, ct) = shangmi::sm2::pbes2_encrypt(
        password,
        &certs_plain,
        params.prf,
        params.cipher,
        params.iterations,
    )
    .map_err(crypto)?;
    let encrypted = cms::encrypted_data::EncryptedData {
        version: cms::content_info::CmsVersion::V0,
        enc_content_info: cms::enveloped_data::EncryptedContentInfo {
            content_type: DATA,
            content_enc_alg: AlgorithmIdentifierOwned::from_der(&alg)?,
            encrypted_content: Some(OctetString::new(ct)?),
        },
        unprotected_attrs: None,
    };
    let infos = vec![
        content_info(ENCRYPTED_DATA, Any::encode_from(&encrypted)?),
        content_info(
            DATA,
            Any::encode_from(&OctetString::new(key_bags.to_der()?)?)?,
        ),
    ];
    let safe = infos.to_der()?;
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|e| Error::Crypto(e.to_string()))?;
    let mac_data = if params.pbmac1 {
        pbmac1_data(params.mac, password, &salt, params.mac_iterations, &safe)?
    } else {
        let mac = mac_of(
            params.mac,
            password,
            &salt,
            u64::from(params.mac_iterations),
            &safe,
        )?;
        MacData {
            mac: DigestInfo {
                algorithm: AlgorithmIdentifierOwned {
                    oid: params.mac.oid(),
                    // SM3's parameters are absent (GM/T); SHA's NULL, as OpenSSL writes them.
                    parameters: (params.mac != MacHash::Sm3).then(Any::null),
                },
                digest: OctetString::new(mac)?,
            },
            mac_salt: OctetString::new(salt.as_slice())?,
            iterations: u64::from(params.mac_iterations),
        }
    };
    let pfx = Pfx {
        version: 3,
        auth_safe: content_info(DATA, Any::encode_from(&OctetString::new(safe)?)?),
        mac_data: Some(mac_data),
    };
    Ok(pfx.to_der()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7292's KDF with SHA-1 against a value computed by OpenSSL's PKCS12_key_gen_utf8
    /// (password "smeg", salt 0A58CF64530D823F, ID 1, 1 iteration, 24 bytes): the vector of
    /// the PKCS#12 test suites.
    #[test]
    fn the_kdf_matches_the_published_vector() {
        let pw = bmp_password(b"smeg").unwrap();
        let salt = [0x0a, 0x58, 0xcf, 0x64, 0x53, 0x0d, 0x82, 0x3f];
        let k = pkcs12_kdf(MacHash::Sha1, &pw, &salt, 1, 1, 24);
        assert_eq!(hex(&k), "8aaae6297b6cb04642ab5b077851284eb7128f1a2a7fbca3");
    }

    #[test]
    fn a_pbmac1_keystore_reads_back_and_refuses_a_wrong_password() {
        let key = shangmi::sm2::SigningKey::random().unwrap();
        let cert = crate::self_signed(&key, "/CN=pbmac1", &crate::Issue::leaf(1)).unwrap();
        let cert = der::Encode::to_der(&cert).unwrap();
        for mac in [MacHash::Sm3, MacHash::Sha256] {
            let params = Pkcs12Params {
                iterations: 10,
                mac,
                mac_iterations: 10,
                pbmac1: true,
                ..Pkcs12Params::sm()
            };
            let entry = Pkcs12Entry {
                key: &key,
                cert: &cert,
                name: Some("k"),
            };
            let file = write(&[entry], &[], b"pw", params).unwrap();
            let back = read(&file, b"pw").unwrap();
            assert!(back.mac.starts_with("PBMAC1"), "{}", back.mac);
            assert_eq!(back.keys.len(), 1);
            assert!(matches!(read(&file, b"pW"), Err(Error::Decryption(_))));
        }
        let sha1 = Pkcs12Params {
            mac: MacHash::Sha1,
            pbmac1: true,
            ..Pkcs12Params::sm()
        };
        let entry = Pkcs12Entry {
            key: &key,
            cert: &cert,
            name: None,
        };
        assert!(write(&[entry], &[], b"pw", sha1).is_err());
    }

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }
}
