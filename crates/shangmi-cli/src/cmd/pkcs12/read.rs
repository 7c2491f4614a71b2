//! `pkcs12 show` and `pkcs12 import`: what a keystore holds, and its keys and certificates as
//! PEM.

use std::path::PathBuf;

use clap::Args as ClapArgs;
use der::{Decode, EncodePem, pem::LineEnding};

use crate::fail::{Outcome, Result, error};
use crate::files::Output;
use crate::{keyio, secrets};

fn subject(der: &[u8]) -> String {
    shangmi_pki::Certificate::from_der(der)
        .map(|c| c.tbs_certificate().subject().to_string())
        .unwrap_or_else(|_| "(unreadable)".into())
}

fn hex_prefix(id: &[u8]) -> String {
    let mut s: String = id.iter().take(8).map(|b| format!("{b:02x}")).collect();
    if id.len() > 8 {
        s.push_str("...");
    }
    s
}

#[derive(ClapArgs)]
pub(super) struct ShowArgs {
    /// The keystore.
    #[arg(value_name = "FILE")]
    input: PathBuf,
    /// Reads its password from this file (asked on the terminal otherwise).
    #[arg(long, value_name = "F")]
    password_file: Option<PathBuf>,
}

impl ShowArgs {
    pub(super) fn run(self) -> Result<Outcome> {
        let ShowArgs {
            input,
            password_file,
        } = self;
        let p = keyio::keystore(&input, password_file.as_deref())?;
        let mut text = format!("MAC: {}\n", p.mac);
        for k in &p.keys {
            text += &format!(
                "key: SM2{}{}, protected by {}\n",
                k.attributes
                    .friendly_name
                    .as_deref()
                    .map(|n| format!(", alias \"{n}\""))
                    .unwrap_or_default(),
                k.attributes
                    .local_key_id
                    .as_deref()
                    .map(|id| format!(", local key ID {}", hex_prefix(id)))
                    .unwrap_or_default(),
                k.protection
            );
        }
        for c in &p.certs {
            text += &format!(
                "certificate: {}{}{}, protected by {}\n",
                subject(&c.der),
                c.attributes
                    .friendly_name
                    .as_deref()
                    .map(|n| format!(", alias \"{n}\""))
                    .unwrap_or_default(),
                c.attributes
                    .local_key_id
                    .as_deref()
                    .map(|id| format!(", local key ID {}", hex_prefix(id)))
                    .unwrap_or_default(),
                c.protection
            );
        }
        let mut out = Output::create(None)?;
        out.put(text.as_bytes())?;
        out.commit()?;
        Ok(Outcome::Ok)
    }
}

#[derive(ClapArgs)]
pub(super) struct ImportArgs {
    /// The keystore.
    #[arg(value_name = "FILE")]
    input: PathBuf,
    /// Reads its password from this file (asked on the terminal otherwise).
    #[arg(long, value_name = "F")]
    password_file: Option<PathBuf>,
    /// Encrypts the written keys under the password in this file.
    #[arg(long, value_name = "F")]
    key_password_file: Option<PathBuf>,
    /// The file to write (default stdout).
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
}

impl ImportArgs {
    pub(super) fn run(self) -> Result<Outcome> {
        let ImportArgs {
            input,
            password_file,
            key_password_file,
            output,
        } = self;
        let p = keyio::keystore(&input, password_file.as_deref())?;
        let key_pw = match &key_password_file {
            Some(f) => Some(secrets::password_from_file(f)?),
            None => None,
        };
        let mut text = String::new();
        for k in &p.keys {
            let pem = match &key_pw {
                Some(pw) => k.key.to_pkcs8_encrypted_pem(pw, Default::default()),
                None => k.key.to_pkcs8_pem().map(|p| p.to_string()),
            }
            .map_err(|e| error("writing a key", e))?;
            text += &pem;
        }
        for c in &p.certs {
            let cert = shangmi_pki::Certificate::from_der(&c.der)
                .map_err(|e| error(input.display(), e))?;
            text += &cert
                .to_pem(LineEnding::LF)
                .map_err(|e| error("writing a certificate", e))?;
        }
        let mut out = Output::create(output.as_deref())?;
        out.put(text.as_bytes())?;
        out.commit()?;
        Ok(Outcome::Ok)
    }
}
