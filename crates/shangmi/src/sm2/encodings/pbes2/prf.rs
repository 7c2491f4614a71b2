//! The PBKDF2 PRFs a PBES2 file may name (HMAC with SM3 or a SHA-2), one table shared with
//! PKCS#12's MACs.

use spki::AlgorithmIdentifierRef;

use super::Prf;
use crate::oid::{
    HMAC_SHA1, HMAC_SHA224, HMAC_SHA256, HMAC_SHA384, HMAC_SHA512, HMAC_SM3, HMAC_SM3_OPENSSL,
};
use crate::sm2::encodings::keyfile::{KeyFileError, null_or_absent};

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
    pub(super) fn from_params(
        prf: Option<AlgorithmIdentifierRef<'_>>,
    ) -> Result<Self, KeyFileError> {
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
