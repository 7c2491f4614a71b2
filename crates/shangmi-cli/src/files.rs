//! Inputs and outputs: stdin/stdout when no file is named, output files written under a
//! temporary name and renamed only when complete (and, for decryption, authenticated), with
//! the temporary file removed on failure or on an interrupt.

use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use shangmi::sink::{AtomicFile, Sink};

use crate::fail::{Result, error, io_error};

/// Temporary files to remove if the process is interrupted.
static TEMPS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// On SIGINT, SIGTERM or SIGHUP: remove the temporary files, exit 130.
pub fn install_interrupt_cleanup() {
    let _ = ctrlc::set_handler(|| {
        if let Ok(temps) = TEMPS.lock() {
            for t in temps.iter() {
                let _ = std::fs::remove_file(t);
            }
        }
        eprintln!("shangmi: interrupted; no output written");
        std::process::exit(130);
    });
}

fn forget_temp(p: &Path) {
    if let Ok(mut temps) = TEMPS.lock() {
        temps.retain(|t| t != p);
    }
}

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
        None => Ok(stdin()),
        Some(p) if p == Path::new("-") => Ok(stdin()),
        Some(p) => {
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
    }
}

fn stdin() -> Input {
    Input {
        reader: Box::new(io::stdin().lock()),
        name: "stdin".into(),
        len: None,
    }
}

impl Input {
    /// The whole input, for operations that need it at once; `limit` bounds the size.
    pub fn read_all(mut self, limit: u64) -> Result<Vec<u8>> {
        let mut buf = Vec::new();
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
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_error(&self.name, &e)),
            }
        }
        Ok(n)
    }
}

enum Dest {
    Stdout(BufWriter<io::Stdout>),
    /// A device, pipe or other non-regular file: written in place (renaming over it would
    /// replace it).
    Direct(BufWriter<File>),
    /// Held until verified, then copied to stdout.
    Spool(File),
    File(AtomicFile),
}

/// Where a command writes its result. Nothing reaches a named file before [`commit`].
///
/// [`commit`]: Output::commit
pub struct Output {
    dest: Option<Dest>,
    pub name: String,
    /// A non-regular target that spooled output goes to on commit (stdout otherwise).
    special: Option<PathBuf>,
}

impl Output {
    /// `path`, or stdout when `None` or "-". With `hold`, stdout output is spooled to an
    /// anonymous temporary file and released only by [`commit`](Output::commit): for
    /// decryption, whose output must not appear before it is authenticated.
    pub fn create(path: Option<&Path>, hold: bool) -> Result<Output> {
        let special =
            path.filter(|p| std::fs::metadata(p).is_ok_and(|m| !m.is_file() && !m.is_dir()));
        if let Some(p) = special {
            let name = p.display().to_string();
            let dest = if hold {
                Dest::Spool(tempfile::tempfile().map_err(|e| io_error("temporary file", &e))?)
            } else {
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(p)
                    .map_err(|e| io_error(&name, &e))?;
                Dest::Direct(BufWriter::with_capacity(1 << 16, f))
            };
            return Ok(Output {
                dest: Some(dest),
                name,
                special: Some(p.to_path_buf()),
            });
        }
        let dest = match path {
            Some(p) if p != Path::new("-") => {
                let name = p.display().to_string();
                let f = AtomicFile::create(p).map_err(|e| io_error(&name, &e))?;
                if let Ok(mut temps) = TEMPS.lock() {
                    temps.push(f.temp_path().to_path_buf());
                }
                return Ok(Output {
                    dest: Some(Dest::File(f)),
                    name,
                    special: None,
                });
            }
            _ if hold => {
                Dest::Spool(tempfile::tempfile().map_err(|e| io_error("temporary file", &e))?)
            }
            _ => Dest::Stdout(BufWriter::with_capacity(1 << 16, io::stdout())),
        };
        Ok(Output {
            dest: Some(dest),
            name: "stdout".into(),
            special: None,
        })
    }

    /// Makes the output final: renames the file into place, or releases spooled output.
    pub fn commit(mut self) -> Result<()> {
        let name = self.name.clone();
        match self.dest.take().expect("present until commit") {
            Dest::Stdout(mut w) => w.flush().map_err(|e| io_error(&name, &e)),
            Dest::Direct(mut w) => w.flush().map_err(|e| io_error(&name, &e)),
            Dest::Spool(mut f) => {
                let mut out: Box<dyn Write> = match &self.special {
                    Some(p) => Box::new(
                        std::fs::OpenOptions::new()
                            .write(true)
                            .open(p)
                            .map_err(|e| io_error(&name, &e))?,
                    ),
                    None => Box::new(io::stdout().lock()),
                };
                f.seek(SeekFrom::Start(0))
                    .and_then(|_| io::copy(&mut f, &mut out))
                    .and_then(|_| out.flush())
                    .map(|_| ())
                    .map_err(|e| io_error(&name, &e))
            }
            Dest::File(f) => {
                let temp = f.temp_path().to_path_buf();
                let r = f.commit().map(|_| ()).map_err(|e| io_error(&name, &e));
                forget_temp(&temp);
                r
            }
        }
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
            Some(Dest::Spool(f)) => f.write(buf),
            Some(Dest::File(f)) => f.write(buf),
            None => Err(io::Error::other("output already closed")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self.dest.as_mut() {
            Some(Dest::Stdout(w)) => w.flush(),
            Some(Dest::Direct(w)) => w.flush(),
            Some(Dest::Spool(f)) => f.flush(),
            Some(Dest::File(f)) => f.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for Output {
    /// Uncommitted: the temporary file goes (AtomicFile removes it), spooled output is
    /// dropped unread.
    fn drop(&mut self) {
        if let Some(Dest::File(f)) = self.dest.take() {
            let temp = f.temp_path().to_path_buf();
            f.discard();
            forget_temp(&temp);
        }
    }
}

/// A sink for the library's streaming decryptor: everything goes to the output, committed by
/// the decryptor only after authentication.
pub struct OutputSink(pub Output);

impl Write for OutputSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl Sink for OutputSink {
    type Output = Output;

    fn commit(self) -> io::Result<Output> {
        Ok(self.0)
    }

    fn discard(self) {}
}
