//! Log lines off the async workers: every line (access log, failures, the gateway's own
//! events) goes through a bounded channel to one writer thread, so a stalled or closed log pipe
//! never blocks a connection or the admin listener. When the channel is full a line is dropped
//! and counted; a write that fails is ignored (a broken stderr ends no connection, and no
//! `eprintln!` is left to panic on it).
//!
//! Lines about failed connections are also limited per client address
//! ([`FAILURE_LINES_PER_SECOND`], in bursts of [`FAILURE_LINE_BURST`]) and their details cut
//! at [`MAX_DETAIL`] bytes: a client that fails on purpose cannot fill the disk.

use std::io::Write;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError, sync_channel};

/// Lines waiting for the writer at most; more are dropped.
const QUEUE: usize = 8192;
/// Failure lines per second one client address may cause.
pub const FAILURE_LINES_PER_SECOND: f64 = 5.0;
/// Failure lines one address may cause at once above that rate.
pub const FAILURE_LINE_BURST: f64 = 20.0;
/// The longest detail a failure line carries, bytes.
pub const MAX_DETAIL: usize = 256;

/// Where a line goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sink {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

struct Writer {
    tx: Option<SyncSender<(Sink, String)>>,
    dropped: AtomicU64,
}

fn writer() -> &'static Writer {
    static WRITER: OnceLock<Writer> = OnceLock::new();
    WRITER.get_or_init(|| {
        let (tx, rx) = sync_channel::<(Sink, String)>(QUEUE);
        let started = std::thread::Builder::new()
            .name("shangmi-gateway-log".into())
            .spawn(move || {
                for (sink, line) in rx {
                    let _ = match sink {
                        Sink::Stdout => std::io::stdout().lock().write_all(line.as_bytes()),
                        Sink::Stderr => std::io::stderr().lock().write_all(line.as_bytes()),
                    };
                }
            });
        Writer {
            // Without its thread nothing is written rather than anything blocking.
            tx: started.ok().map(|_| tx),
            dropped: AtomicU64::new(0),
        }
    })
}

/// Queues `line` (which ends with a newline) for `sink`; dropped and counted when the writer
/// is behind.
pub fn write(sink: Sink, line: String) {
    let w = writer();
    let sent = match &w.tx {
        Some(tx) => match tx.try_send((sink, line)) {
            Ok(()) => true,
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => false,
        },
        None => false,
    };
    if !sent {
        w.dropped.fetch_add(1, Ordering::Relaxed);
    }
}

/// Lines dropped because the writer was behind (or could not start).
pub fn dropped() -> u64 {
    writer().dropped.load(Ordering::Relaxed)
}

/// Writes `line` to stderr now, from the calling thread: for what is said once, before or
/// after serving (the `listening on` lines scripts wait for), never from a connection.
pub fn say(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// `detail` cut to [`MAX_DETAIL`] bytes at a character boundary.
pub fn truncate(detail: &str) -> String {
    if detail.len() <= MAX_DETAIL {
        return detail.to_string();
    }
    let mut end = MAX_DETAIL;
    while !detail.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &detail[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn details_are_cut_at_a_character_boundary() {
        assert_eq!(truncate("short"), "short");
        let long = "é".repeat(MAX_DETAIL);
        let cut = truncate(&long);
        assert!(cut.len() <= MAX_DETAIL + 3 && cut.ends_with("..."));
        assert!(cut.trim_end_matches("...").chars().all(|c| c == 'é'));
    }
}
