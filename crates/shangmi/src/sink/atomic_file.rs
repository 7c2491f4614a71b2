//! A file that appears at its name complete, or not at all.
//!
//! On Linux the data goes into an unnamed file (`O_TMPFILE`) in the target's directory, which
//! is given a name only at [`commit`](Sink::commit): a process killed at any moment, even by
//! SIGKILL, leaves nothing behind. Elsewhere, or on a filesystem without unnamed files, the
//! data goes to a hidden temporary name that is removed on failure and on drop.

use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::Sink;

/// A file written under a temporary name (or none) in the target's directory and renamed over
/// the target only on [`commit`](Sink::commit), after it is flushed to disk. Discarded or
/// dropped uncommitted, the data is gone and the target is as it was. Created readable and
/// writable by its owner only.
#[derive(Debug)]
pub struct AtomicFile {
    file: Option<File>,
    /// The temporary name, while the file has one; `None` for an unnamed file.
    temp: Option<PathBuf>,
    dir: PathBuf,
    target: PathBuf,
}

/// A hidden name no one else is using: pid, a counter and the time. Short whatever the
/// target's name, so a target name of up to NAME_MAX bytes still works.
fn temp_name(dir: &Path) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    dir.join(format!(".shangmi-{}-{n}-{nanos:x}.tmp", std::process::id()))
}

/// Retries `f` on fresh temporary names while the name is taken.
fn with_free_name<T>(
    dir: &Path,
    mut f: impl FnMut(&Path) -> io::Result<T>,
) -> io::Result<(T, PathBuf)> {
    for _ in 0..100 {
        let name = temp_name(dir);
        match f(&name) {
            Ok(t) => return Ok((t, name)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "could not find a free temporary name",
    ))
}

impl AtomicFile {
    /// Prepares to write `target`. Fails if its directory cannot take a new file.
    pub fn create(target: impl AsRef<Path>) -> io::Result<Self> {
        let target = target.as_ref().to_path_buf();
        if target.file_name().is_none() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a file name",
            ));
        }
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        #[cfg(target_os = "linux")]
        if let Some(file) = unnamed::create(&dir)? {
            return Ok(AtomicFile {
                file: Some(file),
                temp: None,
                dir,
                target,
            });
        }
        let mut opts = std::fs::OpenOptions::new();
        opts.read(true).write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
        let (file, temp) = with_free_name(&dir, |name| opts.open(name))?;
        Ok(AtomicFile {
            file: Some(file),
            temp: Some(temp),
            dir,
            target,
        })
    }

    /// The file the contents will be renamed to.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The temporary file's name, while it has one; `None` when the file is unnamed until
    /// commit (Linux), so that no signal can leave it behind.
    pub fn temp_path(&self) -> Option<&Path> {
        self.temp.as_deref()
    }

    fn file(&mut self) -> io::Result<&mut File> {
        self.file
            .as_mut()
            .ok_or_else(|| io::Error::other("file already committed or discarded"))
    }

    /// Gives the flushed file a name in the target's directory (its temporary one, or a new
    /// one for an unnamed file) and renames that over the target.
    fn publish(&mut self, file: File) -> io::Result<()> {
        let temp = match self.temp.take() {
            Some(t) => t,
            #[cfg(target_os = "linux")]
            None => with_free_name(&self.dir, |name| unnamed::link(&file, name))?.1,
            #[cfg(not(target_os = "linux"))]
            None => unreachable!("files are unnamed only on Linux"),
        };
        drop(file);
        if let Err(e) = std::fs::rename(&temp, &self.target) {
            let _ = std::fs::remove_file(&temp);
            return Err(e);
        }
        // The rename is durable once the directory is: best effort, as not every
        // filesystem lets a directory be synced.
        if let Ok(d) = File::open(&self.dir) {
            let _ = d.sync_all();
        }
        Ok(())
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

impl Seek for AtomicFile {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.file()?.seek(pos)
    }
}

