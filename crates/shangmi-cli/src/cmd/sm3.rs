//! `shangmi sm3`: SM3 checksums, printed and checked exactly as `sha256sum` does.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

use shangmi::sm3::Sm3;

use crate::fail::{Outcome, io_cause, report};

const EXAMPLES: &str = "\
Examples:
  shangmi sm3 file.iso                  print \"<hex>  file.iso\"
  shangmi sm3 *.tar > SM3SUMS           checksum list, the format sha256sum writes
  shangmi sm3 --check SM3SUMS           verify; exit 1 if any file does not match
  printf abc | shangmi sm3              stdin: 66c7f0f4...8f4ba8e0  -

Exit status: 0 all good, 1 a checksum did not match, 2 a file could not be read or the
list was malformed.";

/// The longest checksum line read: a digest, a name of up to PATH_MAX bytes escaped.
const MAX_LINE: usize = 16 * 1024;

/// Print or check SM3 checksums (the format of sha256sum).
#[derive(clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Read SM3 sums from the FILEs and check them.
    #[arg(short, long)]
    check: bool,
    /// Print BSD-style lines: "SM3 (FILE) = HEX".
    #[arg(long, conflicts_with = "check")]
    tag: bool,
    /// End each output line with NUL instead of newline, and do not escape file names.
    #[arg(short, long)]
    zero: bool,
    /// Accepted for compatibility; files are always read as bytes.
    #[arg(short, long, conflicts_with = "text")]
    binary: bool,
    /// Accepted for compatibility; files are always read as bytes.
    #[arg(short, long)]
    text: bool,
    /// With --check: do not print OK for each verified file.
    #[arg(long, requires = "check")]
    quiet: bool,
    /// With --check: print nothing; the exit status tells.
    #[arg(long, requires = "check")]
    status: bool,
    /// With --check: skip listed files that do not exist.
    #[arg(long, requires = "check")]
    ignore_missing: bool,
    /// With --check: improperly formatted lines are an error.
    #[arg(long, requires = "check")]
    strict: bool,
    /// With --check: warn about improperly formatted lines.
    #[arg(short, long, requires = "check")]
    warn: bool,
    /// Files to hash, or with --check the checksum lists; none or "-" is stdin.
    files: Vec<OsString>,
}

pub fn run(args: Args) -> Outcome {
    let files = if args.files.is_empty() {
        vec![OsString::from("-")]
    } else {
        args.files.clone()
    };
    let mut out = Output::new(args.zero);
    let outcome = if args.check {
        files.iter().fold(Outcome::Ok, |acc, list| {
            acc.worst(check_list(&args, list, &mut out))
        })
    } else {
        files.iter().fold(Outcome::Ok, |acc, name| {
            acc.worst(print_sum(&args, name, &mut out))
        })
    };
    match out.finish() {
        Ok(()) => outcome,
        Err(e) => {
            if e.kind() != io::ErrorKind::BrokenPipe {
                report("stdout", io_cause(&e));
            }
            Outcome::Error
        }
    }
}

/// Hashes a file (or stdin for "-") in constant memory.
pub fn hash_file(name: &OsStr) -> io::Result<[u8; 32]> {
    if name == "-" {
        if crate::signals::stdin_open().is_err() {
            return Err(io::Error::from_raw_os_error(9)); // EBADF
        }
        hash_reader(io::stdin().lock())
    } else {
        hash_reader(File::open(name)?)
    }
}

