//! A certificate revocation list as it was received: its DER bytes beside the decoded view,
//! as [`Cert`](crate::Cert) keeps a certificate's. Revocation is checked by one door, a
//! [`Verifier`](crate::Verifier) given CRLs of this type; TLCP, RFC 8998 and the gateway
//! reach it through there.

use std::ops::{Deref, Range};
use std::sync::Arc;

use der::{Decode, Encode};
use x509_cert::crl::CertificateList;

use crate::Error;

/// A parsed CRL that keeps the bytes it was parsed from; cheap to clone. Derefs to
/// `x509_cert::crl::CertificateList`.
#[derive(Clone)]
pub struct Crl(Arc<Parsed>);

struct Parsed {
    der: Vec<u8>,
    signed: Range<usize>,
    issuer: Range<usize>,
    decoded: CertificateList,
}

impl Crl {
    /// Parses one DER CRL, keeping its bytes. Trailing bytes are refused.
    pub fn from_der(der: &[u8]) -> Result<Self, Error> {
        let malformed = |e: der::Error| Error::Malformed(format!("CRL: {e}"));
        let decoded = CertificateList::from_der(der).map_err(malformed)?;
        let (signed, issuer) = fields(der).map_err(malformed)?;
        Ok(Crl(Arc::new(Parsed {
            der: der.to_vec(),
            signed,
            issuer,
            decoded,
        })))
    }

    /// The bytes the CRL was parsed from (or, for one built in memory, its DER).
    pub fn der(&self) -> &[u8] {
        &self.0.der
    }

    /// The TBSCertList as encoded: what the issuer's signature covers.
    pub fn signed_part(&self) -> &[u8] {
        &self.0.der[self.0.signed.clone()]
    }

    /// The issuer Name as encoded, compared byte for byte with a certificate's issuer.
    pub fn raw_issuer(&self) -> &[u8] {
        &self.0.der[self.0.issuer.clone()]
    }
}

/// The signed part and the issuer inside it: version (optional INTEGER), signature, issuer.
fn fields(der: &[u8]) -> der::Result<(Range<usize>, Range<usize>)> {
    let (signed, inside) = crate::cert::signed_elements(der)?;
    let skip = usize::from(inside.first().is_some_and(|(tag, _)| *tag == 0x02));
    let issuer = inside
        .get(skip + 1)
        .map(|(_, r)| r.clone())
        .ok_or_else(|| der::Tag::Sequence.value_error())?;
    Ok((signed, issuer))
}

impl From<CertificateList> for Crl {
    /// A CRL decoded or built elsewhere, by its DER encoding (its signature is then checked
    /// over that encoding; for CRLs received as bytes use [`Crl::from_der`]).
    fn from(decoded: CertificateList) -> Self {
        let der = decoded.to_der().unwrap_or_default();
        let (signed, issuer) = fields(&der).unwrap_or_default();
        Crl(Arc::new(Parsed {
            der,
            signed,
            issuer,
            decoded,
        }))
    }
}

impl Deref for Crl {
    type Target = CertificateList;

    fn deref(&self) -> &CertificateList {
        &self.0.decoded
    }
}

impl core::fmt::Debug for Crl {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Crl")
            .field("issuer", &self.0.decoded.tbs_cert_list.issuer.to_string())
            .field("der_len", &self.0.der.len())
            .finish()
    }
}
