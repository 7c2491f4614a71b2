//! Interrupts and the standard streams.
//!
//! An interrupt must never let a command commit its output. The race to close: Ctrl-C stops a
//! whole pipeline, the producer dies, this process reads end-of-file and would commit a
//! truncated result before a handler running on another thread got to it. So the signal
//! handler itself records the signal (an atomic store, the one thing safe to do there), and
//! every commit checks it under a lock; the thread that reacts to the signal takes the same
//! lock before it exits. Whichever holds the lock first decides: exit without committing; or
//! commit, and then the command has done its work and finishes normally (a signal that comes
//! after the output is complete does not turn it into a failure).
//!
//! Outputs are unnamed until committed (Linux), so an exit leaves nothing behind; elsewhere
//! their temporary names are registered here and removed on the way out.

use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};

use crate::fail::{Failure, error};

const HANDLED: [i32; 4] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT];

/// The signal received, or 0; stored by the signal handler itself.
static SIGNAL: AtomicUsize = AtomicUsize::new(0);
/// Held while deciding to commit and while committing, and by the exit after a signal.
static COMMIT: Mutex<()> = Mutex::new(());
/// Named temporary files to remove on the way out (where outputs cannot be unnamed).
static TEMPS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Set once an output has been committed: from then on a signal no longer stops the command.
static COMMITTED: AtomicBool = AtomicBool::new(false);

static STDIN_CLOSED: AtomicBool = AtomicBool::new(false);
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Records SIGINT, SIGTERM, SIGHUP and SIGQUIT as they arrive and exits with 128 + the signal
/// once no commit is in progress.
pub fn install() {
    for sig in HANDLED {
        // Fails only for signals that cannot be handled; these four can.
        let _ = signal_hook::flag::register_usize(sig, &SIGNAL, sig as usize);
    }
    if let Ok(mut signals) = signal_hook::iterator::Signals::new(HANDLED) {
        std::thread::spawn(move || {
            if let Some(sig) = signals.forever().next() {
                let _commit = lock(&COMMIT);
                if !COMMITTED.load(Ordering::SeqCst) {
                    exit_interrupted(sig as usize);
                }
            }
        });
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn exit_interrupted(sig: usize) -> ! {
    for t in lock(&TEMPS).drain(..) {
        let _ = std::fs::remove_file(t);
    }
    eprintln!("shangmi: interrupted; no output written");
    std::process::exit(128 + sig as i32)
}

/// Commits with `commit` unless a signal has arrived, in which case the process exits here
/// with nothing committed. A signal arriving during the commit waits for it.
pub fn commit<T>(commit: impl FnOnce() -> T) -> T {
    let _guard = lock(&COMMIT);
    let sig = SIGNAL.load(Ordering::SeqCst);
    if sig != 0 && !COMMITTED.load(Ordering::SeqCst) {
        exit_interrupted(sig);
    }
    let done = commit();
    COMMITTED.store(true, Ordering::SeqCst);
    done
}

/// Registers a named temporary file to remove if the process is interrupted.
pub fn track_temp(p: PathBuf) {
    lock(&TEMPS).push(p);
}

/// Forgets a temporary file that has been committed or removed.
pub fn untrack_temp(p: &std::path::Path) {
    lock(&TEMPS).retain(|t| t != p);
}

/// A test hook, in debug builds only: with `SHANGMI_TEST_SIGNAL_AT_EOF=1`, the process sends
/// itself SIGINT when its input ends, which is exactly when an interrupted pipeline's consumer
/// sees end-of-file.
pub fn at_end_of_input() {
    #[cfg(debug_assertions)]
    if std::env::var_os("SHANGMI_TEST_SIGNAL_AT_EOF").is_some() {
        let _ = signal_hook::low_level::raise(SIGINT);
    }
}

/// Which standard streams were closed when the process started, recorded as the program is
/// loaded (`ffi_init.rs` runs this before `main`): by the time `main` runs, Rust's runtime has
/// put /dev/null in their place (so that files opened later cannot take descriptors 0-2), and
/// writes to stdout would vanish while reads of stdin see an empty input. Commands that need a
/// stream that was closed fail instead (see [`stdin_open`], [`stdout_open`]).
#[cfg(target_os = "linux")]
pub extern "C" fn record_closed_streams() {
    use std::os::fd::AsFd;
    // Duplicating a closed descriptor fails (EBADF); the duplicate is closed again at once.
    let open = |fd: std::os::fd::BorrowedFd<'_>| fd.try_clone_to_owned().is_ok();
    STDIN_CLOSED.store(!open(io::stdin().as_fd()), Ordering::SeqCst);
    STDOUT_CLOSED.store(!open(io::stdout().as_fd()), Ordering::SeqCst);
}

/// Fails if stdin was closed at start (reading it would give an empty input, not an error).
pub fn stdin_open() -> Result<(), Failure> {
    if STDIN_CLOSED.load(Ordering::SeqCst) {
        Err(error("stdin", "Bad file descriptor"))
    } else {
        Ok(())
    }
}

/// Fails if stdout was closed at start (writes to it would vanish without an error).
pub fn stdout_open() -> Result<(), Failure> {
    if STDOUT_CLOSED.load(Ordering::SeqCst) {
        Err(error("stdout", "Bad file descriptor"))
    } else {
        Ok(())
    }
}
