//! The `shangmi` binary as a user runs it: interop with the `openssl` command for SM4, HMAC and
//! SM2 (keys made by either tool), seal/open on damaged files, exit codes and what is (not)
//! left on disk.

use std::fs;
use std::process::Command;

mod common;
use common::{assert_only, code, data, ok, openssl, run, seal_files};

const KEY: &str = "0123456789abcdeffedcba9876543210";
const IV: &str = "000102030405060708090a0b0c0d0e0f";

#[test]
fn sm4_modes_match_openssl_enc_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for n in [0usize, 1, 15, 16, 17, 65535, 65536, 65537, 200_000] {
        fs::write(d.join("m"), data(n, 1)).unwrap();
        for mode in ["ecb", "cbc", "cfb", "ofb", "ctr"] {
            for nopad in [false, true] {
                if nopad && (!matches!(mode, "ecb" | "cbc") || n % 16 != 0) {
                    continue;
                }
                let mut o_args = vec![
                    "enc".to_string(),
                    format!("-sm4-{mode}"),
                    "-K".into(),
                    KEY.into(),
                ];
                let mut s_args = vec!["sm4", "enc", "--mode", mode, "--key", KEY];
                if mode != "ecb" {
                    o_args.extend(["-iv".into(), IV.into()]);
                    s_args.extend(["--iv", IV]);
                }
                if nopad {
                    o_args.push("-nopad".into());
                    s_args.push("--nopad");
                }
                o_args.extend(["-in".into(), "m".into(), "-out".into(), "o".into()]);
                let o_args: Vec<&str> = o_args.iter().map(String::as_str).collect();
                openssl(d, &o_args);
                let mut enc = s_args.clone();
                enc.extend(["-i", "m", "-o", "s"]);
                ok(d, &enc);
                assert_eq!(
                    fs::read(d.join("o")).unwrap(),
                    fs::read(d.join("s")).unwrap(),
                    "{mode} {n} {nopad}"
                );
                // shangmi decrypts OpenSSL's output; OpenSSL decrypts ours.
                let mut dec = s_args.clone();
                dec[1] = "dec";
                dec.extend(["-i", "o"]);
                assert_eq!(ok(d, &dec), fs::read(d.join("m")).unwrap());
                let mut o_dec: Vec<&str> = o_args.clone();
                o_dec.insert(2, "-d");
                let o_dec: Vec<&str> = o_dec
                    .iter()
                    .map(|a| match *a {
                        "m" => "s",
                        "o" => "back",
                        x => x,
                    })
                    .collect();
                openssl(d, &o_dec);
                assert_eq!(
                    fs::read(d.join("back")).unwrap(),
                    fs::read(d.join("m")).unwrap()
                );
            }
        }
    }
}

#[test]
fn sm4_aead_releases_nothing_unauthenticated() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("m"), data(100_000, 2)).unwrap();
    for (mode, iv) in [
        ("gcm", "000000000000000000000001"),
        ("ccm", "00112233445566"),
    ] {
        ok(
            d,
            &[
                "sm4", "enc", "--mode", mode, "--key", KEY, "--iv", iv, "--aad", "0102", "-i", "m",
                "-o", "c",
            ],
        );
        ok(
            d,
            &[
                "sm4", "dec", "--mode", mode, "--key", KEY, "--iv", iv, "--aad", "0102", "-i", "c",
                "-o", "p",
            ],
        );
        assert_eq!(
            fs::read(d.join("p")).unwrap(),
            fs::read(d.join("m")).unwrap()
        );
        let mut bad = fs::read(d.join("c")).unwrap();
        bad[777] ^= 1;
        fs::write(d.join("bad"), &bad).unwrap();
        fs::remove_file(d.join("p")).unwrap();
        let o = run(
            d,
            &[
                "sm4", "dec", "--mode", mode, "--key", KEY, "--iv", iv, "--aad", "0102", "-i",
                "bad", "-o", "p",
            ],
            None,
        );
        assert_eq!(code(&o), 1, "{mode}");
        assert_only(d, &["m", "c", "bad"]);
        // To stdout: nothing printed either.
        let o = run(
            d,
            &[
                "sm4", "dec", "--mode", mode, "--key", KEY, "--iv", iv, "--aad", "0102", "-i",
                "bad",
            ],
            None,
        );
        assert_eq!(code(&o), 1);
        assert!(o.stdout.is_empty());
        // The wrong AAD.
        let o = run(
            d,
            &[
                "sm4", "dec", "--mode", mode, "--key", KEY, "--iv", iv, "-i", "c",
            ],
            None,
        );
        assert_eq!(code(&o), 1);
        fs::remove_file(d.join("c")).unwrap();
        fs::remove_file(d.join("bad")).unwrap();
    }
}

