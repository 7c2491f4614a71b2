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
    let Some(path) = std::env::var_os("SHANGMI_PROVIDER_SERVED") else {
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
