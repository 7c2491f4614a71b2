//! How a command ends, and the one-line error messages.

use std::fmt::Display;
use std::io;

/// The result of a whole command, worst wins: an I/O or input error (2) outranks a failed
/// verification (1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    Ok = 0,
    Mismatch = 1,
    Error = 2,
}

impl Outcome {
    pub fn code(self) -> u8 {
        self as u8
    }

    pub fn worst(self, other: Outcome) -> Outcome {
        self.max(other)
    }
}

/// A command that stopped: what to print (one line) and how to exit.
#[derive(Debug)]
pub struct Failure {
    pub outcome: Outcome,
    pub message: String,
}

pub type Result<T> = std::result::Result<T, Failure>;

/// Bad input, a usage mistake, an I/O error: exit 2.
pub fn error(what: impl Display, cause: impl Display) -> Failure {
    Failure {
        outcome: Outcome::Error,
        message: format!("{what}: {cause}"),
    }
}

/// An I/O error on `what` (a file name, "stdin", "stdout").
pub fn io_error(what: impl Display, e: &io::Error) -> Failure {
    error(what, io_cause(e))
}

/// Verification or authentication failed: exit 1.
pub fn rejected(what: impl Display, cause: impl Display) -> Failure {
    Failure {
        outcome: Outcome::Mismatch,
        message: format!("{what}: {cause}"),
    }
}

/// Prints `shangmi: <what>: <cause>` on stderr.
pub fn report(what: impl Display, cause: impl Display) {
    eprintln!("shangmi: {what}: {cause}");
}

/// The cause of an I/O error as people know it ("No such file or directory"), without Rust's
/// "(os error 2)" suffix.
pub fn io_cause(e: &io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// Parses hex (either case, no separators) for the option `name`.
pub fn parse_hex(name: &str, s: &str) -> Result<Vec<u8>> {
    let s = s.trim();
    if !s.len().is_multiple_of(2) {
        return Err(error(name, "odd number of hex digits"));
    }
    let digit = |c: u8| -> Option<u8> {
        match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            b'A'..=b'F' => Some(c - b'A' + 10),
            _ => None,
        }
    };
    s.as_bytes()
        .chunks_exact(2)
        .map(|p| Some(digit(p[0])? << 4 | digit(p[1])?))
        .collect::<Option<Vec<u8>>>()
        .ok_or_else(|| error(name, "not hex"))
}

/// Lower-case hex.
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
