//! `pkcs12 export`: a key, its certificate and chain written as a keystore.

use std::path::PathBuf;

use clap::Args as ClapArgs;
use shangmi_pki::pkcs12::{self, MacHash, Pkcs12Entry, Pkcs12Params};

use super::{Mac, PrfArg, cert_ders};
use crate::fail::{Outcome, Result, error};
use crate::files::Output;
use crate::{keyio, secrets};

#[derive(ClapArgs)]
pub(super) struct ExportArgs {
    /// The private key (its certificate is --cert).
    #[arg(long, value_name = "FILE")]
    key: PathBuf,
    /// The key's certificate (PEM or DER; further certificates in the file join the chain).
    #[arg(long, value_name = "FILE")]
    cert: PathBuf,
    /// Certificates to add (intermediates, roots).
    #[arg(long, value_name = "FILE")]
    chain: Option<PathBuf>,
    /// A TLCP encryption key (with --enc-cert).
    #[arg(long, value_name = "FILE", requires = "enc_cert")]
    enc_key: Option<PathBuf>,
    /// Its certificate.
    #[arg(long, value_name = "FILE", requires = "enc_key")]
    enc_cert: Option<PathBuf>,
    /// The alias of the key (default: none; "sign" and "enc" for a pair).
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// Reads the keys' passwords from this file when they are encrypted.
    #[arg(long, value_name = "F")]
    key_password_file: Option<PathBuf>,
    /// Reads the keystore's password from this file (asked twice otherwise).
    #[arg(long, value_name = "F")]
    password_file: Option<PathBuf>,
    /// OpenSSL 3's defaults (hmacWithSHA256, AES-256-CBC, SHA-256 MAC) instead of SM.
    #[arg(long)]
    compat: bool,
    /// The MAC's hash (default: sm3, or sha256 with --compat).
    #[arg(long, value_enum)]
    mac: Option<Mac>,
    /// The PBKDF2 PRF (default sha256: OpenSSL and Tongsuo read no other with SM4).
    #[arg(long, value_enum)]
    prf: Option<PrfArg>,
    /// The MAC as PBMAC1 (RFC 9579: HMAC keyed by PBKDF2, as OpenSSL 3.4+ writes with
    /// -pbmac1_pbkdf2); read by OpenSSL 3.4 and later, not by older readers or the JDK.
    #[arg(long)]
    pbmac1: bool,
    /// PBKDF2 and MAC iterations.
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    iterations: u32,
    /// The file to write.
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
}

impl ExportArgs {
    pub(super) fn run(self) -> Result<Outcome> {
        let ExportArgs {
            key,
            cert,
            chain,
            enc_key,
            enc_cert,
            name,
            key_password_file,
            password_file,
            compat,
            mac,
            prf,
            pbmac1,
            iterations,
            output,
        } = self;
        let k = keyio::private_key(&key, key_password_file.as_deref())?;
        let mut certs = cert_ders(&cert)?;
        if certs.is_empty() {
            return Err(error(cert.display(), "no certificate"));
        }
        let leaf = certs.remove(0);
        let enc = match (&enc_key, &enc_cert) {
            (Some(ek), Some(ec)) => {
                let key = keyio::private_key(ek, key_password_file.as_deref())?;
                let c = cert_ders(ec)?;
                let first = c
                    .into_iter()
                    .next()
                    .ok_or_else(|| error(ec.display(), "no certificate"))?;
                Some((key, first))
            }
            _ => None,
        };
        let mut extra = certs;
        if let Some(ch) = &chain {
            extra.extend(cert_ders(ch)?);
        }
        let sign_name = name
            .clone()
            .or_else(|| enc.as_ref().map(|_| "sign".to_string()));
        let mut entries = vec![Pkcs12Entry {
            key: &k,
            cert: &leaf,
            name: sign_name.as_deref(),
        }];
        if let Some((ek, ec)) = &enc {
            entries.push(Pkcs12Entry {
                key: ek,
                cert: ec,
                name: Some("enc"),
            });
        }
        let mut params = if compat {
            Pkcs12Params::international()
        } else {
            Pkcs12Params::sm()
        };
        params.iterations = iterations.max(1);
        params.mac_iterations = iterations.max(1);
        params.pbmac1 = pbmac1;
        match prf {
            Some(PrfArg::Sm3) => params.prf = shangmi::sm2::Prf::HmacSm3,
            Some(PrfArg::Sha256) => params.prf = shangmi::sm2::Prf::HmacSha256,
            None => {}
        }
        match mac {
            Some(Mac::Sm3) => params.mac = MacHash::Sm3,
            Some(Mac::Sha256) => params.mac = MacHash::Sha256,
            None => {}
        }
        let password =
            secrets::password(password_file.as_deref(), "Password for the keystore", true)?;
        let der =
            pkcs12::write(&entries, &extra, &password, params).map_err(|e| error("export", e))?;
        let mut out = Output::create(Some(&output))?;
        out.put(&der)?;
        out.commit()?;
        Ok(Outcome::Ok)
    }
}
