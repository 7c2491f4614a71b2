//! `shangmi cms`: CMS / PKCS#7 with SM2 (GM/T 0010): SignedData signed and verified,
//! EnvelopedData encrypted to recipient certificates and decrypted.

use clap::{Args as ClapArgs, Subcommand};

use crate::fail::{Outcome, Result, error};
use crate::files::{Output, open_input, read_small};

mod envelope;
mod signed;

/// Messages are read whole; the bound keeps a wrong path such as /dev/zero from exhausting
/// memory.
const MESSAGE_LIMIT: u64 = 1 << 30;

#[derive(ClapArgs)]
#[command(after_help = "\
Examples:
  shangmi cms sign --cert alice.pem --key alice.key -i contract.pdf -o contract.p7
  shangmi cms sign --cert alice.pem --key alice.key --detached --gm -i contract.pdf -o contract.p7
  shangmi cms verify --ca ca.pem -i contract.p7 -o contract.pdf
  shangmi cms verify --ca ca.pem --content contract.pdf -i contract.p7
  shangmi cms encrypt --recipient bob.pem --gm -i secret.txt -o secret.p7
  shangmi cms encrypt --recipient bob.pem --cipher sm4-gcm -i secret.txt -o secret.p7
  shangmi cms encrypt --recipient bob.pem --sign-cert alice.pem --sign-key alice.key -i m -o m.p7
  shangmi cms decrypt --key bob.key --ca ca.pem -i m.p7 -o m
  shangmi cms decrypt --key bob.key --cert bob.pem -i secret.p7 -o secret.txt
  shangmi cms wrap-key --recipient bob.pem --key enc.key -o enc.env
  shangmi cms unwrap-key --key bob.key -i enc.env -o enc.key

SignedData carries SM3 digests and SM2 signatures made with the ID 1234567812345678; --gm writes
GM/T 0010's content-type OIDs (1.2.156.10197.6.1.4.2.x) instead of PKCS#7's, and both are read.
EnvelopedData encrypts the content with SM4-CBC (or --cipher sm4-gcm) under a fresh key,
SM2-encrypted to each recipient; decryption reads both, BER or DER, the key in DER or CFCA's raw form.
Exit status: 0 success, 1 a signature, chain or decryption check failed, 2 usage or input error.")]
pub struct Args {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Sign data into SignedData (DER, or PEM with --pem).
    Sign(signed::SignArgs),
    /// Encrypt data to recipient certificates (EnvelopedData, DER or PEM with --pem).
    Encrypt(envelope::EncryptArgs),
    /// Decrypt EnvelopedData with a recipient's key.
    Decrypt(envelope::DecryptArgs),
    /// Envelope an SM2 key pair to a recipient (GB/T 35276 SM2EnvelopedKey, DER).
    WrapKey(envelope::WrapKeyArgs),
    /// Open an SM2 key envelope (GB/T 35276 SM2EnvelopedKey) with the recipient's key; the
    /// key pair inside is written as PKCS#8 PEM.
    UnwrapKey(envelope::UnwrapKeyArgs),
    /// Verify SignedData and its signers' chains; write the content.
    Verify(signed::VerifyArgs),
}

fn read_input(path: Option<&std::path::Path>) -> Result<Vec<u8>> {
    Ok(open_input(path)?.read_all(MESSAGE_LIMIT)?.to_vec())
}

fn certs_of(path: &std::path::Path) -> Result<Vec<shangmi_pki::Cert>> {
    shangmi_pki::certificates(&read_small(path, 16 << 20)?).map_err(|e| error(path.display(), e))
}

/// PEM as `--pem` asks (`PKCS7`), or as GmSSL reads CMS (`CMS`, its only form).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Out {
    Der,
    Pem,
    GmsslPem,
}

impl Out {
    fn of(pem: bool, gmssl: bool) -> Out {
        match (gmssl, pem) {
            (true, _) => Out::GmsslPem,
            (false, true) => Out::Pem,
            (false, false) => Out::Der,
        }
    }
}

fn emit(bytes: &[u8], form: Out, output: Option<&std::path::Path>) -> Result<()> {
    let text;
    let label = match form {
        Out::Der => None,
        Out::Pem => Some("PKCS7"),
        Out::GmsslPem => Some("CMS"),
    };
    let data = if let Some(label) = label {
        text = der::pem::encode_string(label, der::pem::LineEnding::LF, bytes)
            .map_err(|e| error("PEM", e))?;
        text.as_bytes()
    } else {
        bytes
    };
    let mut out = Output::create(output)?;
    out.put(data)?;
    out.commit()
}

pub fn run(args: Args) -> Result<Outcome> {
    match args.cmd {
        Cmd::Sign(a) => a.run(),
        Cmd::Encrypt(a) => a.run(),
        Cmd::Decrypt(a) => a.run(),
        Cmd::WrapKey(a) => a.run(),
        Cmd::UnwrapKey(a) => a.run(),
        Cmd::Verify(a) => a.run(),
    }
}
