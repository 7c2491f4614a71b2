//! `shangmi cfca`: CFCA's `.sm2` key files, the signing key and certificate CFCA's SADK writes
//! under a password, turned into a PKCS#8 key and a PEM certificate and back. (CFCA's escrowed
//! encryption keys open with `shangmi cms unwrap-key`.)

use std::path::PathBuf;

use clap::{Args as ClapArgs, Subcommand};
use der::{EncodePem, pem::LineEnding};

use crate::fail::{Outcome, Result, error, rejected};
use crate::files::{Output, read_small};
use crate::{keyio, secrets};

#[derive(ClapArgs)]
#[command(after_help = "\
Examples:
  shangmi cfca import -i user.sm2 --password-file pw --key-out user.key --cert-out user.pem
  shangmi cfca export --key user.key --cert user.pem --password-file pw -o user.sm2
  shangmi cms unwrap-key --key temporary.key -i escrowed-enc-key.txt -o enc.key

A .sm2 file is read as DER, PEM or Base64; the key is written as PKCS#8 PEM (encrypted with
--key-password-file). Exit status: 0 success, 1 a wrong password, 2 usage or input error.")]
pub struct Args {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Open a .sm2 file: its key and certificate.
    Import {
        /// The .sm2 file.
        #[arg(short, long, value_name = "IN")]
        input: PathBuf,
        /// Reads the file's password from this file (asked on the terminal otherwise).
        #[arg(long, value_name = "F")]
        password_file: Option<PathBuf>,
        /// Where the private key goes (PKCS#8 PEM).
        #[arg(long, value_name = "FILE")]
        key_out: PathBuf,
        /// Encrypts the written key under the password in this file.
        #[arg(long, value_name = "F")]
        key_password_file: Option<PathBuf>,
        /// Where the certificate goes (PEM).
        #[arg(long, value_name = "FILE")]
        cert_out: PathBuf,
    },
    /// Write a key and its certificate as a .sm2 file (DER, or Base64 with --base64).
    Export {
        /// The private key.
        #[arg(long, value_name = "FILE")]
        key: PathBuf,
        /// Reads the key's password from this file when it is encrypted.
        #[arg(long, value_name = "F")]
        key_password_file: Option<PathBuf>,
        /// Its certificate.
        #[arg(long, value_name = "FILE")]
        cert: PathBuf,
        /// Reads the .sm2 file's password from this file (asked twice otherwise).
        #[arg(long, value_name = "F")]
        password_file: Option<PathBuf>,
        /// Base64 text, as SADK writes .sm2 files, instead of DER.
        #[arg(long)]
        base64: bool,
        /// The file to write (default stdout).
        #[arg(short, long, value_name = "OUT")]
        output: Option<PathBuf>,
    },
}

fn write(path: Option<&std::path::Path>, bytes: &[u8]) -> Result<()> {
    let mut out = Output::create(path)?;
    out.put(bytes)?;
    out.commit()
}

pub fn run(args: Args) -> Result<Outcome> {
    match args.cmd {
        Cmd::Import {
            input,
            password_file,
            key_out,
            key_password_file,
            cert_out,
        } => {
            let data = read_small(&input, 1 << 20)?;
            let password = secrets::password(
                password_file.as_deref(),
                &format!("Password for {}", input.display()),
                false,
            )?;
            let (key, cert) =
                shangmi_pki::cfca::open_sm2_file(&data, &password).map_err(|e| match e {
                    shangmi_pki::Error::Decryption(_) => rejected(input.display(), e),
                    e => error(input.display(), e),
                })?;
            let pem = match &key_password_file {
                Some(f) => {
                    let pw = secrets::password_from_file(f)?;
                    key.to_pkcs8_encrypted_pem(&pw, Default::default())
                }
                None => key.to_pkcs8_pem().map(|p| p.to_string()),
            }
            .map_err(|e| error("writing the key", e))?;
            let cert_pem = cert
                .to_pem(LineEnding::LF)
                .map_err(|e| error("writing the certificate", e))?;
            write(Some(&cert_out), cert_pem.as_bytes())?;
            write(Some(&key_out), pem.as_bytes())?;
        }
        Cmd::Export {
            key,
            key_password_file,
            cert,
            password_file,
            base64,
            output,
        } => {
            let k = keyio::private_key(&key, key_password_file.as_deref())?;
            let certs = shangmi_pki::certificates(&read_small(&cert, 1 << 20)?)
                .map_err(|e| error(cert.display(), e))?;
            let c = certs
                .first()
                .ok_or_else(|| error(cert.display(), "no certificate"))?;
            // The format's key is one SM3 of the password, unsalted and uniterated: a guess
            // costs an attacker one hash. Say so every time a key is put in one.
            eprintln!(
                "shangmi: warning: a .sm2 file protects its key with one unsalted SM3 of the \
                 password (CFCA's format); use a long random password, or PKCS#8 \
                 (sm2 keygen/convert with a password) where CFCA's tools are not needed"
            );
            let password =
                secrets::password(password_file.as_deref(), "Password for the .sm2 file", true)?;
            let der =
                shangmi_pki::cfca::sm2_file(&k, c, &password).map_err(|e| error("export", e))?;
            if base64 {
                let mut text = <base64ct::Base64 as base64ct::Encoding>::encode_string(&der);
                text.push('\n');
                write(output.as_deref(), text.as_bytes())?;
            } else {
                write(output.as_deref(), &der)?;
            }
        }
    }
    Ok(Outcome::Ok)
}
