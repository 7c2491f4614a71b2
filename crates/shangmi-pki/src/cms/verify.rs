//! SignedData verified: every signer's signature over its signed attributes (or GmSSL's form),
//! the message digest, and each signer's chain to the verifier's anchors.

use cms::cert::{CertificateChoices, IssuerAndSerialNumber};
use cms::content_info::CmsVersion;
use cms::signed_data::{CertificateSet, SignedData, SignerIdentifier, SignerInfo, SignerInfos};
use const_oid::ObjectIdentifier;
use der::asn1::{Any, OctetString, SetOfVec, UtcTime};
use der::{Decode, Encode};
use shangmi::sm2::Signature;
use x509_cert::attr::Attribute;
use x509_cert::time::Time;

use super::{CmsSigner, Flavor, alg, attribute};
use crate::oid::CONTENT_TYPE;
use crate::oid::GM_SIGNED_DATA as GM_SIGNED;
use crate::oid::MESSAGE_DIGEST;
use crate::oid::SIGNED_DATA as PKCS7_SIGNED;
use crate::oid::SIGNING_TIME;
use crate::oid::SM2;
use crate::oid::SM2_SIGN;
use crate::oid::SM3;
use crate::{Cert, DEFAULT_ID, Error, Verifier};

/// What a verified SignedData held.
#[derive(Clone, Debug)]
pub struct Verified {
    /// The content (attached, or the detached content that was given).
    pub content: Vec<u8>,
    /// Each signer's certificate, in the order of the signer infos (a SET, so DER order).
    pub signers: Vec<Cert>,
    /// The content-type OIDs it was written with.
    pub flavor: Flavor,
}

fn bad(m: impl Into<String>) -> Error {
    Error::BadSignature(m.into())
}

/// Verifies SignedData (DER or BER ContentInfo, or PEM `PKCS7`/`CMS`): every signer's
/// signature over the content (checking the message digest and content type in its signed
/// attributes) with GM/T 0009's SM2 ID, and its certificate's chain with `verifier`, the
/// message's own certificates as intermediates. `detached` is the content when the message has
/// none.
pub fn verify(
    message: &[u8],
    detached: Option<&[u8]>,
    verifier: &Verifier,
) -> Result<Verified, Error> {
    verify_impl(message, detached, verifier, false)
}

/// [`verify`], also accepting signers in GmSSL 3's form: no signed attributes, and SM2 with no
/// Z on SM3 of the EncapsulatedContentInfo's DER, which is what GmSSL's `cmssign` writes and
/// its `cmsverify` reads (not PKCS#7's or GM/T 0010's signature). Opt-in: a signer that signs
/// bare digests for other purposes could otherwise be taken as signing a message.
pub fn verify_accepting_gmssl(message: &[u8], verifier: &Verifier) -> Result<Verified, Error> {
    verify_impl(message, None, verifier, true)
}

fn verify_impl(
    message: &[u8],
    detached: Option<&[u8]>,
    verifier: &Verifier,
    gmssl: bool,
) -> Result<Verified, Error> {
    let ci = crate::read::content_info(message)?;
    let flavor = match ci.content_type {
        PKCS7_SIGNED => Flavor::Pkcs7,
        GM_SIGNED => Flavor::Gm,
        other => {
            return Err(Error::Unsupported(format!(
                "content type {other} (SignedData is {PKCS7_SIGNED} or {GM_SIGNED})"
            )));
        }
    };
    let sd: SignedData = ci.content.decode_as()?;
    let content = match (&sd.encap_content_info.econtent, detached) {
        (Some(e), None) => e.decode_as::<OctetString>()?.into_bytes().into_vec(),
        (None, Some(d)) => d.to_vec(),
        (Some(_), Some(_)) => {
            return Err(Error::InvalidArgument(
                "the message carries its content: give none beside it".into(),
            ));
        }
        (None, None) => {
            return Err(Error::InvalidArgument(
                "detached content: the content is needed to verify".into(),
            ));
        }
    };
    let certs = included_certificates(&ci.content)?;
    let encap = if gmssl {
        Some(sd.encap_content_info.to_der()?)
    } else {
        None
    };
    let signers = verify_signers(
        &sd.signer_infos,
        &certs,
        &content,
        sd.encap_content_info.econtent_type,
        verifier,
        encap.as_deref(),
    )?;
    Ok(Verified {
        content,
        signers,
        flavor,
    })
}

/// The certificates a message includes (other certificate formats skipped), `content` being
/// its SignedData or SignedAndEnvelopedData, each as the bytes it was included as.
pub(crate) fn included_certificates(content: &der::Any) -> Result<Vec<Cert>, Error> {
    crate::read::included_certificate_ders(&content.to_der()?)?
        .iter()
        .map(|der| Cert::from_der(der))
        .collect()
}

