//! `x509 req`, `x509 sign` and `x509 crl`: requests, certificates and CRLs signed with SM2.

use std::path::PathBuf;
use std::time::SystemTime;

use clap::Args as ClapArgs;
use shangmi_pki::Issue;

use super::{input, one_cert, read, serial_hex, write};
use crate::fail::{Outcome, Result, error, rejected};
use crate::keyio;

/// `--key-usage`: names as RFC 5280 spells them, comma-separated.
fn parse_key_usage(list: &str) -> Result<x509_cert::ext::pkix::KeyUsage> {
    use x509_cert::ext::pkix::KeyUsages as K;
    let mut set = der::flagset::FlagSet::<K>::default();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        set |= match name {
            "digitalSignature" => K::DigitalSignature,
            "nonRepudiation" | "contentCommitment" => K::NonRepudiation,
            "keyEncipherment" => K::KeyEncipherment,
            "dataEncipherment" => K::DataEncipherment,
            "keyAgreement" => K::KeyAgreement,
            "keyCertSign" => K::KeyCertSign,
            "cRLSign" => K::CRLSign,
            other => return Err(error("--key-usage", format!("unknown key usage {other}"))),
        };
    }
    if set.is_empty() {
        return Err(error("--key-usage", "no key usage named"));
    }
    Ok(x509_cert::ext::pkix::KeyUsage(set))
}

#[derive(ClapArgs)]
pub(super) struct ReqArgs {
    /// The private key (PEM, DER or a bare key).
    #[arg(long, value_name = "KEY")]
    key: PathBuf,
    /// The subject, as `/C=CN/O=org/CN=name` or `CN=name,O=org,C=CN`.
    #[arg(long)]
    subject: String,
    /// A subject alternative name: DNS:name, IP:address, email:address or URI:uri
    /// (repeat for several).
    #[arg(long)]
    san: Vec<String>,
    /// Reads the key's password from this file when it is encrypted.
    #[arg(long, value_name = "F")]
    password_file: Option<PathBuf>,
    /// Write DER instead of PEM.
    #[arg(long)]
    der: bool,
    /// The file to write (default stdout); it appears only when complete.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
}

impl ReqArgs {
    pub(super) fn run(self) -> Result<Outcome> {
        let ReqArgs {
            key,
            subject,
            san,
            password_file,
            der,
            output,
        } = self;
        let k = keyio::private_key(&key, password_file.as_deref())?;
        let san: Vec<&str> = san.iter().map(String::as_str).collect();
        let csr = shangmi_pki::request(&k, &subject, &san).map_err(|e| error("--subject", e))?;
        write(&csr, der, output.as_deref())?;
        Ok(Outcome::Ok)
    }
}

#[derive(ClapArgs)]
pub(super) struct SignArgs {
    /// The certificate request (its signature is checked first).
    #[arg(long, value_name = "CSR")]
    csr: PathBuf,
    /// The issuing CA's certificate.
    #[arg(long, value_name = "FILE", required_unless_present = "self_signed")]
    ca_cert: Option<PathBuf>,
    /// The issuing CA's private key.
    #[arg(long, value_name = "FILE", required_unless_present = "self_signed")]
    ca_key: Option<PathBuf>,
    /// Self-signed: the request's own key signs (give it with --key).
    #[arg(long = "self", conflicts_with_all = ["ca_cert", "ca_key"], requires = "key")]
    self_signed: bool,
    /// The request's private key, for --self.
    #[arg(long, value_name = "FILE")]
    key: Option<PathBuf>,
    /// A CA certificate (basic constraints cA, keyCertSign, cRLSign).
    #[arg(long)]
    ca: bool,
    /// For a CA: how many CA certificates may follow it.
    #[arg(long, value_name = "N")]
    path_len: Option<u8>,
    /// Days of validity from now.
    #[arg(long, default_value_t = 365)]
    days: u32,
    /// Subject alternative names (default: those the request asks for).
    #[arg(long)]
    san: Vec<String>,
    /// Key usage, comma-separated (digitalSignature, nonRepudiation, keyEncipherment,
    /// dataEncipherment, keyAgreement, keyCertSign, cRLSign); e.g. a TLCP encryption
    /// certificate: keyEncipherment,dataEncipherment,keyAgreement.
    #[arg(long, value_name = "LIST")]
    key_usage: Option<String>,
    /// The serial number in hex (default: 16 random bytes).
    #[arg(long, value_name = "HEX")]
    serial: Option<String>,
    /// The SM2 ID the certificate is signed with.
    #[arg(long, value_name = "ID", default_value = "1234567812345678")]
    sm2_id: String,
    /// Reads the signing key's password from this file when it is encrypted.
    #[arg(long, value_name = "F")]
    password_file: Option<PathBuf>,
    /// Write DER instead of PEM.
    #[arg(long)]
    der: bool,
    /// The file to write (default stdout); it appears only when complete.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
}

