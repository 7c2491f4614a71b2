//! `cms sign` and `cms verify`: SignedData made and checked.

use std::path::PathBuf;

use clap::Args as ClapArgs;
use shangmi_pki::Verifier;
use shangmi_pki::cms::{CmsSigner, Flavor};

use super::{MESSAGE_LIMIT, Out, emit, read_input};
use crate::fail::{Outcome, Result, error, rejected};
use crate::files::{Output, read_small};
use crate::keyio;

#[derive(ClapArgs)]
pub(super) struct SignArgs {
    /// The signer's certificate (repeat with --key for several signers).
    #[arg(long, value_name = "FILE", required = true)]
    cert: Vec<PathBuf>,
    /// The signer's private key, in the order of --cert.
    #[arg(long, value_name = "FILE", required = true)]
    key: Vec<PathBuf>,
    /// More certificates to include (intermediates).
    #[arg(long, value_name = "FILE")]
    certfile: Vec<PathBuf>,
    /// Leave the content out of the message.
    #[arg(long)]
    detached: bool,
    /// GM/T 0010's content-type OIDs instead of PKCS#7's.
    #[arg(long)]
    gm: bool,
    /// GmSSL 3's SignedData (its own signature form, which only GmSSL reads), as PEM
    /// `CMS`.
    #[arg(long)]
    gmssl: bool,
    /// Write PEM (`-----BEGIN PKCS7-----`) instead of DER.
    #[arg(long)]
    pem: bool,
    /// Reads the keys' password from this file when they are encrypted.
    #[arg(long, value_name = "F")]
    password_file: Option<PathBuf>,
    /// The data to sign (default stdin).
    #[arg(short, long, value_name = "IN")]
    input: Option<PathBuf>,
    /// The file to write (default stdout); it appears only when complete.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
}

impl SignArgs {
    pub(super) fn run(self) -> Result<Outcome> {
        let SignArgs {
            cert,
            key,
            certfile,
            detached,
            gm,
            gmssl,
            pem,
            password_file,
            input,
            output,
        } = self;
        if cert.len() != key.len() {
            return Err(error("--cert/--key", "one key for each certificate"));
        }
        let mut pairs = Vec::new();
        for (c, k) in cert.iter().zip(&key) {
            let certs = shangmi_pki::certificates(&read_small(c, 16 << 20)?)
                .map_err(|e| error(c.display(), e))?;
            let key = keyio::private_key(k, password_file.as_deref())?;
            pairs.push((certs[0].clone(), key));
        }
        let mut extra = Vec::new();
        for f in &certfile {
            extra.extend(
                shangmi_pki::certificates(&read_small(f, 16 << 20)?)
                    .map_err(|e| error(f.display(), e))?,
            );
        }
        let data = read_input(input.as_deref())?;
        let signers: Vec<CmsSigner<'_>> = pairs
            .iter()
            .map(|(cert, key)| CmsSigner { cert, key })
            .collect();
        let flavor = if gm { Flavor::Gm } else { Flavor::Pkcs7 };
        let der = if gmssl {
            if detached {
                return Err(error("--gmssl", "GmSSL's SignedData carries its content"));
            }
            shangmi_pki::cms::sign_gmssl(&data, &signers, &extra)
        } else {
            shangmi_pki::cms::sign(&data, &signers, &extra, detached, flavor)
        }
        .map_err(|e| error("signing", e))?;
        emit(&der, Out::of(pem, gmssl), output.as_deref())?;
        Ok(Outcome::Ok)
    }
}

#[derive(ClapArgs)]
pub(super) struct VerifyArgs {
    /// Trusted CA certificates (repeat for several files).
    #[arg(long, value_name = "FILE", required = true)]
    ca: Vec<PathBuf>,
    /// The content, for a detached signature.
    #[arg(long, value_name = "FILE")]
    content: Option<PathBuf>,
    /// Also accept GmSSL 3's signature form (no Z, over the encapsulated content's DER).
    #[arg(long, conflicts_with = "content")]
    gmssl: bool,
    /// Lets a CA given with --ca sign the message itself, even with a key usage of
    /// certificate and CRL signing only.
    #[arg(long)]
    allow_ca_signer: bool,
    /// The SignedData (DER or PEM; default stdin).
    #[arg(short, long, value_name = "IN")]
    input: Option<PathBuf>,
    /// Where the verified content goes (nothing is written unless every check passes).
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
}

impl VerifyArgs {
    pub(super) fn run(self) -> Result<Outcome> {
        let VerifyArgs {
            ca,
            content,
            gmssl,
            allow_ca_signer,
            input,
            output,
        } = self;
        let mut anchors = Vec::new();
        for p in &ca {
            anchors.extend(
                shangmi_pki::certificates(&read_small(p, 16 << 20)?)
                    .map_err(|e| error(p.display(), e))?,
            );
        }
        let message = read_input(input.as_deref())?;
        let detached = content
            .as_deref()
            .map(|p| read_small(p, MESSAGE_LIMIT).map(|d| d.to_vec()))
            .transpose()?;
        let name = input
            .as_deref()
            .map_or("stdin".to_string(), |p| p.display().to_string());
        let mut v = Verifier::new(anchors);
        if allow_ca_signer {
            v = v.allowing_anchor_signers();
        }
        let verified = if gmssl {
            shangmi_pki::cms::verify_accepting_gmssl(&message, &v)
        } else {
            shangmi_pki::cms::verify(&message, detached.as_deref(), &v)
        };
        let verified = verified.map_err(|e| match e {
            shangmi_pki::Error::BadSignature(_) | shangmi_pki::Error::Chain { .. } => {
                rejected(&name, e)
            }
            e => error(&name, e),
        })?;
        eprintln!("shangmi: {name}: Verification successful");
        if output.is_some() || detached.is_none() {
            let mut out = Output::create(output.as_deref())?;
            out.put(&verified.content)?;
            out.commit()?;
        }
        Ok(Outcome::Ok)
    }
}