impl Sink for AtomicFile {
    type Output = PathBuf;

    fn commit(mut self) -> io::Result<PathBuf> {
        let mut file = self
            .file
            .take()
            .ok_or_else(|| io::Error::other("already committed"))?;
        let result = file
            .flush()
            .and_then(|()| file.sync_all())
            .and_then(|()| self.publish(file));
        if let Err(e) = result {
            if let Some(t) = self.temp.take() {
                let _ = std::fs::remove_file(t);
            }
            return Err(e);
        }
        Ok(std::mem::take(&mut self.target))
    }

    fn discard(mut self) {
        self.file = None;
        if let Some(t) = self.temp.take() {
            let _ = std::fs::remove_file(t);
        }
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some()
            && let Some(t) = self.temp.take()
        {
            let _ = std::fs::remove_file(t);
        }
    }
}

/// Unnamed files (`O_TMPFILE`), linked into a directory through `/proc/self/fd`.
#[cfg(target_os = "linux")]
mod unnamed {
    use std::fs::File;
    use std::io;
    use std::os::fd::AsRawFd;
    use std::path::Path;

    use rustix::fs::{AtFlags, CWD, Mode, OFlags};
    use rustix::io::Errno;

    /// An unnamed file in `dir`, or `None` where the system cannot make or later name one
    /// (no `/proc`, or a filesystem without `O_TMPFILE`).
    pub(super) fn create(dir: &Path) -> io::Result<Option<File>> {
        if !Path::new("/proc/self/fd").is_dir() {
            return Ok(None);
        }
        let flags = OFlags::RDWR | OFlags::TMPFILE | OFlags::CLOEXEC;
        match rustix::fs::openat(CWD, dir, flags, Mode::from_raw_mode(0o600)) {
            Ok(fd) => Ok(Some(File::from(fd))),
            // No O_TMPFILE here (EISDIR and ENOENT come from kernels that predate it).
            Err(Errno::OPNOTSUPP | Errno::ISDIR | Errno::INVAL | Errno::NOSYS) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Gives `file` the name `name`.
    pub(super) fn link(file: &File, name: &Path) -> io::Result<()> {
        let me = format!("/proc/self/fd/{}", file.as_raw_fd());
        rustix::fs::linkat(CWD, me.as_str(), CWD, name, AtFlags::SYMLINK_FOLLOW)
            .map_err(io::Error::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("shangmi-af-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn nothing_has_a_name_before_commit() {
        let dir = scratch("unnamed");
        let mut f = AtomicFile::create(dir.join("out")).unwrap();
        f.write_all(b"partial").unwrap();
        if cfg!(target_os = "linux") {
            // Unnamed: a SIGKILL now would leave nothing to clean up.
            assert!(f.temp_path().is_none());
            assert!(names(&dir).is_empty());
        }
        // Seekable, for formats that fill in a field at the end.
        f.seek(SeekFrom::Start(0)).unwrap();
        f.write_all(b"P").unwrap();
        f.commit().unwrap();
        assert_eq!(names(&dir), ["out"]);
        assert_eq!(std::fs::read(dir.join("out")).unwrap(), b"Partial");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.join("out"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn target_names_up_to_the_longest_the_filesystem_takes() {
        let dir = scratch("long");
        let name = "n".repeat(255);
        let mut f = AtomicFile::create(dir.join(&name)).unwrap();
        f.write_all(b"x").unwrap();
        f.commit().unwrap();
        assert_eq!(names(&dir), [name]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn uncommitted_files_leave_nothing() {
        let dir = scratch("drop");
        for discard in [true, false] {
            let mut f = AtomicFile::create(dir.join("t")).unwrap();
            f.write_all(b"data").unwrap();
            if discard {
                f.discard();
            } else {
                drop(f);
            }
            assert!(names(&dir).is_empty());
        }
        assert!(AtomicFile::create(dir.join("missing/t")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
