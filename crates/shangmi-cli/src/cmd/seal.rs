//! `shangmi seal` and `shangmi open`: files encrypted and authenticated for SM2 recipients or
//! under a password (format: `docs/FORMAT.md`).

use std::path::PathBuf;

use shangmi::seal::{self, Key, Recipients};

use crate::fail::{Outcome, Result, error, io_error, rejected};
use crate::files::{Input, Output, Through, io_error_on, open_input};
use crate::held::verified;
use crate::progress::Progress;
use crate::{keyio, secrets};

/// Encrypt and authenticate a file for SM2 recipients or under a password.
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  shangmi seal --recipient alice.pub.pem --recipient bob.pub.pem -i report.pdf -o report.pdf.sm
  shangmi seal --password-file pw.txt -i backup.tar -o backup.tar.sm

SM4-GCM in 64 KiB chunks under a random file key, wrapped with SM2 for each recipient or
derived from the password (PBKDF2-HMAC-SM3). Exit status: 0 success, 2 usage or I/O error.")]
pub struct SealArgs {
    /// A recipient's public key (repeat for several).
    #[arg(
        long = "recipient",
        value_name = "PUB.pem",
        required_unless_present = "password_file"
    )]
    recipients: Vec<PathBuf>,
    /// Seal under the password on this file's first line instead.
    #[arg(long, value_name = "F", conflicts_with = "recipients")]
    password_file: Option<PathBuf>,
    /// PBKDF2 iterations with --password-file.
    #[arg(long, default_value_t = seal::DEFAULT_ITERATIONS, requires = "password_file")]
    iterations: u32,
    /// The file to read (default stdin).
    #[arg(short, long, value_name = "IN")]
    input: Option<PathBuf>,
    /// The file to write (default stdout); it appears only when complete.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
}

/// Decrypt a sealed file; writes nothing unless every byte authenticates.
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  shangmi open --key alice.key.pem -i report.pdf.sm -o report.pdf
  shangmi open --password-file pw.txt -i backup.tar.sm -o backup.tar

Exit status: 0 success, 1 wrong key or password, or the file was modified, truncated or
extended (nothing is written), 2 usage or I/O error.")]
pub struct OpenArgs {
    /// A recipient's private key.
    #[arg(
        long,
        value_name = "KEY.pem",
        required_unless_present = "password_file"
    )]
    key: Option<PathBuf>,
    /// The sealed file's password (first line of this file).
    #[arg(long, value_name = "F", conflicts_with = "key")]
    password_file: Option<PathBuf>,
    /// The password of an encrypted --key.
    #[arg(long, value_name = "F", requires = "key")]
    key_password_file: Option<PathBuf>,
    /// The file to read (default stdin).
    #[arg(short, long, value_name = "IN")]
    input: Option<PathBuf>,
    /// The file to write (default stdout); it appears only when complete.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
}

/// An input that advances a progress bar as it is read.
struct Counted {
    input: Input,
    progress: Progress,
}

impl std::io::Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.input.reader.read(buf)?;
        if n == 0 && !buf.is_empty() {
            crate::signals::at_end_of_input();
        }
        self.progress.advance(n as u64);
        Ok(n)
    }
}

pub fn seal(args: SealArgs) -> Result<Outcome> {
    let keys = args
        .recipients
        .iter()
        .map(|p| keyio::public_key(p, None))
        .collect::<Result<Vec<_>>>()?;
    let password = match &args.password_file {
        Some(f) => Some(secrets::password_from_file(f)?),
        None => None,
    };
    let to = match &password {
        Some(p) => Recipients::Password {
            password: p,
            iterations: args.iterations,
        },
        None => Recipients::Keys(&keys),
    };
    let input = open_input(args.input.as_deref())?;
    let name = input.name.clone();
    let len = input.len;
    let mut counted = Counted {
        input,
        progress: Progress::new(len, "seal"),
    };
    secrets::check_stdin_once(args.password_file.as_deref(), args.input.as_deref())?;
    let out = Output::create(args.output.as_deref())?;
    let out_name = out.name.clone();
    let mut sealer = seal::Sealer::new(out, to).map_err(|e| seal_error(&out_name, e))?;
    let mut buf = zeroize::Zeroizing::new(vec![0u8; seal::CHUNK_SIZE]);
    loop {
        let n = std::io::Read::read(&mut counted, &mut buf).map_err(|e| io_error(&name, &e))?;
        if n == 0 {
            break;
        }
        std::io::Write::write_all(&mut sealer, &buf[..n]).map_err(|e| io_error(&out_name, &e))?;
    }
    let out = sealer.finish().map_err(|e| io_error(&out_name, &e))?;
    out.commit()?;
    Ok(Outcome::Ok)
}

fn seal_error(what: &str, e: seal::Error) -> crate::fail::Failure {
    match e {
        seal::Error::Io(e) => io_error(what, &e),
        // A damaged file is a failed verification (exit 1), down to its magic bytes.
        seal::Error::NoMatchingKey
        | seal::Error::WrongPassword
        | seal::Error::Authentication
        | seal::Error::Format(_)
        | seal::Error::TooManyIterations(_)
        | seal::Error::WrongKeyKind => rejected(what, format!("{e}; nothing written")),
        other => error(what, other),
    }
}

pub fn open(args: OpenArgs) -> Result<Outcome> {
    secrets::check_stdin_once(args.password_file.as_deref(), args.input.as_deref())?;
    let secret;
    let password;
    let key = match (&args.key, &args.password_file) {
        (Some(k), _) => {
            secret = keyio::private_key(k, args.key_password_file.as_deref())?;
            Key::Private(&secret)
        }
        (None, Some(f)) => {
            password = secrets::password_from_file(f)?;
            Key::Password(&password)
        }
        (None, None) => return Err(error("open", "--key or --password-file is needed")),
    };
    let input = open_input(args.input.as_deref())?;
    let name = input.name.clone();
    let mut out = Output::create(args.output.as_deref())?;
    let out_name = out.name.clone();
    verified(input, &mut out, |input, w| {
        let len = input.len;
        let counted = Counted {
            input,
            progress: Progress::new(len, "open"),
        };
        seal::open(counted, key, Through(w)).map_err(|e| match e {
            seal::Error::Io(e) => io_error_on(&name, &out_name, &e),
            other => seal_error(&name, other),
        })
    })?;
    out.commit()?;
    Ok(Outcome::Ok)
}
