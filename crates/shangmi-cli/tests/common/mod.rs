//! What the CLI test files share: running the binary as a user would, and checking what it
//! leaves on disk.
#![allow(dead_code)]

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Runs `shangmi args` in `dir`, feeding `stdin`.
pub fn run(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_shangmi"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Feed stdin from another thread: the child may fill its stdout pipe before reading all
    // of its input.
    let mut input = child.stdin.take().unwrap();
    let data = stdin.unwrap_or(&[]).to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    out
}

pub fn ok(dir: &Path, args: &[&str]) -> Vec<u8> {
    let o = run(dir, args, None);
    assert!(
        o.status.success(),
        "shangmi {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

pub fn code(o: &Output) -> i32 {
    o.status.code().unwrap()
}

pub fn openssl(dir: &Path, args: &[&str]) -> Output {
    let o = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

pub fn data(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// Only these names in `dir`: no temporary files, no partial outputs.
pub fn assert_only(dir: &Path, names: &[&str]) {
    let mut got: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    got.sort();
    let mut want: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(got, want);
}

/// Two key pairs (a, b) and a password file, for seal/open.
pub fn seal_files(d: &Path) {
    ok(d, &["sm2", "keygen", "-o", "a.pem", "--pubout", "a.pub"]);
    ok(d, &["sm2", "keygen", "-o", "b.pem", "--pubout", "b.pub"]);
    fs::write(d.join("pw"), "correct horse\n").unwrap();
}
