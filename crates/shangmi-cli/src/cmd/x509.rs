//! `shangmi x509`: certificate requests, certificates and CRLs signed with SM2, chains
//! verified with the SM2 ID the signatures were made with, and any of them shown as text.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::SystemTime;

use clap::{Args as ClapArgs, Subcommand};
use shangmi_pki::{Cert, Issue, Verifier};

use crate::fail::{Outcome, Result, error, rejected};
use crate::files::{Output, read_small};
use crate::keyio;

/// PKI files are small; the bound keeps a wrong path such as /dev/zero from exhausting memory.
const FILE_LIMIT: u64 = 16 << 20;

#[derive(ClapArgs)]
#[command(after_help = "\
Examples:
  shangmi x509 req --key ca.key --subject \"/C=CN/O=Example/CN=Example Root\" -o ca.csr
  shangmi x509 sign --csr ca.csr --self --key ca.key --ca --days 3650 -o ca.pem
  shangmi x509 req --key server.key --subject \"/CN=www.example.com\" --san DNS:www.example.com -o server.csr
  shangmi x509 sign --csr server.csr --ca-cert ca.pem --ca-key ca.key --days 365 -o server.pem
  shangmi x509 verify --ca ca.pem server.pem
  shangmi x509 crl --ca-cert ca.pem --ca-key ca.key --revoke server.pem -o ca.crl
  shangmi x509 show server.pem

Signatures use the SM2 ID 1234567812345678 (GM/T 0009) unless --sm2-id says otherwise;
OpenSSL 3 signs with an empty ID unless given -sigopt distid:1234567812345678 (--sm2-id '').
Exit status: 0 success, 1 a signature, chain or revocation check failed, 2 usage or input error.")]
pub struct Args {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Make a certificate request (PKCS#10) signed by the key.
    Req {
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
    },
    /// Issue a certificate for a request: by a CA, or self-signed with --self.
    Sign {
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
    },
    /// Verify a certificate's chain to the trusted CA certificates.
    Verify {
        /// Trusted CA certificates (PEM with several, or DER; repeat for several files).
        #[arg(long, value_name = "FILE", required = true)]
        ca: Vec<PathBuf>,
        /// Intermediate certificates that are not trusted by themselves.
        #[arg(long, value_name = "FILE")]
        untrusted: Vec<PathBuf>,
        /// CRLs to check revocation against.
        #[arg(long, value_name = "FILE")]
        crl: Vec<PathBuf>,
        /// The SM2 ID the signatures were made with ('' for OpenSSL 3's default).
        #[arg(long, value_name = "ID", default_value = "1234567812345678")]
        sm2_id: String,
        /// Check validity at this time (RFC 3339, e.g. 2024-01-02T03:04:05Z) instead of now.
        #[arg(long, value_name = "TIME")]
        at: Option<String>,
        /// The certificate to verify.
        cert: PathBuf,
    },
    /// Show a certificate, request or CRL as text.
    Show {
        /// The file (PEM or DER).
        file: PathBuf,
    },
    /// Make a CRL revoking the given certificates.
    Crl {
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
    },
}

fn read(path: &Path) -> Result<Vec<u8>> {
    Ok(read_small(path, FILE_LIMIT)?.to_vec())
}

fn input(path: &Path, e: shangmi_pki::Error) -> crate::fail::Failure {
    error(path.display(), e)
}

fn certs(path: &Path) -> Result<Vec<Cert>> {
    shangmi_pki::certificates(&read(path)?).map_err(|e| input(path, e))
}

fn one_cert(path: &Path) -> Result<Cert> {
    Ok(certs(path)?.remove(0))
}

/// Writes `value` as PEM (or DER) to `output`.
fn write<T: der::EncodePem + der::Encode>(
    value: &T,
    der: bool,
    output: Option<&Path>,
) -> Result<()> {
    let bytes = if der {
        value.to_der().map_err(|e| error("encoding", e))?
    } else {
        value
            .to_pem(der::pem::LineEnding::LF)
            .map_err(|e| error("encoding", e))?
            .into_bytes()
    };
    let mut out = Output::create(output)?;
    out.put(&bytes)?;
    out.commit()
}

fn serial_hex(s: &str) -> Result<Vec<u8>> {
    let bytes = crate::fail::parse_hex("--serial", s)?;
    if bytes.is_empty() || bytes.len() > 20 {
        return Err(error("--serial", "1 to 20 bytes"));
    }
    Ok(bytes)
}

fn time(s: &str) -> Result<SystemTime> {
    der::DateTime::from_str(s)
        .map(|t| t.to_system_time())
        .map_err(|_| error("--at", "not an RFC 3339 time such as 2024-01-02T03:04:05Z"))
}

pub fn run(args: Args) -> Result<Outcome> {
    match args.cmd {
        Cmd::Req {
            key,
            subject,
            san,
            password_file,
            der,
            output,
        } => {
            let k = keyio::private_key(&key, password_file.as_deref())?;
            let san: Vec<&str> = san.iter().map(String::as_str).collect();
            let csr =
                shangmi_pki::request(&k, &subject, &san).map_err(|e| error("--subject", e))?;
            write(&csr, der, output.as_deref())?;
        }
        Cmd::Sign {
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
        } => {
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
        }
        Cmd::Verify {
            ca,
            untrusted,
            crl,
            sm2_id,
            at,
            cert,
        } => {
            let mut anchors = Vec::new();
            for p in &ca {
                anchors.extend(certs(p)?);
            }
            // Intermediates and the target keep their bytes: signatures are checked over
            // what their issuers signed.
            let mut others = Vec::new();
            for p in &untrusted {
                others.extend(certs(p)?);
            }
            let mut v = Verifier::new(anchors).with_id(sm2_id.as_bytes());
            for p in &crl {
                v = v.with_crls(shangmi_pki::crls(&read(p)?).map_err(|e| input(p, e))?);
            }
            if let Some(t) = at {
                v = v.at(time(&t)?);
            }
            let target = one_cert(&cert)?;
            match v.verify(&target, &others) {
                Ok(path) => {
                    crate::files::print(&format!(
                        "{}: OK (chain of {})\n",
                        cert.display(),
                        path.len()
                    ))?;
                }
                Err(e @ shangmi_pki::Error::Chain { .. }) => {
                    return Err(rejected(cert.display(), e));
                }
                Err(e) => return Err(error(cert.display(), e)),
            }
        }
        Cmd::Show { file } => {
            let data = read(&file)?;
            let text = if let Ok(c) = shangmi_pki::certificates(&data) {
                c.iter()
                    .map(|c| shangmi_pki::describe_certificate(c))
                    .collect::<String>()
            } else if let Ok(r) = shangmi_pki::requests(&data) {
                r.iter().map(shangmi_pki::describe_request).collect()
            } else if let Ok(l) = shangmi_pki::crls(&data) {
                l.iter().map(|c| shangmi_pki::describe_crl(c)).collect()
            } else {
                return Err(error(
                    file.display(),
                    "neither a certificate, a request nor a CRL",
                ));
            };
            crate::files::print(&text)?;
        }
        Cmd::Crl {
            ca_cert,
            ca_key,
            revoke,
            days,
            number,
            sm2_id,
            password_file,
            der,
            output,
        } => {
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
        }
    }
    Ok(Outcome::Ok)
}

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
