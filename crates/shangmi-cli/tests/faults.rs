//! The CLI under faults, as a hostile or unlucky user meets them: interrupts and kills at
//! awkward moments, full and closed streams, endless inputs, long names, wrong passwords,
//! and decryption whose final check fails after most of the output is known.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{assert_only, code, data, ok, run, seal_files};

const KEY: &str = "0123456789abcdeffedcba9876543210";
const IV: &str = "000102030405060708090a0b0c0d0e0f";
const NONCE: &str = "000000000000000000000001";

fn shangmi(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_shangmi"));
    c.args(args).current_dir(dir);
    c
}

/// Runs `shangmi args` through `sh -c` with a shell redirection (to close a descriptor).
fn sh(dir: &Path, args: &[&str], redirect: &str) -> std::process::Output {
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    Command::new("sh")
        .arg("-c")
        .arg(format!(
            "exec '{}' {} {redirect}",
            env!("CARGO_BIN_EXE_shangmi"),
            quoted.join(" ")
        ))
        .current_dir(dir)
        .output()
        .unwrap()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn one_clean_line(o: &std::process::Output) -> String {
    let err = stderr(o);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("shangmi: "), "{err}");
    err
}

/// Everything an interrupted pipeline's consumer sees at once: the input ends, and SIGINT
/// arrives. The debug build's test hook raises the signal exactly at end-of-file; the command
/// must exit 130 without committing, every time.
#[test]
fn an_interrupt_at_end_of_input_never_commits() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    seal_files(d);
    let jobs: [&[&str]; 5] = [
        &["seal", "--recipient", "a.pub", "-o", "out"],
        &[
            "sm4", "enc", "--mode", "gcm", "--key", KEY, "--iv", NONCE, "-o", "out",
        ],
        &[
            "sm4", "enc", "--mode", "ctr", "--key", KEY, "--iv", IV, "-o", "out",
        ],
        &[
            "sm4", "enc", "--mode", "ccm", "--key", KEY, "--iv", NONCE, "-o", "out",
        ],
        &[
            "sm2", "encrypt", "--pub", "a.pub", "--format", "c1c3c2", "-o", "out",
        ],
    ];
    for args in jobs {
        for _ in 0..5 {
            let mut child = shangmi(d, args)
                .env("SHANGMI_TEST_SIGNAL_AT_EOF", "1")
                .stdin(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(&data(300_000, 1))
                .unwrap();
            let o = child.wait_with_output().unwrap();
            assert_eq!(o.status.code(), Some(130), "{args:?}: {}", stderr(&o));
            assert!(stderr(&o).contains("interrupted"), "{args:?}");
            assert_only(d, &["a.pem", "a.pub", "b.pem", "b.pub", "pw"]);
        }
    }
}

