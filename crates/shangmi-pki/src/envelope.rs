//! CMS / PKCS#7 EnvelopedData with SM2 key transport (GM/T 0010): the content encrypted with
//! SM4-CBC (or SM4-GCM, as gmsm writes and reads it) under a fresh key, that key SM2-encrypted
//! to each recipient certificate; PKCS#7 or GM/T 0010 content-type OIDs, both read.
//!
//! The wrapped key is GM/T 0009's ASN.1 ciphertext by default; CFCA's SADK wrote (and some of
//! its users still send) raw C1 || C2 || C3 without the 04, which is read too and written on
//! request. Recipients are named by issuer and serial number, or by subject key identifier.

use cms::cert::IssuerAndSerialNumber;
use cms::content_info::{CmsVersion, ContentInfo};
use cms::enveloped_data::{
    EncryptedContentInfo, EnvelopedData, KeyTransRecipientInfo, RecipientIdentifier, RecipientInfo,
    RecipientInfos,
};
use const_oid::ObjectIdentifier;
use der::Encode;
use der::asn1::{Any, OctetString};
use der::referenced::OwnedToRef;
use shangmi::sm2::Format;
use shangmi::sm4::Sm4;
use shangmi::sm4::modes::{cbc, gcm::Sm4Gcm};
use spki::AlgorithmIdentifierOwned;
use x509_cert::Certificate;
use x509_cert::ext::pkix::SubjectKeyIdentifier;
use zeroize::Zeroizing;

use crate::cms::Flavor;
use crate::{Cert, Error};

pub(crate) use crate::oid::DATA as PKCS7_DATA;
use crate::oid::ENVELOPED_DATA as PKCS7_ENVELOPED;
pub(crate) use crate::oid::GM_DATA;
use crate::oid::GM_ENVELOPED_DATA as GM_ENVELOPED;
pub(crate) use crate::oid::SM2_ENCRYPT;
use crate::oid::SM2_EXCHANGE as GMSSL_SM2_ENCRYPT;
use crate::oid::SM4_CBC;
use crate::oid::SM4_GCM;

mod open;
pub use open::*;

/// The content cipher of an EnvelopedData.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ContentCipher {
    /// SM4-CBC with PKCS#7 padding, the IV as the parameter: what every SM peer reads.
    #[default]
    Sm4Cbc,
    /// SM4-GCM with a 12-byte nonce and a 16-byte tag after the ciphertext, GCMParameters as
    /// the parameter (gmsm's `pkcs.SM4GCM`). Not RFC 5083's AuthEnvelopedData: no peer sends
    /// that with SM2 key transport.
    Sm4Gcm,
}

/// How each recipient's SM2-encrypted content key is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WrappedKey {
    /// GM/T 0009's DER `SM2Cipher` (OpenSSL, gmsm, GmSSL, BouncyCastle).
    #[default]
    Der,
    /// Raw C1 || C2 || C3 with no 04 (CFCA SADK's legacy form, gmsm's `EncryptCFCA`).
    CfcaRaw,
    /// DER, in a version 1 RecipientInfo labelled 1.2.156.10197.1.301.2 with no parameters:
    /// what GmSSL 3 writes and the only form its `cmsdecrypt` takes.
    Gmssl,
}

/// SM2 key transport as writers label it: sm2encrypt (GM/T 0006's 301.3), the bare SM2 OID,
/// and GmSSL's 301.2.
pub(crate) fn is_sm2_key_transport(oid: &ObjectIdentifier) -> bool {
    [SM2_ENCRYPT, crate::oid::SM2, GMSSL_SM2_ENCRYPT].contains(oid)
}

/// How a recipient is named in its RecipientInfo.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RecipientName {
    /// Issuer and serial number (version 0 RecipientInfo).
    #[default]
    IssuerAndSerial,
    /// The certificate's subject key identifier (version 2; CFCA's newer form).
    SubjectKeyId,
}

