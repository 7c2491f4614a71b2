//! `sm2 keygen` and `sm2 pubkey`: key pairs made and their public halves written.

use std::path::PathBuf;

use clap::Args as ClapArgs;
use shangmi::sm2::{self, EncryptionParams, Prf, SigningKey};
use zeroize::Zeroizing;

use super::{KeyForm, PrfChoice, forms, public_key_bytes};
use crate::fail::{Outcome, Result, error};
use crate::files::Output;
use crate::keyio;

fn keygen(
    output: Option<PathBuf>,
    pubout: Option<PathBuf>,
    password_file: Option<PathBuf>,
    prf: PrfChoice,
    iterations: u32,
    outform: KeyForm,
    sec1: bool,
) -> Result<Outcome> {
    if outform == KeyForm::Hex && (sec1 || password_file.is_some()) {
        return Err(error(
            "--outform hex",
            "a hex key is the bare d: it has no SEC1 form and cannot be encrypted",
        ));
    }
    let key = SigningKey::random().map_err(|e| error("keygen", e))?;
    let fail = |e| error("keygen", e);
    let private: Zeroizing<Vec<u8>> = match &password_file {
        Some(f) => {
            let password = crate::secrets::password_from_file(f)?;
            let params = EncryptionParams {
                prf: match prf {
                    PrfChoice::Sm3 => Prf::HmacSm3,
                    PrfChoice::Sha256 => Prf::HmacSha256,
                },
                iterations,
            };
            // One encryption (one PBKDF2 run), in the form asked for.
            let encrypted = match outform {
                KeyForm::Der => key.to_pkcs8_encrypted_der(&password, params),
                _ => key
                    .to_pkcs8_encrypted_pem(&password, params)
                    .map(String::into_bytes),
            };
            Zeroizing::new(encrypted.map_err(|e| error("--iterations", e))?)
        }
        None => match (outform, sec1) {
            (KeyForm::Pem, false) => {
                Zeroizing::new(key.to_pkcs8_pem().map_err(fail)?.as_bytes().to_vec())
            }
            (KeyForm::Pem, true) => {
                Zeroizing::new(key.to_sec1_pem().map_err(fail)?.as_bytes().to_vec())
            }
            (KeyForm::Der, false) => Zeroizing::new(key.to_pkcs8_der().map_err(fail)?.to_vec()),
            (KeyForm::Der, true) => Zeroizing::new(key.to_sec1_der().map_err(fail)?.to_vec()),
            (KeyForm::Hex, _) => forms::hex_line_secret(&key.to_bytes()[..]),
        },
    };
    // Both outputs are prepared before either is committed, and named files are committed
    // before stdout, which cannot be taken back: if a later commit fails, the files already
    // committed are removed, so a failure leaves neither key behind.
    let mut outs = Vec::new();
    if let Some(p) = &pubout {
        let mut o = Output::create(Some(p))?;
        o.put(&public_key_bytes(key.verifying_key(), outform)?)?;
        outs.push((o, Some(p.clone())));
    }
    let mut o = Output::create(output.as_deref())?;
    o.put(&private)?;
    let named = output.as_ref().filter(|p| p.as_os_str() != "-").cloned();
    outs.push((o, named));
    outs.sort_by_key(|(o, _)| !o.is_atomic());
    let mut committed: Vec<PathBuf> = Vec::new();
    for (o, path) in outs {
        let atomic = o.is_atomic();
        if let Err(f) = o.commit() {
            for p in &committed {
                let _ = std::fs::remove_file(p);
            }
            return Err(f);
        }
        if let (true, Some(p)) = (atomic, path) {
            committed.push(p);
        }
    }
    // Said once the key exists, so that a failure stays one line.
    if password_file.is_some() && prf == PrfChoice::Sm3 {
        crate::fail::report(
            "note",
            "the key is encrypted with PBKDF2-HMAC-SM3, which OpenSSL 3.0 cannot read \
             (--prf sha256 writes one it can)",
        );
    }
    Ok(Outcome::Ok)
}

#[derive(ClapArgs)]
pub(super) struct KeygenArgs {
    /// Private key output (default stdout); created readable by its owner only.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Also write the public key here.
    #[arg(long, value_name = "PUB.pem")]
    pubout: Option<PathBuf>,
    /// Encrypt the private key with the password on this file's first line (PBES2:
    /// PBKDF2 and SM4-CBC).
    #[arg(long, value_name = "F")]
    password_file: Option<PathBuf>,
    /// The PBKDF2 function for an encrypted key.
    #[arg(long, value_enum, default_value = "sm3", requires = "password_file")]
    prf: PrfChoice,
    /// PBKDF2 iterations for an encrypted key.
    #[arg(long, default_value_t = sm2::DEFAULT_PBKDF2_ITERATIONS, requires = "password_file")]
    iterations: u32,
    /// How both keys are written.
    #[arg(long, value_enum, default_value = "pem")]
    outform: KeyForm,
    /// The private key as SEC1 `EC PRIVATE KEY` (what `openssl ec` reads) instead of
    /// PKCS#8; not with a password.
    #[arg(long, conflicts_with = "password_file")]
    sec1: bool,
}

impl KeygenArgs {
    pub(super) fn run(self) -> Result<Outcome> {
        let KeygenArgs {
            output,
            pubout,
            password_file,
            prf,
            iterations,
            outform,
            sec1,
        } = self;
        keygen(
            output,
            pubout,
            password_file,
            prf,
            iterations,
            outform,
            sec1,
        )
    }
}

#[derive(ClapArgs)]
pub(super) struct PubkeyArgs {
    /// The private key.
    #[arg(short, long, value_name = "KEY.pem")]
    input: PathBuf,
    /// Output (default stdout).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Password file for an encrypted key (otherwise asked on the terminal).
    #[arg(long, value_name = "F")]
    password_file: Option<PathBuf>,
    /// How the public key is written.
    #[arg(long, value_enum, default_value = "pem")]
    outform: KeyForm,
}

impl PubkeyArgs {
    pub(super) fn run(self) -> Result<Outcome> {
        let PubkeyArgs {
            input,
            output,
            password_file,
            outform,
        } = self;
        let key = keyio::private_key(&input, password_file.as_deref())?;
        let mut out = Output::create(output.as_deref())?;
        out.put(&public_key_bytes(key.verifying_key(), outform)?)?;
        out.commit()?;
        Ok(Outcome::Ok)
    }
}
