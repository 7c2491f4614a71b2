//! What other SM tools write, handed to the CLI as a user would: key files in the `openssl`
//! command's less common forms (`openssl ec` output, explicit curve parameters, PKCS#8 with
//! PBKDF2-HMAC-SHA1, `openssl pkcs12 -nodes` and `openssl pkey -text` output), the hex and
//! bare forms of the JavaScript and Python libraries, the hints a failed check gives, and
//! SP 800-38D's short GCM tags.

use std::fs;

mod common;
use common::{ok, openssl};

#[test]
fn every_form_of_one_key_gives_the_same_public_key() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    openssl(d, &["genpkey", "-algorithm", "SM2", "-out", "k.pem"]);
    openssl(d, &["pkey", "-in", "k.pem", "-pubout", "-out", "pub.pem"]);
    openssl(d, &["ec", "-in", "k.pem", "-out", "ec.pem"]);
    assert!(
        fs::read_to_string(d.join("ec.pem"))
            .unwrap()
            .starts_with("-----BEGIN SM2 PRIVATE KEY-----")
    );
    let explicit = ["-param_enc", "explicit"];
    openssl(
        d,
        &[&["ec", "-in", "k.pem", "-out", "ecx.pem"][..], &explicit].concat(),
    );
    openssl(
        d,
        &[
            &["ec", "-in", "k.pem", "-pubout", "-out", "pubx.pem"][..],
            &explicit,
        ]
        .concat(),
    );
    openssl(
        d,
        &[
            "pkcs8",
            "-topk8",
            "-in",
            "k.pem",
            "-v2",
            "aes-256-cbc",
            "-v2prf",
            "hmacWithSHA1",
            "-passout",
            "pass:pw",
            "-out",
            "sha1.pem",
        ],
    );
    fs::write(d.join("pw"), "pw\n").unwrap();
    openssl(
        d,
        &[
            "req", "-x509", "-new", "-key", "k.pem", "-subj", "/CN=t", "-sm3", "-days", "1",
            "-out", "cert.pem",
        ],
    );
    openssl(
        d,
        &[
            "pkcs12", "-export", "-inkey", "k.pem", "-in", "cert.pem", "-passout", "pass:x",
            "-out", "k.p12",
        ],
    );
    openssl(
        d,
        &[
            "pkcs12", "-in", "k.p12", "-nodes", "-passin", "pass:x", "-out", "p12.pem",
        ],
    );
    assert!(
        fs::read_to_string(d.join("p12.pem"))
            .unwrap()
            .starts_with("Bag Attributes")
    );
    openssl(d, &["pkey", "-in", "k.pem", "-text", "-out", "text.pem"]);

    let want = ok(d, &["sm2", "pubkey", "-i", "k.pem"]);
    assert_eq!(want, fs::read(d.join("pub.pem")).unwrap());
    for key in ["ec.pem", "ecx.pem", "sha1.pem", "p12.pem", "text.pem"] {
        let got = ok(d, &["sm2", "pubkey", "-i", key, "--password-file", "pw"]);
        assert_eq!(got, want, "{key}");
    }
    // Signatures with the re-encoded private keys verify under both public-key files.
    fs::write(d.join("m"), b"message").unwrap();
    for key in ["ec.pem", "ecx.pem", "p12.pem"] {
        ok(d, &["sm2", "sign", "--key", key, "-i", "m", "-o", "s.sig"]);
        for public in ["pub.pem", "pubx.pem"] {
            let out = ok(
                d,
                &[
                    "sm2", "verify", "--pub", public, "--sig", "s.sig", "-i", "m",
                ],
            );
            assert_eq!(out, b"Verified OK\n", "{key} {public}");
        }
    }
}

