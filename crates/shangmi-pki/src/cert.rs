//! A certificate as it was received: its DER bytes beside the decoded view. Signatures are
//! checked over the signed part exactly as the issuer encoded it, which a decode and
//! re-encode need not give back (explicit DEFAULT values such as `critical FALSE`, common in
//! older CA output, are read and then not written). Every verification in the crate, and in
//! the crates above it, takes this type.

use std::ops::{Deref, Range};
use std::sync::Arc;

use der::{Decode, Encode, Reader};
use x509_cert::Certificate;

use crate::Error;

/// A parsed certificate that keeps the bytes it was parsed from; cheap to clone. Derefs to
/// `x509_cert::Certificate` for the decoded fields.
#[derive(Clone)]
pub struct Cert {
    der: Arc<[u8]>,
    /// Where the TBSCertificate sits in `der`: what the signature covers.
    signed: Range<usize>,
    parsed: Arc<Certificate>,
}

impl Cert {
    /// Parses one DER certificate, keeping its bytes. Trailing bytes are refused.
    pub fn from_der(der: &[u8]) -> Result<Self, Error> {
        let malformed = |e: der::Error| Error::Malformed(format!("certificate: {e}"));
        let parsed = Certificate::from_der(der).map_err(malformed)?;
        let signed = signed_range(der).map_err(malformed)?;
        Ok(Cert {
            der: der.into(),
            signed,
            parsed: Arc::new(parsed),
        })
    }

    /// The bytes the certificate was parsed from (or, for one built in memory, its DER).
    pub fn der(&self) -> &[u8] {
        &self.der
    }

    /// The TBSCertificate as encoded: what the issuer's signature covers.
    pub fn signed_part(&self) -> &[u8] {
        &self.der[self.signed.clone()]
    }

    /// The decoded view.
    pub fn certificate(&self) -> &Certificate {
        &self.parsed
    }
}

/// The range of the first element inside the outer SEQUENCE of `der`.
fn signed_range(der: &[u8]) -> der::Result<Range<usize>> {
    let mut outer = der::SliceReader::new(der)?;
    let header = der::Header::decode(&mut outer)?;
    let start = u32::from(outer.position()) as usize;
    let mut body = der::SliceReader::new(outer.read_slice(header.length())?)?;
    let tbs: der::asn1::AnyRef<'_> = Decode::decode(&mut body)?;
    let len = u32::from(tbs.encoded_len()?) as usize;
    Ok(start..start + len)
}

impl From<Certificate> for Cert {
    /// A certificate decoded or built elsewhere, by its DER encoding. Its signature is then
    /// checked over that encoding; for certificates received as bytes use [`Cert::from_der`],
    /// which keeps them. (An encoding that fails, which no decodable certificate gives,
    /// leaves no bytes and the certificate then fails verification rather than panicking.)
    fn from(parsed: Certificate) -> Self {
        let der = parsed.to_der().unwrap_or_default();
        let signed = signed_range(&der).unwrap_or(0..0);
        Cert {
            der: der.into(),
            signed,
            parsed: Arc::new(parsed),
        }
    }
}

/// Encodes as the kept bytes: a certificate passed on (in a TLS or TLCP Certificate message, a
/// CMS certificate set, a PEM file) is the one its issuer signed.
impl Encode for Cert {
    fn encoded_len(&self) -> der::Result<der::Length> {
        der::Length::try_from(self.der.len())
    }

    fn encode(&self, writer: &mut impl der::Writer) -> der::Result<()> {
        writer.write(&self.der)
    }
}

impl der::pem::PemLabel for Cert {
    const PEM_LABEL: &'static str = "CERTIFICATE";
}

impl Deref for Cert {
    type Target = Certificate;

    fn deref(&self) -> &Certificate {
        &self.parsed
    }
}

impl AsRef<Certificate> for Cert {
    fn as_ref(&self) -> &Certificate {
        &self.parsed
    }
}

/// Equal when the decoded certificates are: a trust anchor given decoded matches the same
/// certificate received as bytes.
impl PartialEq for Cert {
    fn eq(&self, other: &Self) -> bool {
        self.der == other.der || self.parsed == other.parsed
    }
}

impl Eq for Cert {}

impl core::fmt::Debug for Cert {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Cert")
            .field(
                "subject",
                &self.parsed.tbs_certificate().subject().to_string(),
            )
            .field("der_len", &self.der.len())
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
    }
}
