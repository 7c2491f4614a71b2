//! Key files: PKCS#8 private keys (plain and password-encrypted, see `pbes2.rs`), SEC1
//! `EC PRIVATE KEY`, and SubjectPublicKeyInfo public keys, in DER and PEM, as OpenSSL 3 reads
//! and writes them for SM2: algorithm id-ecPublicKey with the named curve sm2p256v1.
//!
//! Also read: the algorithm OID 1.2.156.10197.1.301 that some GM tools write in place of
//! id-ecPublicKey, the curve as explicit parameters equal to sm2p256v1's (`ec_params.rs`), the
//! `SM2 PRIVATE KEY` label of `openssl ec`, and PEM with text around it (`pem.rs`).
//!
//! Reading is strict where it matters: DER only (no BER), the SM2 curve and nothing else, a
//! private key in [1, n-2] and, where the file carries the public key too, one that matches it.

use core::fmt;

use der::asn1::{AnyRef, BitStringRef, OctetStringRef};
use der::{Decode, Encode};
use pkcs8::PrivateKeyInfoRef;
use sec1::{EcParameters, EcPrivateKey};
use spki::{AlgorithmIdentifierRef, SubjectPublicKeyInfoRef};
use zeroize::Zeroizing;

use crate::sm2::protocols::keys::{SigningKey, VerifyingKey};

pub(crate) use crate::oid::{EC_PUBLIC_KEY, SM2 as SM2_CURVE};

/// Why a key file could not be read or written.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyFileError {
    /// Not well-formed DER or PEM of the expected structure (the text says what was wrong).
    Malformed(&'static str),
    /// A PEM label other than the ones this reader takes.
    UnexpectedLabel(String),
    /// Well-formed, but an algorithm, curve or parameter this library does not support.
    Unsupported(String),
    /// The key itself is invalid: d outside [1, n-2], a point off the curve, or a public key
    /// that does not match the private key.
    InvalidKey,
    /// An encrypted key that asks for more PBKDF2 iterations than the reader allows.
    TooManyIterations(u64),
    /// An encrypted key that needs a password, and none was given.
    PasswordRequired,
    /// Wrong password, or the encrypted data was corrupted: indistinguishable by design.
    WrongPassword,
    /// The operating system's random number generator failed.
    Rng,
}

impl fmt::Display for KeyFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyFileError::Malformed(what) => write!(f, "malformed key file: {what}"),
            KeyFileError::UnexpectedLabel(l) => write!(f, "unexpected PEM label \"{l}\""),
            KeyFileError::Unsupported(what) => write!(f, "unsupported key file: {what}"),
            KeyFileError::InvalidKey => f.write_str("invalid SM2 key in key file"),
            KeyFileError::TooManyIterations(n) => {
                write!(
                    f,
                    "encrypted key asks for {n} PBKDF2 iterations, over the limit"
                )
            }
            KeyFileError::PasswordRequired => {
                f.write_str("the key is encrypted: a password is needed")
            }
            KeyFileError::WrongPassword => {
                f.write_str("wrong password, or corrupted encrypted key")
            }
            KeyFileError::Rng => f.write_str("the system random number generator failed"),
        }
    }
}

impl std::error::Error for KeyFileError {}

pub(crate) fn malformed(what: &'static str) -> impl Fn(der::Error) -> KeyFileError {
    move |_| KeyFileError::Malformed(what)
}

/// The PEM labels.
pub(crate) const LABEL_PKCS8: &str = "PRIVATE KEY";
pub(crate) const LABEL_ENCRYPTED: &str = "ENCRYPTED PRIVATE KEY";
pub(crate) const LABEL_SEC1: &str = "EC PRIVATE KEY";
/// What `openssl ec` writes for an SM2 key: the SEC1 structure under the key type's name.
pub(crate) const LABEL_SM2_SEC1: &str = "SM2 PRIVATE KEY";
pub(crate) const LABEL_PUBLIC: &str = "PUBLIC KEY";