/// Starts `args` reading from a pipe the test holds open, waits until it has consumed some
/// input, and returns it mid-stream.
fn mid_stream(d: &Path, args: &[&str], feed: &[u8]) -> (Child, std::process::ChildStdin) {
    let mut child = shangmi(d, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(feed).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    (child, input)
}

fn signal(child: &Child, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

#[test]
fn kills_and_quits_mid_stream_leave_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    seal_files(d);
    let plain = data(2_000_000, 2);
    fs::write(d.join("m"), &plain).unwrap();
    ok(
        d,
        &[
            "sm4", "enc", "--mode", "gcm", "--key", KEY, "--iv", NONCE, "-i", "m", "-o", "m.gcm",
        ],
    );
    ok(
        d,
        &[
            "sm2", "encrypt", "--pub", "a.pub", "--format", "c1c3c2", "-i", "m", "-o", "m.sm2",
        ],
    );
    let gcm = fs::read(d.join("m.gcm")).unwrap();
    let sm2 = fs::read(d.join("m.sm2")).unwrap();
    let before = [
        "a.pem", "a.pub", "b.pem", "b.pub", "pw", "m", "m.gcm", "m.sm2",
    ];
    let decryptions: [(&[&str], &[u8]); 2] = [
        (
            &[
                "sm4", "dec", "--mode", "gcm", "--key", KEY, "--iv", NONCE, "-o", "out",
            ],
            &gcm[..1_000_000],
        ),
        (
            &[
                "sm2", "decrypt", "--key", "a.pem", "--format", "c1c3c2", "-o", "out",
            ],
            &sm2[..1_000_000],
        ),
    ];
    for (args, feed) in decryptions {
        // SIGKILL cannot be caught: the unnamed output file simply vanishes with the process.
        let (mut child, input) = mid_stream(d, args, feed);
        signal(&child, "-KILL");
        child.wait().unwrap();
        drop(input);
        assert_only(d, &before);
        // SIGQUIT is handled like SIGINT: exit 128 + 3, nothing committed.
        let (child, input) = mid_stream(d, args, feed);
        signal(&child, "-QUIT");
        let o = child.wait_with_output().unwrap();
        drop(input);
        assert_eq!(o.status.code(), Some(131), "{}", stderr(&o));
        assert_only(d, &before);
    }
    // And SIGINT while the input is still open.
    let (child, input) = mid_stream(d, &["seal", "--recipient", "a.pub", "-o", "out.sm"], &plain);
    signal(&child, "-INT");
    let o = child.wait_with_output().unwrap();
    drop(input);
    assert_eq!(o.status.code(), Some(130));
    assert_only(d, &before);
}

/// A 1 MiB CBC file with its last block corrupted: nothing may reach stdout (a pipe), as
/// with GCM, and the exit status is 1.
#[test]
fn block_mode_decryption_releases_nothing_before_the_padding_check() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("m"), data(1 << 20, 3)).unwrap();
    for mode in ["cbc", "ecb"] {
        let mut enc = vec![
            "sm4", "enc", "--mode", mode, "--key", KEY, "-i", "m", "-o", "c",
        ];
        if mode == "cbc" {
            enc.extend(["--iv", IV]);
        }
        ok(d, &enc);
        let mut c = fs::read(d.join("c")).unwrap();
        let n = c.len();
        c[n - 1] ^= 0x55;
        fs::write(d.join("bad"), &c).unwrap();
        for from_stdin in [false, true] {
            let mut args = vec!["sm4", "dec", "--mode", mode, "--key", KEY];
            if mode == "cbc" {
                args.extend(["--iv", IV]);
            }
            if !from_stdin {
                args.extend(["-i", "bad"]);
            }
            let o = run(d, &args, from_stdin.then_some(&c[..]));
            assert_eq!(code(&o), 1, "{mode}: {}", stderr(&o));
            assert!(
                o.stdout.is_empty(),
                "{mode}: {} bytes released",
                o.stdout.len()
            );
            one_clean_line(&o);
        }
        // --nopad with a length that is not whole blocks: also nothing.
        let o = run(
            d,
            &["sm4", "dec", "--mode", "ecb", "--nopad", "--key", KEY],
            Some(&c[..n - 3]),
        );
        assert_eq!(code(&o), 2);
        assert!(o.stdout.is_empty());
        // The good file still decrypts to stdout and to a file.
        let mut args = vec!["sm4", "dec", "--mode", mode, "--key", KEY, "-i", "c"];
        if mode == "cbc" {
            args.extend(["--iv", IV]);
        }
        assert_eq!(ok(d, &args), data(1 << 20, 3));
    }
}

/// The open files of `pid` that live in `dir`, read through /proc (unnamed files included).
fn open_files_in(pid: u32, dir: &Path) -> Vec<Vec<u8>> {
    let mut found = Vec::new();
    let dir = fs::canonicalize(dir).unwrap();
    for fd in fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
    {
        if let Ok(target) = fs::read_link(fd.path())
            && target.starts_with(&dir)
            && let Ok(bytes) = fs::read(fd.path())
        {
            found.push(bytes);
        }
    }
    found
}

