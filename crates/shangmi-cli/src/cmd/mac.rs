//! `shangmi hmac` (HMAC-SM3 of files, sha256sum-style lines) and `shangmi kdf` (the SM2
//! key-derivation function).

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use shangmi::sm3::HmacSm3;
use zeroize::Zeroizing;

use crate::fail::{Outcome, Result, error, io_error, report, to_hex};
use crate::files::open_input;
use crate::secrets;

/// HMAC-SM3 of files: "<hex>  <name>" per file, like sha256sum.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  shangmi hmac --key 6b6579 file.bin        (key \"key\" in hex)\n  shangmi hmac --key-file key.hex file.bin  (the key kept out of the process list)\n  printf msg | shangmi hmac --key 00112233\n\nExit status: 0 success, 2 a file could not be read."
)]
pub struct HmacArgs {
    /// The key, in hex (any length). Visible to other users in the process list: prefer
    /// --key-file.
    #[arg(long, value_name = "HEX", required_unless_present = "key_file")]
    key: Option<String>,
    /// A file holding the key in hex; "-" is stdin.
    #[arg(long, value_name = "FILE", conflicts_with = "key")]
    key_file: Option<std::path::PathBuf>,
    /// Files; none or "-" is stdin.
    files: Vec<OsString>,
}

pub fn hmac(args: HmacArgs) -> Result<Outcome> {
    let files = if args.files.is_empty() {
        vec![OsString::from("-")]
    } else {
        args.files
    };
    if files.iter().any(|f| f == "-") {
        secrets::check_stdin_once(args.key_file.as_deref(), None)?;
    }
    let key = secrets::any_length("key", args.key.as_deref(), args.key_file.as_deref())?;
    crate::signals::stdout_open()?;
    let mut outcome = Outcome::Ok;
    let mut stdout = std::io::stdout().lock();
    for name in &files {
        let mut input = match open_input(Some(Path::new(name))) {
            Ok(i) => i,
            Err(f) => {
                report("hmac", f.message);
                outcome = Outcome::Error;
                continue;
            }
        };
        let mut mac = HmacSm3::new(&key);
        let mut buf = vec![0u8; 1 << 16];
        let tag = loop {
            match input.fill(&mut buf) {
                Ok(0) => break Some(mac.finalize()),
                Ok(n) => mac.update(&buf[..n]),
                Err(f) => {
                    report("hmac", f.message);
                    break None;
                }
            }
        };
        let Some(tag) = tag else {
            outcome = Outcome::Error;
            continue;
        };
        let (escaped, shown) = crate::files::escape(name.as_bytes(), false);
        let mut line = Vec::new();
        if escaped {
            line.push(b'\\');
        }
        line.extend_from_slice(to_hex(&tag).as_bytes());
        line.extend_from_slice(b"  ");
        line.extend_from_slice(&shown);
        line.push(b'\n');
        stdout
            .write_all(&line)
            .map_err(|e| io_error("stdout", &e))?;
    }
    stdout.flush().map_err(|e| io_error("stdout", &e))?;
    Ok(outcome)
}

/// The SM3 key-derivation function of GB/T 32918.4: K = SM3(Z || 1) || SM3(Z || 2) || ...
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  shangmi kdf --z 00112233 --len 48       (96 hex digits)\n  shangmi kdf --z-file z.hex --len 16     (Z kept out of the process list)"
)]
pub struct KdfArgs {
    /// The shared secret Z, in hex. Visible to other users in the process list: prefer
    /// --z-file.
    #[arg(long, value_name = "HEX", required_unless_present = "z_file")]
    z: Option<String>,
    /// A file holding Z in hex; "-" is stdin.
    #[arg(long, value_name = "FILE", conflicts_with = "z")]
    z_file: Option<std::path::PathBuf>,
    /// Output length in bytes.
    #[arg(long, value_name = "N")]
    len: u64,
}

pub fn kdf(args: KdfArgs) -> Result<Outcome> {
    let z = secrets::any_length("z", args.z.as_deref(), args.z_file.as_deref())?;
    if args.len > 1 << 30 {
        return Err(error("--len", "at most 1 GiB from the command line"));
    }
    let out =
        Zeroizing::new(shangmi::sm3::kdf(&z, args.len as usize).map_err(|e| error("--len", e))?);
    // The derived key is a secret: its hex is built in one buffer sized in advance (no
    // reallocation leaves a copy) and wiped after printing.
    let mut line = Zeroizing::new(String::with_capacity(2 * out.len() + 1));
    for b in out.iter() {
        for nibble in [b >> 4, b & 15] {
            line.push(char::from_digit(u32::from(nibble), 16).expect("a nibble"));
        }
    }
    line.push('\n');
    crate::files::print(&line)?;
    Ok(Outcome::Ok)
}
