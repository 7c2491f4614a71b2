//! What the provider has served, counted per operation: the proof, for a handshake run
//! through stock OpenSSL, that the signatures, key exchange, hashes and records came from
//! here and not from OpenSSL's default provider. Read through the provider parameter
//! `served` (`OSSL_PROVIDER_get_params`), or written as one line to the file named by
//! `SHANGMI_PROVIDER_SERVED` when the provider is unloaded (for the `openssl` command,
//! whose process ends before anyone could ask). Relaxed atomics: a count is a statistic,
//! ordered with nothing.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Clone, Copy)]
pub(crate) enum Op {
    Sm3,
    Sm4Gcm,
    Sm4Ccm,
    Sm4,
    Sm2Sign,
    Sm2Verify,
    Sm2Keygen,
    Sm2Derive,
    Sm2Encrypt,
    Sm2Decrypt,
}

const NAMES: [&str; 10] = [
    "sm3",
    "sm4-gcm",
    "sm4-ccm",
    "sm4",
    "sm2-sign",
    "sm2-verify",
    "sm2-keygen",
    "sm2-derive",
    "sm2-encrypt",
    "sm2-decrypt",
];

static COUNTS: [AtomicU64; 10] = [const { AtomicU64::new(0) }; 10];

pub(crate) fn count(op: Op) {
    COUNTS[op as usize].fetch_add(1, Ordering::Relaxed);
}

/// `name=count` pairs separated by spaces, every operation listed.
pub(crate) fn report() -> String {
    let pairs: Vec<String> = NAMES
        .iter()
        .zip(&COUNTS)
        .map(|(n, c)| format!("{n}={}", c.load(Ordering::Relaxed)))
        .collect();
    pairs.join(" ")
}

/// At teardown: the report appended to `SHANGMI_PROVIDER_SERVED`'s file, when it is set.
/// Failing to write is not the host's problem: ignored.
pub(crate) fn write_if_asked() {
    let Some(path) = served_file(
        std::env::var_os("SHANGMI_PROVIDER_SERVED"),
        secure_process(),
    ) else {
        return;
    };
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = writeln!(f, "{}", report());
    }
}

/// The file to report to: none in a setuid or setgid process (or one with file
/// capabilities), where the environment belongs to a less privileged caller who could name
/// any file for the privileged process to append to.
fn served_file(asked: Option<std::ffi::OsString>, secure: bool) -> Option<std::ffi::OsString> {
    asked.filter(|_| !secure)
}

/// Whether the kernel marked this process as running with privileges its caller lacks
/// (AT_SECURE: setuid, setgid, file capabilities), as glibc's `secure_getenv` asks.
#[cfg(target_os = "linux")]
fn secure_process() -> bool {
    const AT_SECURE: core::ffi::c_ulong = 23;
    unsafe extern "C" {
        fn getauxval(kind: core::ffi::c_ulong) -> core::ffi::c_ulong;
    }
    // SAFETY: getauxval only reads the process's auxiliary vector; any kind is a valid
    // argument (an absent one returns 0).
    unsafe { getauxval(AT_SECURE) != 0 }
}

/// Elsewhere there is no such mark to read: no report is written.
#[cfg(not(target_os = "linux"))]
fn secure_process() -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::{secure_process, served_file};

    #[test]
    fn a_privileged_process_writes_no_report() {
        let asked = Some(std::ffi::OsString::from("/tmp/served.txt"));
        assert_eq!(served_file(asked.clone(), false), asked);
        assert_eq!(served_file(asked, true), None);
        assert_eq!(served_file(None, false), None);
        // The test itself runs unprivileged.
        #[cfg(target_os = "linux")]
        assert!(!secure_process());
    }
}