/// Decrypting to stdout holds a private copy of the ciphertext, never the plaintext: caught
/// while the output pipe is full, the command's temporary files hold ciphertext only.
#[test]
fn decrypting_to_stdout_never_puts_plaintext_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tmp = tempfile::tempdir().unwrap();
    seal_files(d);
    let plain = data(20 << 20, 4);
    fs::write(d.join("m"), &plain).unwrap();
    ok(
        d,
        &[
            "sm4", "enc", "--mode", "gcm", "--key", KEY, "--iv", NONCE, "-i", "m", "-o", "m.gcm",
        ],
    );
    ok(
        d,
        &["seal", "--recipient", "a.pub", "-i", "m", "-o", "m.sm"],
    );
    let jobs: [&[&str]; 2] = [
        &[
            "sm4", "dec", "--mode", "gcm", "--key", KEY, "--iv", NONCE, "-i", "m.gcm",
        ],
        &["open", "--key", "a.pem", "-i", "m.sm"],
    ];
    for args in jobs {
        let child = shangmi(d, args)
            .env("TMPDIR", tmp.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Nothing is read from stdout yet: the command blocks writing its second pass.
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut seen = Vec::new();
        while seen.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
            seen = open_files_in(child.id(), tmp.path());
        }
        assert!(!seen.is_empty(), "{args:?}: no private copy found");
        for f in &seen {
            assert!(
                !f.windows(64).any(|w| w == &plain[4096..4160]),
                "{args:?}: plaintext in a temporary file"
            );
        }
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(out.stdout == plain, "{args:?}");
    }
}

/// Commands that can write where they are going need no temporary file at all: with TMPDIR
/// pointing nowhere they still work.
#[test]
fn no_spooling_where_the_output_can_take_the_data_directly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    seal_files(d);
    fs::write(d.join("m"), data(3 << 20, 5)).unwrap();
    let nowhere = [("TMPDIR", "/nonexistent/shangmi-test")];
    let run_env = |args: &[&str]| {
        let o = shangmi(d, args).envs(nowhere).output().unwrap();
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        o.stdout
    };
    run_env(&[
        "sm2", "encrypt", "--pub", "a.pub", "--format", "c1c3c2", "-i", "m", "-o", "c",
    ]);
    run_env(&[
        "sm2", "decrypt", "--key", "a.pem", "--format", "c1c3c2", "-i", "c", "-o", "back",
    ]);
    assert_eq!(fs::read(d.join("back")).unwrap(), data(3 << 20, 5));
    // Small enough to hold in memory: decrypting to stdout needs no temporary file either.
    assert_eq!(
        run_env(&[
            "sm2", "decrypt", "--key", "a.pem", "--format", "c1c3c2", "-i", "c"
        ]),
        data(3 << 20, 5)
    );
}

/// Key pairs, a message `m` and its signature `m.sig` by `a.pem`.
fn signed_message() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    seal_files(d);
    fs::write(d.join("m"), b"message").unwrap();
    ok(
        d,
        &["sm2", "sign", "--key", "a.pem", "-i", "m", "-o", "m.sig"],
    );
    dir
}