#[test]
fn hmac_and_kdf() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("m"), data(5000, 3)).unwrap();
    let ours = String::from_utf8(ok(d, &["hmac", "--key", "6b6579", "m"])).unwrap();
    let theirs = openssl(
        d,
        &[
            "dgst",
            "-sm3",
            "-mac",
            "HMAC",
            "-macopt",
            "hexkey:6b6579",
            "-r",
            "m",
        ],
    );
    let theirs = String::from_utf8(theirs.stdout).unwrap();
    assert_eq!(
        ours.split_whitespace().next(),
        theirs.split_whitespace().next()
    );
    assert!(ours.ends_with("  m\n"));
    let o = run(d, &["hmac", "--key", "6b6579"], Some(b"abc"));
    assert!(String::from_utf8(o.stdout).unwrap().ends_with("  -\n"));
    // The KDF: 48 bytes are 96 hex digits, and agree with the library.
    let out = String::from_utf8(ok(d, &["kdf", "--z", "00112233", "--len", "48"])).unwrap();
    let want: String = shangmi::sm3::kdf(&[0, 0x11, 0x22, 0x33], 48)
        .unwrap()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(out.trim(), want);
    assert_eq!(code(&run(d, &["kdf", "--z", "0g", "--len", "4"], None)), 2);
}

