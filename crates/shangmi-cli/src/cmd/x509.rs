//! `shangmi x509`: certificate requests, certificates and CRLs signed with SM2, chains
//! verified with the SM2 ID the signatures were made with, and any of them shown as text.

use std::path::Path;
use std::str::FromStr;
use std::time::SystemTime;

use clap::{Args as ClapArgs, Subcommand};
use shangmi_pki::Cert;

use crate::fail::{Outcome, Result, error};
use crate::files::{Output, read_small};

mod check;
mod issue;

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
    Req(issue::ReqArgs),
    /// Issue a certificate for a request: by a CA, or self-signed with --self.
    Sign(issue::SignArgs),
    /// Verify a certificate's chain to the trusted CA certificates.
    Verify(check::VerifyArgs),
    /// Show a certificate, request or CRL as text.
    Show(check::ShowArgs),
    /// Make a CRL revoking the given certificates.
    Crl(issue::CrlArgs),
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
        Cmd::Req(a) => a.run(),
        Cmd::Sign(a) => a.run(),
        Cmd::Verify(a) => a.run(),
        Cmd::Show(a) => a.run(),
        Cmd::Crl(a) => a.run(),
    }
}
