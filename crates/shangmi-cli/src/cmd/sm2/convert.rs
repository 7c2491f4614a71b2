//! `sm2 inspect` and `sm2 convert`: what a key, signature or ciphertext file is, and the same
//! value in another layout.

use std::path::PathBuf;

use clap::{Args as ClapArgs, ValueEnum};
use shangmi::sm2::{self, PointEncoding};
use zeroize::Zeroizing;

use super::forms::{CipherText, SigForm};
use super::{CipherFormat, ConvertKind, HINT_LIMIT, WHOLE_LIMIT, cipher_text, form, inspect};
use crate::fail::{Outcome, Result, error};
use crate::files::{Output, open_input, print, read_small};
use crate::keyio;

fn convert(
    kind: ConvertKind,
    input: &std::path::Path,
    from: Option<&str>,
    to: &str,
    from_ct: CipherText,
    to_ct: CipherText,
    password_file: Option<&std::path::Path>,
) -> Result<Zeroizing<Vec<u8>>> {
    let name = input.display();
    if kind != ConvertKind::Ciphertext
        && (from_ct.hex || from_ct.no_prefix || to_ct.hex || to_ct.no_prefix)
    {
        return Err(error(
            "--from-hex/--to-hex/--*-no-prefix",
            "apply to ciphertexts",
        ));
    }
    if matches!(kind, ConvertKind::Key | ConvertKind::Pub) && from.is_some() {
        return Err(error("--from", "keys are recognised whatever their form"));
    }
    match kind {
        ConvertKind::Key => {
            let to: inspect::KeyOut = form("--to", to)?;
            let key = keyio::private_key(input, password_file)?;
            inspect::key_bytes(&key, to).map_err(|e| error(&name, e))
        }
        ConvertKind::Pub => {
            let to: inspect::PubOut = form("--to", to)?;
            let key = keyio::public_key(input, password_file)?;
            Ok(Zeroizing::new(
                inspect::pub_bytes(&key, to).map_err(|e| error(&name, e))?,
            ))
        }
        ConvertKind::Sig => {
            let from: SigForm = form("--from", from.ok_or_else(|| error("--from", "needed"))?)?;
            let to: SigForm = form("--to", to)?;
            let data = read_small(input, 64 * 1024)?;
            let out = inspect::convert_sig(&data, from, to).ok_or_else(|| {
                error(
                    &name,
                    format!("not a signature in the {} form", from.name()),
                )
            })?;
            Ok(Zeroizing::new(out))
        }
        ConvertKind::Ciphertext => {
            let from: CipherFormat =
                form("--from", from.ok_or_else(|| error("--from", "needed"))?)?;
            let to: CipherFormat = form("--to", to)?;
            let from_ct = cipher_text(from, from_ct.hex, from_ct.no_prefix)?;
            let to_ct = cipher_text(to, to_ct.hex, to_ct.no_prefix)?;
            let data = open_input(Some(input))?.read_all(WHOLE_LIMIT)?;
            let ct = from_ct.decode(&data).map_err(|e| error(&name, e))?;
            let out = sm2::convert(&ct, from.format(), to.format(), PointEncoding::Uncompressed)
                .map_err(|_| {
                    let from = from.to_possible_value().expect("named");
                    error(
                        &name,
                        format!(
                            "not a {} ciphertext (C1 must be on the curve)",
                            from.get_name()
                        ),
                    )
                })?;
            Ok(Zeroizing::new(to_ct.encode(out)))
        }
    }
}

#[derive(ClapArgs)]
pub(super) struct InspectArgs {
    /// The file.
    file: PathBuf,
}

impl InspectArgs {
    pub(super) fn run(self) -> Result<Outcome> {
        let InspectArgs { file } = self;
        let data = read_small(&file, HINT_LIMIT)?;
        let mut text = inspect::describe(&data).join("\n");
        text.push('\n');
        print(&text)?;
        Ok(Outcome::Ok)
    }
}

#[derive(ClapArgs)]
pub(super) struct ConvertArgs {
    /// What the input holds.
    #[arg(value_enum)]
    kind: ConvertKind,
    /// The file to read.
    #[arg(short, long, value_name = "IN")]
    input: PathBuf,
    /// The file to write (default stdout); it appears only when complete.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// The input's form: for sig der|raw|hex|der-hex; for ciphertext asn1|c1c3c2|c1c2c3
    /// (keys are recognised whatever their form).
    #[arg(long)]
    from: Option<String>,
    /// The output's form: for key pem|der|sec1|sec1-der|hex; for pub
    /// pem|der|hex|xy-hex|compressed-hex|raw; for sig and ciphertext as --from.
    #[arg(long)]
    to: String,
    /// Ciphertext input in hex.
    #[arg(long)]
    from_hex: bool,
    /// Ciphertext input with C1 lacking its 04.
    #[arg(long)]
    from_no_prefix: bool,
    /// Ciphertext output in hex.
    #[arg(long)]
    to_hex: bool,
    /// Ciphertext output with C1 lacking its 04.
    #[arg(long)]
    to_no_prefix: bool,
    /// Password file for an encrypted private key.
    #[arg(long, value_name = "F")]
    password_file: Option<PathBuf>,
}

impl ConvertArgs {
    pub(super) fn run(self) -> Result<Outcome> {
        let ConvertArgs {
            kind,
            input,
            output,
            from,
            to,
            from_hex,
            from_no_prefix,
            to_hex,
            to_no_prefix,
            password_file,
        } = self;
        let bytes = convert(
            kind,
            &input,
            from.as_deref(),
            &to,
            CipherText {
                hex: from_hex,
                no_prefix: from_no_prefix,
            },
            CipherText {
                hex: to_hex,
                no_prefix: to_no_prefix,
            },
            password_file.as_deref(),
        )?;
        let mut out = Output::create(output.as_deref())?;
        out.put(&bytes)?;
        out.commit()?;
        Ok(Outcome::Ok)
    }
}