#[test]
fn full_closed_and_broken_streams_are_errors_not_panics() {
    let dir = signed_message();
    let d = dir.path();
    let verify = [
        "sm2", "verify", "--pub", "a.pub", "--sig", "m.sig", "-i", "m",
    ];
    // A full disk behind stdout.
    for args in [
        &verify[..],
        &["speed", "sm3", "--seconds", "0.01"],
        &["--help"],
        &["--version"],
        &["sm4", "--help"],
        &["kdf", "--z", "00", "--len", "4"],
    ] {
        let o = sh(d, args, ">/dev/full");
        assert_eq!(code(&o), 2, "{args:?}");
        assert!(one_clean_line(&o).contains("No space left"), "{args:?}");
    }
    // A closed stdout: an error, not silence.
    for args in [
        &verify[..],
        &["sm3", "m"],
        &["hmac", "--key", "00", "m"],
        &["sm2", "pubkey", "-i", "a.pem"],
    ] {
        let o = sh(d, args, ">&-");
        assert_eq!(code(&o), 2, "{args:?}");
        assert!(
            one_clean_line(&o).contains("Bad file descriptor"),
            "{args:?}"
        );
    }
    // A closed stdin: not an empty input sealed with success.
    let o = sh(d, &["seal", "--recipient", "a.pub", "-o", "out"], "<&-");
    assert_eq!(code(&o), 2);
    assert!(one_clean_line(&o).contains("stdin"));
    assert!(!d.join("out").exists());
    // A closed pipe: the reader went away.
    let o = sh(d, &["speed", "sm3", "--seconds", "0.01"], "| true");
    assert!(!stderr(&o).contains("panicked"));
    // Speed with every algorithm, as documented, and XTS alone.
    let o = run(d, &["speed", "--seconds", "0.002"], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = run(d, &["speed", "sm4-xts", "--seconds", "0.01"], None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

#[test]
fn endless_inputs_are_refused_within_bounds() {
    let dir = signed_message();
    let d = dir.path();
    ok(
        d,
        &[
            "sm2",
            "keygen",
            "--password-file",
            "pw",
            "--iterations",
            "1000",
            "-o",
            "e.pem",
        ],
    );
    // Under a 512 MiB address-space limit: reading /dev/zero whole would abort.
    for args in [
        &["sm3", "--check", "/dev/zero"][..],
        &["sm2", "sign", "--key", "/dev/zero", "-i", "m"],
        &[
            "sm2",
            "verify",
            "--pub",
            "a.pub",
            "--sig",
            "/dev/zero",
            "-i",
            "m",
        ],
        &[
            "sm2",
            "sign",
            "--key",
            "e.pem",
            "--password-file",
            "/dev/zero",
            "-i",
            "m",
        ],
        &[
            "sm4",
            "enc",
            "--mode",
            "ctr",
            "--key-file",
            "/dev/zero",
            "--iv",
            IV,
            "-i",
            "m",
        ],
        &["open", "--password-file", "/dev/zero", "-i", "m"],
    ] {
        let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
        let o = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "ulimit -v 524288; exec '{}' {}",
                env!("CARGO_BIN_EXE_shangmi"),
                quoted.join(" ")
            ))
            .current_dir(d)
            .output()
            .unwrap();
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        one_clean_line(&o);
    }
}

#[test]
fn keygen_never_leaves_half_a_key_pair_or_a_locked_key() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("pw"), "pw\n").unwrap();
    // More iterations than any reader accepts: refused before anything is written.
    let o = run(
        d,
        &[
            "sm2",
            "keygen",
            "--password-file",
            "pw",
            "--iterations",
            "10000001",
            "-o",
            "k.pem",
            "--pubout",
            "k.pub",
        ],
        None,
    );
    assert_eq!(code(&o), 2);
    one_clean_line(&o);
    assert_only(d, &["pw"]);
    // The private key's output fails: the public key does not stay behind.
    let o = run(
        d,
        &["sm2", "keygen", "-o", "/dev/full", "--pubout", "k.pub"],
        None,
    );
    assert_eq!(code(&o), 2);
    assert_only(d, &["pw"]);
    let o = sh(d, &["sm2", "keygen", "--pubout", "k.pub"], ">/dev/full");
    assert_eq!(code(&o), 2);
    assert_only(d, &["pw"]);
}

#[test]
fn output_names_up_to_255_bytes_work() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("m"), data(1000, 6)).unwrap();
    for len in [231usize, 240, 255] {
        let name = "x".repeat(len);
        ok(
            d,
            &[
                "sm4", "enc", "--mode", "ctr", "--key", KEY, "--iv", IV, "-i", "m", "-o", &name,
            ],
        );
        assert!(d.join(&name).exists());
        fs::remove_file(d.join(&name)).unwrap();
    }
}

