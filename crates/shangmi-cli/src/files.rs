//! Inputs and outputs: stdin and stdout when no file is named; named output files that appear
//! only when complete (unnamed until then on Linux, see `shangmi::sink::AtomicFile`); small
//! files (keys, signatures, passwords) read with a size bound.

use std::fmt;
use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use shangmi::sink::{AtomicFile, Sink};
use zeroize::Zeroizing;

use crate::fail::{Failure, Result, error, io_error};
use crate::signals;

/// An input stream and the name errors should use for it.
pub struct Input {
    pub reader: Box<dyn Read>,
    pub name: String,
    /// The size, when known (a regular file), for the progress bar.
    pub len: Option<u64>,
}

/// Opens `path`, or stdin when it is `None` or "-".
pub fn open_input(path: Option<&Path>) -> Result<Input> {
    match path {
        Some(p) if p != Path::new("-") => {
            let name = p.display().to_string();
            let f = File::open(p).map_err(|e| io_error(&name, &e))?;
            let meta = f.metadata().map_err(|e| io_error(&name, &e))?;
            if meta.is_dir() {
                return Err(error(&name, "Is a directory"));
            }
            let len = meta.is_file().then_some(meta.len());
            Ok(Input {
                reader: Box::new(f),
                name,
                len,
            })
        }
        _ => {
            signals::stdin_open()?;
            Ok(Input {
                reader: Box::new(io::stdin().lock()),
                name: "stdin".into(),
                len: None,
            })
        }
    }
}

impl Input {
    /// The whole input, for operations that need it at once; `limit` bounds the size.
    pub fn read_all(self, limit: u64) -> Result<Zeroizing<Vec<u8>>> {
        let buf = self.read_bounded(limit)?;
        signals::at_end_of_input();
        Ok(buf)
    }

    fn read_bounded(mut self, limit: u64) -> Result<Zeroizing<Vec<u8>>> {
        let mut buf = Zeroizing::new(Vec::new());
        (&mut self.reader)
            .take(limit + 1)
            .read_to_end(&mut buf)
            .map_err(|e| io_error(&self.name, &e))?;
        if buf.len() as u64 > limit {
            return Err(error(&self.name, format!("larger than {limit} bytes")));
        }
        Ok(buf)
    }

    /// Reads until `buf` is full or the input ends; returns the bytes read.
    pub fn fill(&mut self, buf: &mut [u8]) -> Result<usize> {
        let mut n = 0;
        while n < buf.len() {
            match self.reader.read(&mut buf[n..]) {
                Ok(0) => {
                    signals::at_end_of_input();
                    break;
                }
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_error(&self.name, &e)),
            }
        }
        Ok(n)
    }
}

/// A small file read whole (a key, a signature, a password; "-" is stdin), refusing more than
/// `limit` bytes: none of these is ever large, and `/dev/zero` must not exhaust memory.
pub fn read_small(path: &Path, limit: u64) -> Result<Zeroizing<Vec<u8>>> {
    open_input(Some(path))?.read_bounded(limit)
}

/// Prints `text` on stdout, failing with a message (where `println!` would panic, or say
/// nothing when stdout is closed) if stdout is closed, full or a closed pipe.
pub fn print(text: &str) -> Result<()> {
    signals::stdout_open()?;
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| io_error("stdout", &e))
}

enum Dest {
    Stdout(BufWriter<io::Stdout>),
    /// A device, pipe or other non-regular file: written in place (renaming over it would
    /// replace it).
    Direct(BufWriter<File>),
    File(AtomicFile),
}

/// Where a command writes its result. A named regular file appears only at [`commit`];
/// stdout and special files receive data as it is written.
///
/// [`commit`]: Output::commit
pub struct Output {
    dest: Option<Dest>,
    pub name: String,
}

impl Output {
    /// `path`, or stdout when `None` or "-".
    pub fn create(path: Option<&Path>) -> Result<Output> {
        let (dest, name) = match path {
            Some(p) if p != Path::new("-") => {
                let name = p.display().to_string();
                let special = std::fs::metadata(p).is_ok_and(|m| !m.is_file() && !m.is_dir());
                let dest = if special {
                    let f = std::fs::OpenOptions::new()
                        .write(true)
                        .open(p)
                        .map_err(|e| io_error(&name, &e))?;
                    Dest::Direct(BufWriter::with_capacity(1 << 16, f))
                } else {
                    let f = AtomicFile::create(p).map_err(|e| io_error(&name, &e))?;
                    if let Some(t) = f.temp_path() {
                        signals::track_temp(t.to_path_buf());
                    }
                    Dest::File(f)
                };
                (dest, name)
            }
            _ => {
                signals::stdout_open()?;
                (
                    Dest::Stdout(BufWriter::with_capacity(1 << 16, io::stdout())),
                    "stdout".into(),
                )
            }
        };
        Ok(Output {
            dest: Some(dest),
            name,
        })
    }