#[test]
fn sm2_keys_signatures_and_encryption_interoperate_with_openssl() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("m"), data(10_000, 4)).unwrap();
    // Keys from both tools.
    ok(
        d,
        &["sm2", "keygen", "-o", "ours.pem", "--pubout", "ours.pub"],
    );
    openssl(d, &["genpkey", "-algorithm", "SM2", "-out", "theirs.pem"]);
    openssl(
        d,
        &["pkey", "-in", "theirs.pem", "-pubout", "-out", "theirs.pub"],
    );
    openssl(d, &["pkey", "-in", "ours.pem", "-noout"]);
    ok(
        d,
        &["sm2", "pubkey", "-i", "theirs.pem", "-o", "theirs2.pub"],
    );
    assert_eq!(
        fs::read(d.join("theirs.pub")).unwrap(),
        fs::read(d.join("theirs2.pub")).unwrap()
    );
    for (key, pubkey) in [("ours.pem", "ours.pub"), ("theirs.pem", "theirs.pub")] {
        // shangmi signs, OpenSSL verifies (with the default ID set as distid), and back.
        ok(d, &["sm2", "sign", "--key", key, "-i", "m", "-o", "s.sig"]);
        openssl(
            d,
            &[
                "pkeyutl",
                "-verify",
                "-pubin",
                "-inkey",
                pubkey,
                "-rawin",
                "-digest",
                "sm3",
                "-pkeyopt",
                "distid:1234567812345678",
                "-in",
                "m",
                "-sigfile",
                "s.sig",
            ],
        );
        openssl(
            d,
            &[
                "pkeyutl",
                "-sign",
                "-inkey",
                key,
                "-rawin",
                "-digest",
                "sm3",
                "-pkeyopt",
                "distid:1234567812345678",
                "-in",
                "m",
                "-out",
                "o.sig",
            ],
        );
        let o = run(
            d,
            &[
                "sm2", "verify", "--pub", pubkey, "--sig", "o.sig", "-i", "m",
            ],
            None,
        );
        assert_eq!((code(&o), o.stdout.as_slice()), (0, &b"Verified OK\n"[..]));
        // Another ID, on both sides.
        ok(
            d,
            &[
                "sm2",
                "sign",
                "--key",
                key,
                "--id",
                "alice@example.com",
                "-i",
                "m",
                "-o",
                "id.sig",
            ],
        );
        openssl(
            d,
            &[
                "pkeyutl",
                "-verify",
                "-pubin",
                "-inkey",
                pubkey,
                "-rawin",
                "-digest",
                "sm3",
                "-pkeyopt",
                "distid:alice@example.com",
                "-in",
                "m",
                "-sigfile",
                "id.sig",
            ],
        );
        let o = run(
            d,
            &[
                "sm2", "verify", "--pub", pubkey, "--sig", "id.sig", "-i", "m",
            ],
            None,
        );
        assert_eq!(
            (code(&o), o.stdout.as_slice()),
            (1, &b"Verification failure\n"[..])
        );
        // Raw r || s.
        ok(
            d,
            &[
                "sm2", "sign", "--key", key, "--raw", "-i", "m", "-o", "raw.sig",
            ],
        );
        assert_eq!(fs::read(d.join("raw.sig")).unwrap().len(), 64);
        ok(
            d,
            &[
                "sm2", "verify", "--pub", pubkey, "--raw", "--sig", "raw.sig", "-i", "m",
            ],
        );
        // A changed message fails with exit 1.
        let o = run(
            d,
            &["sm2", "verify", "--pub", pubkey, "--sig", "s.sig"],
            Some(b"other"),
        );
        assert_eq!(code(&o), 1);
        // Encryption: OpenSSL's DER both ways.
        fs::write(d.join("short"), data(300, 5)).unwrap();
        ok(
            d,
            &[
                "sm2", "encrypt", "--pub", pubkey, "-i", "short", "-o", "c.der",
            ],
        );
        openssl(
            d,
            &[
                "pkeyutl", "-decrypt", "-inkey", key, "-in", "c.der", "-out", "p",
            ],
        );
        assert_eq!(
            fs::read(d.join("p")).unwrap(),
            fs::read(d.join("short")).unwrap()
        );
        openssl(
            d,
            &[
                "pkeyutl", "-encrypt", "-pubin", "-inkey", pubkey, "-in", "short", "-out", "oc.der",
            ],
        );
        assert_eq!(
            ok(d, &["sm2", "decrypt", "--key", key, "-i", "oc.der"]),
            fs::read(d.join("short")).unwrap()
        );
        for f in ["c1c3c2", "c1c2c3"] {
            ok(
                d,
                &[
                    "sm2", "encrypt", "--pub", pubkey, "--format", f, "-i", "m", "-o", "c.raw",
                ],
            );
            assert_eq!(
                ok(
                    d,
                    &["sm2", "decrypt", "--key", key, "--format", f, "-i", "c.raw"]
                ),
                fs::read(d.join("m")).unwrap()
            );
        }
    }
    // Decrypting with the wrong key or layout: exit 1, nothing written.
    ok(
        d,
        &[
            "sm2", "encrypt", "--pub", "ours.pub", "-i", "m", "-o", "x.der",
        ],
    );
    for args in [
        vec![
            "sm2",
            "decrypt",
            "--key",
            "theirs.pem",
            "-i",
            "x.der",
            "-o",
            "x.out",
        ],
        vec![
            "sm2", "decrypt", "--key", "ours.pem", "--format", "c1c3c2", "-i", "x.der", "-o",
            "x.out",
        ],
    ] {
        let o = run(d, &args, None);
        assert_eq!(code(&o), 1, "{}", String::from_utf8_lossy(&o.stderr));
        assert!(!d.join("x.out").exists());
    }
}

