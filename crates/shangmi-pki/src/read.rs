//! Reading certificates, requests and CRLs in PEM (text around the blocks allowed, several
//! blocks in one file) or DER, and checking a request's own signature.

use const_oid::AssociatedOid;
use der::{Decode, Encode};
use x509_cert::Certificate;
use x509_cert::ext::pkix::SubjectAltName;
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::request::{CertReq, ExtensionReq};

use crate::{Crl, Error};

/// Inputs longer than any real certificate file are refused before parsing.
const MAX_INPUT: usize = 16 << 20;

/// The bodies of the PEM blocks in `data` with one of `labels`, or `None` when `data` is not
/// PEM (then it is DER).
fn pem_bodies(data: &[u8], labels: &[&str], what: &str) -> Result<Option<Vec<Vec<u8>>>, Error> {
    if data.len() > MAX_INPUT {
        return Err(Error::Malformed(format!("{what}: input over 16 MiB")));
    }
    let text = std::str::from_utf8(data)
        .ok()
        .filter(|t| t.contains("-----BEGIN "));
    let Some(text) = text else {
        return Ok(None);
    };
    let bodies: Vec<Vec<u8>> = shangmi::pem::pem_blocks(text)
        .map_err(|e| Error::Malformed(format!("{what} (PEM): {e}")))?
        .into_iter()
        .filter(|b| labels.contains(&b.label.as_str()))
        .map(|b| b.der.to_vec())
        .collect();
    if bodies.is_empty() {
        return Err(Error::Malformed(format!(
            "no {what} in the PEM (looked for {})",
            labels.join(", ")
        )));
    }
    Ok(Some(bodies))
}

/// The DER structures in `data`: the blocks with one of `labels` if it is PEM, else `data`
/// itself as one DER structure.
fn blocks<T: for<'a> Decode<'a>>(
    data: &[u8],
    labels: &[&str],
    what: &str,
) -> Result<Vec<T>, Error> {
    match pem_bodies(data, labels, what)? {
        None => T::from_der(data)
            .map(|t| vec![t])
            .map_err(|e| Error::Malformed(format!("{what} (DER): {e}"))),
        Some(bodies) => bodies
            .iter()
            .map(|b| T::from_der(b).map_err(|e| Error::Malformed(format!("{what}: {e}"))))
            .collect(),
    }
}

/// The DER of the first PEM block whatever its label if `data` is PEM, else `data` itself.
pub(crate) fn der_of_any(data: &[u8], what: &str) -> Result<Vec<u8>, Error> {
    if data.len() > MAX_INPUT {
        return Err(Error::Malformed(format!("{what}: input over 16 MiB")));
    }
    match std::str::from_utf8(data)
        .ok()
        .filter(|t| t.contains("-----BEGIN "))
    {
        None => Ok(data.to_vec()),
        Some(text) => shangmi::pem::pem_blocks(text)
            .map_err(|e| Error::Malformed(format!("{what} (PEM): {e}")))?
            .into_iter()
            .next()
            .map(|b| b.der.to_vec())
            .ok_or_else(|| Error::Malformed(format!("no {what} in the PEM"))),
    }
}

/// The DER of the first block with one of `labels` if `data` is PEM, else `data` itself.
pub(crate) fn der_of(data: &[u8], labels: &[&str], what: &str) -> Result<Vec<u8>, Error> {
    Ok(match pem_bodies(data, labels, what)? {
        None => data.to_vec(),
        Some(mut bodies) => bodies.swap_remove(0),
    })
}

/// The ContentInfo of a CMS message: DER or BER (indefinite lengths and chunked content, as
/// Java and Windows write it), or PEM `PKCS7`, `CMS` or `PKCS #7 SIGNED DATA`.
pub(crate) fn content_info(message: &[u8]) -> Result<cms::content_info::ContentInfo, Error> {
    let der = der_of(message, &["PKCS7", "CMS", "PKCS #7 SIGNED DATA"], "CMS")?;
    let der = crate::ber::to_der(&der)?;
    Ok(cms::content_info::ContentInfo::from_der(&der)?)
}

/// Every certificate in `data` (PEM `CERTIFICATE` blocks, or one DER certificate).
/// Each keeps the bytes it was read from (see [`Cert`](crate::Cert)).
pub fn certificates(data: &[u8]) -> Result<Vec<crate::Cert>, Error> {
    match pem_bodies(data, &["CERTIFICATE", "X509 CERTIFICATE"], "certificate")? {
        None => Ok(vec![crate::Cert::from_der(data)?]),
        Some(bodies) => bodies.iter().map(|b| crate::Cert::from_der(b)).collect(),
    }
}

/// Every certificate in `data` as the DER bytes written there (not re-encoded), each checked
/// to parse: what a protocol sends on as received, and what signatures are made over.
pub fn certificate_ders(data: &[u8]) -> Result<Vec<Vec<u8>>, Error> {
    let labels = &["CERTIFICATE", "X509 CERTIFICATE"];
    let bodies = match pem_bodies(data, labels, "certificate")? {
        None => vec![data.to_vec()],
        Some(bodies) => bodies,
    };
    for b in &bodies {
        Certificate::from_der(b).map_err(|e| Error::Malformed(format!("certificate: {e}")))?;
    }
    Ok(bodies)
}

