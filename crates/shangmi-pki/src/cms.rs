//! CMS / PKCS#7 SignedData with SM2 (GM/T 0010): sign and verify, attached or detached, with
//! signed attributes, several signers and the certificates included, under the PKCS#7
//! content-type OIDs or GM/T 0010's (1.2.156.10197.6.1.4.2.x), chosen on output and both
//! recognised on input.

use cms::content_info::{CmsVersion, ContentInfo};
use cms::signed_data::{EncapsulatedContentInfo, SignedData};
use const_oid::ObjectIdentifier;
use der::asn1::{Any, OctetString, SetOfVec};
use der::{Decode, Encode};
use shangmi::sm2::SigningKey;
use spki::AlgorithmIdentifierOwned;
use x509_cert::attr::{Attribute, AttributeValue};

use crate::{Cert, Error};

/// Which content-type OIDs a message is written with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// PKCS#7 / RFC 5652: data 1.2.840.113549.1.7.1, signedData 1.2.840.113549.1.7.2.
    Pkcs7,
    /// GM/T 0010: data 1.2.156.10197.6.1.4.2.1, signedData 1.2.156.10197.6.1.4.2.2.
    Gm,
}

use crate::oid::DATA as PKCS7_DATA;
use crate::oid::GM_DATA;
use crate::oid::GM_SIGNED_DATA as GM_SIGNED;
use crate::oid::SIGNED_DATA as PKCS7_SIGNED;
use crate::oid::SM3;

mod verify;
pub use verify::*;

impl Flavor {
    fn oids(self) -> (ObjectIdentifier, ObjectIdentifier) {
        match self {
            Flavor::Pkcs7 => (PKCS7_DATA, PKCS7_SIGNED),
            Flavor::Gm => (GM_DATA, GM_SIGNED),
        }
    }
}

fn alg(oid: ObjectIdentifier) -> AlgorithmIdentifierOwned {
    AlgorithmIdentifierOwned {
        oid,
        parameters: None,
    }
}

fn attribute(oid: ObjectIdentifier, value: &impl Encode) -> Result<Attribute, Error> {
    let mut values: SetOfVec<AttributeValue> = SetOfVec::new();
    values.insert(Any::from_der(&value.to_der()?)?)?;
    Ok(Attribute { oid, values })
}

/// A signer: its certificate and key.
pub struct CmsSigner<'a> {
    /// The signer's certificate (identifies it by issuer and serial number; included as the
    /// bytes it was read from).
    pub cert: &'a Cert,
    /// The signer's key.
    pub key: &'a SigningKey,
}

/// SignedData over `content` by every signer, each with the signed attributes content type,
/// message digest (SM3) and signing time, its signature made with GM/T 0009's SM2 ID. The
/// signers' certificates and `extra_certs` are included; `detached` leaves the content out.
/// Returns the DER ContentInfo.
pub fn sign(
    content: &[u8],
    signers: &[CmsSigner<'_>],
    extra_certs: &[Cert],
    detached: bool,
    flavor: Flavor,
) -> Result<Vec<u8>, Error> {
    let (data_oid, signed_oid) = flavor.oids();
    let infos = signer_infos(content, signers, data_oid, Signed::Attributes)?;
    let certs = certificate_set(signers, extra_certs)?;
    let mut digests = SetOfVec::new();
    digests.insert(alg(SM3))?;
    let econtent = if detached {
        None
    } else {
        Some(Any::encode_from(&OctetString::new(content)?)?)
    };
    let sd = SignedData {
        version: CmsVersion::V1,
        digest_algorithms: digests,
        encap_content_info: EncapsulatedContentInfo {
            econtent_type: data_oid,
            econtent,
        },
        certificates: Some(certs),
        crls: None,
        signer_infos: infos,
    };
    let ci = ContentInfo {
        content_type: signed_oid,
        content: with_kept_certificates(&sd.to_der()?, signers, extra_certs)?,
    };
    Ok(ci.to_der()?)
}

/// SignedData as GmSSL 3's `cmssign` writes it and its `cmsverify` requires: GM/T 0010 OIDs,
/// the content attached, no signed attributes, each signature SM2 with no Z on SM3 of the
/// EncapsulatedContentInfo's DER (see [`verify_accepting_gmssl`]). For GmSSL only: other
/// readers check PKCS#7's signature and refuse it.
pub fn sign_gmssl(
    content: &[u8],
    signers: &[CmsSigner<'_>],
    extra_certs: &[Cert],
) -> Result<Vec<u8>, Error> {
    let (data_oid, signed_oid) = Flavor::Gm.oids();
    let encap = EncapsulatedContentInfo {
        econtent_type: data_oid,
        econtent: Some(Any::encode_from(&OctetString::new(content)?)?),
    };
    let encap_der = encap.to_der()?;
    let infos = signer_infos(content, signers, data_oid, Signed::GmsslDigest(&encap_der))?;
    let mut digests = SetOfVec::new();
    digests.insert(alg(SM3))?;
    let sd = SignedData {
        version: CmsVersion::V1,
        digest_algorithms: digests,
        encap_content_info: encap,
        certificates: Some(certificate_set(signers, extra_certs)?),
        crls: None,
        signer_infos: infos,
    };
    let ci = ContentInfo {
        content_type: signed_oid,
        content: with_kept_certificates(&sd.to_der()?, signers, extra_certs)?,
    };
    Ok(ci.to_der()?)
}
