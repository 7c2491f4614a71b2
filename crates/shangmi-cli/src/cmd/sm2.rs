//! `shangmi sm2`: keys, signatures and public-key encryption, with files OpenSSL reads and
//! writes (PEM keys as `openssl genpkey -algorithm SM2` writes them, DER signatures, the DER
//! ciphertext of `openssl pkeyutl -encrypt`).

mod forms;
mod inspect;

use std::path::PathBuf;

use clap::{Subcommand, ValueEnum};
use shangmi::sm2::{
    self, DEFAULT_ID, Decryptor, EncryptionParams, Encryptor, Format, PointEncoding, Prf,
    Signature, SigningKey,
};
use shangmi::sm3::Sm3;
use zeroize::Zeroizing;

use crate::fail::{Outcome, Result, error, io_error, rejected};
use crate::files::{Input, Output, Through, io_error_on, open_input, print, read_small};
use crate::held::verified;
use crate::keyio;
use crate::progress::Progress;
use forms::{CipherText, SigForm};

const EXAMPLES: &str = "\
Examples:
  shangmi sm2 keygen -o key.pem --pubout pub.pem
  shangmi sm2 sign --key key.pem -i report.pdf -o report.sig
  shangmi sm2 verify --pub pub.pem --sig report.sig -i report.pdf     (\"Verified OK\")
  shangmi sm2 encrypt --pub pub.pem -i secret.txt -o secret.sm2
  shangmi sm2 decrypt --key key.pem -i secret.sm2 -o secret.txt

Keys are PEM as OpenSSL writes them. Also read: DER; bare keys in hex or bytes (d; 04||x||y,
x||y or compressed, as sm-crypto and gmssl exchange them); `openssl ec` output (SM2 PRIVATE
KEY); explicit curve parameters; PEM with other text or blocks around it; encrypted PKCS#8
with any PBKDF2 HMAC (SHA-1/2, SM3). Signatures are DER unless --sig-form (raw: r || s, 64
bytes; hex: r || s in hex), over SM3(Z || message) with the ID 1234567812345678 unless --id.
OpenSSL 3's own default ID is empty: for signatures made by `openssl pkeyutl` without
`-pkeyopt distid:`, pass --id ''. Ciphertexts in hex, or with C1 lacking its 04: --hex,
--no-prefix. When a check fails, a hint on stderr names the option the input suggests.
Exit status: 0 success, 1 verification or decryption failed, 2 usage or I/O error.";

const CONVERT_HELP: &str = "\
Examples:
  shangmi sm2 convert sig -i s.der --from der --to hex          (r || s in hex)
  shangmi sm2 convert pub -i pub.pem --to xy-hex                 (gmssl's public key)
  shangmi sm2 convert key -i d.hex --to pem                      (a bare d as PKCS#8)
  shangmi sm2 convert ciphertext -i c.hex --from c1c3c2 --from-hex --from-no-prefix --to asn1

A private key is written unencrypted. A ciphertext's C3 is not checked (that needs the key).";

/// Largest input for the DER ciphertext layout, which states C2's length before C2.
const WHOLE_LIMIT: u64 = 1 << 30;
/// Largest ciphertext whose structure is looked at for a hint after a failed decryption.
const HINT_LIMIT: u64 = 16 << 20;

#[derive(clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CipherFormat {
    /// DER SEQUENCE { x, y, C3, C2 }, as OpenSSL and GM/T 0009 write it.
    Asn1,
    /// C1 || C3 || C2 (GB/T 32918.4-2016).
    C1c3c2,
    /// C1 || C2 || C3 (the 2010 order).
    C1c2c3,
}

impl CipherFormat {
    fn format(self) -> Format {
        match self {
            CipherFormat::Asn1 => Format::Der,
            CipherFormat::C1c3c2 => Format::C1C3C2,
            CipherFormat::C1c2c3 => Format::C1C2C3,
        }
    }
}

/// How a key is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum KeyForm {
    /// PEM, as OpenSSL writes it.
    Pem,
    /// The same structure in DER.
    Der,
    /// Hex digits: the private key d (64 digits), the public key 04 || x || y (130), as the
    /// JavaScript and Python SM libraries exchange them.
    Hex,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PrfChoice {
    /// HMAC-SM3 (the national standard; OpenSSL 3.0 cannot read it).
    Sm3,
    /// HMAC-SHA256 (readable by OpenSSL 3.0).
    Sha256,
}

#[derive(Subcommand)]
enum Cmd {
    /// Make a key pair: the private key as PKCS#8 PEM (encrypted with --password-file).
    #[command(after_help = "Example:\n  shangmi sm2 keygen -o key.pem --pubout pub.pem")]
    Keygen {
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
    },
    /// Write the public key of a private key.
    #[command(after_help = "Example:\n  shangmi sm2 pubkey -i key.pem -o pub.pem")]
    Pubkey {
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
    },
    /// Sign a file (stdin by default).
    #[command(after_help = "Example:\n  shangmi sm2 sign --key key.pem -i file -o file.sig")]
    Sign {
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
    },
    /// Verify a signature: prints "Verified OK" (exit 0) or "Verification failure" (exit 1).
    #[command(after_help = "Example:\n  shangmi sm2 verify --pub pub.pem --sig file.sig -i file")]
    Verify {
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
    },
    /// Encrypt to a public key.
    #[command(
        after_help = "Example:\n  shangmi sm2 encrypt --pub pub.pem -i secret.txt -o secret.sm2\n\nasn1 holds the whole message in memory (its header states the length); c1c3c2 and\nc1c2c3 stream."
    )]
    Encrypt {
        #[arg(long = "pub", value_name = "PUB.pem")]
        public: PathBuf,
        #[arg(long, value_enum, default_value = "asn1")]
        format: CipherFormat,
        /// Write the ciphertext as hex digits.
        #[arg(long)]
        hex: bool,
        /// Write C1 as x || y without its 04 (what sm-crypto and gmssl exchange; c1c3c2
        /// and c1c2c3 only).
        #[arg(long)]
        no_prefix: bool,
        /// The file to read (default stdin).
        #[arg(short, long, value_name = "IN")]
        input: Option<PathBuf>,
        /// The file to write (default stdout); it appears only when complete.
        #[arg(short, long, value_name = "OUT")]
        output: Option<PathBuf>,
    },
    /// Say what a key, signature or ciphertext file is (its encoding, structure and sizes).
    #[command(after_help = "Example:\n  shangmi sm2 inspect peer-signature.txt")]
    Inspect {
        /// The file.
        file: PathBuf,
    },
    /// Rewrite a key, signature or ciphertext in another layout or encoding.
    #[command(after_help = CONVERT_HELP)]
    Convert {
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
    },
    /// Decrypt with a private key; writes nothing unless C3 verifies.
    #[command(
        after_help = "Example:\n  shangmi sm2 decrypt --key key.pem -i secret.sm2 -o secret.txt"
    )]
    Decrypt {
        #[arg(long, value_name = "KEY.pem")]
        key: PathBuf,
        #[arg(long, value_enum, default_value = "asn1")]
        format: CipherFormat,
        /// The ciphertext is hex digits.
        #[arg(long)]
        hex: bool,
        /// C1 is x || y without its 04 (c1c3c2 and c1c2c3 only).
        #[arg(long)]
        no_prefix: bool,
        /// The file to read (default stdin).
        #[arg(short, long, value_name = "IN")]
        input: Option<PathBuf>,
        /// The file to write (default stdout); it appears only when complete.
        #[arg(short, long, value_name = "OUT")]
        output: Option<PathBuf>,
        #[arg(long, value_name = "F")]
        password_file: Option<PathBuf>,
    },
}

