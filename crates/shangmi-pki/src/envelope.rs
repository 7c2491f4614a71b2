//! CMS / PKCS#7 EnvelopedData with SM2 key transport (GM/T 0010): the content encrypted with
//! SM4-CBC under a fresh key, that key SM2-encrypted (GM/T 0009's ASN.1 layout) to each
//! recipient certificate; PKCS#7 or GM/T 0010 content-type OIDs, both read.

use cms::cert::IssuerAndSerialNumber;
use cms::content_info::{CmsVersion, ContentInfo};
use cms::enveloped_data::{
    EncryptedContentInfo, EnvelopedData, KeyTransRecipientInfo, RecipientIdentifier, RecipientInfo,
    RecipientInfos,
};
use const_oid::ObjectIdentifier;
use der::asn1::{Any, OctetString};
use der::{Decode, Encode};
use shangmi::sm2::{Format, SigningKey};
use shangmi::sm4::{Sm4, modes::cbc};
use spki::AlgorithmIdentifierOwned;
use x509_cert::Certificate;
use zeroize::Zeroizing;

use crate::Error;
use crate::cms::Flavor;

const PKCS7_DATA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.1");
const PKCS7_ENVELOPED: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.3");
const GM_DATA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.156.10197.6.1.4.2.1");
const GM_ENVELOPED: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.156.10197.6.1.4.2.3");
/// sm2encrypt, the key-transport algorithm.
const SM2_ENCRYPT: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.156.10197.1.301.3");
/// SM4-CBC; its parameter is the IV.
const SM4_CBC: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.156.10197.1.104.2");
/// SM4, which some writers put for SM4-CBC.
const SM4: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.156.10197.1.104");

fn random<const N: usize>() -> Result<Zeroizing<[u8; N]>, Error> {
    let mut b = Zeroizing::new([0u8; N]);
    getrandom::fill(&mut b[..]).map_err(|e| Error::Crypto(format!("random generator: {e}")))?;
    Ok(b)
}

/// EnvelopedData of `content` for every certificate in `recipients`. Returns the DER
/// ContentInfo.
pub fn encrypt(
    content: &[u8],
    recipients: &[Certificate],
    flavor: Flavor,
) -> Result<Vec<u8>, Error> {
    if recipients.is_empty() {
        return Err(Error::InvalidArgument("no recipient".into()));
    }
    let (data_oid, enveloped_oid) = match flavor {
        Flavor::Pkcs7 => (PKCS7_DATA, PKCS7_ENVELOPED),
        Flavor::Gm => (GM_DATA, GM_ENVELOPED),
    };
    let key = random::<16>()?;
    let iv = random::<16>()?;
    let mut infos = Vec::new();
    for r in recipients {
        let public = crate::alg::public_key(r.tbs_certificate().subject_public_key_info())?;
        let wrapped = public
            .encrypt(&key[..], Format::Der)
            .map_err(|e| Error::Crypto(e.to_string()))?;
        infos.push(RecipientInfo::Ktri(KeyTransRecipientInfo {
            version: CmsVersion::V0,
            rid: RecipientIdentifier::IssuerAndSerialNumber(IssuerAndSerialNumber {
                issuer: r.tbs_certificate().issuer().clone(),
                serial_number: r.tbs_certificate().serial_number().clone(),
            }),
            key_enc_alg: AlgorithmIdentifierOwned {
                oid: SM2_ENCRYPT,
                parameters: Some(Any::null()),
            },
            enc_key: OctetString::new(wrapped)?,
        }));
    }
    let ciphertext = cbc::encrypt_padded(&Sm4::new(&key), &iv, content);
    let ed = EnvelopedData {
        version: CmsVersion::V0,
        originator_info: None,
        recip_infos: RecipientInfos::try_from(infos)?,
        encrypted_content: EncryptedContentInfo {
            content_type: data_oid,
            content_enc_alg: AlgorithmIdentifierOwned {
                oid: SM4_CBC,
                parameters: Some(Any::encode_from(&OctetString::new(iv.to_vec())?)?),
            },
            encrypted_content: Some(OctetString::new(ciphertext)?),
        },
        unprotected_attrs: None,
    };
    let ci = ContentInfo {
        content_type: enveloped_oid,
        content: Any::encode_from(&ed)?,
    };
    Ok(ci.to_der()?)
}

