//! PKCS#7 SignedAndEnvelopedData with SM2 (GM/T 0010's 1.2.156.10197.6.1.4.2.4, PKCS#7's
//! 1.2.840.113549.1.7.4): content encrypted as in EnvelopedData and signed by its senders in
//! one message, as CAs deliver encryption key pairs (GM/T 0014) and as gmsm writes it.
//!
//! ```text
//! SignedAndEnvelopedData ::= SEQUENCE {
//!   version               INTEGER (1),
//!   recipientInfos        SET OF RecipientInfo,
//!   digestAlgorithms      SET OF AlgorithmIdentifier,
//!   encryptedContentInfo  EncryptedContentInfo,
//!   certificates      [0] IMPLICIT CertificateSet OPTIONAL,
//!   crls              [1] IMPLICIT RevocationInfoChoices OPTIONAL,
//!   signerInfos           SET OF SignerInfo }
//! ```
//!
//! Each signature is over the content itself with GM/T 0009's SM2 ID, no signed attributes,
//! and not encrypted again under the content key (PKCS#7 says to; the deliveries met in
//! practice and gmsm do not). RecipientInfos are read loosely: a real CA delivery names its
//! recipient with a broken issuer, so the recipient is found by the key that opens it.

use cms::content_info::{CmsVersion, ContentInfo};
use cms::enveloped_data::{EncryptedContentInfo, RecipientInfo, RecipientInfos};
use cms::revocation::RevocationInfoChoices;
use cms::signed_data::{CertificateSet, SignerInfos};
use der::asn1::{Any, OctetString, SetOfVec};
use der::{Decode, Encode, Reader, Sequence, SliceReader, Tag, Tagged};
use shangmi::sm2::SigningKey;
use spki::AlgorithmIdentifierOwned;
use zeroize::Zeroizing;

use crate::cms::{CmsSigner, Flavor};
use crate::envelope::{self, Cipher, ContentCipher, Envelope};
use crate::{Cert, Error, Verifier};

use crate::oid::GM_SIGNED_AND_ENVELOPED_DATA as GM_SIGNED_ENVELOPED;
use crate::oid::SIGNED_AND_ENVELOPED_DATA as PKCS7_SIGNED_ENVELOPED;
use crate::oid::SM3;

#[derive(Sequence)]
struct SignedAndEnvelopedData {
    version: u8,
    /// SET OF RecipientInfo, read one by one (see [`LooseKtri`]).
    recipient_infos: Any,
    /// SET OF AlgorithmIdentifier: each signer names its own.
    digest_algorithms: Any,
    encrypted_content: EncryptedContentInfo,
    #[asn1(context_specific = "0", tag_mode = "IMPLICIT", optional = "true")]
    certificates: Option<CertificateSet>,
    #[asn1(context_specific = "1", tag_mode = "IMPLICIT", optional = "true")]
    crls: Option<RevocationInfoChoices>,
    signer_infos: SignerInfos,
}

/// A key-transport RecipientInfo whose recipient identifier is kept as bytes.
#[derive(Sequence)]
struct LooseKtri {
    version: u8,
    rid: Any,
    key_enc_alg: AlgorithmIdentifierOwned,
    enc_key: OctetString,
}

/// What an opened and verified SignedAndEnvelopedData held.
#[derive(Debug)]
pub struct Opened {
    /// The content, wiped when dropped.
    pub content: Zeroizing<Vec<u8>>,
    /// Each signer's certificate, in the order of the signer infos.
    pub signers: Vec<crate::Cert>,
    /// The content-type OIDs it was written with.
    pub flavor: Flavor,
}