/// Everything an EnvelopedData can be written with; the default is the form every peer reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Envelope {
    /// Content-type OIDs.
    pub flavor: Flavor,
    /// Content encryption.
    pub cipher: ContentCipher,
    /// The wrapped key's layout.
    pub wrapped_key: WrappedKey,
    /// How recipients are named.
    pub recipient_name: RecipientName,
}

impl Default for Envelope {
    fn default() -> Self {
        Envelope {
            flavor: Flavor::Pkcs7,
            cipher: ContentCipher::default(),
            wrapped_key: WrappedKey::default(),
            recipient_name: RecipientName::default(),
        }
    }
}

/// RFC 5084's GCM parameters; the ICV length is 12 when absent.
#[derive(der::Sequence)]
struct GcmParameters {
    nonce: OctetString,
    #[asn1(default = "default_icv_len")]
    icv_len: u8,
}

fn default_icv_len() -> u8 {
    12
}

pub(crate) fn random<const N: usize>() -> Result<Zeroizing<[u8; N]>, Error> {
    let mut b = Zeroizing::new([0u8; N]);
    getrandom::fill(&mut b[..]).map_err(|e| Error::Crypto(format!("random generator: {e}")))?;
    Ok(b)
}

/// EnvelopedData of `content` for every certificate in `recipients`, SM4-CBC, the keys in
/// DER. Returns the DER ContentInfo.
pub fn encrypt(content: &[u8], recipients: &[Cert], flavor: Flavor) -> Result<Vec<u8>, Error> {
    encrypt_with(
        content,
        recipients,
        &Envelope {
            flavor,
            ..Envelope::default()
        },
    )
}

/// EnvelopedData of `content` for every certificate in `recipients`, written as `how` says.
/// Returns the DER ContentInfo.
pub fn encrypt_with(content: &[u8], recipients: &[Cert], how: &Envelope) -> Result<Vec<u8>, Error> {
    if recipients.is_empty() {
        return Err(Error::InvalidArgument("no recipient".into()));
    }
    let (data_oid, enveloped_oid) = match how.flavor {
        Flavor::Pkcs7 => (PKCS7_DATA, PKCS7_ENVELOPED),
        Flavor::Gm => (GM_DATA, GM_ENVELOPED),
    };
    let key = random::<16>()?;
    let mut infos = Vec::new();
    for r in recipients {
        infos.push(RecipientInfo::Ktri(recipient_info(r, &key, how)?));
    }
    let encrypted_content = encrypted_content(content, &key, how.cipher, data_oid)?;
    // RFC 5652 6.1: version 2 once any RecipientInfo is not version 0; GmSSL writes (and
    // requires) 1, as GM/T 0010 numbers its structures.
    let version = match (how.recipient_name, how.wrapped_key) {
        (RecipientName::SubjectKeyId, _) => CmsVersion::V2,
        (_, WrappedKey::Gmssl) => CmsVersion::V1,
        _ => CmsVersion::V0,
    };
    let ed = EnvelopedData {
        version,
        originator_info: None,
        recip_infos: RecipientInfos::try_from(infos)?,
        encrypted_content,
        unprotected_attrs: None,
    };
    let ci = ContentInfo {
        content_type: enveloped_oid,
        content: Any::encode_from(&ed)?,
    };
    Ok(ci.to_der()?)
}

