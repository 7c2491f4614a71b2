//! Passwords: from a file (`--password-file`, its first line), or asked on the terminal
//! without echo.

use std::io::IsTerminal;
use std::path::Path;

use zeroize::Zeroizing;

use crate::fail::{Result, error, io_error};

/// The first line of `path` (without its line ending). An empty password is refused.
pub fn from_file(path: &Path) -> Result<Zeroizing<Vec<u8>>> {
    let name = path.display().to_string();
    let text = Zeroizing::new(std::fs::read(path).map_err(|e| io_error(&name, &e))?);
    let line = text.split(|&b| b == b'\n').next().unwrap_or(&[]);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.is_empty() {
        return Err(error(&name, "the password file is empty"));
    }
    Ok(Zeroizing::new(line.to_vec()))
}

/// From `file` if given, else asked on the terminal (twice when `confirm`).
pub fn get(file: Option<&Path>, prompt: &str, confirm: bool) -> Result<Zeroizing<Vec<u8>>> {
    if let Some(f) = file {
        return from_file(f);
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