/// SignedAndEnvelopedData of `content`, signed by every signer and encrypted (SM4-CBC) to
/// every recipient. Returns the DER ContentInfo.
pub fn sign_and_encrypt(
    content: &[u8],
    signers: &[CmsSigner<'_>],
    recipients: &[Cert],
    flavor: Flavor,
) -> Result<Vec<u8>, Error> {
    if signers.is_empty() || recipients.is_empty() {
        return Err(Error::InvalidArgument(
            "signed and enveloped data needs a signer and a recipient".into(),
        ));
    }
    let (data_oid, outer_oid) = match flavor {
        Flavor::Pkcs7 => (envelope::PKCS7_DATA, PKCS7_SIGNED_ENVELOPED),
        Flavor::Gm => (envelope::GM_DATA, GM_SIGNED_ENVELOPED),
    };
    let how = Envelope {
        flavor,
        ..Envelope::default()
    };
    let key = envelope::random::<16>()?;
    let mut infos = Vec::new();
    for r in recipients {
        let mut ktri = envelope::recipient_info(r, &key, &how)?;
        // PKCS#7 v1.5's RecipientInfo in this structure, as gmsm and CA deliveries write it.
        ktri.version = CmsVersion::V1;
        infos.push(RecipientInfo::Ktri(ktri));
    }
    let mut digests: SetOfVec<AlgorithmIdentifierOwned> = SetOfVec::new();
    digests.insert(AlgorithmIdentifierOwned {
        oid: SM3,
        parameters: None,
    })?;
    let sed = SignedAndEnvelopedData {
        version: 1,
        recipient_infos: Any::encode_from(&RecipientInfos::try_from(infos)?)?,
        digest_algorithms: Any::encode_from(&digests)?,
        encrypted_content: envelope::encrypted_content(
            content,
            &key,
            ContentCipher::Sm4Cbc,
            data_oid,
        )?,
        certificates: Some(crate::cms::certificate_set(signers, &[])?),
        crls: None,
        signer_infos: crate::cms::signer_infos(
            content,
            signers,
            data_oid,
            crate::cms::Signed::Content,
        )?,
    };
    let ci = ContentInfo {
        content_type: outer_oid,
        content: crate::cms::with_kept_certificates(&sed.to_der()?, signers, &[])?,
    };
    Ok(ci.to_der()?)
}

/// Each key-transport RecipientInfo of a SET, those of other kinds skipped.
fn key_transport_infos(set: &Any) -> Result<Vec<LooseKtri>, Error> {
    if set.tag() != Tag::Set {
        return Err(Error::Malformed("recipientInfos is not a SET".into()));
    }
    let mut reader = SliceReader::new(set.value())?;
    let mut out = Vec::new();
    while !reader.is_finished() {
        let one = Any::decode(&mut reader)?;
        if let Ok(k) = LooseKtri::from_der(&one.to_der()?) {
            out.push(k);
        }
    }
    Ok(out)
}

/// Opens SignedAndEnvelopedData (DER or BER ContentInfo, or PEM `PKCS7`/`CMS`) with `key`
/// and verifies every signer over the content and its chain with `verifier`. The content is
/// returned only when both hold; a key that opens nothing, a tampered message or a signature
/// that fails is an error with no content.
pub fn decrypt_and_verify(
    message: &[u8],
    key: &SigningKey,
    verifier: &Verifier,
) -> Result<Opened, Error> {
    let ci = crate::read::content_info(message)?;
    let flavor = match ci.content_type {
        PKCS7_SIGNED_ENVELOPED => Flavor::Pkcs7,
        GM_SIGNED_ENVELOPED => Flavor::Gm,
        other => {
            return Err(Error::Unsupported(format!(
                "content type {other} (SignedAndEnvelopedData is {PKCS7_SIGNED_ENVELOPED} or \
                 {GM_SIGNED_ENVELOPED})"
            )));
        }
    };
    let sed: SignedAndEnvelopedData = ci.content.decode_as()?;
    let eci = &sed.encrypted_content;
    let cipher = envelope::content_cipher(&eci.content_enc_alg)?;
    let ciphertext = eci
        .encrypted_content
        .as_ref()
        .ok_or_else(|| Error::Malformed("no encrypted content".into()))?;
    let failed = || Error::Decryption("not a recipient for this key, or tampered".into());
    let plain = key_transport_infos(&sed.recipient_infos)?
        .iter()
        .filter(|k| envelope::is_sm2_key_transport(&k.key_enc_alg.oid))
        .find_map(|k| envelope::unwrap_key(key, k.enc_key.as_bytes()))
        .and_then(|k16| cipher.decrypt(&k16, ciphertext.as_bytes()))
        .ok_or_else(failed)?;
    let certs = crate::cms::included_certificates(&ci.content)?;
    let verify = |content: &[u8]| {
        crate::cms::verify_signers(
            &sed.signer_infos,
            &certs,
            content,
            eci.content_type,
            verifier,
            None,
        )
    };
    // ECB content may or may not be padded; the signature says which reading was signed.
    let candidates: Vec<&[u8]> = match cipher {
        Cipher::Ecb => envelope::ecb_unpadded(&plain)
            .into_iter()
            .chain([plain.as_slice()])
            .collect(),
        _ => vec![plain.as_slice()],
    };
    let mut last = None;
    for c in candidates {
        match verify(c) {
            Ok(signers) => {
                return Ok(Opened {
                    content: Zeroizing::new(c.to_vec()),
                    signers,
                    flavor,
                });
            }
            Err(e @ Error::BadSignature(_)) => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(failed))
}

/// What a CMS message is, from its outer content type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmsKind {
    /// SignedData (PKCS#7 or GM/T 0010 OID).
    SignedData,
    /// EnvelopedData.
    EnvelopedData,
    /// SignedAndEnvelopedData.
    SignedAndEnvelopedData,
    /// Any other content type.
    Other,
}

/// The kind of a CMS message (DER, BER or PEM), so a caller can pick the call that reads it.
pub fn kind(message: &[u8]) -> Result<CmsKind, Error> {
    let ci = crate::read::content_info(message)?;
    use crate::oid::{
        ENVELOPED_DATA, GM_ENVELOPED_DATA, GM_SIGNED_AND_ENVELOPED_DATA, GM_SIGNED_DATA,
        SIGNED_AND_ENVELOPED_DATA, SIGNED_DATA,
    };
    let t = ci.content_type;
    Ok(if t == SIGNED_DATA || t == GM_SIGNED_DATA {
        CmsKind::SignedData
    } else if t == ENVELOPED_DATA || t == GM_ENVELOPED_DATA {
        CmsKind::EnvelopedData
    } else if t == SIGNED_AND_ENVELOPED_DATA || t == GM_SIGNED_AND_ENVELOPED_DATA {
        CmsKind::SignedAndEnvelopedData
    } else {
        CmsKind::Other
    })
}
