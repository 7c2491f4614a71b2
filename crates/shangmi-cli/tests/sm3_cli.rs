//! `shangmi sm3` as a user runs it: output format, --check, exit codes, interop with
//! `openssl dgst -sm3`.

use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn shangmi(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shangmi"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn openssl_sm3(path: &Path) -> Option<String> {
    let out = Command::new("openssl")
        .args(["dgst", "-sm3", "-r"])
        .arg(path)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    text.split_whitespace().next().map(str::to_string)
}

#[test]
fn sums_match_openssl_and_the_sha256sum_format() {
    let dir = tempfile::tempdir().unwrap();
    let sizes = [0usize, 1, 55, 56, 64, 1000, 300_000];
    let mut names = Vec::new();
    for (i, n) in sizes.iter().enumerate() {
        let name = format!("f{i}");
        let data: Vec<u8> = (0..*n).map(|j| (j * 7 + i) as u8).collect();
        fs::write(dir.path().join(&name), data).unwrap();
        names.push(name);
    }
    let args: Vec<&str> = std::iter::once("sm3")
        .chain(names.iter().map(String::as_str))
        .collect();
    let out = shangmi(&args, dir.path());
    assert!(out.status.success());
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), names.len());
    for (line, name) in lines.iter().zip(&names) {
        let (hex, rest) = line.split_at(64);
        assert_eq!(rest, format!("  {name}"));
        if let Some(want) = openssl_sm3(&dir.path().join(name)) {
            assert_eq!(hex, want, "{name}");
        }
    }
}

#[test]
fn stdin_and_dash() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_shangmi"))
        .args(["sm3", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(b"abc").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        stdout(&out),
        "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0  -\n"
    );
    drop(dir);
}

#[test]
fn check_mode_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    fs::write(p.join("a"), b"abc").unwrap();
    fs::write(p.join("b"), b"").unwrap();
    let sums = shangmi(&["sm3", "a", "b"], p);
    fs::write(p.join("SUMS"), &sums.stdout).unwrap();

    let ok = shangmi(&["sm3", "--check", "SUMS"], p);
    assert_eq!(ok.status.code(), Some(0));
    assert_eq!(stdout(&ok), "a: OK\nb: OK\n");

    fs::write(p.join("a"), b"abd").unwrap();
    let bad = shangmi(&["sm3", "-c", "SUMS"], p);
    assert_eq!(bad.status.code(), Some(1));
    assert_eq!(stdout(&bad), "a: FAILED\nb: OK\n");
    assert!(String::from_utf8_lossy(&bad.stderr).contains("1 computed checksum did NOT match"));

    let quiet = shangmi(&["sm3", "-c", "--quiet", "SUMS"], p);
    assert_eq!(
        (quiet.status.code(), stdout(&quiet)),
        (Some(1), "a: FAILED\n".into())
    );
    let status = shangmi(&["sm3", "-c", "--status", "SUMS"], p);
    assert_eq!((status.status.code(), status.stdout.len()), (Some(1), 0));

    fs::remove_file(p.join("b")).unwrap();
    fs::write(p.join("a"), b"abc").unwrap();
    let missing = shangmi(&["sm3", "-c", "SUMS"], p);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stdout(&missing).contains("b: FAILED open or read"));
    let ignored = shangmi(&["sm3", "-c", "--ignore-missing", "SUMS"], p);
    assert_eq!(
        (ignored.status.code(), stdout(&ignored)),
        (Some(0), "a: OK\n".into())
    );

    fs::write(p.join("JUNK"), b"not a checksum line\n").unwrap();
    let junk = shangmi(&["sm3", "-c", "JUNK"], p);
    assert_eq!(junk.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&junk.stderr).contains("no properly formatted"));
}

#[test]
fn errors_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = shangmi(&["sm3", "does-not-exist"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.trim_end(),
        "shangmi: does-not-exist: No such file or directory"
    );

    let usage = shangmi(&["sm3", "--no-such-flag"], dir.path());
    assert_eq!(usage.status.code(), Some(2));

    if Path::new("/dev/full").exists() {
        fs::write(dir.path().join("x"), b"x").unwrap();
        let full = Command::new(env!("CARGO_BIN_EXE_shangmi"))
            .args(["sm3", "x"])
            .current_dir(dir.path())
            .stdout(fs::File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        assert_eq!(full.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&full.stderr).contains("No space left on device"));
    }
}

#[test]
fn names_needing_escapes_round_trip_through_check() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let name = "back\\slash\nnewline";
    fs::write(p.join(name), b"data").unwrap();
    let sums = shangmi(&["sm3", name], p);
    let text = stdout(&sums);
    assert!(
        text.starts_with('\\') && text.contains("back\\\\slash\\nnewline"),
        "{text}"
    );
    fs::write(p.join("SUMS"), &sums.stdout).unwrap();
    let check = shangmi(&["sm3", "-c", "SUMS"], p);
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
}

#[test]
fn check_reads_what_openssl_dgst_and_bsd_tools_write() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    fs::write(p.join("a.txt"), b"hi\n").unwrap();
    fs::write(p.join("b c"), b"abc").unwrap();
    let sum = |name: &str| {
        let out = shangmi(&["sm3", name], p);
        stdout(&out)[..64].to_string()
    };
    let (a, b) = (sum("a.txt"), sum("b c"));
    // `openssl dgst -sm3` and the BSD tag form (`sha256sum --tag`), by hand, and the real
    // `openssl dgst` output where the command is installed.
    let mut lists = vec![
        format!("SM3(a.txt)= {a}\nSM3(b c)= {b}\n"),
        format!("SM3 (a.txt) = {a}\nSM3 (b c) = {b}\n"),
    ];
    if let Ok(out) = Command::new("openssl")
        .args(["dgst", "-sm3", "a.txt", "b c"])
        .current_dir(p)
        .output()
        && out.status.success()
    {
        lists.push(String::from_utf8(out.stdout).unwrap());
    }
    for list in &lists {
        fs::write(p.join("SUMS"), list).unwrap();
        let out = shangmi(&["sm3", "--check", "--strict", "SUMS"], p);
        assert!(out.status.success(), "{list}: {out:?}");
        assert_eq!(stdout(&out), "a.txt: OK\nb c: OK\n");
    }
    fs::write(p.join("a.txt"), b"hi!\n").unwrap();
    for list in &lists {
        fs::write(p.join("SUMS"), list).unwrap();
        let out = shangmi(&["sm3", "--check", "SUMS"], p);
        assert_eq!(out.status.code(), Some(1), "{list}");
        assert!(stdout(&out).contains("a.txt: FAILED"));
    }
}
