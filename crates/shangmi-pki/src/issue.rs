//! Issuing: self-signed CA certificates, requests, certificates from a request signed by a
//! CA key, and CRLs, each signed with SM2 under the ID the caller names (GM/T 0009's default
//! unless told otherwise).

use core::str::FromStr;
use std::time::{Duration, SystemTime};

use const_oid::ObjectIdentifier;
use der::asn1::{Ia5String, OctetString};
use shangmi::sm2::SigningKey;
use spki::{SubjectPublicKeyInfoOwned, SubjectPublicKeyInfoRef};
use x509_cert::builder::profile::BuilderProfile;
use x509_cert::builder::{Builder, CertificateBuilder, CrlBuilder, RequestBuilder};
use x509_cert::crl::{CertificateList, RevokedCert};
use x509_cert::ext::pkix::crl::CrlNumber;
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::ext::pkix::{
    AuthorityKeyIdentifier, BasicConstraints, ExtendedKeyUsage, KeyUsage, KeyUsages,
    SubjectAltName, SubjectKeyIdentifier,
};
use x509_cert::ext::{Extension, ToExtension};
use x509_cert::name::Name;
use x509_cert::request::CertReq;
use x509_cert::serial_number::SerialNumber;
use x509_cert::time::{Time, Validity};
use x509_cert::{Certificate, TbsCertificate};

use crate::signer::Signer;
use crate::{Cert, DEFAULT_ID, Error};

/// What a certificate says about its subject beyond name and key.
#[derive(Clone, Debug)]
pub struct Issue {
    /// Validity: from `not_before` (default now) for this many days.
    pub days: u32,
    /// The start of validity (default: now).
    pub not_before: Option<SystemTime>,
    /// A CA certificate (basic constraints cA, keyCertSign and cRLSign).
    pub ca: bool,
    /// For a CA: how many CA certificates may follow it in a chain.
    pub path_len: Option<u8>,
    /// Key usage; the default is keyCertSign, cRLSign and digitalSignature for a CA,
    /// digitalSignature and nonRepudiation otherwise.
    pub key_usage: Option<KeyUsage>,
    /// Extended key usage OIDs (none by default).
    pub extended_key_usage: Vec<ObjectIdentifier>,
    /// Subject alternative names as `DNS:name`, `IP:address`, `email:address` or `URI:uri`;
    /// when signing a request and this is empty, the request's own names are copied.
    pub san: Vec<String>,
    /// The serial number (big-endian, positive); random 16 bytes by default.
    pub serial: Option<Vec<u8>>,
    /// The SM2 ID the issuer signs with.
    pub id: Vec<u8>,
}

impl Issue {
    /// A CA certificate valid for `days` days.
    pub fn ca(days: u32) -> Self {
        Issue {
            ca: true,
            ..Issue::leaf(days)
        }
    }

    /// An end-entity certificate valid for `days` days.
    pub fn leaf(days: u32) -> Self {
        Issue {
            days,
            not_before: None,
            ca: false,
            path_len: None,
            key_usage: None,
            extended_key_usage: Vec::new(),
            san: Vec::new(),
            serial: None,
            id: DEFAULT_ID.to_vec(),
        }
    }
}

/// A distinguished name from OpenSSL's `/C=CN/O=org/CN=name` (in encoding order) or RFC 4514's
/// `CN=name,O=org,C=CN` (most specific first).
pub(crate) fn parse_name(s: &str) -> Result<Name, Error> {
    let rfc4514 = match s.strip_prefix('/') {
        Some(rest) => rest.split('/').rev().collect::<Vec<_>>().join(","),
        None => s.to_string(),
    };
    Name::from_str(&rfc4514).map_err(|e| Error::InvalidArgument(format!("name \"{s}\": {e}")))
}

/// A general name from `DNS:x`, `IP:addr`, `email:x` or `URI:x`.
pub(crate) fn general_name(s: &str) -> Result<GeneralName, Error> {
    let bad = || Error::InvalidArgument(format!("subject alternative name \"{s}\""));
    let (kind, value) = s.split_once(':').ok_or_else(bad)?;
    let ia5 = |v: &str| Ia5String::new(v).map_err(|_| bad());
    Ok(match kind.to_ascii_uppercase().as_str() {
        "DNS" => GeneralName::DnsName(ia5(value)?),
        "EMAIL" => GeneralName::Rfc822Name(ia5(value)?),
        "URI" => GeneralName::UniformResourceIdentifier(ia5(value)?),
        "IP" => {
            let ip: std::net::IpAddr = value.parse().map_err(|_| bad())?;
            let bytes = match ip {
                std::net::IpAddr::V4(v) => v.octets().to_vec(),
                std::net::IpAddr::V6(v) => v.octets().to_vec(),
            };
            GeneralName::IpAddress(OctetString::new(bytes).map_err(|_| bad())?)
        }
        _ => return Err(bad()),
    })
}