/// Whether `rid` names `cert` (by issuer and serial number, or subject key identifier).
fn names(cert: &Certificate, rid: &RecipientIdentifier) -> bool {
    let t = cert.tbs_certificate();
    match rid {
        RecipientIdentifier::IssuerAndSerialNumber(ias) => {
            t.issuer() == &ias.issuer && t.serial_number() == &ias.serial_number
        }
        RecipientIdentifier::SubjectKeyIdentifier(ski) => t
            .get_extension::<x509_cert::ext::pkix::SubjectKeyIdentifier>()
            .ok()
            .flatten()
            .is_some_and(|(_, k)| k == *ski),
    }
}

/// Decrypts EnvelopedData (DER ContentInfo, or PEM `PKCS7`/`CMS`) with `key`: the recipient
/// is the one `cert` names when given, else each key-transport recipient is tried. Any
/// failure (no recipient for the key, a key that does not decrypt, bad padding) is one error
/// with no plaintext.
pub fn decrypt(
    message: &[u8],
    key: &SigningKey,
    cert: Option<&Certificate>,
) -> Result<Zeroizing<Vec<u8>>, Error> {
    let der = crate::read::der_of(message, &["PKCS7", "CMS"], "CMS")?;
    let ci = ContentInfo::from_der(&der)?;
    if ci.content_type != PKCS7_ENVELOPED && ci.content_type != GM_ENVELOPED {
        return Err(Error::Unsupported(format!(
            "content type {} (EnvelopedData is {PKCS7_ENVELOPED} or {GM_ENVELOPED})",
            ci.content_type
        )));
    }
    let ed: EnvelopedData = ci.content.decode_as()?;
    let eci = &ed.encrypted_content;
    // The bare SM4 OID means CBC to the writers that use it (gmsm, CFCA).
    if eci.content_enc_alg.oid != SM4_CBC && eci.content_enc_alg.oid != SM4 {
        return Err(Error::Unsupported(format!(
            "content encryption {} (only SM4-CBC, {SM4_CBC})",
            eci.content_enc_alg.oid
        )));
    }
    let iv: [u8; 16] = eci
        .content_enc_alg
        .parameters
        .as_ref()
        .ok_or_else(|| Error::Malformed("SM4-CBC without an IV".into()))?
        .decode_as::<OctetString>()?
        .as_bytes()
        .try_into()
        .map_err(|_| Error::Malformed("the SM4-CBC IV is not 16 bytes".into()))?;
    let ciphertext = eci
        .encrypted_content
        .as_ref()
        .ok_or_else(|| Error::Malformed("no encrypted content".into()))?;
    let failed = || Error::Decryption("not a recipient for this key, or tampered".into());
    for ri in ed.recip_infos.0.iter() {
        let RecipientInfo::Ktri(k) = ri else { continue };
        if let Some(c) = cert
            && !names(c, &k.rid)
        {
            continue;
        }
        if k.key_enc_alg.oid != SM2_ENCRYPT
            && k.key_enc_alg.oid != ObjectIdentifier::new_unwrap("1.2.156.10197.1.301")
        {
            continue;
        }
        let Ok(content_key) = key.decrypt(k.enc_key.as_bytes(), Format::Der) else {
            continue;
        };
        let content_key = Zeroizing::new(content_key);
        let Ok(k16) = <[u8; 16]>::try_from(content_key.as_slice()) else {
            continue;
        };
        let k16 = Zeroizing::new(k16);
        return cbc::decrypt_padded(&Sm4::new(&k16), &iv, ciphertext.as_bytes())
            .map(Zeroizing::new)
            .map_err(|_| failed());
    }
    Err(failed())
}
