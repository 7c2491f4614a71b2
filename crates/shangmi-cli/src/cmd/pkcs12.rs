//! `shangmi pkcs12`: PKCS#12 keystores (.p12/.pfx) with SM2 keys, as OpenSSL, Tongsuo,
//! BouncyCastle and Java's keytool exchange them.

use std::path::PathBuf;

use clap::{Args as ClapArgs, Subcommand, ValueEnum};
use der::{Decode, EncodePem, pem::LineEnding};
use shangmi_pki::pkcs12::{self, MacHash, Pkcs12Entry, Pkcs12Params};

use crate::fail::{Outcome, Result, error};
use crate::files::{Output, read_small};
use crate::{keyio, secrets};

#[derive(ClapArgs)]
#[command(after_help = "\
Examples:
  shangmi pkcs12 export --key server.key --cert server.pem --chain ca.pem --name server \\
      --password-file pw -o server.p12
  shangmi pkcs12 export --key sign.key --cert sign.pem --enc-key enc.key --enc-cert enc.pem \\
      --password-file pw -o tlcp.p12                     # a TLCP pair: aliases sign and enc
  shangmi pkcs12 show server.p12 --password-file pw
  shangmi pkcs12 import server.p12 --password-file pw -o server-all.pem

Written with PBES2 (SM4-CBC, PBKDF2 hmacWithSHA256) and an SM3 MAC by default, as OpenSSL 4
and Tongsuo write it with -keypbe SM4-CBC -certpbe SM4-CBC -macalg SM3 (--prf sm3 for readers
that know hmacWithSM3, such as shangmi); --compat writes OpenSSL 3's defaults (AES-256-CBC,
SHA-256 MAC) for readers without SM.
Exit status: 0 success, 1 a wrong password or a failed MAC (nothing written), 2 usage or
input error.")]
pub struct Args {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum)]
enum Mac {
    Sm3,
    Sha256,
}

#[derive(Clone, Copy, ValueEnum)]
enum PrfArg {
    Sha256,
    Sm3,
}

#[derive(Subcommand)]
enum Cmd {
    /// Write a key, its certificate and chain (and a TLCP encryption pair) as PKCS#12.
    Export {
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
    },
    /// List what a keystore holds: keys, certificates, aliases, algorithms.
    Show {
        /// The keystore.
        #[arg(value_name = "FILE")]
        input: PathBuf,
        /// Reads its password from this file (asked on the terminal otherwise).
        #[arg(long, value_name = "F")]
        password_file: Option<PathBuf>,
    },
    /// Write a keystore's keys (PKCS#8 PEM) and certificates (PEM) to one file.
    Import {
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
    },
}

fn cert_ders(path: &std::path::Path) -> Result<Vec<Vec<u8>>> {
    shangmi_pki::certificate_ders(&read_small(path, 1 << 20)?).map_err(|e| error(path.display(), e))
}

fn subject(der: &[u8]) -> String {
    shangmi_pki::Certificate::from_der(der)
        .map(|c| c.tbs_certificate().subject().to_string())
        .unwrap_or_else(|_| "(unreadable)".into())
}

pub fn run(args: Args) -> Result<Outcome> {
    match args.cmd {
        Cmd::Export {
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
        } => {
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
            let der = pkcs12::write(&entries, &extra, &password, params)
                .map_err(|e| error("export", e))?;
            let mut out = Output::create(Some(&output))?;
            out.put(&der)?;
            out.commit()?;
        }
        Cmd::Show {
            input,
            password_file,
        } => {
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
        }
        Cmd::Import {
            input,
            password_file,
            key_password_file,
            output,
        } => {
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
        }
    }
    Ok(Outcome::Ok)
}

fn hex_prefix(id: &[u8]) -> String {
    let mut s: String = id.iter().take(8).map(|b| format!("{b:02x}")).collect();
    if id.len() > 8 {
        s.push_str("...");
    }
    s
}
