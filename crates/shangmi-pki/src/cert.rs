//! A certificate as it was received: its DER bytes beside the decoded view. Signatures are
//! checked over the signed part exactly as the issuer encoded it, which a decode and
//! re-encode need not give back (explicit DEFAULT values such as `critical FALSE`, common in
//! older CA output, are read and then not written). Every verification in the crate, and in
//! the crates above it, takes this type.

use std::ops::{Deref, Range};
use std::sync::Arc;

use der::asn1::AnyRef;
use der::{Decode, Encode, Reader};
use shangmi::sm2::VerifyingKey;
use x509_cert::Certificate;

use crate::Error;

/// A parsed certificate that keeps the bytes it was parsed from, and its SM2 key parsed once;
/// cheap to clone. Derefs to `x509_cert::Certificate` for the decoded fields.
#[derive(Clone)]
pub struct Cert(Arc<Parsed>);

struct Parsed {
    der: Vec<u8>,
    /// Where the TBSCertificate, its issuer, its subject and its SubjectPublicKeyInfo sit in
    /// `der`, as encoded.
    at: Fields,
    decoded: Certificate,
    /// The subject's SM2 key, or why it has none (another algorithm, a point off the curve).
    key: Result<VerifyingKey, String>,
}

#[derive(Clone, Default)]
struct Fields {
    signed: Range<usize>,
    issuer: Range<usize>,
    subject: Range<usize>,
    spki: Range<usize>,
}

impl Cert {
    /// Parses one DER certificate, keeping its bytes. Trailing bytes are refused.
    pub fn from_der(der: &[u8]) -> Result<Self, Error> {
        let malformed = |e: der::Error| Error::Malformed(format!("certificate: {e}"));
        let decoded = Certificate::from_der(der).map_err(malformed)?;
        let at = fields(der).map_err(malformed)?;
        Ok(Cert::new(der.to_vec(), at, decoded))
    }

    fn new(der: Vec<u8>, at: Fields, decoded: Certificate) -> Self {
        let key = VerifyingKey::from_public_key_der(&der[at.spki.clone()])
            .map_err(|e| format!("subject public key: {e}"));
        Cert(Arc::new(Parsed {
            der,
            at,
            decoded,
            key,
        }))
    }

    /// The bytes the certificate was parsed from (or, for one built in memory, its DER).
    pub fn der(&self) -> &[u8] {
        &self.0.der
    }

    /// The TBSCertificate as encoded: what the issuer's signature covers.
    pub fn signed_part(&self) -> &[u8] {
        &self.0.der[self.0.at.signed.clone()]
    }

    /// The subject Name as encoded: what an issued certificate's [`Cert::raw_issuer`] must
    /// equal, byte for byte, for this one to be its issuer.
    pub fn raw_subject(&self) -> &[u8] {
        &self.0.der[self.0.at.subject.clone()]
    }

    /// The issuer Name as encoded.
    pub fn raw_issuer(&self) -> &[u8] {
        &self.0.der[self.0.at.issuer.clone()]
    }

    /// The subject's SM2 public key (either SubjectPublicKeyInfo form met in practice), parsed
    /// when the certificate was; an error says why there is none.
    pub fn public_key(&self) -> Result<&VerifyingKey, Error> {
        self.0
            .key
            .as_ref()
            .map_err(|e| Error::Unsupported(e.clone()))
    }

    /// The decoded view.
    pub fn certificate(&self) -> &Certificate {
        &self.0.decoded
    }
}

/// Where the signed part and the names and key inside it sit in a certificate's `der`.
fn fields(der: &[u8]) -> der::Result<Fields> {
    let (signed, inside) = signed_elements(der)?;
    // [0] version (optional), serial, signature, issuer, validity, subject, key, ...
    let skip = usize::from(inside.first().is_some_and(|(tag, _)| *tag == 0xa0));
    let at = |i: usize| {
        inside
            .get(skip + i)
            .map(|(_, r)| r.clone())
            .ok_or_else(|| der::Tag::Sequence.value_error())
    };
    Ok(Fields {
        issuer: at(2)?,
        subject: at(4)?,
        spki: at(5)?,
        signed,
    })
}

