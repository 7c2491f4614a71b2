//! The keystore's MAC: RFC 7292's (HMAC under PKCS#12's key derivation) and PBMAC1 (RFC 9579).

use super::*;

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
    pub(super) fn name(self) -> &'static str {
        match self {
            MacHash::Sm3 => "SM3",
            MacHash::Sha256 => "SHA-256",
            MacHash::Sha1 => "SHA-1",
        }
    }

    pub(super) fn oid(self) -> ObjectIdentifier {
        match self {
            MacHash::Sm3 => SM3,
            MacHash::Sha256 => SHA256,
            MacHash::Sha1 => SHA1,
        }
    }

    pub(super) fn hash(self, parts: &[&[u8]]) -> Vec<u8> {
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

    pub(super) fn hmac(self, key: &[u8], data: &[u8]) -> Vec<u8> {
        match self {
            MacHash::Sm3 => Hmac::Sm3,
            MacHash::Sha256 => Hmac::Sha256,
            MacHash::Sha1 => Hmac::Sha1,
        }
        .hmac(key, data)
    }

    /// Output bytes (u) and block bytes (v) of RFC 7292 appendix B.
    pub(super) fn sizes(self) -> (usize, usize) {
        match self {
            MacHash::Sm3 | MacHash::Sha256 => (32, 64),
            MacHash::Sha1 => (20, 64),
        }
    }
}

/// The password as PKCS#12 derives keys from it: BMPString, big-endian, with a final zero.
pub(super) fn bmp_password(password: &[u8]) -> Result<Zeroizing<Vec<u8>>, Error> {
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
pub(super) fn pkcs12_kdf(
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

pub(super) fn mac_of(
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
pub(super) fn classic_mac(
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

/// A PBKDF2 PRF or PBMAC1 MAC: HMAC with one of these (the library's table, which its own
/// PBES2 reads with).
pub(super) use shangmi::sm2::Pbkdf2Prf as Hmac;

#[derive(Sequence)]
pub(super) struct Pbmac1Params {
    pub(super) key_derivation_func: AlgorithmIdentifierOwned,
    pub(super) message_auth_scheme: AlgorithmIdentifierOwned,
}

#[derive(Sequence)]
pub(super) struct Pbkdf2Params {
    pub(super) salt: OctetString,
    pub(super) iteration_count: u64,
    pub(super) key_length: Option<u64>,
    pub(super) prf: Option<AlgorithmIdentifierOwned>,
}

/// The PBMAC1 MAC (RFC 9579, OpenSSL's `-pbmac1_pbkdf2`) of `data` under `password` as the
/// algorithm identifier describes it, and its description: HMAC keyed by PBKDF2 of the
/// password as given (UTF-8), not PKCS#12's own key derivation; the MacData's salt and
/// iteration count are not used.
pub(super) fn pbmac1(
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
        Some(p) => Hmac::from_oid(&p.oid).ok_or_else(|| unsupported(p.oid))?,
    };
    let mac = Hmac::from_oid(&params.message_auth_scheme.oid)
        .ok_or_else(|| unsupported(params.message_auth_scheme.oid))?;
    let mac_name = mac.name();
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
    // The count is checked above to be at least 1, the one thing PBKDF2 refuses.
    prf.pbkdf2(password, kdf.salt.as_bytes(), iterations, &mut key)
        .map_err(|e| Error::Malformed(format!("PKCS#12 PBMAC1: {e}")))?;
    let plural = if iterations == 1 { "" } else { "s" };
    Ok((
        Zeroizing::new(mac.hmac(&key, data)),
        format!("PBMAC1 ({mac_name}, PBKDF2, {iterations} iteration{plural})"),
    ))
}

/// The MacData of a PBMAC1 MAC (RFC 9579) over `data`: PBKDF2 with HMAC-`hash` over the
/// password as given, then HMAC-`hash` under the 32-byte key. The outer salt and iteration
/// count are unused placeholders, as RFC 9579 has them and OpenSSL writes them.
pub(super) fn pbmac1_data(
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
    hmac.pbkdf2(password, salt, iterations, &mut key[..])
        .map_err(|e| Error::Malformed(format!("PKCS#12 PBMAC1: {e}")))?;
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
            digest: OctetString::new(hmac.hmac(&key[..], data))?,
        },
        mac_salt: OctetString::new(&b"NOT USED"[..])?,
        iterations: 1,
    })
}