/// The certificates of a SignedData or SignedAndEnvelopedData (its DER `content`), each as
/// the bytes it was included as: the first top-level `[0]` is the certificate set in both;
/// entries that are not plain certificates (attribute certificates, other formats) are
/// skipped. What chains are verified over, since a certificate's signature covers its bytes
/// as its issuer wrote them.
pub(crate) fn included_certificate_ders(content: &[u8]) -> Result<Vec<Vec<u8>>, Error> {
    use der::{Reader, Tagged};
    let malformed = |e: der::Error| Error::Malformed(format!("certificates: {e}"));
    let outer = der::asn1::AnyRef::from_der(content).map_err(malformed)?;
    let mut fields = der::SliceReader::new(outer.value()).map_err(malformed)?;
    while !fields.is_finished() {
        let field: der::asn1::AnyRef<'_> = der::Decode::decode(&mut fields).map_err(malformed)?;
        if field.tag()
            != (der::Tag::ContextSpecific {
                constructed: true,
                number: der::TagNumber(0),
            })
        {
            continue;
        }
        let mut set = der::SliceReader::new(field.value()).map_err(malformed)?;
        let mut out = Vec::new();
        while !set.is_finished() {
            let entry: der::asn1::AnyRef<'_> = der::Decode::decode(&mut set).map_err(malformed)?;
            if entry.tag() == der::Tag::Sequence {
                out.push(entry.to_der().map_err(malformed)?);
            }
        }
        return Ok(out);
    }
    Ok(Vec::new())
}

/// A request in the form CFCA's tools write: `CertificationRequestInfo` without its
/// `attributes` field (RFC 2986 makes it mandatory, OpenSSL reads it anyway). Read as a
/// request with no attributes; its signature is checked over the bytes as written.
#[derive(der::Sequence)]
struct BareInfo {
    version: x509_cert::request::Version,
    subject: x509_cert::name::Name,
    public_key: spki::SubjectPublicKeyInfoOwned,
}

#[derive(der::Sequence)]
struct BareReq {
    info: BareInfo,
    algorithm: spki::AlgorithmIdentifierOwned,
    signature: der::asn1::BitString,
}

/// A request without an attributes field, as [`CertReq`] with none.
struct LaxReq(CertReq);

impl<'a> Decode<'a> for LaxReq {
    type Error = der::Error;

    fn decode<R: der::Reader<'a>>(r: &mut R) -> der::Result<Self> {
        let bytes = r.read_slice(r.remaining_len())?;
        match CertReq::from_der(bytes) {
            Ok(req) => Ok(LaxReq(req)),
            Err(e) => {
                let bare = BareReq::from_der(bytes).map_err(|_| e)?;
                Ok(LaxReq(CertReq {
                    info: x509_cert::request::CertReqInfo {
                        version: bare.info.version,
                        subject: bare.info.subject,
                        public_key: bare.info.public_key,
                        attributes: Default::default(),
                    },
                    algorithm: bare.algorithm,
                    signature: bare.signature,
                }))
            }
        }
    }
}

/// Every certificate request in `data` (PEM `CERTIFICATE REQUEST`, or DER); a request whose
/// info leaves out the attributes field (CFCA's) is read with none.
pub fn requests(data: &[u8]) -> Result<Vec<CertReq>, Error> {
    Ok(blocks::<LaxReq>(
        data,
        &["CERTIFICATE REQUEST", "NEW CERTIFICATE REQUEST"],
        "certificate request",
    )?
    .into_iter()
    .map(|l| l.0)
    .collect())
}

/// Every CRL in `data` (PEM `X509 CRL`, or DER), each keeping the bytes written there.
pub fn crls(data: &[u8]) -> Result<Vec<Crl>, Error> {
    match pem_bodies(data, &["X509 CRL"], "CRL")? {
        Some(ders) => ders.iter().map(|d| Crl::from_der(d)).collect(),
        None => Ok(vec![Crl::from_der(data)?]),
    }
}

/// Checks a request's signature, made by the key it carries, with the SM2 ID `id`.
pub fn verify_request(csr: &CertReq, id: &[u8]) -> Result<(), Error> {
    let key = crate::alg::public_key(&csr.info.public_key)?;
    let tbs = csr.info.to_der()?;
    let r = crate::alg::verify(&key, id, &tbs, &csr.algorithm, &csr.signature);
    // With no attributes the signer may have left the field out (CFCA) rather than written
    // it empty: the signature is over one of the two encodings of the same request.
    let r = match r {
        Err(_) if csr.info.attributes.is_empty() => {
            let bare = BareInfo {
                version: csr.info.version,
                subject: csr.info.subject.clone(),
                public_key: csr.info.public_key.clone(),
            }
            .to_der()?;
            crate::alg::verify(&key, id, &bare, &csr.algorithm, &csr.signature)
        }
        r => r,
    };
    r.map_err(|e| Error::BadSignature(format!("certificate request: {e}")))
}

/// The subject alternative names a request asks for (its extensionRequest attribute).
pub(crate) fn requested_san(csr: &CertReq) -> Result<Vec<GeneralName>, Error> {
    let mut out = Vec::new();
    for attr in csr.info.attributes.iter() {
        if attr.oid != ExtensionReq::OID {
            continue;
        }
        for value in attr.values.iter() {
            let req: ExtensionReq = value.decode_as()?;
            for ext in req.0.iter().filter(|e| e.extn_id == SubjectAltName::OID) {
                let san = SubjectAltName::from_der(ext.extn_value.as_bytes())?;
                out.extend(san.0);
            }
        }
    }
    Ok(out)
}
