//! Decrypting bags and SafeContents: PBES2, and the legacy PKCS#12 PBEs (read only).

use super::*;

/// Describes a PBES2 AlgorithmIdentifier ("PBES2 (PBKDF2 hmacWithSM3, SM4-CBC)"), or says why
/// it is not read.
pub(super) fn pbes2_name(alg: &Any) -> Result<String, Error> {
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
pub(super) enum Legacy {
    TripleDes3Key,
    TripleDes2Key,
    Rc2_128,
    Rc2_40,
}

#[derive(Sequence)]
pub(super) struct Pkcs12PbeParams {
    pub(super) salt: OctetString,
    pub(super) iterations: u64,
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
pub(super) fn decrypt_any(
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