/// An element's first tag byte and where it sits.
pub(crate) type Element = (u8, Range<usize>);

/// The signed part of a signed structure (the first element of its outer SEQUENCE), and the
/// first tag byte and range in `der` of each element inside it.
pub(crate) fn signed_elements(der: &[u8]) -> der::Result<(Range<usize>, Vec<Element>)> {
    let mut outer = der::SliceReader::new(der)?;
    let header = der::Header::decode(&mut outer)?;
    let start = offset(&outer);
    let mut body = der::SliceReader::new(outer.read_slice(header.length())?)?;
    let tbs: AnyRef<'_> = Decode::decode(&mut body)?;
    let signed = start..start + u32::from(tbs.encoded_len()?) as usize;
    let mut r = der::SliceReader::new(&der[signed.clone()])?;
    der::Header::decode(&mut r)?;
    let mut inside = Vec::new();
    while !r.is_finished() {
        let from = offset(&r);
        let tag = r.peek_byte().unwrap_or(0);
        let _: AnyRef<'_> = Decode::decode(&mut r)?;
        inside.push((tag, signed.start + from..signed.start + offset(&r)));
    }
    Ok((signed, inside))
}

fn offset(r: &der::SliceReader<'_>) -> usize {
    u32::from(r.position()) as usize
}

impl From<Certificate> for Cert {
    /// A certificate decoded or built elsewhere, by its DER encoding. Its signature is then
    /// checked over that encoding; for certificates received as bytes use [`Cert::from_der`],
    /// which keeps them. (An encoding that fails, which no decodable certificate gives,
    /// leaves no bytes and the certificate then fails verification rather than panicking.)
    fn from(decoded: Certificate) -> Self {
        let der = decoded.to_der().unwrap_or_default();
        let at = fields(&der).unwrap_or_default();
        Cert::new(der, at, decoded)
    }
}

/// Encodes as the kept bytes: a certificate passed on (in a TLS or TLCP Certificate message, a
/// CMS certificate set, a PEM file) is the one its issuer signed.
impl Encode for Cert {
    fn encoded_len(&self) -> der::Result<der::Length> {
        der::Length::try_from(self.0.der.len())
    }

    fn encode(&self, writer: &mut impl der::Writer) -> der::Result<()> {
        writer.write(&self.0.der)
    }
}

impl der::pem::PemLabel for Cert {
    const PEM_LABEL: &'static str = "CERTIFICATE";
}

impl Deref for Cert {
    type Target = Certificate;

    fn deref(&self) -> &Certificate {
        &self.0.decoded
    }
}

impl AsRef<Certificate> for Cert {
    fn as_ref(&self) -> &Certificate {
        &self.0.decoded
    }
}

/// Equal when the decoded certificates are: a trust anchor given decoded matches the same
/// certificate received as bytes.
impl PartialEq for Cert {
    fn eq(&self, other: &Self) -> bool {
        self.0.der == other.0.der || self.0.decoded == other.0.decoded
    }
}

impl Eq for Cert {}

impl core::fmt::Debug for Cert {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Cert")
            .field(
                "subject",
                &self.0.decoded.tbs_certificate().subject().to_string(),
            )
            .field("der_len", &self.0.der.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signed_part_is_the_first_element_as_encoded() {
        let key = shangmi::sm2::SigningKey::random().unwrap();
        let c = crate::self_signed(&key, "CN=t", &crate::Issue::ca(1)).unwrap();
        let again = Cert::from_der(c.der()).unwrap();
        assert_eq!(again.signed_part(), c.tbs_certificate().to_der().unwrap());
        assert_eq!(again, c);
        let mut long = c.der().to_vec();
        long.push(0);
        assert!(Cert::from_der(&long).is_err());
        assert!(Cert::from_der(&c.der()[..c.der().len() - 1]).is_err());
        assert_eq!(again.to_der().unwrap(), c.der());
        let tbs = c.tbs_certificate();
        assert_eq!(again.raw_subject(), tbs.subject().to_der().unwrap());
        assert_eq!(again.raw_issuer(), tbs.issuer().to_der().unwrap());
        assert_eq!(again.public_key().unwrap(), key.verifying_key());
    }
}