#[test]
fn usage_errors_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for args in [
        &[][..],
        &["frobnicate"],
        &["sm4"],
        &["sm4", "enc"],
        &["sm4", "enc", "--mode", "rot13", "--key", KEY],
        &["sm4", "enc", "--mode", "cbc"],
        &[
            "sm4",
            "enc",
            "--mode",
            "cbc",
            "--key",
            KEY,
            "--key-file",
            "k",
        ],
        &["sm2", "sign", "--frob"],
        &["seal"],
    ] {
        let o = run(d, args, None);
        assert_eq!(code(&o), 2, "{args:?}");
        let line = one_clean_line(&o);
        assert!(line.contains("--help"), "{args:?}: {line}");
    }
}

#[test]
fn errors_name_the_side_that_failed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    seal_files(d);
    fs::write(d.join("m"), data(300_000, 7)).unwrap();
    ok(
        d,
        &["seal", "--recipient", "a.pub", "-i", "m", "-o", "m.sm"],
    );
    ok(
        d,
        &[
            "sm2", "encrypt", "--pub", "a.pub", "--format", "c1c3c2", "-i", "m", "-o", "m.sm2",
        ],
    );
    for args in [
        &["open", "--key", "a.pem", "-i", "m.sm", "-o", "/dev/full"][..],
        &[
            "sm2",
            "decrypt",
            "--key",
            "a.pem",
            "--format",
            "c1c3c2",
            "-i",
            "m.sm2",
            "-o",
            "/dev/full",
        ],
        &[
            "sm4",
            "dec",
            "--mode",
            "ctr",
            "--key",
            KEY,
            "--iv",
            IV,
            "-i",
            "m",
            "-o",
            "/dev/full",
        ],
    ] {
        let o = run(d, args, None);
        assert_eq!(code(&o), 2, "{args:?}");
        let line = one_clean_line(&o);
        assert!(
            line.contains("/dev/full") && line.contains("No space left"),
            "{line}"
        );
        assert!(!line.contains("m.s"), "blames the input: {line}");
    }
}

#[test]
fn keys_and_secrets_from_files_and_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("m"), data(5000, 8)).unwrap();
    fs::write(d.join("key.hex"), format!("{KEY}\n")).unwrap();
    fs::write(d.join("key.bin"), hex::decode(KEY).unwrap()).unwrap();
    let want = ok(
        d,
        &[
            "sm4", "enc", "--mode", "ctr", "--key", KEY, "--iv", IV, "-i", "m",
        ],
    );
    for file in ["key.hex", "key.bin"] {
        let got = ok(
            d,
            &[
                "sm4",
                "enc",
                "--mode",
                "ctr",
                "--key-file",
                file,
                "--iv",
                IV,
                "-i",
                "m",
            ],
        );
        assert_eq!(got, want, "{file}");
    }
    let o = run(
        d,
        &[
            "sm4",
            "enc",
            "--mode",
            "ctr",
            "--key-file",
            "-",
            "--iv",
            IV,
            "-i",
            "m",
        ],
        Some(KEY.as_bytes()),
    );
    assert_eq!(o.stdout, want);
    // Stdin cannot be both the key and the input.
    let o = run(
        d,
        &["sm4", "enc", "--mode", "ctr", "--key-file", "-", "--iv", IV],
        Some(b"x"),
    );
    assert_eq!(code(&o), 2);
    one_clean_line(&o);
    // A file that is neither hex nor the key's length.
    fs::write(d.join("bad"), b"not a key at all!").unwrap();
    let o = run(
        d,
        &[
            "sm4",
            "enc",
            "--mode",
            "ctr",
            "--key-file",
            "bad",
            "--iv",
            IV,
            "-i",
            "m",
        ],
        None,
    );
    assert_eq!(code(&o), 2);
    // HMAC and the KDF too.
    assert_eq!(
        ok(d, &["hmac", "--key-file", "key.hex", "m"]),
        ok(d, &["hmac", "--key", KEY, "m"])
    );
    fs::write(d.join("z"), "00112233").unwrap();
    assert_eq!(
        ok(d, &["kdf", "--z-file", "z", "--len", "20"]),
        ok(d, &["kdf", "--z", "00112233", "--len", "20"])
    );
}