    /// Whether nothing written reaches anyone before [`commit`](Output::commit): a named
    /// regular file. Stdout, pipes and devices take data as it comes.
    pub fn is_atomic(&self) -> bool {
        matches!(self.dest, Some(Dest::File(_)))
    }

    /// Makes the output final: renames the file into place, or flushes the stream. Not after
    /// an interrupt: then the process exits here, having committed nothing (see `signals`).
    pub fn commit(mut self) -> Result<()> {
        let name = self.name.clone();
        let dest = self
            .dest
            .take()
            .ok_or_else(|| error(&name, "already committed"))?;
        signals::commit(|| match dest {
            Dest::Stdout(mut w) => w.flush().map_err(|e| io_error(&name, &e)),
            Dest::Direct(mut w) => w.flush().map_err(|e| io_error(&name, &e)),
            Dest::File(f) => {
                let temp = f.temp_path().map(Path::to_path_buf);
                let r = f.commit().map(|_| ()).map_err(|e| io_error(&name, &e));
                if let Some(t) = temp {
                    signals::untrack_temp(&t);
                }
                r
            }
        })
    }

    /// Writes, naming the output in the error.
    pub fn put(&mut self, data: &[u8]) -> Result<()> {
        self.write_all(data).map_err(|e| io_error(&self.name, &e))
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.dest.as_mut() {
            Some(Dest::Stdout(w)) => w.write(buf),
            Some(Dest::Direct(w)) => w.write(buf),
            Some(Dest::File(f)) => f.write(buf),
            None => Err(io::Error::other("output already closed")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self.dest.as_mut() {
            Some(Dest::Stdout(w)) => w.flush(),
            Some(Dest::Direct(w)) => w.flush(),
            Some(Dest::File(f)) => f.flush(),
            None => Ok(()),
        }
    }
}

/// Only a named regular file can seek (formats that fill in a field at the end use it).
impl Seek for Output {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        match self.dest.as_mut() {
            Some(Dest::File(f)) => f.seek(pos),
            _ => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "output cannot seek",
            )),
        }
    }
}

impl Drop for Output {
    /// Uncommitted: the file never appears (AtomicFile removes or never names it).
    fn drop(&mut self) {
        if let Some(Dest::File(f)) = self.dest.take() {
            let temp = f.temp_path().map(Path::to_path_buf);
            f.discard();
            if let Some(t) = temp {
                signals::untrack_temp(&t);
            }
        }
    }
}

/// A write error of the output, marked as such on its way through a library call that both
/// reads and writes, so that the message blames the right file.
#[derive(Debug)]
struct OnOutput(io::Error);

impl fmt::Display for OnOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for OnOutput {}

fn on_output(e: io::Error) -> io::Error {
    io::Error::new(e.kind(), OnOutput(e))
}

/// An I/O error from a call that reads `input` and writes `output`: blamed on the output when
/// it came from a write, on the input otherwise.
pub fn io_error_on(input: &str, output: &str, e: &io::Error) -> Failure {
    match e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<OnOutput>())
    {
        Some(OnOutput(inner)) => io_error(output, inner),
        None => io_error(input, e),
    }
}

/// A library sink over a command's writer: the library commits it only after verification,
/// and the command commits its [`Output`] after that. Write errors are marked as the output's.
pub struct Through<'a>(pub &'a mut dyn Write);

impl Write for Through<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf).map_err(on_output)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush().map_err(on_output)
    }
}

impl Sink for Through<'_> {
    type Output = ();

    fn commit(mut self) -> io::Result<()> {
        self.flush()
    }

    fn discard(self) {}
}

/// coreutils' escaping: a name holding a backslash, newline or carriage return is printed with
/// those escaped, and the whole line is marked by a leading backslash. Not with --zero.
pub fn escape(name: &[u8], zero: bool) -> (bool, Vec<u8>) {
    if zero || !name.iter().any(|b| matches!(b, b'\\' | b'\n' | b'\r')) {
        return (false, name.to_vec());
    }
    let mut out = Vec::with_capacity(name.len() + 4);
    for &b in name {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            _ => out.push(b),
        }
    }
    (true, out)
}
