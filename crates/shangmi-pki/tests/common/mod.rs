//! What the PKI test files share: the gmsm peer (`interop/gmsm`), built once per test binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The peer, or None where Go is absent outside CI (under CI=true its absence fails).
pub fn peer(name: &str) -> Option<PathBuf> {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop/gmsm");
    match Command::new("go")
        .arg("build")
        .arg("-o")
        .arg(&out)
        .arg(".")
        .current_dir(&src)
        .output()
    {
        Ok(o) if o.status.success() => Some(out),
        Ok(o) => panic!(
            "building the gmsm peer: {}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) if std::env::var("CI").as_deref() != Ok("true") => {
            eprintln!("go is not available ({e}): the gmsm interop test is skipped");
            None
        }
        Err(e) => panic!("CI=true and go is not available: {e}"),
    }
}

/// Runs the peer in `dir`; whether it succeeded (its stderr shown when not).
pub fn run(peer: &Path, dir: &Path, args: &[&str]) -> bool {
    let o = Command::new(peer)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    if !o.status.success() {
        eprintln!("gmsmpeer {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    }
    o.status.success()
}

/// The classpath of BouncyCastle's PKI peer (`interop/bcpkix`, built with Maven when its
/// files changed), or None where Maven is absent outside CI (under CI=true that fails).
pub fn bcpkix() -> Option<String> {
    use shangmi_testkit::maven::{PeerError, peer_classpath};
    match peer_classpath("bcpkix") {
        Ok(cp) => Some(cp),
        Err(PeerError::NoMaven(e)) if std::env::var("CI").as_deref() != Ok("true") => {
            eprintln!("mvn is not available ({e}): the BouncyCastle interop test is skipped");
            None
        }
        Err(e) => panic!("the BouncyCastle peer: {e}"),
    }
}

/// Runs `java PkiPeer args` in `dir`; whether it succeeded (its stderr shown when not), and
/// its stdout.
pub fn bc(cp: &str, dir: &Path, args: &[&str]) -> (bool, Vec<u8>) {
    let o = Command::new("java")
        .args(["-cp", cp, "PkiPeer"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    if !o.status.success() {
        eprintln!("bcpkix {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    }
    (o.status.success(), o.stdout)
}

/// OpenSSL 4.0's `openssl` (scripts/peers/build.sh builds it once into a cache outside the
/// repository), or None where it cannot be built outside CI (under CI=true that fails).
pub fn openssl4() -> Option<PathBuf> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/peers/build.sh");
    match Command::new(script).arg("openssl4").output() {
        Ok(o) if o.status.success() => Some(PathBuf::from(
            String::from_utf8_lossy(&o.stdout).trim().to_string(),
        )),
        Ok(_) | Err(_) if std::env::var("CI").as_deref() != Ok("true") => {
            eprintln!("OpenSSL 4.0 could not be built: its interop test is skipped");
            None
        }
        Ok(o) => panic!(
            "CI=true and OpenSSL 4.0 could not be built: {}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => panic!("CI=true and OpenSSL 4.0 could not be built: {e}"),
    }
}
