//! `shangmi sm2`: keys, signatures and public-key encryption, with files OpenSSL reads and
//! writes (PEM keys as `openssl genpkey -algorithm SM2` writes them, DER signatures, the DER
//! ciphertext of `openssl pkeyutl -encrypt`).

mod cipher;
mod convert;
mod forms;
mod inspect;
mod keys;
mod signature;

use clap::{Subcommand, ValueEnum};
use shangmi::sm2::{self, DEFAULT_ID, Format};
use shangmi::sm3::Sm3;

use crate::fail::{Outcome, Result, error};
use crate::files::Input;
use crate::progress::Progress;
use forms::CipherText;

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
    Keygen(keys::KeygenArgs),
    /// Write the public key of a private key.
    #[command(after_help = "Example:\n  shangmi sm2 pubkey -i key.pem -o pub.pem")]
    Pubkey(keys::PubkeyArgs),
    /// Sign a file (stdin by default).
    #[command(after_help = "Example:\n  shangmi sm2 sign --key key.pem -i file -o file.sig")]
    Sign(signature::SignArgs),
    /// Verify a signature: prints "Verified OK" (exit 0) or "Verification failure" (exit 1).
    #[command(after_help = "Example:\n  shangmi sm2 verify --pub pub.pem --sig file.sig -i file")]
    Verify(signature::VerifyArgs),
    /// Encrypt to a public key.
    #[command(
        after_help = "Example:\n  shangmi sm2 encrypt --pub pub.pem -i secret.txt -o secret.sm2\n\nasn1 holds the whole message in memory (its header states the length); c1c3c2 and\nc1c2c3 stream."
    )]
    Encrypt(cipher::EncryptArgs),
    /// Say what a key, signature or ciphertext file is (its encoding, structure and sizes).
    #[command(after_help = "Example:\n  shangmi sm2 inspect peer-signature.txt")]
    Inspect(convert::InspectArgs),
    /// Rewrite a key, signature or ciphertext in another layout or encoding.
    #[command(after_help = CONVERT_HELP)]
    Convert(convert::ConvertArgs),
    /// Decrypt with a private key; writes nothing unless C3 verifies.
    #[command(
        after_help = "Example:\n  shangmi sm2 decrypt --key key.pem -i secret.sm2 -o secret.txt"
    )]
    Decrypt(cipher::DecryptArgs),
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
        Cmd::Keygen(a) => a.run(),
        Cmd::Pubkey(a) => a.run(),
        Cmd::Sign(a) => a.run(),
        Cmd::Verify(a) => a.run(),
        Cmd::Encrypt(a) => a.run(),
        Cmd::Inspect(a) => a.run(),
        Cmd::Convert(a) => a.run(),
        Cmd::Decrypt(a) => a.run(),
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