fn run_code(d: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let o = common::run(d, args, None);
    (
        common::code(&o),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn hex_and_bare_keys_as_the_script_libraries_exchange_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(
        d,
        &[
            "sm2",
            "keygen",
            "--outform",
            "hex",
            "-o",
            "k.hex",
            "--pubout",
            "p.hex",
        ],
    );
    let d_hex = fs::read_to_string(d.join("k.hex")).unwrap();
    let p_hex = fs::read_to_string(d.join("p.hex")).unwrap();
    assert_eq!(d_hex.trim().len(), 64);
    assert!(p_hex.starts_with("04") && p_hex.trim().len() == 130);
    // The same public key from the hex private key, and in every bare layout.
    let again = ok(d, &["sm2", "pubkey", "-i", "k.hex", "--outform", "hex"]);
    assert_eq!(String::from_utf8(again).unwrap(), p_hex);
    let xy = &p_hex.trim()[2..];
    let y_odd = u8::from_str_radix(&xy[126..], 16).unwrap() & 1;
    let compressed = format!("0{}{}", 2 + y_odd, &xy[..64]);
    let bytes = hex::decode(p_hex.trim()).unwrap();
    fs::write(d.join("xy.hex"), xy.to_uppercase()).unwrap();
    fs::write(d.join("c.hex"), &compressed).unwrap();
    fs::write(d.join("p.bin"), &bytes).unwrap();
    fs::write(d.join("k.bin"), hex::decode(d_hex.trim()).unwrap()).unwrap();
    // PEM from the hex key matches what OpenSSL derives from a DER copy of it.
    ok(d, &["sm2", "keygen", "--outform", "der", "-o", "k.der"]);
    openssl(
        d,
        &[
            "pkey", "-inform", "DER", "-in", "k.der", "-pubout", "-out", "kder.pub",
        ],
    );
    assert_eq!(
        ok(d, &["sm2", "pubkey", "-i", "k.der"]),
        fs::read(d.join("kder.pub")).unwrap()
    );
    fs::write(d.join("m"), b"message").unwrap();
    for key in ["k.hex", "k.bin"] {
        for form in ["der", "raw", "hex", "der-hex"] {
            ok(
                d,
                &[
                    "sm2",
                    "sign",
                    "--key",
                    key,
                    "--sig-form",
                    form,
                    "-i",
                    "m",
                    "-o",
                    "s",
                ],
            );
            for public in ["p.hex", "xy.hex", "c.hex", "p.bin", "k.hex"] {
                let out = ok(
                    d,
                    &[
                        "sm2",
                        "verify",
                        "--pub",
                        public,
                        "--sig",
                        "s",
                        "--sig-form",
                        form,
                        "-i",
                        "m",
                    ],
                );
                assert_eq!(out, b"Verified OK\n", "{key} {form} {public}");
            }
        }
    }
    // A file that is no key says what it saw.
    fs::write(d.join("junk"), [7u8; 40]).unwrap();
    let (code, _, err) = run_code(d, &["sm2", "pubkey", "-i", "junk"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("not a key file") && err.contains("40 bytes"),
        "{err}"
    );
    // SEC1 output is what `openssl ec` reads.
    ok(d, &["sm2", "keygen", "--sec1", "-o", "sec1.pem"]);
    assert!(
        fs::read_to_string(d.join("sec1.pem"))
            .unwrap()
            .starts_with("-----BEGIN EC PRIVATE KEY-----")
    );
    openssl(d, &["ec", "-in", "sec1.pem", "-noout"]);
}

#[test]
fn failed_checks_name_the_likely_format_mistake() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(d, &["sm2", "keygen", "-o", "k.pem", "--pubout", "p.pem"]);
    fs::write(d.join("m"), b"message").unwrap();
    // The signature's form.
    ok(
        d,
        &["sm2", "sign", "--key", "k.pem", "-i", "m", "-o", "s.der"],
    );
    for (form, want) in [("raw", "try --sig-form der"), ("hex", "try --sig-form der")] {
        let (code, out, err) = run_code(
            d,
            &[
                "sm2",
                "verify",
                "--pub",
                "p.pem",
                "--sig",
                "s.der",
                "--sig-form",
                form,
                "-i",
                "m",
            ],
        );
        assert_eq!((code, out.as_str()), (1, "Verification failure\n"));
        assert!(err.contains(want), "{form}: {err}");
    }
    // The ID: made with OpenSSL 3's empty default, checked with the standard one.
    ok(
        d,
        &[
            "sm2", "sign", "--key", "k.pem", "--id", "", "-i", "m", "-o", "s0",
        ],
    );
    let (code, _, err) = run_code(
        d,
        &["sm2", "verify", "--pub", "p.pem", "--sig", "s0", "-i", "m"],
    );
    assert_eq!(code, 1);
    assert!(err.contains("--id ''"), "{err}");
    // Tampering gets no hint.
    let mut sig = fs::read(d.join("s.der")).unwrap();
    let last = sig.len() - 1;
    sig[last] ^= 1;
    fs::write(d.join("bad"), sig).unwrap();
    let (code, _, err) = run_code(
        d,
        &["sm2", "verify", "--pub", "p.pem", "--sig", "bad", "-i", "m"],
    );
    assert_eq!((code, err.as_str()), (1, ""));
    // Ciphertexts: hex, a C1 without 04, the layout.
    let mut c1_not_a_prefix = false;
    for _ in 0..50 {
        ok(
            d,
            &[
                "sm2",
                "encrypt",
                "--pub",
                "p.pem",
                "--format",
                "c1c3c2",
                "--no-prefix",
                "--hex",
                "-i",
                "m",
                "-o",
                "c.hex",
            ],
        );
        let text = fs::read_to_string(d.join("c.hex")).unwrap();
        if !["02", "03", "04"].contains(&&text[..2]) {
            c1_not_a_prefix = true;
            break;
        }
    }
    assert!(c1_not_a_prefix);
    let dec = |extra: &[&str]| {
        let mut args = vec![
            "sm2", "decrypt", "--key", "k.pem", "--format", "c1c3c2", "-i", "c.hex",
        ];
        args.extend_from_slice(extra);
        run_code(d, &args)
    };
    assert_eq!(dec(&["--no-prefix", "--hex"]).1, "message");
    for (extra, want) in [(&[][..], "try --hex"), (&["--hex"][..], "try --no-prefix")] {
        let (code, out, err) = dec(extra);
        assert_eq!((code, out.as_str()), (1, ""), "{extra:?}");
        assert!(
            err.contains("decryption failed") && err.contains(want),
            "{extra:?}: {err}"
        );
    }
    ok(
        d,
        &["sm2", "encrypt", "--pub", "p.pem", "-i", "m", "-o", "c.der"],
    );
    let (code, _, err) = run_code(
        d,
        &[
            "sm2", "decrypt", "--key", "k.pem", "--format", "c1c3c2", "-i", "c.der",
        ],
    );
    assert_eq!(code, 1);
    assert!(err.contains("--format asn1"), "{err}");
    // --no-prefix has no meaning for DER.
    let (code, _, _) = run_code(
        d,
        &[
            "sm2",
            "decrypt",
            "--key",
            "k.pem",
            "--no-prefix",
            "-i",
            "c.der",
        ],
    );
    assert_eq!(code, 2);
}

#[test]
fn gcm_short_tags_are_the_full_tag_cut_and_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let msg = common::data(1000, 9);
    fs::write(d.join("m"), &msg).unwrap();
    // `sm4 OP --mode gcm` on INPUT with a tag of TAG bytes (the default 16 when empty).
    let gcm = |op: &str, tag: &str, input: &str| {
        let mut args = vec![
            "sm4",
            op,
            "--mode",
            "gcm",
            "--key",
            "0123456789abcdeffedcba9876543210",
            "--iv",
            "000000000000000000000001",
            "-i",
            input,
        ];
        if !tag.is_empty() {
            args.extend(["--tag-len", tag]);
        }
        let o = common::run(d, &args, None);
        (common::code(&o), o.stdout)
    };
    let (_, full) = gcm("enc", "", "m");
    for t in [4usize, 8, 12] {
        let (code, c) = gcm("enc", &t.to_string(), "m");
        assert_eq!((code, &c[..]), (0, &full[..1000 + t]), "tag {t}");
        fs::write(d.join("c"), &c).unwrap();
        assert_eq!(gcm("dec", &t.to_string(), "c"), (0, msg.clone()));
        // The length is the caller's: the same file read with another length fails.
        assert_eq!(gcm("dec", "", "c"), (1, vec![]), "tag {t}");
    }
    for t in ["5", "9", "11"] {
        assert_eq!(gcm("enc", t, "m").0, 2, "tag {t}");
    }
}

