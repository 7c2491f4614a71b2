//! Destinations that hold output until it is known good: the streaming decryptors write
//! plaintext as it comes, before the ciphertext is authenticated, so they write it only into a
//! [`Sink`], which they commit after verification and discard otherwise.

use std::io::{self, Write};

use zeroize::Zeroizing;

mod atomic_file;

pub use atomic_file::AtomicFile;

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