impl SignArgs {
    pub(super) fn run(self) -> Result<Outcome> {
        let SignArgs {
            csr,
            ca_cert,
            ca_key,
            self_signed,
            key,
            ca,
            path_len,
            days,
            san,
            key_usage,
            serial,
            sm2_id,
            password_file,
            der,
            output,
        } = self;
        let request = shangmi_pki::requests(&read(&csr)?)
            .map_err(|e| input(&csr, e))?
            .remove(0);
        let mut issue = if ca {
            Issue::ca(days)
        } else {
            Issue::leaf(days)
        };
        issue.path_len = path_len;
        issue.san = san;
        if let Some(list) = &key_usage {
            issue.key_usage = Some(parse_key_usage(list)?);
        }
        issue.id = sm2_id.into_bytes();
        issue.serial = serial.as_deref().map(serial_hex).transpose()?;
        let cert = if self_signed {
            let key_path = key.ok_or_else(|| error("--self", "needs --key"))?;
            let k = keyio::private_key(&key_path, password_file.as_deref())?;
            shangmi_pki::self_sign_request(&request, &k, &issue).map_err(|e| match e {
                shangmi_pki::Error::BadSignature(_) => rejected(csr.display(), e),
                e => error(csr.display(), e),
            })?
        } else {
            let (cert_path, key_path) = ca_cert.zip(ca_key).ok_or_else(|| {
                error(
                    "--ca-cert/--ca-key",
                    "both are needed (or --self with --key)",
                )
            })?;
            let ca_cert = one_cert(&cert_path)?;
            let k = keyio::private_key(&key_path, password_file.as_deref())?;
            shangmi_pki::sign_request(&request, &ca_cert, &k, &issue).map_err(|e| match e {
                shangmi_pki::Error::BadSignature(_) => rejected(csr.display(), e),
                e => error(csr.display(), e),
            })?
        };
        write(&cert, der, output.as_deref())?;
        Ok(Outcome::Ok)
    }
}

#[derive(ClapArgs)]
pub(super) struct CrlArgs {
    /// The issuing CA's certificate.
    #[arg(long, value_name = "FILE")]
    ca_cert: PathBuf,
    /// The issuing CA's private key.
    #[arg(long, value_name = "FILE")]
    ca_key: PathBuf,
    /// The certificates to revoke (several after one --revoke, or --revoke repeated).
    #[arg(long, value_name = "CERT", num_args = 1..)]
    revoke: Vec<PathBuf>,
    /// Days until the next update.
    #[arg(long, default_value_t = 30)]
    days: u32,
    /// The CRL number.
    #[arg(long, default_value_t = 1)]
    number: u64,
    /// The SM2 ID the CRL is signed with.
    #[arg(long, value_name = "ID", default_value = "1234567812345678")]
    sm2_id: String,
    /// Reads the CA key's password from this file when it is encrypted.
    #[arg(long, value_name = "F")]
    password_file: Option<PathBuf>,
    /// Write DER instead of PEM.
    #[arg(long)]
    der: bool,
    /// The file to write (default stdout); it appears only when complete.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
}

impl CrlArgs {
    pub(super) fn run(self) -> Result<Outcome> {
        let CrlArgs {
            ca_cert,
            ca_key,
            revoke,
            days,
            number,
            sm2_id,
            password_file,
            der,
            output,
        } = self;
        let ca = one_cert(&ca_cert)?;
        let k = keyio::private_key(&ca_key, password_file.as_deref())?;
        let now = SystemTime::now();
        let mut serials = Vec::new();
        for p in &revoke {
            let c = one_cert(p)?;
            if c.tbs_certificate().issuer() != ca.tbs_certificate().subject() {
                return Err(error(p.display(), "not issued by this CA"));
            }
            serials.push((c.tbs_certificate().serial_number().as_bytes().to_vec(), now));
        }
        let list = shangmi_pki::crl(&ca, &k, &serials, days, number, sm2_id.as_bytes())
            .map_err(|e| error(ca_cert.display(), e))?;
        write(&list, der, output.as_deref())?;
        Ok(Outcome::Ok)
    }
}