fn hash_reader(mut r: impl Read) -> io::Result<[u8; 32]> {
    let mut h = Sm3::new();
    let mut buf = vec![0u8; 1 << 18];
    loop {
        match r.read(&mut buf) {
            Ok(0) => return Ok(h.finalize()),
            Ok(n) => h.update(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

fn print_sum(args: &Args, name: &OsStr, out: &mut Output) -> Outcome {
    match hash_file(name) {
        Ok(digest) => {
            let hex = to_hex(&digest);
            let (escaped, shown) = crate::files::escape(name.as_bytes(), args.zero);
            let mut line = Vec::new();
            if escaped {
                line.push(b'\\');
            }
            if args.tag {
                line.extend_from_slice(b"SM3 (");
                line.extend_from_slice(&shown);
                line.extend_from_slice(b") = ");
                line.extend_from_slice(hex.as_bytes());
            } else {
                line.extend_from_slice(hex.as_bytes());
                line.extend_from_slice(b"  ");
                line.extend_from_slice(&shown);
            }
            out.line(&line);
            Outcome::Ok
        }
        Err(e) => {
            report(name.to_string_lossy(), io_cause(&e));
            Outcome::Error
        }
    }
}

#[derive(Default)]
struct Tally {
    listed: usize,
    malformed: usize,
    unreadable: usize,
    mismatched: usize,
    verified: usize,
}

fn check_list(args: &Args, list: &OsStr, out: &mut Output) -> Outcome {
    let shown_list = if list == "-" {
        "standard input".into()
    } else {
        list.to_string_lossy()
    };
    let Some(mut reader) = open_list(list, &shown_list) else {
        return Outcome::Error;
    };
    let mut t = Tally::default();
    let sep = if args.zero { b'\0' } else { b'\n' };
    let mut line = Vec::new();
    for number in 0.. {
        // Lines are bounded: a list is read line by line, and one endless line (/dev/zero)
        // must not take all memory.
        line.clear();
        match (&mut reader)
            .take(MAX_LINE as u64 + 1)
            .read_until(sep, &mut line)
        {
            Ok(0) => break,
            Ok(_) if line.len() > MAX_LINE && line.last() != Some(&sep) => {
                report(
                    &shown_list,
                    format!("{}: line longer than {MAX_LINE} bytes", number + 1),
                );
                return Outcome::Error;
            }
            Ok(_) => {
                if line.last() == Some(&sep) {
                    line.pop();
                }
            }
            Err(e) => {
                report(&shown_list, io_cause(&e));
                return Outcome::Error;
            }
        }
        let line = &line[..];
        let Some((want, name)) = parse_line(line) else {
            if !line.is_empty() {
                t.malformed += 1;
                if args.warn {
                    report(
                        &shown_list,
                        format!("{}: improperly formatted SM3 checksum line", number + 1),
                    );
                }
            }
            continue;
        };
        t.listed += 1;
        check_entry(args, &mut t, &want, OsString::from_vec(name), out);
    }
    t.outcome(args, &shown_list)
}

/// The list `-` (standard input) or a file; `None` once the failure is reported.
fn open_list(list: &OsStr, shown_list: &str) -> Option<Box<dyn BufRead>> {
    if list == "-" {
        if let Err(f) = crate::signals::stdin_open() {
            eprintln!("shangmi: {}", f.message);
            return None;
        }
        return Some(Box::new(BufReader::new(io::stdin().lock())));
    }
    match File::open(list) {
        Ok(f) => Some(Box::new(BufReader::new(f))),
        Err(e) => {
            report(shown_list, io_cause(&e));
            None
        }
    }
}

/// One listed file hashed and its verdict printed as `sm3sum -c` does.
fn check_entry(args: &Args, t: &mut Tally, want: &[u8; 32], name: OsString, out: &mut Output) {
    let (escaped, shown) = crate::files::escape(name.as_bytes(), args.zero);
    let mut verdict = |word: &str| {
        if !args.status {
            let mut l = Vec::new();
            if escaped {
                l.push(b'\\');
            }
            l.extend_from_slice(&shown);
            l.extend_from_slice(b": ");
            l.extend_from_slice(word.as_bytes());
            out.line(&l);
        }
    };
    match hash_file(&name) {
        Ok(digest) if digest == *want => {
            t.verified += 1;
            if !args.quiet {
                verdict("OK");
            }
        }
        Ok(_) => {
            t.mismatched += 1;
            verdict("FAILED");
        }
        Err(e) if args.ignore_missing && e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => {
            t.unreadable += 1;
            if !args.status {
                report(name.to_string_lossy(), io_cause(&e));
            }
            verdict("FAILED open or read");
        }
    }
}

impl Tally {
    /// The warnings `sha256sum -c` prints after a list, and the exit status it implies.
    fn outcome(&self, args: &Args, shown_list: &str) -> Outcome {
        let t = self;
        if t.listed == 0 {
            report(shown_list, "no properly formatted SM3 checksum lines found");
            return Outcome::Error;
        }
        if !args.status {
            let warn = |n: usize, one: &str, many: &str| {
                if n > 0 {
                    eprintln!("shangmi: WARNING: {n} {}", if n == 1 { one } else { many });
                }
            };
            warn(
                t.malformed,
                "line is improperly formatted",
                "lines are improperly formatted",
            );
            warn(
                t.unreadable,
                "listed file could not be read",
                "listed files could not be read",
            );
            warn(
                t.mismatched,
                "computed checksum did NOT match",
                "computed checksums did NOT match",
            );
        }
        if args.ignore_missing && t.verified == 0 && t.mismatched == 0 && t.unreadable == 0 {
            if !args.status {
                report(shown_list, "no file was verified");
            }
            return Outcome::Mismatch;
        }
        let mut outcome = Outcome::Ok;
        if t.mismatched > 0 {
            outcome = outcome.worst(Outcome::Mismatch);
        }
        if t.unreadable > 0 || (args.strict && t.malformed > 0) {
            outcome = outcome.worst(Outcome::Error);
        }
        outcome
    }
}

/// A checksum line: GNU `HEX  NAME` / `HEX *NAME`, BSD `SM3 (NAME) = HEX`, or what `openssl
/// dgst -sm3` prints, `SM3(NAME)= HEX`; a leading backslash means the name is escaped.
fn parse_line(line: &[u8]) -> Option<([u8; 32], Vec<u8>)> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let (escaped, line) = match line.strip_prefix(b"\\") {
        Some(rest) => (true, rest),
        None => (false, line),
    };
    let (hex, raw_name) = if let Some(rest) = line.strip_prefix(b"SM3 (") {
        let close = rest.windows(4).rposition(|w| w == b") = ")?;
        (&rest[close + 4..], &rest[..close])
    } else if let Some(rest) = line.strip_prefix(b"SM3(") {
        let close = rest.windows(3).rposition(|w| w == b")= ")?;
        (&rest[close + 3..], &rest[..close])
    } else {
        if line.len() < 66 || line[64] != b' ' || !matches!(line[65], b' ' | b'*') {
            return None;
        }
        (&line[..64], &line[66..])
    };
    let digest = from_hex(hex)?;
    let name = if escaped {
        unescape(raw_name)?
    } else {
        raw_name.to_vec()
    };
    if name.is_empty() {
        return None;
    }
    Some((digest, name))
}

fn from_hex(hex: &[u8]) -> Option<[u8; 32]> {
    if hex.len() != 64 {
        return None;
    }
    let nibble = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = [0u8; 32];
    for (o, pair) in out.iter_mut().zip(hex.chunks_exact(2)) {
        *o = nibble(pair[0])? << 4 | nibble(pair[1])?;
    }
    Some(out)
}

pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unescape(name: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(name.len());
    let mut it = name.iter();
    while let Some(&b) = it.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        out.push(match it.next()? {
            b'\\' => b'\\',
            b'n' => b'\n',
            b'r' => b'\r',
            _ => return None,
        });
    }
    Some(out)
}

/// Buffered stdout that remembers the first write error instead of panicking on it.
struct Output {
    out: io::BufWriter<io::Stdout>,
    end: u8,
    error: Option<io::Error>,
}

impl Output {
    fn new(zero: bool) -> Self {
        Output {
            out: io::BufWriter::new(io::stdout()),
            end: if zero { 0 } else { b'\n' },
            error: None,
        }
    }

    fn line(&mut self, bytes: &[u8]) {
        if self.error.is_none() && crate::signals::stdout_open().is_err() {
            self.error = Some(io::Error::from_raw_os_error(9)); // EBADF
        }
        if self.error.is_none() {
            let r = self
                .out
                .write_all(bytes)
                .and_then(|()| self.out.write_all(&[self.end]));
            self.error = r.err();
        }
    }

    fn finish(mut self) -> io::Result<()> {
        match self.error.take() {
            Some(e) => Err(e),
            None => self.out.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_gnu_bsd_and_escaped_lines() {
        let hex = "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0";
        let d = from_hex(hex.as_bytes()).unwrap();
        assert_eq!(
            parse_line(format!("{hex}  a b").as_bytes()),
            Some((d, b"a b".to_vec()))
        );
        assert_eq!(
            parse_line(format!("{hex} *bin").as_bytes()),
            Some((d, b"bin".to_vec()))
        );
        assert_eq!(
            parse_line(format!("SM3 (x) = y) = {hex}").as_bytes()),
            Some((d, b"x) = y".to_vec()))
        );
        assert_eq!(
            parse_line(format!("\\{hex}  a\\nb\\\\").as_bytes()),
            Some((d, b"a\nb\\".to_vec()))
        );
        assert_eq!(
            parse_line(format!("{hex}  crlf\r").as_bytes()),
            Some((d, b"crlf".to_vec()))
        );
        for bad in [
            format!("{hex} x"),
            format!("{hex}  "),
            format!("{}  x", &hex[1..]),
            format!("\\{hex}  a\\q"),
        ] {
            assert_eq!(parse_line(bad.as_bytes()), None, "{bad}");
        }
        assert_eq!(
            crate::files::escape(b"a\nb", false),
            (true, b"a\\nb".to_vec())
        );
        assert_eq!(
            crate::files::escape(b"plain", false),
            (false, b"plain".to_vec())
        );
    }
}
