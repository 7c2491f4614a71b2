//! `shangmi cfca` and CFCA's escrowed keys as a user meets them: the corpus `.sm2` file
//! imported, exported again and re-imported, a wrong password exiting 1 with nothing written;
//! the corpus escrowed key opened by `cms unwrap-key` with the temporary key.

mod common;

use common::{code, ok, run};

fn vectors() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shangmi-pki/tests/vectors/x509")
}

#[test]
fn sm2_files_import_export_and_refuse_a_wrong_password() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(
        vectors().join("cfca-sm2file-test-oca1.pem"),
        d.join("user.sm2"),
    )
    .unwrap();
    std::fs::write(d.join("pw"), "123456\n").unwrap();
    std::fs::write(d.join("bad"), "654321\n").unwrap();
    std::fs::write(d.join("new"), "another one\n").unwrap();
    let import = |file: &str, pw: &str, key: &str, cert: &str| {
        run(
            d,
            &[
                "cfca",
                "import",
                "-i",
                file,
                "--password-file",
                pw,
                "--key-out",
                key,
                "--cert-out",
                cert,
            ],
            None,
        )
    };
    assert!(import("user.sm2", "pw", "k.pem", "c.pem").status.success());
    let key = std::fs::read_to_string(d.join("k.pem")).unwrap();
    assert!(key.starts_with("-----BEGIN PRIVATE KEY-----"));
    let shown = String::from_utf8(ok(d, &["x509", "show", "c.pem"])).unwrap();
    assert!(shown.contains("N51011300018878"), "{shown}");
    // The key signs and the certificate's key verifies.
    std::fs::write(d.join("m"), "pay 10 yuan").unwrap();
    ok(d, &["sm2", "sign", "--key", "k.pem", "-i", "m", "-o", "s"]);
    assert_eq!(
        ok(
            d,
            &["sm2", "verify", "--pub", "k.pem", "--sig", "s", "-i", "m"]
        ),
        b"Verified OK\n"
    );
    let o = import("user.sm2", "bad", "k2.pem", "c2.pem");
    assert_eq!(code(&o), 1, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!d.join("k2.pem").exists() && !d.join("c2.pem").exists());
    // Export under a new password (DER and Base64), import again: the same key.
    for extra in [&[][..], &["--base64"]] {
        let mut args = vec![
            "cfca",
            "export",
            "--key",
            "k.pem",
            "--cert",
            "c.pem",
            "--password-file",
            "new",
            "-o",
            "again.sm2",
        ];
        args.extend(extra);
        let o = run(d, &args, None);
        assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
        // The format's weak password protection is said every time.
        assert!(String::from_utf8_lossy(&o.stderr).contains("unsalted SM3"));
        assert!(
            import("again.sm2", "new", "k3.pem", "c3.pem")
                .status
                .success()
        );
        assert_eq!(std::fs::read_to_string(d.join("k3.pem")).unwrap(), key);
        assert_eq!(code(&import("again.sm2", "pw", "k4.pem", "c4.pem")), 1);
    }
    // A certificate that is not the key's, and garbage, are input errors.
    ok(d, &["sm2", "keygen", "-o", "other.pem"]);
    let o = run(
        d,
        &[
            "cfca",
            "export",
            "--key",
            "other.pem",
            "--cert",
            "c.pem",
            "--password-file",
            "new",
            "-o",
            "x.sm2",
        ],
        None,
    );
    assert_eq!(code(&o), 2);
    std::fs::write(d.join("junk.sm2"), "not a key file").unwrap();
    assert_eq!(code(&import("junk.sm2", "pw", "k5.pem", "c5.pem")), 2);
}

#[test]
fn escrowed_keys_open_with_unwrap_key() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::copy(
        vectors().join("cfca-escrow-enckey.der"),
        d.join("escrow.der"),
    )
    .unwrap();
    std::fs::write(
        d.join("tmp.hex"),
        "cacece36cac24aab94e52bcd5c0f552c95028f2856053135a1e47510b4c307ba\n",
    )
    .unwrap();
    ok(
        d,
        &[
            "cms",
            "unwrap-key",
            "--key",
            "tmp.hex",
            "-i",
            "escrow.der",
            "-o",
            "enc.pem",
        ],
    );
    ok(
        d,
        &[
            "sm2", "convert", "key", "-i", "enc.pem", "--to", "hex", "-o", "enc.hex",
        ],
    );
    assert_eq!(
        std::fs::read_to_string(d.join("enc.hex")).unwrap().trim(),
        "f6e02c941a0dfdac58d8b3b1bc1bd136f179741b7465ebc7b0b25bb381840a3b"
    );
    ok(d, &["sm2", "keygen", "-o", "wrong.pem"]);
    let o = run(
        d,
        &[
            "cms",
            "unwrap-key",
            "--key",
            "wrong.pem",
            "-i",
            "escrow.der",
            "-o",
            "never.pem",
        ],
        None,
    );
    assert_eq!(code(&o), 1);
    assert!(!d.join("never.pem").exists());
}
