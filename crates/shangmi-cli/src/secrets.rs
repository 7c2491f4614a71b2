//! Secrets the user hands over: passwords (a file's first line, or asked on the terminal
//! without echo) and raw keys (hex on the command line, or a key file). A file is the way to
//! keep a secret out of `ps` and shell history; "-" reads it from stdin.

use std::io::IsTerminal;
use std::path::Path;

use zeroize::Zeroizing;

use crate::fail::{Result, error, io_error};
use crate::files::read_small;

/// Password and key files are small; anything bigger is a mistake (or /dev/zero).
const SECRET_FILE_LIMIT: u64 = 64 * 1024;

/// The first line of `path` (without its line ending). An empty password is refused.
pub fn password_from_file(path: &Path) -> Result<Zeroizing<Vec<u8>>> {
    let text = read_small(path, SECRET_FILE_LIMIT)?;
    let line = text.split(|&b| b == b'\n').next().unwrap_or(&[]);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.is_empty() {
        return Err(error(path.display(), "the password file is empty"));
    }
    Ok(Zeroizing::new(line.to_vec()))
}

/// From `file` if given, else asked on the terminal (twice when `confirm`).
pub fn password(file: Option<&Path>, prompt: &str, confirm: bool) -> Result<Zeroizing<Vec<u8>>> {
    if let Some(f) = file {
        return password_from_file(f);
    }
    if !std::io::stdin().is_terminal() && !std::io::stderr().is_terminal() {
        return Err(error(
            "password",
            "needed, and there is no terminal to ask on: use --password-file",
        ));
    }
    let first = Zeroizing::new(
        rpassword::prompt_password(format!("{prompt}: ")).map_err(|e| io_error("terminal", &e))?,
    );
    if first.is_empty() {
        return Err(error("password", "empty"));
    }
    if confirm {
        let again = Zeroizing::new(
            rpassword::prompt_password(format!("{prompt} (again): "))
                .map_err(|e| io_error("terminal", &e))?,
        );
        if *again != *first {
            return Err(error("password", "the two entries differ"));
        }
    }
    Ok(Zeroizing::new(first.as_bytes().to_vec()))
}

/// A raw key of `len` bytes from `--<option> HEX` or `--<option>-file FILE` (exactly one of
/// them; clap enforces that). The file holds hex (surrounding white space ignored) or, when it
/// is exactly `len` bytes that are not all hex digits, the key itself.
pub fn key(
    option: &str,
    hex: Option<&str>,
    file: Option<&Path>,
    len: usize,
) -> Result<Zeroizing<Vec<u8>>> {
    let key = match (hex, file) {
        (Some(h), _) => secret_hex(option, h)?,
        (None, Some(f)) => key_from_file(f, Some(len))?,
        (None, None) => return Err(error(format!("--{option}"), "is needed")),
    };
    if key.len() != len {
        return Err(error(
            format!("--{option}"),
            format!("must be {len} bytes ({} hex digits)", 2 * len),
        ));
    }
    Ok(key)
}

/// A secret of any length from `--<option> HEX` or `--<option>-file FILE` (hex in the file).
pub fn any_length(
    option: &str,
    hex: Option<&str>,
    file: Option<&Path>,
) -> Result<Zeroizing<Vec<u8>>> {
    match (hex, file) {
        (Some(h), _) => secret_hex(option, h),
        (None, Some(f)) => key_from_file(f, None),
        (None, None) => Err(error(format!("--{option}"), "is needed")),
    }
}

/// A secret typed as hex, decoded in constant time (the library's reader for secrets).
fn secret_hex(option: &str, hex: &str) -> Result<Zeroizing<Vec<u8>>> {
    shangmi::hex::decode_secret(hex.as_bytes()).ok_or_else(|| {
        error(
            format!("--{option}"),
            "not hex (an even number of digits 0-9, a-f, A-F)",
        )
    })
}

fn key_from_file(path: &Path, raw_len: Option<usize>) -> Result<Zeroizing<Vec<u8>>> {
    let data = read_small(path, SECRET_FILE_LIMIT)?;
    if let Some(key) = shangmi::hex::decode_secret(&data) {
        return Ok(key);
    }
    match raw_len {
        Some(n) if data.len() == n => Ok(data),
        Some(n) => Err(error(
            path.display(),
            format!("neither hex nor exactly {n} raw bytes"),
        )),
        None => Err(error(path.display(), "not hex")),
    }
}

/// Stdin can be the input or hold a secret, not both.
pub fn check_stdin_once(secret: Option<&Path>, input: Option<&Path>) -> Result<()> {
    let is_stdin = |p: Option<&Path>| p.is_some_and(|p| p == Path::new("-"));
    if is_stdin(secret) && (input.is_none() || is_stdin(input)) {
        return Err(error(
            "stdin",
            "cannot be both the input and a key or password file",
        ));
    }
    Ok(())
}