/// What `sm2 convert` converts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ConvertKind {
    /// A private key file in any form the key readers take.
    Key,
    /// A public key (or a private key's public half).
    Pub,
    /// A signature.
    Sig,
    /// An SM2 ciphertext.
    Ciphertext,
}

pub fn run(args: Args) -> Result<Outcome> {
    match args.cmd {
        Cmd::Keygen {
            output,
            pubout,
            password_file,
            prf,
            iterations,
            outform,
            sec1,
        } => keygen(
            output,
            pubout,
            password_file,
            prf,
            iterations,
            outform,
            sec1,
        ),
        Cmd::Pubkey {
            input,
            output,
            password_file,
            outform,
        } => {
            let key = keyio::private_key(&input, password_file.as_deref())?;
            let mut out = Output::create(output.as_deref())?;
            out.put(&public_key_bytes(key.verifying_key(), outform)?)?;
            out.commit()?;
            Ok(Outcome::Ok)
        }
        Cmd::Sign {
            key,
            id,
            raw,
            sig_form,
            input,
            output,
            password_file,
        } => {
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
        Cmd::Verify {
            public,
            id,
            raw,
            sig_form,
            sig,
            input,
        } => {
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
        Cmd::Encrypt {
            public,
            format,
            hex,
            no_prefix,
            input,
            output,
        } => {
            let form = cipher_text(format, hex, no_prefix)?;
            let key = keyio::public_key(&public, None)?;
            let input = open_input(input.as_deref())?;
            if form.is_plain() {
                return encrypt(&key, format.format(), input, output);
            }
            let name = input.name.clone();
            let msg = input.read_all(WHOLE_LIMIT)?;
            let ct = key
                .encrypt(&msg, format.format())
                .map_err(|e| error(&name, e))?;
            let mut out = Output::create(output.as_deref())?;
            out.put(&form.encode(ct))?;
            out.commit()?;
            Ok(Outcome::Ok)
        }
        Cmd::Inspect { file } => {
            let data = read_small(&file, HINT_LIMIT)?;
            let mut text = inspect::describe(&data).join("\n");
            text.push('\n');
            print(&text)?;
            Ok(Outcome::Ok)
        }
        Cmd::Convert {
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
        } => {
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
        Cmd::Decrypt {
            key,
            format,
            hex,
            no_prefix,
            input,
            output,
            password_file,
        } => {
            let form = cipher_text(format, hex, no_prefix)?;
            let key = keyio::private_key(&key, password_file.as_deref())?;
            let format = format.format();
            let outcome = decrypt(&key, format, form, open_input(input.as_deref())?, output);
            // The structure of a named input may say which option was missed.
            if let Err(f) = &outcome
                && f.outcome == Outcome::Mismatch
                && let Some(path) = input.as_deref().filter(|p| p.as_os_str() != "-")
                && let Ok(data) = read_small(path, HINT_LIMIT)
                && let Some(hint) = forms::decrypt_hint(format, form, &data)
            {
                crate::fail::report(path.display(), format!("hint: {hint}"));
            }
            outcome
        }
    }
}

fn form<T: ValueEnum>(option: &str, value: &str) -> Result<T> {
    T::from_str(value, true).map_err(|_| {
        let names: Vec<String> = T::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value().map(|p| p.get_name().to_string()))
            .collect();
        error(
            option,
            format!("\"{value}\" is not one of {}", names.join(", ")),
        )
    })
}

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

fn cipher_text(format: CipherFormat, hex: bool, no_prefix: bool) -> Result<CipherText> {
    if no_prefix && format == CipherFormat::Asn1 {
        return Err(error(
            "--no-prefix",
            "applies to --format c1c3c2 and c1c2c3 (DER has no 04)",
        ));
    }
    Ok(CipherText { hex, no_prefix })
}

fn id_bytes(id: Option<&str>) -> Result<Vec<u8>> {
    let id = id.map_or(DEFAULT_ID.to_vec(), |s| s.as_bytes().to_vec());
    if id.len() > sm2::MAX_ID_LEN {
        return Err(error("--id", "longer than 8191 bytes"));
    }
    Ok(id)
}

/// e = SM3(Z || message), streamed.
fn digest(z: &[u8; 32], mut input: Input) -> Result<[u8; 32]> {
    let mut h = Sm3::new();
    h.update(z);
    let mut progress = Progress::new(input.len, "sm3");
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = input.fill(&mut buf)?;
        if n == 0 {
            break;
        }
        progress.advance(n as u64);
        h.update(&buf[..n]);
    }
    Ok(h.finalize())
}

fn public_key_bytes(key: &sm2::VerifyingKey, form: KeyForm) -> Result<Vec<u8>> {
    let fail = |e| error("public key", e);
    Ok(match form {
        KeyForm::Pem => key.to_public_key_pem().map_err(fail)?.into_bytes(),
        KeyForm::Der => key.to_public_key_der().map_err(fail)?,
        KeyForm::Hex => forms::hex_line(&key.to_uncompressed()),
    })
}

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

fn encrypt(
    key: &sm2::VerifyingKey,
    format: Format,
    mut input: Input,
    output: Option<PathBuf>,
) -> Result<Outcome> {
    let mut out = Output::create(output.as_deref())?;
    let out_name = out.name.clone();
    if format == Format::Der {
        let name = input.name.clone();
        let msg = input.read_all(WHOLE_LIMIT)?;
        let ct = key.encrypt(&msg, format).map_err(|e| error(&name, e))?;
        out.put(&ct)?;
        out.commit()?;
        return Ok(Outcome::Ok);
    }
    let mut progress = Progress::new(input.len, "sm2 encrypt");
    let mut buf = Zeroizing::new(vec![0u8; 1 << 16]);
    let in_name = input.name.clone();
    let fail = |e: std::io::Error| io_error_on(&in_name, &out_name, &e);
    if format == Format::C1C2C3 {
        let mut enc = Encryptor::c1c2c3(key, PointEncoding::Uncompressed, Through(&mut out))
            .map_err(|e| error("encrypt", e))?;
        pump(&mut input, &mut enc, &mut buf, &mut progress, |e| {
            io_error_on(&in_name, &out_name, &e)
        })?;
        enc.finish().map_err(fail)?;
        out.commit()?;
        return Ok(Outcome::Ok);
    }
    // C1C3C2 reserves C3's place after C1 and fills it in at the end: straight into a named
    // output file, which can seek; through a temporary file (of ciphertext) for stdout.
    if out.is_atomic() {
        let mut enc = Encryptor::c1c3c2(key, PointEncoding::Uncompressed, &mut out)
            .map_err(|e| error("encrypt", e))?;
        pump(&mut input, &mut enc, &mut buf, &mut progress, |e| {
            io_error_on(&in_name, &out_name, &e)
        })?;
        enc.finish().map_err(|e| io_error(&out_name, &e))?;
        out.commit()?;
        return Ok(Outcome::Ok);
    }
    let spool = tempfile::tempfile().map_err(|e| io_error("temporary file", &e))?;
    let mut enc = Encryptor::c1c3c2(key, PointEncoding::Uncompressed, spool)
        .map_err(|e| error("encrypt", e))?;
    pump(&mut input, &mut enc, &mut buf, &mut progress, |e| {
        io_error_on(&in_name, &out_name, &e)
    })?;
    let mut file = enc.finish().map_err(|e| io_error("temporary file", &e))?;
    use std::io::Seek;
    file.seek(std::io::SeekFrom::Start(0))
        .and_then(|_| std::io::copy(&mut file, &mut out))
        .map_err(|e| io_error(&out_name, &e))?;
    out.commit()?;
    Ok(Outcome::Ok)
}

/// Copies the input into a writer (an encryptor or decryptor), with progress; `on_write` says
/// what a failed write means.
fn pump(
    input: &mut Input,
    w: &mut impl std::io::Write,
    buf: &mut [u8],
    progress: &mut Progress,
    on_write: impl Fn(std::io::Error) -> crate::fail::Failure,
) -> Result<()> {
    loop {
        let n = input.fill(buf)?;
        if n == 0 {
            return Ok(());
        }
        progress.advance(n as u64);
        w.write_all(&buf[..n]).map_err(&on_write)?;
    }
}

fn decrypt(
    key: &SigningKey,
    format: Format,
    form: CipherText,
    input: Input,
    output: Option<PathBuf>,
) -> Result<Outcome> {
    let name = input.name.clone();
    let failed = || {
        rejected(
            &name,
            "decryption failed (wrong key, wrong format or tampered); nothing written",
        )
    };
    if !form.is_plain() {
        let data = input.read_all(WHOLE_LIMIT)?;
        let ct = form.decode(&data).map_err(|e| rejected(&name, e))?;
        let msg = Zeroizing::new(key.decrypt(&ct, format).map_err(|_| failed())?);
        let mut out = Output::create(output.as_deref())?;
        out.put(&msg)?;
        out.commit()?;
        return Ok(Outcome::Ok);
    }
    let mut out = Output::create(output.as_deref())?;
    let out_name = out.name.clone();
    if format == Format::Der {
        let ct = input.read_all(WHOLE_LIMIT)?;
        let msg = Zeroizing::new(key.decrypt(&ct, format).map_err(|_| failed())?);
        out.put(&msg)?;
        out.commit()?;
        return Ok(Outcome::Ok);
    }
    // A write error is the output's, except InvalidData: the decryptor's verdict on C1 or C3.
    let on_error = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::InvalidData => failed(),
        _ => io_error_on(&name, &out_name, &e),
    };
    verified(input, &mut out, |mut input, w| {
        let mut dec = Decryptor::new(key, format, Through(w)).map_err(|e| error("decrypt", e))?;
        let mut progress = Progress::new(input.len, "sm2 decrypt");
        let mut buf = vec![0u8; 1 << 16];
        pump(&mut input, &mut dec, &mut buf, &mut progress, on_error)?;
        dec.finish().map_err(on_error)
    })?;
    out.commit()?;
    Ok(Outcome::Ok)
}