pub(crate) fn pem_encode(label: &str, der: &[u8]) -> Zeroizing<String> {
    Zeroizing::new(
        pem_rfc7468::encode_string(label, pem_rfc7468::LineEnding::LF, der)
            .expect("PEM encoding of a small document"),
    )
}

/// The algorithm must be id-ecPublicKey on sm2p256v1 (named, or spelled out with the same
/// values), or sm2p256v1's own OID, which some GM tools write as the algorithm, with the curve
/// again, NULL or nothing as parameters.
fn check_algorithm(alg: &AlgorithmIdentifierRef<'_>) -> Result<(), KeyFileError> {
    if alg.oid == SM2_CURVE {
        return match alg.parameters {
            None => Ok(()),
            Some(p) if p.is_null() => Ok(()),
            Some(p) => crate::sm2::encodings::ec_params::check_curve(p),
        };
    }
    if alg.oid != EC_PUBLIC_KEY {
        return Err(KeyFileError::Unsupported(format!(
            "key algorithm {} (expected id-ecPublicKey {EC_PUBLIC_KEY} or SM2 {SM2_CURVE})",
            alg.oid
        )));
    }
    crate::sm2::encodings::ec_params::check_curve(
        alg.parameters
            .ok_or(KeyFileError::Malformed("EC key without curve parameters"))?,
    )
}

fn algorithm() -> Result<spki::AlgorithmIdentifierOwned, KeyFileError> {
    let params = der::Any::encode_from(&SM2_CURVE).map_err(malformed("curve OID"))?;
    Ok(spki::AlgorithmIdentifierOwned {
        oid: EC_PUBLIC_KEY,
        parameters: Some(params),
    })
}

/// SEC1 `ECPrivateKey` as read: like `sec1::EcPrivateKey`, but the curve may also be given
/// as explicit parameters (checked by `ec_params`).
#[derive(der::Sequence)]
struct EcPrivateKeyIn<'a> {
    version: u8,
    private_key: &'a OctetStringRef,
    #[asn1(context_specific = "0", optional = "true")]
    parameters: Option<AnyRef<'a>>,
    #[asn1(context_specific = "1", optional = "true")]
    public_key: Option<BitStringRef<'a>>,
}

/// A signing key from SEC1 `ECPrivateKey` DER, checked against the public key it may carry.
fn from_ec_private_key(der: &[u8], what: &'static str) -> Result<SigningKey, KeyFileError> {
    let ec = EcPrivateKeyIn::from_der(der).map_err(malformed(what))?;
    if ec.version != 1 {
        return Err(KeyFileError::Malformed(
            "SEC1 ECPrivateKey version is not 1",
        ));
    }
    if let Some(params) = ec.parameters {
        crate::sm2::encodings::ec_params::check_curve(params)?;
    }
    // SEC1 pads d to the order's length; writers that strip leading zeros are accepted.
    let d = ec.private_key.as_bytes();
    if d.is_empty() || d.len() > 32 {
        return Err(KeyFileError::InvalidKey);
    }
    let mut bytes = Zeroizing::new([0u8; 32]);
    bytes[32 - d.len()..].copy_from_slice(d);
    let key = SigningKey::from_bytes(&bytes).map_err(|_| KeyFileError::InvalidKey)?;
    if let Some(public) = ec.public_key {
        let public = public
            .as_bytes()
            .ok_or(KeyFileError::Malformed("public key bit string"))?;
        let p = VerifyingKey::from_sec1_bytes(public).map_err(|_| KeyFileError::InvalidKey)?;
        if p != *key.verifying_key() {
            return Err(KeyFileError::InvalidKey);
        }
    }
    Ok(key)
}

