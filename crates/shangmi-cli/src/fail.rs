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
