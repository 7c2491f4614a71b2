//! Writing a keystore.

use super::*;

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

pub(super) fn attribute_set(
    name: Option<&str>,
    key_id: &[u8],
) -> Result<SetOfVec<Attribute>, Error> {
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

pub(super) fn content_info(oid: ObjectIdentifier, content: Any) -> cms::content_info::ContentInfo {
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
    let mac_data = mac_data(&params, password, &safe)?;
    let pfx = Pfx {
        version: 3,
        auth_safe: content_info(DATA, Any::encode_from(&OctetString::new(safe)?)?),
        mac_data: Some(mac_data),
    };
    Ok(pfx.to_der()?)
}

/// The keystore's integrity: PBMAC1 or the classic PKCS#12 MAC over `safe`, with a fresh salt.
fn mac_data(params: &Pkcs12Params, password: &[u8], safe: &[u8]) -> Result<MacData, Error> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|e| Error::Crypto(e.to_string()))?;
    if params.pbmac1 {
        return pbmac1_data(params.mac, password, &salt, params.mac_iterations, safe);
    }
    let iterations = u64::from(params.mac_iterations);
    let mac = mac_of(params.mac, password, &salt, iterations, safe)?;
    Ok(MacData {
        mac: DigestInfo {
            algorithm: AlgorithmIdentifierOwned {
                oid: params.mac.oid(),
                // SM3's parameters are absent (GM/T); SHA's NULL, as OpenSSL writes them.
                parameters: (params.mac != MacHash::Sm3).then(Any::null),
            },
            digest: OctetString::new(mac)?,
        },
        mac_salt: OctetString::new(salt.as_slice())?,
        iterations,
    })
}
