//! Certificates, requests and CRLs described for people, as `openssl x509 -text` lays them
//! out.

use core::fmt::Write;

use der::Encode;
use x509_cert::Certificate;
use x509_cert::crl::CertificateList;
use x509_cert::ext::Extension;
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
    let oid = e.extn_id.to_string();
    let name = match oid.as_str() {
        "2.5.29.19" => "X509v3 Basic Constraints",
        "2.5.29.15" => "X509v3 Key Usage",
        "2.5.29.37" => "X509v3 Extended Key Usage",
        "2.5.29.17" => "X509v3 Subject Alternative Name",
        "2.5.29.14" => "X509v3 Subject Key Identifier",
        "2.5.29.35" => "X509v3 Authority Key Identifier",
        "2.5.29.32" => "X509v3 Certificate Policies",
        "2.5.29.31" => "X509v3 CRL Distribution Points",
        "2.5.29.20" => "X509v3 CRL Number",
        "1.3.6.1.5.5.7.1.1" => "Authority Information Access",
        _ => return oid,
    };
    name.to_string()
}

fn extensions(out: &mut String, exts: &[Extension]) {
    for e in exts {
        let crit = if e.critical { ": critical" } else { ":" };
        let _ = writeln!(out, "            {}{crit}", extension_name(e));
        wrapped(out, "                ", e.extn_value.as_bytes());
    }
}

fn public_key(out: &mut String, spki: &SubjectPublicKeyInfoOwned) {
    let _ = writeln!(out, "        Subject Public Key Info:");
    match crate::alg::public_key(spki) {
        Ok(k) => {
            let _ = writeln!(
                out,
                "            Public Key Algorithm: SM2 ({})",
                spki.algorithm.oid
            );
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