#[test]
fn encrypted_private_keys() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("pw"), "hunter2\n").unwrap();
    fs::write(d.join("bad"), "hunter3\n").unwrap();
    fs::write(d.join("m"), b"message").unwrap();
    ok(
        d,
        &[
            "sm2",
            "keygen",
            "-o",
            "k.pem",
            "--password-file",
            "pw",
            "--iterations",
            "1000",
        ],
    );
    assert!(
        fs::read_to_string(d.join("k.pem"))
            .unwrap()
            .starts_with("-----BEGIN ENCRYPTED PRIVATE KEY-----")
    );
    ok(
        d,
        &[
            "sm2",
            "pubkey",
            "-i",
            "k.pem",
            "--password-file",
            "pw",
            "-o",
            "k.pub",
        ],
    );
    ok(
        d,
        &[
            "sm2",
            "sign",
            "--key",
            "k.pem",
            "--password-file",
            "pw",
            "-i",
            "m",
            "-o",
            "s",
        ],
    );
    ok(
        d,
        &["sm2", "verify", "--pub", "k.pub", "--sig", "s", "-i", "m"],
    );
    let o = run(
        d,
        &[
            "sm2",
            "sign",
            "--key",
            "k.pem",
            "--password-file",
            "bad",
            "-i",
            "m",
        ],
        None,
    );
    // A wrong password is a failed authentication, as for `open`: exit 1.
    assert_eq!(code(&o), 1);
    assert!(String::from_utf8_lossy(&o.stderr).contains("wrong password"));
    // Without a terminal or a password file: a clear error, not a hang.
    let o = run(d, &["sm2", "sign", "--key", "k.pem", "-i", "m"], None);
    assert_eq!(code(&o), 2);
    // OpenSSL's encrypted keys load, and OpenSSL loads ours made with --prf sha256.
    openssl(
        d,
        &[
            "genpkey",
            "-algorithm",
            "SM2",
            "-aes-256-cbc",
            "-pass",
            "pass:hunter2",
            "-out",
            "o.pem",
        ],
    );
    ok(
        d,
        &[
            "sm2",
            "sign",
            "--key",
            "o.pem",
            "--password-file",
            "pw",
            "-i",
            "m",
            "-o",
            "s2",
        ],
    );
    ok(
        d,
        &[
            "sm2",
            "keygen",
            "-o",
            "k2.pem",
            "--password-file",
            "pw",
            "--prf",
            "sha256",
            "--iterations",
            "1000",
        ],
    );
    openssl(
        d,
        &["pkey", "-in", "k2.pem", "-passin", "pass:hunter2", "-noout"],
    );
}

#[test]
fn seal_and_open_round_trip_at_chunk_boundaries() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    seal_files(d);
    let chunk = 65536;
    for n in [0, 1, chunk - 1, chunk, chunk + 1, 3 * chunk + 7] {
        fs::write(d.join("m"), data(n, 6)).unwrap();
        ok(
            d,
            &[
                "seal",
                "--recipient",
                "a.pub",
                "--recipient",
                "b.pub",
                "-i",
                "m",
                "-o",
                "m.sm",
            ],
        );
        for k in ["a.pem", "b.pem"] {
            ok(d, &["open", "--key", k, "-i", "m.sm", "-o", "back"]);
            assert_eq!(
                fs::read(d.join("back")).unwrap(),
                fs::read(d.join("m")).unwrap(),
                "{n}"
            );
        }
        ok(
            d,
            &[
                "seal",
                "--password-file",
                "pw",
                "--iterations",
                "1000",
                "-i",
                "m",
                "-o",
                "p.sm",
            ],
        );
        assert_eq!(
            ok(d, &["open", "--password-file", "pw", "-i", "p.sm"]),
            fs::read(d.join("m")).unwrap()
        );
        // stdin to stdout.
        let o = run(d, &["seal", "--recipient", "a.pub"], Some(&data(n, 7)));
        assert!(o.status.success());
        let back = run(d, &["open", "--key", "a.pem"], Some(&o.stdout));
        assert_eq!(back.stdout, data(n, 7));
    }
}