/// Checks every signer's signature over `content` (through its signed attributes when it has
/// them) with GM/T 0009's SM2 ID, and its certificate's chain with `verifier`, `certs` the
/// message's own certificates. Returns the signers' certificates.
///
/// `gmssl`, when given, is the message's EncapsulatedContentInfo (DER): a signer without signed
/// attributes whose signature fails is then checked in GmSSL 3's form too (see
/// [`Signed::GmsslDigest`]).
pub(crate) fn verify_signers(
    infos: &SignerInfos,
    certs: &[Cert],
    content: &[u8],
    content_type: ObjectIdentifier,
    verifier: &Verifier,
    gmssl: Option<&[u8]>,
) -> Result<Vec<Cert>, Error> {
    if infos.0.is_empty() {
        return Err(bad("no signer"));
    }
    let digest = shangmi::sm3::hash(content);
    let mut signers = Vec::new();
    for si in infos.0.iter() {
        let included = match &si.sid {
            SignerIdentifier::IssuerAndSerialNumber(ias) => certs.iter().find(|c| {
                c.tbs_certificate().issuer() == &ias.issuer
                    && c.tbs_certificate().serial_number() == &ias.serial_number
            }),
            SignerIdentifier::SubjectKeyIdentifier(ski) => certs.iter().find(|c| {
                c.tbs_certificate()
                    .get_extension::<x509_cert::ext::pkix::SubjectKeyIdentifier>()
                    .ok()
                    .flatten()
                    .is_some_and(|(_, k)| k == *ski)
            }),
        }
        .ok_or_else(|| bad("a signer's certificate is not in the message"))?;
        let cert = included;
        if si.digest_alg.oid != SM3 {
            return Err(Error::Unsupported(format!(
                "digest {} (only SM3)",
                si.digest_alg.oid
            )));
        }
        if ![SM2_SIGN, SM2, crate::SM2_WITH_SM3].contains(&si.signature_algorithm.oid) {
            return Err(Error::Unsupported(format!(
                "signature algorithm {} (only SM2)",
                si.signature_algorithm.oid
            )));
        }
        let key = *cert.public_key()?;
        let sig = Signature::from_der(si.signature.as_bytes())
            .map_err(|_| bad("a signature is not DER (r, s)"))?;
        let signed_bytes = match &si.signed_attrs {
            Some(attrs) => {
                let one = |oid: ObjectIdentifier| {
                    let mut found = attrs.iter().filter(|a| a.oid == oid);
                    match (found.next(), found.next()) {
                        (Some(a), None) if a.values.len() == 1 => Ok(a.values.get(0).cloned()),
                        (None, _) => Ok(None),
                        _ => Err(bad(format!("attribute {oid} more than once"))),
                    }
                };
                let md = one(MESSAGE_DIGEST)?.ok_or_else(|| bad("no message digest attribute"))?;
                if md.decode_as::<OctetString>()?.as_bytes() != digest {
                    return Err(bad("the message digest does not match the content"));
                }
                let ct = one(CONTENT_TYPE)?.ok_or_else(|| bad("no content type attribute"))?;
                if ct.decode_as::<ObjectIdentifier>()? != content_type {
                    return Err(bad("the content type attribute does not match the content"));
                }
                attrs.to_der()?
            }
            None => content.to_vec(),
        };
        let gmssl_form = || {
            si.signed_attrs.is_none()
                && gmssl.is_some_and(|e| key.verify_digest(&shangmi::sm3::hash(e), &sig).is_ok())
        };
        key.verify_with_id(DEFAULT_ID, &signed_bytes, &sig)
            .or_else(|e| if gmssl_form() { Ok(()) } else { Err(e) })
            .map_err(|_| {
                bad(format!(
                    "the signature of \"{}\" does not verify",
                    cert.tbs_certificate().subject()
                ))
            })?;
        if !verifier.anchor_may_sign(cert) {
            crate::usage::check_signing(cert, crate::Purpose::Document)?;
        }
        // Chains are verified over the certificates' bytes as included.
        verifier.verify(included, certs)?;
        signers.push(cert.clone());
    }
    Ok(signers)
}

/// What a SignerInfo's signature covers.
#[derive(Clone, Copy)]
pub(crate) enum Signed<'a> {
    /// Signed attributes (content type, message digest, signing time), GM/T 0009's SM2 ID.
    Attributes,
    /// The content itself, GM/T 0009's SM2 ID (SignedAndEnvelopedData's signers).
    Content,
    /// GmSSL 3's form: SM2 on SM3 of the EncapsulatedContentInfo's DER (given here) as the
    /// digest itself, no Z and no attributes.
    GmsslDigest(&'a [u8]),
}

