//! Certificates, requests and CRLs described for people, as `openssl x509 -text` lays them
//! out.

use core::fmt::Write;

use der::{Decode, Encode};
use x509_cert::Certificate;
use x509_cert::crl::CertificateList;
use x509_cert::ext::Extension;
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::ext::pkix::{
    AuthorityKeyIdentifier, BasicConstraints, ExtendedKeyUsage, KeyUsage, KeyUsages,
    SubjectAltName, SubjectKeyIdentifier,
};
use x509_cert::request::CertReq;
use x509_cert::spki::SubjectPublicKeyInfoOwned;

fn hex_colon(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn wrapped(out: &mut String, indent: &str, bytes: &[u8]) {
    for chunk in bytes.chunks(15) {
        let _ = writeln!(out, "{indent}{}", hex_colon(chunk));
    }
}

fn extension_name(e: &Extension) -> String {
    crate::oid::extension(&e.extn_id).map_or_else(|| e.extn_id.to_string(), |k| k.name.into())
}

/// A general name as OpenSSL prints it (`DNS:name`, `IP Address:1.2.3.4`, `email:x`).
fn general_name(g: &GeneralName) -> String {
    match g {
        GeneralName::DnsName(n) => format!("DNS:{}", n.as_str()),
        GeneralName::Rfc822Name(n) => format!("email:{}", n.as_str()),
        GeneralName::UniformResourceIdentifier(n) => format!("URI:{}", n.as_str()),
        GeneralName::DirectoryName(n) => format!("DirName:{n}"),
        GeneralName::IpAddress(ip) => match ip.as_bytes() {
            [a, b, c, d] => format!("IP Address:{a}.{b}.{c}.{d}"),
            v6 if v6.len() == 16 => {
                let mut o = [0u8; 16];
                o.copy_from_slice(v6);
                format!("IP Address:{}", std::net::Ipv6Addr::from(o))
            }
            other => format!("IP Address:{}", hex_colon(other)),
        },
        _ => "othername:<unsupported>".to_string(),
    }
}

/// The value of the extensions people read, decoded; `None` for the others (shown in hex).
fn decoded(e: &Extension) -> Option<String> {
    use const_oid::AssociatedOid;
    let v = e.extn_value.as_bytes();
    let id = e.extn_id;
    Some(if id == BasicConstraints::OID {
        let bc = BasicConstraints::from_der(v).ok()?;
        let mut t = format!("CA:{}", if bc.ca { "TRUE" } else { "FALSE" });
        if let Some(n) = bc.path_len_constraint {
            t.push_str(&format!(", pathlen:{n}"));
        }
        t
    } else if id == KeyUsage::OID {
        let ku = KeyUsage::from_der(v).ok()?;
        let names = [
            (KeyUsages::DigitalSignature, "Digital Signature"),
            (KeyUsages::NonRepudiation, "Non Repudiation"),
            (KeyUsages::KeyEncipherment, "Key Encipherment"),
            (KeyUsages::DataEncipherment, "Data Encipherment"),
            (KeyUsages::KeyAgreement, "Key Agreement"),
            (KeyUsages::KeyCertSign, "Certificate Sign"),
            (KeyUsages::CRLSign, "CRL Sign"),
            (KeyUsages::EncipherOnly, "Encipher Only"),
            (KeyUsages::DecipherOnly, "Decipher Only"),
        ];
        names
            .iter()
            .filter(|(f, _)| ku.0.contains(*f))
            .map(|(_, n)| *n)
            .collect::<Vec<_>>()
            .join(", ")
    } else if id == ExtendedKeyUsage::OID {
        use crate::oid::{CLIENT_AUTH, CODE_SIGNING, EMAIL_PROTECTION, SERVER_AUTH};
        let eku = ExtendedKeyUsage::from_der(v).ok()?;
        eku.0
            .iter()
            .map(|o| match *o {
                o if o == SERVER_AUTH => "TLS Web Server Authentication".to_string(),
                o if o == CLIENT_AUTH => "TLS Web Client Authentication".to_string(),
                o if o == CODE_SIGNING => "Code Signing".to_string(),
                o if o == EMAIL_PROTECTION => "E-mail Protection".to_string(),
                other => other.to_string(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    } else if id == SubjectAltName::OID {
        let san = SubjectAltName::from_der(v).ok()?;
        san.0
            .iter()
            .map(general_name)
            .collect::<Vec<_>>()
            .join(", ")
    } else if id == SubjectKeyIdentifier::OID {
        hex_colon(SubjectKeyIdentifier::from_der(v).ok()?.0.as_bytes()).to_uppercase()
    } else if id == AuthorityKeyIdentifier::OID {
        let aki = AuthorityKeyIdentifier::from_der(v).ok()?;
        hex_colon(aki.key_identifier?.as_bytes()).to_uppercase()
    } else {
        return None;
    })
}

fn extensions(out: &mut String, exts: &[Extension]) {
    for e in exts {
        let crit = if e.critical { ": critical" } else { ":" };
        let _ = writeln!(out, "            {}{crit}", extension_name(e));
        match decoded(e) {
            Some(text) => {
                let _ = writeln!(out, "                {text}");
            }
            None => wrapped(out, "                ", e.extn_value.as_bytes()),
        }
    }
}

fn public_key(out: &mut String, spki: &SubjectPublicKeyInfoOwned) {
    let _ = writeln!(out, "        Subject Public Key Info:");
    match crate::alg::public_key(spki) {
        Ok(k) => {
            let name = match spki.algorithm.oid {
                o if o == crate::oid::EC_PUBLIC_KEY => "id-ecPublicKey".to_string(),
                o if o == crate::oid::SM2 => "SM2".to_string(),
                other => other.to_string(),
            };
            let _ = writeln!(out, "            Public Key Algorithm: {name}");
            let _ = writeln!(out, "                Public-Key: (256 bit)");
            let _ = writeln!(out, "                pub:");
            wrapped(out, "                    ", &k.to_uncompressed());
            let _ = writeln!(out, "                ASN1 OID: SM2");
        }
        Err(e) => {
            let _ = writeln!(
                out,
                "            Public Key Algorithm: {} ({e})",
                spki.algorithm.oid
            );
        }
    }
}

fn signature(out: &mut String, alg: &spki::AlgorithmIdentifierOwned, sig: &der::asn1::BitString) {
    let name = if alg.oid == crate::SM2_WITH_SM3 {
        "SM2-with-SM3".to_string()
    } else {
        alg.oid.to_string()
    };
    let _ = writeln!(out, "    Signature Algorithm: {name}");
    let _ = writeln!(out, "    Signature Value:");
    wrapped(out, "        ", sig.raw_bytes());
}

/// A certificate, field by field.
pub fn describe_certificate(c: &Certificate) -> String {
    let t = c.tbs_certificate();
    let mut out = String::new();
    let _ = writeln!(out, "Certificate:");
    let _ = writeln!(out, "    Data:");
    let _ = writeln!(out, "        Version: {:?}", t.version());
    let _ = writeln!(out, "        Serial Number:");
    let _ = writeln!(
        out,
        "            {}",
        hex_colon(t.serial_number().as_bytes())
    );
    let sig_alg = if t.signature().oid == crate::SM2_WITH_SM3 {
        "SM2-with-SM3"
    } else {
        "other"
    };
    let _ = writeln!(out, "        Signature Algorithm: {sig_alg}");
    let _ = writeln!(out, "        Issuer: {}", t.issuer());
    let _ = writeln!(out, "        Validity");
    let _ = writeln!(out, "            Not Before: {}", t.validity().not_before);
    let _ = writeln!(out, "            Not After : {}", t.validity().not_after);
    let _ = writeln!(out, "        Subject: {}", t.subject());
    public_key(&mut out, t.subject_public_key_info());
    if let Some(exts) = t.extensions() {
        let _ = writeln!(out, "        X509v3 extensions:");
        extensions(&mut out, exts);
    }
    signature(&mut out, c.signature_algorithm(), c.signature());
    out
}

/// A certificate request, field by field.
pub fn describe_request(r: &CertReq) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Certificate Request:");
    let _ = writeln!(out, "    Data:");
    let _ = writeln!(out, "        Version: {:?}", r.info.version);
    let _ = writeln!(out, "        Subject: {}", r.info.subject);
    public_key(&mut out, &r.info.public_key);
    let _ = writeln!(out, "        Attributes: {}", r.info.attributes.len());
    signature(&mut out, &r.algorithm, &r.signature);
    out
}

/// A CRL, field by field.
pub fn describe_crl(l: &CertificateList) -> String {
    let t = &l.tbs_cert_list;
    let mut out = String::new();
    let _ = writeln!(out, "Certificate Revocation List (CRL):");
    let _ = writeln!(out, "        Version: {:?}", t.version);
    let _ = writeln!(out, "        Issuer: {}", t.issuer);
    let _ = writeln!(out, "        Last Update: {}", t.this_update);
    match &t.next_update {
        Some(n) => {
            let _ = writeln!(out, "        Next Update: {n}");
        }
        None => {
            let _ = writeln!(out, "        Next Update: NONE");
        }
    }
    if let Some(exts) = &t.crl_extensions {
        let _ = writeln!(out, "        CRL extensions:");
        extensions(&mut out, exts);
    }
    match &t.revoked_certificates {
        Some(list) if !list.is_empty() => {
            let _ = writeln!(out, "Revoked Certificates:");
            for r in list {
                let _ = writeln!(
                    out,
                    "    Serial Number: {}",
                    hex_colon(r.serial_number.as_bytes())
                );
                let _ = writeln!(out, "        Revocation Date: {}", r.revocation_date);
            }
        }
        _ => {
            let _ = writeln!(out, "No Revoked Certificates.");
        }
    }
    signature(&mut out, &l.signature_algorithm, &l.signature);
    let _ = l.to_der();
    out
}