/// `content` encrypted under `key` as `cipher` says, its type `data_oid`.
pub(crate) fn encrypted_content(
    content: &[u8],
    key: &[u8; 16],
    cipher: ContentCipher,
    data_oid: ObjectIdentifier,
) -> Result<EncryptedContentInfo, Error> {
    let (content_enc_alg, ciphertext) = match cipher {
        ContentCipher::Sm4Cbc => {
            let iv = random::<16>()?;
            let alg = AlgorithmIdentifierOwned {
                oid: SM4_CBC,
                parameters: Some(Any::encode_from(&OctetString::new(iv.to_vec())?)?),
            };
            (alg, cbc::encrypt_padded(&Sm4::new(key), &iv, content))
        }
        ContentCipher::Sm4Gcm => {
            let nonce = random::<12>()?;
            let sealed = Sm4Gcm::new(key)
                .encrypt(&nonce[..], &[], content)
                .map_err(|e| Error::Crypto(e.to_string()))?;
            let params = GcmParameters {
                nonce: OctetString::new(nonce.to_vec())?,
                icv_len: 16,
            };
            let alg = AlgorithmIdentifierOwned {
                oid: SM4_GCM,
                parameters: Some(Any::encode_from(&params)?),
            };
            (alg, sealed)
        }
    };
    Ok(EncryptedContentInfo {
        content_type: data_oid,
        content_enc_alg,
        encrypted_content: Some(OctetString::new(ciphertext)?),
    })
}

/// The content key wrapped for one recipient certificate.
pub(crate) fn recipient_info(
    cert: &Certificate,
    key: &[u8; 16],
    how: &Envelope,
) -> Result<KeyTransRecipientInfo, Error> {
    let t = cert.tbs_certificate();
    let public = crate::alg::public_key(t.subject_public_key_info())?;
    let crypto = |e: shangmi::sm2::Error| Error::Crypto(e.to_string());
    let wrapped = match how.wrapped_key {
        WrappedKey::Der | WrappedKey::Gmssl => public.encrypt(key, Format::Der).map_err(crypto)?,
        WrappedKey::CfcaRaw => {
            let mut raw = public.encrypt(key, Format::C1C2C3).map_err(crypto)?;
            raw.remove(0);
            raw
        }
    };
    let (version, rid) = match how.recipient_name {
        RecipientName::IssuerAndSerial => (
            CmsVersion::V0,
            RecipientIdentifier::IssuerAndSerialNumber(IssuerAndSerialNumber {
                issuer: t.issuer().clone(),
                serial_number: t.serial_number().clone(),
            }),
        ),
        RecipientName::SubjectKeyId => {
            let ski = match t.get_extension::<SubjectKeyIdentifier>().ok().flatten() {
                Some((_, k)) => k,
                None => SubjectKeyIdentifier::try_from(t.subject_public_key_info().owned_to_ref())?,
            };
            (
                CmsVersion::V2,
                RecipientIdentifier::SubjectKeyIdentifier(ski),
            )
        }
    };
    let (version, key_enc_alg) = match how.wrapped_key {
        WrappedKey::Gmssl => (
            CmsVersion::V1,
            AlgorithmIdentifierOwned {
                oid: GMSSL_SM2_ENCRYPT,
                parameters: None,
            },
        ),
        _ => (
            version,
            AlgorithmIdentifierOwned {
                oid: SM2_ENCRYPT,
                parameters: Some(Any::null()),
            },
        ),
    };
    Ok(KeyTransRecipientInfo {
        version,
        rid,
        key_enc_alg,
        enc_key: OctetString::new(wrapped)?,
    })
}

/// Whether `rid` names `cert` (by issuer and serial number, or subject key identifier).
fn names(cert: &Certificate, rid: &RecipientIdentifier) -> bool {
    let t = cert.tbs_certificate();
    match rid {
        RecipientIdentifier::IssuerAndSerialNumber(ias) => {
            t.issuer() == &ias.issuer && t.serial_number() == &ias.serial_number
        }
        // A certificate without the extension is named by RFC 5280's method 1 (SHA-1 of the
        // key's bits), as gmsm and CFCA name it.
        RecipientIdentifier::SubjectKeyIdentifier(ski) => {
            match t.get_extension::<SubjectKeyIdentifier>().ok().flatten() {
                Some((_, k)) => k == *ski,
                None => SubjectKeyIdentifier::try_from(t.subject_public_key_info().owned_to_ref())
                    .is_ok_and(|k| k == *ski),
            }
        }
    }
}