#[test]
fn damaged_sealed_files_fail_with_exit_1_and_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    seal_files(d);
    fs::write(d.join("m"), data(3 * 65536 + 100, 8)).unwrap();
    ok(
        d,
        &["seal", "--recipient", "a.pub", "-i", "m", "-o", "m.sm"],
    );
    let file = fs::read(d.join("m.sm")).unwrap();
    let header = 16 + 2 + 129 + 32;
    let chunk = 65536 + 16;
    let c = |i: usize| file[header + i * chunk..header + (i + 1) * chunk].to_vec();
    let tail = file[header + 3 * chunk..].to_vec();
    let head = file[..header].to_vec();
    let mut cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "truncated at a chunk boundary",
            file[..header + 2 * chunk].to_vec(),
        ),
        (
            "truncated inside a chunk",
            file[..header + chunk + 100].to_vec(),
        ),
        ("last byte missing", file[..file.len() - 1].to_vec()),
        ("appended", [file.clone(), b"x".to_vec()].concat()),
        (
            "reordered",
            [head.clone(), c(1), c(0), c(2), tail.clone()].concat(),
        ),
        (
            "duplicated",
            [head.clone(), c(0), c(0), c(1), c(2), tail.clone()].concat(),
        ),
        ("empty", Vec::new()),
    ];
    for at in [
        3usize,
        8,
        20,
        header - 5,
        header + 5,
        header + chunk + 5,
        file.len() - 3,
    ] {
        let mut bad = file.clone();
        bad[at] ^= 0x40;
        cases.push(("bit flipped", bad));
    }
    for (what, bytes) in cases {
        fs::write(d.join("bad.sm"), &bytes).unwrap();
        let o = run(
            d,
            &["open", "--key", "a.pem", "-i", "bad.sm", "-o", "out"],
            None,
        );
        assert_eq!(
            code(&o),
            1,
            "{what}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_only(
            d,
            &[
                "a.pem", "a.pub", "b.pem", "b.pub", "pw", "m", "m.sm", "bad.sm",
            ],
        );
        let o = run(d, &["open", "--key", "a.pem", "-i", "bad.sm"], None);
        assert!(o.stdout.is_empty(), "{what}: plaintext on stdout");
    }
    // The wrong key and the wrong password.
    let o = run(
        d,
        &["open", "--key", "b.pem", "-i", "m.sm", "-o", "out"],
        None,
    );
    assert_eq!(code(&o), 1);
    ok(
        d,
        &[
            "seal",
            "--password-file",
            "pw",
            "--iterations",
            "1000",
            "-i",
            "m",
            "-o",
            "p.sm",
        ],
    );
    fs::write(d.join("wrong"), "correct horsf\n").unwrap();
    let o = run(
        d,
        &[
            "open",
            "--password-file",
            "wrong",
            "-i",
            "p.sm",
            "-o",
            "out",
        ],
        None,
    );
    assert_eq!(code(&o), 1);
    assert!(String::from_utf8_lossy(&o.stderr).contains("wrong password"));
    assert!(!d.join("out").exists());
}