fn serial(issue: &Issue) -> Result<SerialNumber, Error> {
    let bytes = match &issue.serial {
        Some(s) => s.clone(),
        None => {
            let mut b = vec![0u8; 16];
            getrandom::fill(&mut b).map_err(|e| Error::Crypto(format!("random generator: {e}")))?;
            b[0] = (b[0] & 0x3f) | 0x40; // positive, and a full 16 bytes
            b
        }
    };
    SerialNumber::new(&bytes).map_err(|e| Error::InvalidArgument(format!("serial number: {e}")))
}

fn validity(issue: &Issue) -> Result<Validity, Error> {
    let start = issue.not_before.unwrap_or_else(SystemTime::now);
    let end = start + Duration::from_secs(u64::from(issue.days) * 86_400);
    let time = |t: SystemTime| {
        Time::try_from(t).map_err(|e| Error::InvalidArgument(format!("validity: {e}")))
    };
    Ok(Validity::new(time(start)?, time(end)?))
}

/// The extensions of a certificate, in the usual order.
struct Profile<'a> {
    subject: Name,
    issuer: Name,
    issue: &'a Issue,
    san: Vec<GeneralName>,
}

impl BuilderProfile for Profile<'_> {
    fn get_issuer(&self, _subject: &Name) -> Name {
        self.issuer.clone()
    }

    fn get_subject(&self) -> Name {
        self.subject.clone()
    }

    fn build_extensions(
        &self,
        spk: SubjectPublicKeyInfoRef<'_>,
        issuer_spk: SubjectPublicKeyInfoRef<'_>,
        tbs: &TbsCertificate,
    ) -> x509_cert::builder::Result<Vec<Extension>> {
        let subject = tbs.subject();
        let mut ext: Vec<Extension> = Vec::new();
        let i = self.issue;
        let bc = BasicConstraints {
            ca: i.ca,
            path_len_constraint: if i.ca { i.path_len } else { None },
        };
        ext.push((&bc).to_extension(subject, &ext)?);
        let ku = i.key_usage.unwrap_or_else(|| {
            KeyUsage(if i.ca {
                KeyUsages::KeyCertSign | KeyUsages::CRLSign | KeyUsages::DigitalSignature
            } else {
                KeyUsages::DigitalSignature | KeyUsages::NonRepudiation
            })
        });
        ext.push((&ku).to_extension(subject, &ext)?);
        if !i.extended_key_usage.is_empty() {
            let eku = ExtendedKeyUsage(i.extended_key_usage.clone());
            ext.push((&eku).to_extension(subject, &ext)?);
        }
        if !self.san.is_empty() {
            let san = SubjectAltName(self.san.clone());
            ext.push((&san).to_extension(subject, &ext)?);
        }
        let ski = SubjectKeyIdentifier::try_from(spk)?;
        ext.push((&ski).to_extension(subject, &ext)?);
        let aki = AuthorityKeyIdentifier::try_from(issuer_spk)?;
        ext.push((&aki).to_extension(subject, &ext)?);
        Ok(ext)
    }
}

fn build_err(e: x509_cert::builder::Error) -> Error {
    Error::Crypto(format!("building the certificate: {e}"))
}

fn certificate(
    subject: Name,
    spki: SubjectPublicKeyInfoOwned,
    issuer: Name,
    issuer_key: &SigningKey,
    issue: &Issue,
    san: Vec<GeneralName>,
) -> Result<Cert, Error> {
    let profile = Profile {
        subject,
        issuer,
        issue,
        san,
    };
    let builder = CertificateBuilder::new(profile, serial(issue)?, validity(issue)?, spki)
        .map_err(build_err)?;
    let signer = Signer {
        key: issuer_key,
        id: &issue.id,
    };
    builder
        .build::<_, crate::signer::DerSignature>(&signer)
        .map(Cert::from)
        .map_err(build_err)
}

fn spki_of(key: &shangmi::sm2::VerifyingKey) -> Result<SubjectPublicKeyInfoOwned, Error> {
    let der = key
        .to_public_key_der()
        .map_err(|e| Error::Crypto(e.to_string()))?;
    Ok(der::Decode::from_der(&der)?)
}

fn sans(list: &[String]) -> Result<Vec<GeneralName>, Error> {
    list.iter().map(|s| general_name(s)).collect()
}

/// A self-signed certificate for `key` (a root CA with [`Issue::ca`]).
pub fn self_signed(key: &SigningKey, subject: &str, issue: &Issue) -> Result<Cert, Error> {
    let name = parse_name(subject)?;
    certificate(
        name.clone(),
        spki_of(key.verifying_key())?,
        name,
        key,
        issue,
        sans(&issue.san)?,
    )
}