/// One SignerInfo per signer over `content`, covering what `signed` says.
pub(crate) fn signer_infos(
    content: &[u8],
    signers: &[CmsSigner<'_>],
    data_oid: ObjectIdentifier,
    signed: Signed<'_>,
) -> Result<SignerInfos, Error> {
    let digest = shangmi::sm3::hash(content);
    let now = UtcTime::from_system_time(std::time::SystemTime::now())
        .map_err(|e| Error::InvalidArgument(format!("signing time: {e}")))?;
    let mut infos = Vec::new();
    for s in signers {
        let public = *s.cert.public_key()?;
        if public != *s.key.verifying_key() {
            return Err(Error::InvalidArgument(format!(
                "the key is not the key of \"{}\"",
                s.cert.tbs_certificate().subject()
            )));
        }
        let sign = |m: &[u8]| s.key.sign_with_id(DEFAULT_ID, m);
        let (signed_attrs, sig, sig_alg) = match signed {
            Signed::Attributes => {
                let mut attrs: SetOfVec<Attribute> = SetOfVec::new();
                attrs.insert(attribute(CONTENT_TYPE, &data_oid)?)?;
                attrs.insert(attribute(
                    MESSAGE_DIGEST,
                    &OctetString::new(digest.to_vec())?,
                )?)?;
                attrs.insert(attribute(SIGNING_TIME, &Time::UtcTime(now))?)?;
                let sig = sign(&attrs.to_der()?);
                (Some(attrs), sig, SM2_SIGN)
            }
            Signed::Content => (None, sign(content), SM2_SIGN),
            Signed::GmsslDigest(encap) => (
                None,
                s.key.sign_digest(&shangmi::sm3::hash(encap)),
                crate::SM2_WITH_SM3,
            ),
        };
        let sig = sig.map_err(|e| Error::Crypto(e.to_string()))?;
        infos.push(SignerInfo {
            version: CmsVersion::V1,
            sid: SignerIdentifier::IssuerAndSerialNumber(IssuerAndSerialNumber {
                issuer: s.cert.tbs_certificate().issuer().clone(),
                serial_number: s.cert.tbs_certificate().serial_number().clone(),
            }),
            digest_alg: alg(SM3),
            signed_attrs,
            signature_algorithm: alg(sig_alg),
            signature: OctetString::new(sig.to_der())?,
            unsigned_attrs: None,
        });
    }
    Ok(SignerInfos::try_from(infos)?)
}

/// The signers' certificates and `extra`, each once.
pub(crate) fn certificate_set(
    signers: &[CmsSigner<'_>],
    extra: &[Cert],
) -> Result<CertificateSet, Error> {
    let mut certs: Vec<CertificateChoices> = Vec::new();
    for c in signers.iter().map(|s| s.cert).chain(extra) {
        let choice = CertificateChoices::Certificate(c.certificate().clone());
        if !certs.contains(&choice) {
            certs.push(choice);
        }
    }
    Ok(CertificateSet::try_from(certs)?)
}

/// `body` (an encoded SignedData or SignedAndEnvelopedData, whose only top-level `[0]` is its
/// certificate set) with that set holding the signers' and `extra`'s certificates as the bytes
/// each was read from, once each, in DER's SET OF order. The set `certificate_set` builds
/// re-encodes them, which changes a certificate written with explicit DEFAULT values and so
/// breaks its issuer's signature for every reader.
pub(crate) fn with_kept_certificates(
    body: &[u8],
    signers: &[CmsSigner<'_>],
    extra: &[Cert],
) -> Result<Any, Error> {
    use der::{Reader, Tagged};
    let set_tag = der::Tag::ContextSpecific {
        constructed: true,
        number: der::TagNumber(0),
    };
    let mut ders: Vec<&[u8]> = signers
        .iter()
        .map(|s| s.cert)
        .chain(extra)
        .map(Cert::der)
        .collect();
    ders.sort_unstable();
    ders.dedup();
    let outer = der::asn1::AnyRef::from_der(body)?;
    let mut fields = der::SliceReader::new(outer.value())?;
    let mut out = Vec::with_capacity(body.len());
    while !fields.is_finished() {
        let field: der::asn1::AnyRef<'_> = Decode::decode(&mut fields)?;
        if field.tag() == set_tag {
            out.extend(Any::new(set_tag, ders.concat())?.to_der()?);
        } else {
            out.extend(field.to_der()?);
        }
    }
    Ok(Any::new(der::Tag::Sequence, out)?)
}