#[test]
fn full_disks_missing_files_and_usage_errors_exit_2_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    seal_files(d);
    fs::write(d.join("m"), data(100_000, 9)).unwrap();
    for args in [
        vec![
            "sm4",
            "enc",
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
        vec!["seal", "--recipient", "a.pub", "-i", "m", "-o", "/dev/full"],
        vec![
            "sm2",
            "sign",
            "--key",
            "a.pem",
            "-i",
            "m",
            "-o",
            "/dev/full",
        ],
    ] {
        let o = run(d, &args, None);
        assert_eq!(code(&o), 2, "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.starts_with("shangmi: ") && err.contains("No space left"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "one line: {err}");
    }
    // Stdout on a full device.
    let full = fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_shangmi"))
        .args(["seal", "--recipient", "a.pub", "-i", "m"])
        .current_dir(d)
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(code(&o), 2);
    // Missing input, missing key, bad hex, unknown mode: exit 2, one line, no panic.
    for args in [
        vec![
            "sm4", "enc", "--mode", "cbc", "--key", KEY, "--iv", IV, "-i", "nope",
        ],
        vec!["sm2", "sign", "--key", "nope.pem", "-i", "m"],
        vec![
            "sm4", "enc", "--mode", "cbc", "--key", "xyz", "--iv", IV, "-i", "m",
        ],
        vec!["sm4", "enc", "--mode", "cbc", "--key", KEY, "-i", "m"],
        vec!["sm4", "enc", "--mode", "rot13", "--key", KEY],
        vec!["sm2", "verify", "--pub", "m", "--sig", "m", "-i", "m"],
        vec!["frobnicate"],
    ] {
        let o = run(d, &args, None);
        assert_eq!(code(&o), 2, "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
            "{err}"
        );
    }
    assert_only(d, &["a.pem", "a.pub", "b.pem", "b.pub", "pw", "m"]);
    // --help everywhere, with an example.
    for cmd in [
        vec!["--help"],
        vec!["sm4", "--help"],
        vec!["sm2", "--help"],
        vec!["sm2", "sign", "--help"],
        vec!["seal", "--help"],
        vec!["open", "--help"],
        vec!["hmac", "--help"],
        vec!["kdf", "--help"],
        vec!["speed", "--help"],
    ] {
        let out = String::from_utf8(ok(d, &cmd)).unwrap();
        assert!(out.contains("Example"), "{cmd:?}");
        // Every option says what it is: "-i, --input <IN>" has its description on its line
        // or (clap's long form) on the next.
        let lines: Vec<&str> = out.lines().map(str::trim_start).collect();
        for (i, t) in lines.iter().enumerate() {
            if t.starts_with("-i, --input") || t.starts_with("-o, --output") {
                let next = lines.get(i + 1).copied().unwrap_or("");
                let described = t.split_whitespace().count() > 3
                    || (!next.is_empty() && !next.starts_with('-'));
                assert!(described, "{cmd:?}: {t}");
            }
        }
    }
    for cmd in [vec!["sm2", "convert", "--help"], vec!["seal", "--help"]] {
        let out = String::from_utf8(ok(d, &cmd)).unwrap();
        assert!(out.contains("The file to read"), "{cmd:?}: {out}");
    }
    // A usage error names what is missing, and the help of the command it was for.
    for (args, names, help) in [
        (vec!["sm2", "sign"], "--key", "'shangmi sm2 sign --help'"),
        (vec!["seal"], "--recipient", "'shangmi seal --help'"),
        (
            vec!["sm2", "convert", "sig"],
            "--input",
            "'shangmi sm2 convert --help'",
        ),
    ] {
        let o = run(d, &args, None);
        assert_eq!(code(&o), 2, "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(names) && err.contains(help), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
    }
}

/// `speed` with no algorithm measures every one its help lists, without failing on any.
#[test]
fn speed_runs_every_algorithm() {
    let dir = tempfile::tempdir().unwrap();
    let help = String::from_utf8(ok(dir.path(), &["speed", "--help"])).unwrap();
    // The list runs from "Algorithms:" to the next blank line.
    let start = help
        .find("Algorithms:")
        .expect("an Algorithms: list in the help");
    let list = &help[start + "Algorithms:".len()..];
    let listed: Vec<&str> = list
        .split("\n\n")
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert!(listed.len() >= 15, "{listed:?}");
    let out = String::from_utf8(ok(dir.path(), &["speed", "--seconds", "0.01"])).unwrap();
    for alg in listed {
        assert!(
            out.lines()
                .any(|l| l.split_whitespace().next() == Some(alg)),
            "{alg} missing from:\n{out}"
        );
    }
}

#[test]
fn speed_reports_json() {
    let dir = tempfile::tempdir().unwrap();
    let out = String::from_utf8(ok(
        dir.path(),
        &["speed", "sm3", "sm2-sign", "--seconds", "0.05", "--json"],
    ))
    .unwrap();
    assert!(out.starts_with("{\"backend\":"), "{out}");
    assert_eq!(out.matches("\"algorithm\":\"sm3\"").count(), 6);
    assert!(out.contains("\"algorithm\":\"sm2-sign\",\"size\":null"));
    let o = run(dir.path(), &["speed", "md5"], None);
    assert_eq!(code(&o), 2);
}