#[test]
fn convert_round_trips_every_pair_and_inspect_names_each_form() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(d, &["sm2", "keygen", "-o", "k.pem", "--pubout", "p.pem"]);
    fs::write(d.join("m"), common::data(300, 3)).unwrap();
    // Signatures: every form to every form, each still verifying.
    let sig_forms = ["der", "raw", "hex", "der-hex"];
    ok(
        d,
        &["sm2", "sign", "--key", "k.pem", "-i", "m", "-o", "s.der"],
    );
    for from in sig_forms {
        ok(
            d,
            &[
                "sm2", "convert", "sig", "-i", "s.der", "--from", "der", "--to", from, "-o", "a",
            ],
        );
        for to in sig_forms {
            ok(
                d,
                &[
                    "sm2", "convert", "sig", "-i", "a", "--from", from, "--to", to, "-o", "b",
                ],
            );
            let out = ok(
                d,
                &[
                    "sm2",
                    "verify",
                    "--pub",
                    "p.pem",
                    "--sig",
                    "b",
                    "--sig-form",
                    to,
                    "-i",
                    "m",
                ],
            );
            assert_eq!(out, b"Verified OK\n", "{from} -> {to}");
        }
    }
    // Ciphertexts: every layout and encoding to every other, each still decrypting.
    let mut forms: Vec<(&str, Vec<&str>)> = Vec::new();
    for format in ["asn1", "c1c3c2", "c1c2c3"] {
        for hex in [false, true] {
            for bare in [false, true] {
                if bare && format == "asn1" {
                    continue;
                }
                let mut flags = Vec::new();
                if hex {
                    flags.push("hex");
                }
                if bare {
                    flags.push("no-prefix");
                }
                forms.push((format, flags));
            }
        }
    }
    ok(
        d,
        &["sm2", "encrypt", "--pub", "p.pem", "-i", "m", "-o", "c.der"],
    );
    for (from, from_flags) in &forms {
        let mut args = vec![
            "sm2",
            "convert",
            "ciphertext",
            "-i",
            "c.der",
            "--from",
            "asn1",
        ];
        args.extend(["--to", from, "-o", "a"]);
        let to_flags: Vec<String> = from_flags.iter().map(|f| format!("--to-{f}")).collect();
        args.extend(to_flags.iter().map(String::as_str));
        ok(d, &args);
        for (to, flags) in &forms {
            let mut args = vec!["sm2", "convert", "ciphertext", "-i", "a", "--from", from];
            let fl: Vec<String> = from_flags.iter().map(|f| format!("--from-{f}")).collect();
            args.extend(fl.iter().map(String::as_str));
            args.extend(["--to", to, "-o", "b"]);
            let tl: Vec<String> = flags.iter().map(|f| format!("--to-{f}")).collect();
            args.extend(tl.iter().map(String::as_str));
            ok(d, &args);
            let mut dec = vec![
                "sm2", "decrypt", "--key", "k.pem", "--format", to, "-i", "b",
            ];
            let dl: Vec<String> = flags.iter().map(|f| format!("--{f}")).collect();
            dec.extend(dl.iter().map(String::as_str));
            assert_eq!(
                ok(d, &dec),
                common::data(300, 3),
                "{from} {from_flags:?} -> {to} {flags:?}"
            );
        }
    }
    // Keys: every output form reads back as the same key.
    let want = ok(d, &["sm2", "pubkey", "-i", "k.pem"]);
    for to in ["pem", "der", "sec1", "sec1-der", "hex"] {
        ok(
            d,
            &[
                "sm2", "convert", "key", "-i", "k.pem", "--to", to, "-o", "k2",
            ],
        );
        assert_eq!(ok(d, &["sm2", "pubkey", "-i", "k2"]), want, "{to}");
    }
    for to in ["pem", "der", "hex", "xy-hex", "compressed-hex", "raw"] {
        ok(
            d,
            &[
                "sm2", "convert", "pub", "-i", "p.pem", "--to", to, "-o", "p2",
            ],
        );
        assert_eq!(ok(d, &["sm2", "pubkey", "-i", "k.pem"]), want);
        ok(d, &["sm2", "sign", "--key", "k.pem", "-i", "m", "-o", "s"]);
        assert_eq!(
            ok(
                d,
                &["sm2", "verify", "--pub", "p2", "--sig", "s", "-i", "m"]
            ),
            b"Verified OK\n",
            "{to}"
        );
    }
    // Inspect names what it sees, and never the private key.
    ok(
        d,
        &[
            "sm2", "convert", "key", "-i", "k.pem", "--to", "hex", "-o", "d.hex",
        ],
    );
    let d_hex = fs::read_to_string(d.join("d.hex")).unwrap();
    for (file, want) in [
        ("k.pem", "PRIVATE KEY: PKCS#8 private key"),
        ("p.pem", "PUBLIC KEY: SubjectPublicKeyInfo"),
        ("s.der", "DER signature"),
        ("c.der", "DER ciphertext"),
        ("d.hex", "a bare private key d"),
    ] {
        let text = String::from_utf8(ok(d, &["sm2", "inspect", file])).unwrap();
        assert!(text.contains(want), "{file}: {text}");
        assert!(!text.contains(d_hex.trim()), "{file}: {text}");
    }
    // Bad forms are usage errors.
    let (code, _, err) = run_code(
        d,
        &[
            "sm2", "convert", "sig", "-i", "s.der", "--from", "pem", "--to", "hex",
        ],
    );
    assert_eq!(code, 2);
    assert!(err.contains("der, raw, hex, der-hex"), "{err}");
}
