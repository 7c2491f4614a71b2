//! Key files that the `openssl` command writes in its less common forms, read by the CLI as a
//! user hands them over: `openssl ec` output (`SM2 PRIVATE KEY`), explicit curve parameters,
//! PKCS#8 encrypted with PBKDF2-HMAC-SHA1, `openssl pkcs12 -nodes` output (bag attributes, a
//! certificate before the key) and `openssl pkey -text` output (a dump after the key).

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