/// A certificate request (PKCS#10) for `key`, signed with GM/T 0009's default ID, with the
/// subject alternative names asked for (as `DNS:name`, `IP:address`, ...).
pub fn request(key: &SigningKey, subject: &str, san: &[&str]) -> Result<CertReq, Error> {
    let mut builder = RequestBuilder::new(parse_name(subject)?).map_err(build_err)?;
    if !san.is_empty() {
        let names = san
            .iter()
            .map(|s| general_name(s))
            .collect::<Result<Vec<_>, _>>()?;
        builder
            .add_extension(&SubjectAltName(names))
            .map_err(|e| Error::InvalidArgument(e.to_string()))?;
    }
    let signer = Signer {
        key,
        id: DEFAULT_ID,
    };
    builder
        .build::<_, crate::signer::DerSignature>(&signer)
        .map_err(build_err)
}

/// A request's signature, with GM/T 0009's ID or, as OpenSSL 3 makes requests, an empty one:
/// either proves possession of the key.
fn check_possession(csr: &CertReq) -> Result<(), Error> {
    crate::read::verify_request(csr, DEFAULT_ID).or_else(|_| crate::read::verify_request(csr, b""))
}

/// A self-signed certificate for the subject and key of `csr`, signed by `key`, which must be
/// the request's key (its signature is checked first, as by [`sign_request`]).
pub fn self_sign_request(csr: &CertReq, key: &SigningKey, issue: &Issue) -> Result<Cert, Error> {
    check_possession(csr)?;
    if crate::alg::public_key(&csr.info.public_key)? != *key.verifying_key() {
        return Err(Error::InvalidArgument(
            "the key is not the request's key".into(),
        ));
    }
    certificate(
        csr.info.subject.clone(),
        csr.info.public_key.clone(),
        csr.info.subject.clone(),
        key,
        issue,
        if issue.san.is_empty() {
            crate::read::requested_san(csr)?
        } else {
            sans(&issue.san)?
        },
    )
}

/// A certificate for the subject and key of `csr`, issued by `ca_cert` (whose key is `ca_key`).
/// The request's signature is checked first (with GM/T 0009's ID or, as OpenSSL 3 makes
/// requests, an empty one: either proves possession of the key).
pub fn sign_request(
    csr: &CertReq,
    ca_cert: &Certificate,
    ca_key: &SigningKey,
    issue: &Issue,
) -> Result<Cert, Error> {
    check_possession(csr)?;
    let ca_public = crate::alg::public_key(ca_cert.tbs_certificate().subject_public_key_info())?;
    if ca_public != *ca_key.verifying_key() {
        return Err(Error::InvalidArgument(
            "the CA key is not the key of the CA certificate".into(),
        ));
    }
    let san = if issue.san.is_empty() {
        crate::read::requested_san(csr)?
    } else {
        sans(&issue.san)?
    };
    // The subject's key must be SM2 (in either SPKI form); it is written as the request has it.
    crate::alg::public_key(&csr.info.public_key)?;
    certificate(
        csr.info.subject.clone(),
        csr.info.public_key.clone(),
        ca_cert.tbs_certificate().subject().clone(),
        ca_key,
        issue,
        san,
    )
}

/// A CRL from `ca_cert`'s key listing the serial numbers revoked (each with its revocation
/// time), valid for `days` days, numbered `number`.
pub fn crl(
    ca_cert: &Certificate,
    ca_key: &SigningKey,
    revoked: &[(Vec<u8>, SystemTime)],
    days: u32,
    number: u64,
    id: &[u8],
) -> Result<CertificateList, Error> {
    let now = SystemTime::now();
    // thisUpdate a minute back: a relying party whose clock is a little behind the issuer's
    // would otherwise find the list "not yet valid" (GmSSL refuses one dated after its now).
    let this_update = now - Duration::from_secs(60);
    let time = |t: SystemTime| Time::try_from(t).map_err(|e| Error::InvalidArgument(e.to_string()));
    let entries = revoked
        .iter()
        .map(|(serial, when)| {
            Ok(RevokedCert {
                serial_number: SerialNumber::new(serial)
                    .map_err(|e| Error::InvalidArgument(format!("serial number: {e}")))?,
                // No later than the list itself.
                revocation_date: time((*when).min(this_update))?,
                crl_entry_extensions: None,
            })
        })
        .collect::<Result<Vec<_>, Error>>()?;
    let number = CrlNumber(
        der::asn1::Uint::new(&number.to_be_bytes())
            .map_err(|e| Error::InvalidArgument(e.to_string()))?,
    );
    let mut builder = CrlBuilder::new_with_this_update(ca_cert, number, time(this_update)?)?
        .with_next_update(Some(time(
            now + Duration::from_secs(u64::from(days) * 86_400),
        )?));
    if !entries.is_empty() {
        builder = builder.with_certificates(entries.into_iter());
    }
    let signer = Signer { key: ca_key, id };
    builder
        .build::<_, crate::signer::DerSignature>(&signer)
        .map_err(build_err)
}