impl SigningKey {
    fn ec_private_key_der(&self, with_curve: bool) -> Result<Zeroizing<Vec<u8>>, KeyFileError> {
        let d = self.to_bytes();
        let public = self.public.to_uncompressed();
        let ec = EcPrivateKey {
            private_key: &d[..],
            parameters: with_curve.then_some(EcParameters::NamedCurve(SM2_CURVE)),
            public_key: Some(&public),
        };
        Ok(Zeroizing::new(
            ec.to_der().map_err(malformed("EC private key"))?,
        ))
    }

    /// PKCS#8 `PrivateKeyInfo` DER (what `openssl genpkey -algorithm SM2` writes), with the
    /// public key and the curve inside the SEC1 structure too, which some readers want.
    pub fn to_pkcs8_der(&self) -> Result<Zeroizing<Vec<u8>>, KeyFileError> {
        let inner = self.ec_private_key_der(true)?;
        // Borrowed, not copied: an owned OCTET STRING would free a copy of the key unwiped.
        let curve = der::Any::encode_from(&SM2_CURVE).map_err(malformed("curve OID"))?;
        let info = PrivateKeyInfoRef::new(
            AlgorithmIdentifierRef {
                oid: EC_PUBLIC_KEY,
                parameters: Some((&curve).into()),
            },
            OctetStringRef::new(inner.as_slice()).map_err(malformed("private key"))?,
        );
        // `to_der` sizes its buffer exactly before writing: no reallocation leaves a copy.
        Ok(Zeroizing::new(info.to_der().map_err(malformed("PKCS#8"))?))
    }

    /// PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
    pub fn to_pkcs8_pem(&self) -> Result<Zeroizing<String>, KeyFileError> {
        Ok(pem_encode(LABEL_PKCS8, &self.to_pkcs8_der()?))
    }

    /// Reads an unencrypted PKCS#8 `PrivateKeyInfo` (v1 or v2).
    pub fn from_pkcs8_der(der: &[u8]) -> Result<Self, KeyFileError> {
        let info = PrivateKeyInfoRef::from_der(der).map_err(malformed("PKCS#8 PrivateKeyInfo"))?;
        check_algorithm(&info.algorithm)?;
        let key = from_ec_private_key(info.private_key.as_bytes(), "EC private key inside PKCS#8")?;
        // A v2 key's own public-key field must agree as well.
        if let Some(bits) = info.public_key {
            let bytes = bits
                .as_bytes()
                .ok_or(KeyFileError::Malformed("public key bit string"))?;
            let p = VerifyingKey::from_sec1_bytes(bytes).map_err(|_| KeyFileError::InvalidKey)?;
            if p != *key.verifying_key() {
                return Err(KeyFileError::InvalidKey);
            }
        }
        Ok(key)
    }

    /// Reads PKCS#8 PEM (`PRIVATE KEY`).
    pub fn from_pkcs8_pem(pem: &str) -> Result<Self, KeyFileError> {
        let (_, der) = crate::pem::select(pem, &[LABEL_PKCS8])?;
        Self::from_pkcs8_der(&der)
    }

    /// SEC1 `ECPrivateKey` DER (what `openssl pkey -traditional` / `openssl ec` write).
    pub fn to_sec1_der(&self) -> Result<Zeroizing<Vec<u8>>, KeyFileError> {
        self.ec_private_key_der(true)
    }

    /// SEC1 PEM (`-----BEGIN EC PRIVATE KEY-----`).
    pub fn to_sec1_pem(&self) -> Result<Zeroizing<String>, KeyFileError> {
        Ok(pem_encode(LABEL_SEC1, &self.to_sec1_der()?))
    }

    /// Reads SEC1 `ECPrivateKey` DER.
    pub fn from_sec1_der(der: &[u8]) -> Result<Self, KeyFileError> {
        from_ec_private_key(der, "SEC1 ECPrivateKey")
    }

