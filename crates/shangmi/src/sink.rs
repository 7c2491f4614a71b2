//! Destinations that hold output until it is known good: the streaming decryptors write
//! plaintext as it comes, before the ciphertext is authenticated, so they write it only into a
//! [`Sink`], which they commit after verification and discard otherwise.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use zeroize::Zeroizing;

/// A [`Write`] whose contents count only once committed.
pub trait Sink: Write {
    /// What a committed sink yields.
    type Output;
    /// Makes the contents available (returns them, renames the file into place...).
    fn commit(self) -> io::Result<Self::Output>;
    /// Throws the contents away.
    fn discard(self);
}

/// In memory, for plaintext: a buffer that wipes what it leaves behind. A plain `Vec<u8>`
/// is not a sink on purpose: when it grows it frees its old buffer with the bytes still in it.
/// Committed, it yields the bytes (wiped when that `Zeroizing` is dropped); discarded or
/// dropped, they are wiped.
#[derive(Default)]
pub struct MemorySink {
    buf: Zeroizing<Vec<u8>>,
}

impl MemorySink {
    /// An empty sink.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty sink with room for `n` bytes before it has to grow.
    pub fn with_capacity(n: usize) -> Self {
        MemorySink {
            buf: Zeroizing::new(Vec::with_capacity(n)),
        }
    }

    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether nothing has been written.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
}

impl core::fmt::Debug for MemorySink {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("MemorySink")
            .field("len", &self.buf.len())
            .finish_non_exhaustive()
    }
}

impl Write for MemorySink {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let needed = self
            .buf
            .len()
            .checked_add(data.len())
            .ok_or_else(|| io::Error::new(io::ErrorKind::OutOfMemory, "sink too large"))?;
        if needed > self.buf.capacity() {
            // Grow by hand into a new buffer; the old one is wiped as its `Zeroizing` drops.
            let mut grown = Vec::new();
            grown
                .try_reserve_exact(needed.max(2 * self.buf.capacity()).max(64))
                .map_err(|_| io::Error::new(io::ErrorKind::OutOfMemory, "sink too large"))?;
            grown.extend_from_slice(&self.buf);
            self.buf = Zeroizing::new(grown);
        }
        self.buf.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Sink for MemorySink {
    type Output = Zeroizing<Vec<u8>>;

    fn commit(mut self) -> io::Result<Zeroizing<Vec<u8>>> {
        Ok(core::mem::take(&mut self.buf))
    }

    fn discard(self) {}
}

/// A file written under a temporary name in the target's directory and renamed over the
/// target only on [`commit`](Sink::commit), after it is flushed to disk. Discarded (or
/// dropped uncommitted), the temporary file is removed and the target left as it was.
#[derive(Debug)]
pub struct AtomicFile {
    file: Option<File>,
    temp: PathBuf,
    target: PathBuf,
}

impl AtomicFile {
    /// Creates the temporary file next to `target` (readable by the owner only on Unix).
    pub fn create(target: impl AsRef<Path>) -> io::Result<Self> {
        let target = target.as_ref().to_path_buf();
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = target
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?
            .to_string_lossy()
            .into_owned();
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
        // A name no one else is using: pid, time and a counter, retried on collision.
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        for _ in 0..100 {
            let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let temp = dir.join(format!(".{name}.{}.{nanos:x}{n}.tmp", std::process::id()));
            match opts.open(&temp) {
                Ok(file) => {
                    return Ok(AtomicFile {
                        file: Some(file),
                        temp,
                        target,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "could not find a free temporary name",
        ))
    }

    /// The file the contents will be renamed to.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The temporary file being written (for callers that must clean up after a signal).
    pub fn temp_path(&self) -> &Path {
        &self.temp
    }

    fn file(&mut self) -> io::Result<&mut File> {
        self.file
            .as_mut()
            .ok_or_else(|| io::Error::other("file already committed or discarded"))
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file()?.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file()?.flush()
    }
}

impl Sink for AtomicFile {
    type Output = PathBuf;

    fn commit(mut self) -> io::Result<PathBuf> {
        let mut file = self.file.take().expect("present until commit or discard");
        let result = file.flush().and_then(|()| file.sync_all()).and_then(|()| {
            drop(file);
            std::fs::rename(&self.temp, &self.target)
        });
        if let Err(e) = result {
            let _ = std::fs::remove_file(&self.temp);
            return Err(e);
        }
        Ok(std::mem::take(&mut self.target))
    }

    fn discard(mut self) {
        self.file = None;
        let _ = std::fs::remove_file(&self.temp);
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}
