//! `sm2 encrypt` and `sm2 decrypt`: SM2 public-key encryption, streamed where the layout allows.

use std::path::PathBuf;

use clap::Args as ClapArgs;
use shangmi::sm2::{self, Decryptor, Encryptor, Format, PointEncoding, SigningKey};
use zeroize::Zeroizing;

use super::forms::CipherText;
use super::{CipherFormat, HINT_LIMIT, WHOLE_LIMIT, cipher_text, forms};
use crate::fail::{Outcome, Result, error, io_error, rejected};
use crate::files::{Input, Output, Through, io_error_on, open_input, read_small};
use crate::held::verified;
use crate::keyio;
use crate::progress::Progress;

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

#[derive(ClapArgs)]
pub(super) struct EncryptArgs {
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
}

impl EncryptArgs {
    pub(super) fn run(self) -> Result<Outcome> {
        let EncryptArgs {
            public,
            format,
            hex,
            no_prefix,
            input,
            output,
        } = self;
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
}

#[derive(ClapArgs)]
pub(super) struct DecryptArgs {
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
}

impl DecryptArgs {
    pub(super) fn run(self) -> Result<Outcome> {
        let DecryptArgs {
            key,
            format,
            hex,
            no_prefix,
            input,
            output,
            password_file,
        } = self;
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