    /// Reads SEC1 PEM (`EC PRIVATE KEY`, or `SM2 PRIVATE KEY` as `openssl ec` labels it).
    pub fn from_sec1_pem(pem: &str) -> Result<Self, KeyFileError> {
        let (_, der) = crate::pem::select(pem, &[LABEL_SEC1, LABEL_SM2_SEC1])?;
        Self::from_sec1_der(&der)
    }

    /// Reads any private-key PEM this library writes or OpenSSL writes for SM2, by its label:
    /// `PRIVATE KEY`, `EC PRIVATE KEY`, `SM2 PRIVATE KEY`, or `ENCRYPTED PRIVATE KEY` (which
    /// needs `password`). Text around the block, and a public-key block beside it, are
    /// ignored (see `pem.rs` for what the reader tolerates).
    pub fn from_pem(pem: &str, password: Option<&[u8]>) -> Result<Self, KeyFileError> {
        let (label, der) = crate::pem::select(
            pem,
            &[LABEL_PKCS8, LABEL_SEC1, LABEL_SM2_SEC1, LABEL_ENCRYPTED],
        )?;
        match label.as_str() {
            LABEL_PKCS8 => Self::from_pkcs8_der(&der),
            LABEL_SEC1 | LABEL_SM2_SEC1 => Self::from_sec1_der(&der),
            LABEL_ENCRYPTED => match password {
                Some(p) => Self::from_pkcs8_encrypted_der(&der, p),
                None => Err(KeyFileError::PasswordRequired),
            },
            _ => Err(KeyFileError::UnexpectedLabel(label)),
        }
    }
}

impl VerifyingKey {
    /// SubjectPublicKeyInfo DER (`openssl pkey -pubout -outform DER`), uncompressed point.
    pub fn to_public_key_der(&self) -> Result<Vec<u8>, KeyFileError> {
        let point = self.to_uncompressed();
        let spki = spki::SubjectPublicKeyInfoOwned {
            algorithm: algorithm()?,
            subject_public_key: der::asn1::BitString::from_bytes(&point)
                .map_err(malformed("public key bit string"))?,
        };
        spki.to_der().map_err(malformed("SubjectPublicKeyInfo"))
    }

    /// SubjectPublicKeyInfo PEM (`-----BEGIN PUBLIC KEY-----`).
    pub fn to_public_key_pem(&self) -> Result<String, KeyFileError> {
        Ok(pem_encode(LABEL_PUBLIC, &self.to_public_key_der()?).to_string())
    }

    /// Reads SubjectPublicKeyInfo DER (point uncompressed or compressed).
    pub fn from_public_key_der(der: &[u8]) -> Result<Self, KeyFileError> {
        let spki =
            SubjectPublicKeyInfoRef::from_der(der).map_err(malformed("SubjectPublicKeyInfo"))?;
        check_algorithm(&spki.algorithm)?;
        let bits: BitStringRef<'_> = spki.subject_public_key;
        let bytes = bits
            .as_bytes()
            .ok_or(KeyFileError::Malformed("public key bit string"))?;
        VerifyingKey::from_sec1_bytes(bytes).map_err(|_| KeyFileError::InvalidKey)
    }

    /// Reads SubjectPublicKeyInfo PEM (`PUBLIC KEY`).
    pub fn from_public_key_pem(pem: &str) -> Result<Self, KeyFileError> {
        let (_, der) = crate::pem::select(pem, &[LABEL_PUBLIC])?;
        Self::from_public_key_der(&der)
    }
}

/// An `AnyRef` decoded as NULL or absent: the parameters of an HMAC PRF.
pub(crate) fn null_or_absent(p: Option<AnyRef<'_>>) -> bool {
    match p {
        None => true,
        Some(a) => a.is_null(),
    }
}

/// An OCTET STRING's bytes.
pub(crate) fn octets<'a>(a: AnyRef<'a>, what: &'static str) -> Result<&'a [u8], KeyFileError> {
    Ok(a.decode_as::<&OctetStringRef>()
        .map_err(malformed(what))?
        .as_bytes())
}
