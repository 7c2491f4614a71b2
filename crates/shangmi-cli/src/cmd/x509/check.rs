//! `x509 verify` and `x509 show`: a chain checked to trusted CAs, and any PKI file as text.

use std::path::PathBuf;

use clap::Args as ClapArgs;
use shangmi_pki::Verifier;

use super::{certs, input, one_cert, read, time};
use crate::fail::{Outcome, Result, error, rejected};

#[derive(ClapArgs)]
pub(super) struct VerifyArgs {
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
}

impl VerifyArgs {
    pub(super) fn run(self) -> Result<Outcome> {
        let VerifyArgs {
            ca,
            untrusted,
            crl,
            sm2_id,
            at,
            cert,
        } = self;
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
        Ok(Outcome::Ok)
    }
}

#[derive(ClapArgs)]
pub(super) struct ShowArgs {
    /// The file (PEM or DER).
    file: PathBuf,
}

impl ShowArgs {
    pub(super) fn run(self) -> Result<Outcome> {
        let ShowArgs { file } = self;
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
        Ok(Outcome::Ok)
    }
}
