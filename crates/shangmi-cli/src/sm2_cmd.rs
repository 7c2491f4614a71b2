//! `shangmi sm2`: keys, signatures and public-key encryption, with files OpenSSL reads and
//! writes (PEM keys as `openssl genpkey -algorithm SM2` writes them, DER signatures, the DER
//! ciphertext of `openssl pkeyutl -encrypt`).

use std::path::{Path, PathBuf};

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

const EXAMPLES: &str = "\
Examples:
  shangmi sm2 keygen -o key.pem --pubout pub.pem
  shangmi sm2 sign --key key.pem -i report.pdf -o report.sig
  shangmi sm2 verify --pub pub.pem --sig report.sig -i report.pdf     (\"Verified OK\")
  shangmi sm2 encrypt --pub pub.pem -i secret.txt -o secret.sm2
  shangmi sm2 decrypt --key key.pem -i secret.sm2 -o secret.txt

Keys are PEM as OpenSSL writes them; also read: DER, `openssl ec` output (SM2 PRIVATE KEY),
explicit curve parameters, PEM with other text or blocks around it, and encrypted PKCS#8
with any PBKDF2 HMAC (SHA-1/2, SM3). Signatures are DER unless --raw (r || s, 64 bytes),
over SM3(Z || message) with the ID 1234567812345678 unless --id. OpenSSL 3's own default
ID is empty: for signatures made by `openssl pkeyutl` without `-pkeyopt distid:`, pass
--id ''.
Exit status: 0 success, 1 verification or decryption failed, 2 usage or I/O error.";

/// Largest input for the DER ciphertext layout, which states C2's length before C2.
const WHOLE_LIMIT: u64 = 1 << 30;

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
        /// Write r || s (64 bytes) instead of DER.
        #[arg(long)]
        raw: bool,
        #[arg(short, long, value_name = "FILE")]
        input: Option<PathBuf>,
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
        /// The signature is r || s (64 bytes), not DER.
        #[arg(long)]
        raw: bool,
        #[arg(long, value_name = "SIG")]
        sig: PathBuf,
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
        #[arg(short, long, value_name = "IN")]
        input: Option<PathBuf>,
        #[arg(short, long, value_name = "OUT")]
        output: Option<PathBuf>,
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
        #[arg(short, long, value_name = "IN")]
        input: Option<PathBuf>,
        #[arg(short, long, value_name = "OUT")]
        output: Option<PathBuf>,
        #[arg(long, value_name = "F")]
        password_file: Option<PathBuf>,
    },
}

pub fn run(args: Args) -> Result<Outcome> {
    match args.cmd {
        Cmd::Keygen {
            output,
            pubout,
            password_file,
            prf,
            iterations,
        } => keygen(output, pubout, password_file, prf, iterations),
        Cmd::Pubkey {
            input,
            output,
            password_file,
        } => {
            let key = keyio::private_key(&input, password_file.as_deref())?;
            write_text(output.as_deref(), &public_pem(&key)?)
        }
        Cmd::Sign {
            key,
            id,
            raw,
            input,
            output,
            password_file,
        } => {
            let key = keyio::private_key(&key, password_file.as_deref())?;
            let id = id_bytes(id.as_deref())?;
            let z = key.verifying_key().z(&id).map_err(|e| error("--id", e))?;
            let e = digest(&z, open_input(input.as_deref())?)?;
            let sig = key.sign_digest(&e).map_err(|e| error("sign", e))?;
            let bytes = if raw {
                sig.to_bytes().to_vec()
            } else {
                sig.to_der()
            };
            let mut out = Output::create(output.as_deref())?;
            out.put(&bytes)?;
            out.commit()?;
            Ok(Outcome::Ok)
        }
        Cmd::Verify {
            public,
            id,
            raw,
            sig,
            input,
        } => {
            let key = keyio::public_key(&public, None)?;
            let id = id_bytes(id.as_deref())?;
            // A DER signature is at most 72 bytes; a bound keeps /dev/zero out.
            let sig_bytes = read_small(&sig, 64 * 1024)?;
            let parsed = if raw {
                <[u8; 64]>::try_from(sig_bytes.as_slice())
                    .ok()
                    .and_then(|b| Signature::from_bytes(&b).ok())
            } else {
                Signature::from_der(&sig_bytes).ok()
            };
            let z = key.z(&id).map_err(|e| error("--id", e))?;
            let e = digest(&z, open_input(input.as_deref())?)?;
            let ok = parsed.is_some_and(|s| key.verify_digest(&e, &s).is_ok());
            if ok {
                print("Verified OK\n")?;
                Ok(Outcome::Ok)
            } else {
                print("Verification failure\n")?;
                Ok(Outcome::Mismatch)
            }
        }
        Cmd::Encrypt {
            public,
            format,
            input,
            output,
        } => {
            let key = keyio::public_key(&public, None)?;
            encrypt(&key, format.format(), open_input(input.as_deref())?, output)
        }
        Cmd::Decrypt {
            key,
            format,
            input,
            output,
            password_file,
        } => {
            let key = keyio::private_key(&key, password_file.as_deref())?;
            decrypt(&key, format.format(), open_input(input.as_deref())?, output)
        }
    }
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

fn public_pem(key: &SigningKey) -> Result<String> {
    key.verifying_key()
        .to_public_key_pem()
        .map_err(|e| error("public key", e))
}

fn write_text(path: Option<&Path>, text: &str) -> Result<Outcome> {
    let mut out = Output::create(path)?;
    out.put(text.as_bytes())?;
    out.commit()?;
    Ok(Outcome::Ok)
}

fn keygen(
    output: Option<PathBuf>,
    pubout: Option<PathBuf>,
    password_file: Option<PathBuf>,
    prf: PrfChoice,
    iterations: u32,
) -> Result<Outcome> {
    let key = SigningKey::random().map_err(|e| error("keygen", e))?;
    let pem: Zeroizing<String> = match &password_file {
        Some(f) => {
            let password = crate::secrets::password_from_file(f)?;
            let params = EncryptionParams {
                prf: match prf {
                    PrfChoice::Sm3 => Prf::HmacSm3,
                    PrfChoice::Sha256 => Prf::HmacSha256,
                },
                iterations,
            };
            Zeroizing::new(
                key.to_pkcs8_encrypted_pem(&password, params)
                    .map_err(|e| error("--iterations", e))?,
            )
        }
        None => key.to_pkcs8_pem().map_err(|e| error("keygen", e))?,
    };
    // Both outputs are prepared before either is committed, and named files are committed
    // before stdout, which cannot be taken back: if a later commit fails, the files already
    // committed are removed, so a failure leaves neither key behind.
    let mut outs = Vec::new();
    if let Some(p) = &pubout {
        let mut o = Output::create(Some(p))?;
        o.put(public_pem(&key)?.as_bytes())?;
        outs.push((o, Some(p.clone())));
    }
    let mut o = Output::create(output.as_deref())?;
    o.put(pem.as_bytes())?;
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
