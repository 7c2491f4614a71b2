//! Decrypting to a stream that cannot be taken back (stdout, a pipe, a device).
//!
//! A named output file is written in one pass and appears only if the ciphertext verifies.
//! Stdout cannot wait like that, and holding the plaintext somewhere until the end would put it
//! on disk. So the command keeps a private copy of the *ciphertext* instead (in memory up to
//! 8 MiB, beyond that in an unnamed file in `$TMPDIR`), verifies it in a first pass that
//! writes nothing, and decrypts it in a second pass straight to the output. The copy is the
//! command's own, so what is decrypted is exactly what was verified, whatever happens to the
//! input meanwhile; and nothing decrypted is ever written to disk.

use std::fs::File;
use std::io::{self, Cursor, Read, Seek, SeekFrom, Write};
use std::sync::Arc;

use crate::fail::{Result, io_error};
use crate::files::{Input, Output};

/// Inputs up to this size are held in memory.
const IN_MEMORY: usize = 8 << 20;

enum Store {
    Memory(Arc<[u8]>),
    File(File),
}

/// A private copy of an input.
struct Captured {
    store: Store,
    name: String,
    len: u64,
}

fn capture(mut input: Input) -> Result<Captured> {
    let name = input.name.clone();
    let mut head = Vec::new();
    (&mut input.reader)
        .take(IN_MEMORY as u64 + 1)
        .read_to_end(&mut head)
        .map_err(|e| io_error(&name, &e))?;
    if head.len() <= IN_MEMORY {
        crate::signals::at_end_of_input();
        return Ok(Captured {
            len: head.len() as u64,
            store: Store::Memory(head.into()),
            name,
        });
    }
    let mut file = tempfile::tempfile().map_err(|e| io_error("temporary file", &e))?;
    file.write_all(&head)
        .map_err(|e| io_error("temporary file", &e))?;
    let rest = io::copy(&mut input.reader, &mut file).map_err(|e| {
        // io::copy does not say which side failed; the file is ours, so a write error is
        // the temporary file's and anything else the input's.
        match e.kind() {
            io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded => {
                io_error("temporary file", &e)
            }
            _ => io_error(&name, &e),
        }
    })?;
    crate::signals::at_end_of_input();
    Ok(Captured {
        len: head.len() as u64 + rest,
        store: Store::File(file),
        name,
    })
}

impl Captured {
    /// The copy, from its start, as an input.
    fn open(&self) -> Result<Input> {
        let reader: Box<dyn Read> = match &self.store {
            Store::Memory(bytes) => Box::new(Cursor::new(Arc::clone(bytes))),
            Store::File(f) => {
                let mut f = f.try_clone().map_err(|e| io_error("temporary file", &e))?;
                f.seek(SeekFrom::Start(0))
                    .map_err(|e| io_error("temporary file", &e))?;
                Box::new(f)
            }
        };
        Ok(Input {
            reader,
            name: self.name.clone(),
            len: Some(self.len),
        })
    }
}

/// Runs `decrypt`, which succeeds only if what it read verified, so that `out` receives
/// nothing unless it does: in one pass into an output that appears only at commit, in two
/// passes over a private copy of the input otherwise (see the module's comment).
pub fn verified(
    input: Input,
    out: &mut Output,
    mut decrypt: impl FnMut(Input, &mut dyn Write) -> Result<()>,
) -> Result<()> {
    if out.is_atomic() {
        return decrypt(input, out);
    }
    let copy = capture(input)?;
    decrypt(copy.open()?, &mut io::sink())?;
    decrypt(copy.open()?, out)
}
