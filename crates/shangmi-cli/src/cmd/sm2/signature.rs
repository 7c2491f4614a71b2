//! `sm2 sign` and `sm2 verify`: signatures over a file with the signer's Z, and hints when one
//! does not verify.

use std::path::PathBuf;

use clap::Args as ClapArgs;
use shangmi::sm2::Signature;

use super::forms::SigForm;
use super::{digest, forms, id_bytes};
use crate::fail::{Outcome, Result, error};
use crate::files::{Output, open_input, print, read_small};
use crate::keyio;

#[derive(ClapArgs)]
pub(super) struct SignArgs {
    #[arg(long, value_name = "KEY.pem")]
    key: PathBuf,
    /// The signer's ID (default 1234567812345678; OpenSSL 3's `pkeyutl` uses an empty
    /// one unless given `-pkeyopt distid:...`: then pass --id '').
    #[arg(long)]
    id: Option<String>,
    /// Write r || s (64 bytes) instead of DER: the same as --sig-form raw.
    #[arg(long, conflicts_with = "sig_form")]
    raw: bool,
    /// How the signature is written.
    #[arg(long, value_enum, default_value = "der")]
    sig_form: SigForm,
    /// The file to read (default stdin).
    #[arg(short, long, value_name = "FILE")]
    input: Option<PathBuf>,
    /// The file to write (default stdout); it appears only when complete.
    #[arg(short, long, value_name = "SIG")]
    output: Option<PathBuf>,
    #[arg(long, value_name = "F")]
    password_file: Option<PathBuf>,
}

impl SignArgs {
    pub(super) fn run(self) -> Result<Outcome> {
        let SignArgs {
            key,
            id,
            raw,
            sig_form,
            input,
            output,
            password_file,
        } = self;
        let form = if raw { SigForm::Raw } else { sig_form };
        let key = keyio::private_key(&key, password_file.as_deref())?;
        let id = id_bytes(id.as_deref())?;
        let z = key.verifying_key().z(&id).map_err(|e| error("--id", e))?;
        let e = digest(&z, open_input(input.as_deref())?)?;
        let sig = key.sign_digest(&e).map_err(|e| error("sign", e))?;
        let mut out = Output::create(output.as_deref())?;
        out.put(&form.encode(&sig))?;
        out.commit()?;
        Ok(Outcome::Ok)
    }
}

#[derive(ClapArgs)]
pub(super) struct VerifyArgs {
    #[arg(long = "pub", value_name = "PUB.pem")]
    public: PathBuf,
    /// The signer's ID (default 1234567812345678; a signature from OpenSSL 3's `pkeyutl`
    /// without `-pkeyopt distid:...` needs --id '').
    #[arg(long)]
    id: Option<String>,
    /// The signature is r || s (64 bytes), not DER: the same as --sig-form raw.
    #[arg(long, conflicts_with = "sig_form")]
    raw: bool,
    /// How the signature is written.
    #[arg(long, value_enum, default_value = "der")]
    sig_form: SigForm,
    #[arg(long, value_name = "SIG")]
    sig: PathBuf,
    /// The file to read (default stdin).
    #[arg(short, long, value_name = "FILE")]
    input: Option<PathBuf>,
}

impl VerifyArgs {
    pub(super) fn run(self) -> Result<Outcome> {
        let VerifyArgs {
            public,
            id,
            raw,
            sig_form,
            sig,
            input,
        } = self;
        let form = if raw { SigForm::Raw } else { sig_form };
        let key = keyio::public_key(&public, None)?;
        let id = id_bytes(id.as_deref())?;
        // A DER signature is at most 72 bytes; a bound keeps /dev/zero out.
        let sig_bytes = read_small(&sig, 64 * 1024)?;
        let parsed = form.decode(&sig_bytes);
        let z = key.z(&id).map_err(|e| error("--id", e))?;
        let e = digest(&z, open_input(input.as_deref())?)?;
        let ok = parsed.is_some_and(|s| key.verify_digest(&e, &s).is_ok());
        if ok {
            print("Verified OK\n")?;
            return Ok(Outcome::Ok);
        }
        print("Verification failure\n")?;
        // Another ID can only be tried on an input that can be read again.
        let again = input.as_deref().filter(|p| p.as_os_str() != "-");
        let verifies_with = |other: &[u8], s: &Signature| {
            let Some(path) = again else { return false };
            let (Ok(z), Ok(input)) = (key.z(other), open_input(Some(path))) else {
                return false;
            };
            digest(&z, input).is_ok_and(|e| key.verify_digest(&e, s).is_ok())
        };
        if let Some(hint) = forms::verify_hint(form, &sig_bytes, &id, verifies_with) {
            crate::fail::report(sig.display(), format!("hint: {hint}"));
        }
        Ok(Outcome::Mismatch)
    }
}
