//! Certificates, requests, CRLs and CMS against GmSSL 3.1.1 (built from the PyPI sdist
//! easy-gmssl by scripts/peers/build.sh), both directions, with keys each side encrypted for
//! the other: what GmSSL issues verifies here and the reverse, each signs the other's
//! requests, each reads the other's CRLs, and SignedData and EnvelopedData cross in GmSSL's
//! forms (`--gmssl`: its signature form and key-transport label, which only GmSSL uses).

mod tls_peers;

use std::path::Path;
use std::process::Command;

use tls_peers::*;

/// Runs GmSSL in `dir`; whether it succeeded (its stderr shown when not).
fn gmssl(tool: &Path, dir: &Path, args: &[&str]) -> bool {
    let o = Command::new(tool)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    if !o.status.success() {
        eprintln!("gmssl {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    }
    o.status.success()
}

fn shangmi_code(dir: &Path, args: &[&str]) -> i32 {
    let o = shangmi().args(args).current_dir(dir).output().unwrap();
    if !o.status.success() {
        eprintln!("shangmi {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    }
    o.status.code().unwrap()
}

/// GmSSL's CA (gm-ca.pem, gm-ca.key) and a leaf issued from its own request (gm-leaf.pem,
/// gm-leaf.key, gm-leaf.csr); shangmi's CA (our-ca.pem, our-ca.key) and a leaf request
/// (our-leaf.csr, our-leaf.key) and certificate (our-leaf.pem). Every key is encrypted under
/// "pw" (pw.txt for shangmi).
fn both_pkis(tool: &Path, d: &Path) {
    std::fs::write(d.join("pw.txt"), "pw\n").unwrap();
    let gm = |args: &[&str]| assert!(gmssl(tool, d, args), "{args:?}");
    gm(&["sm2keygen", "-pass", "pw", "-out", "gm-ca.key"]);
    gm(&[
        "certgen",
        "-CN",
        "GmSSL Root",
        "-O",
        "gmssl",
        "-serial_len",
        "12",
        "-days",
        "30",
        "-key",
        "gm-ca.key",
        "-pass",
        "pw",
        "-ca",
        "-path_len_constraint",
        "1",
        "-key_usage",
        "keyCertSign",
        "-key_usage",
        "cRLSign",
        "-gen_subject_key_id",
        "-out",
        "gm-ca.pem",
    ]);
    gm(&["sm2keygen", "-pass", "pw", "-out", "gm-leaf.key"]);
    gm(&[
        "reqgen",
        "-CN",
        "gmssl leaf",
        "-O",
        "gmssl",
        "-key",
        "gm-leaf.key",
        "-pass",
        "pw",
        "-out",
        "gm-leaf.csr",
    ]);
    gm(&[
        "reqsign",
        "-in",
        "gm-leaf.csr",
        "-days",
        "10",
        "-cacert",
        "gm-ca.pem",
        "-key",
        "gm-ca.key",
        "-pass",
        "pw",
        "-key_usage",
        "digitalSignature",
        "-key_usage",
        "keyEncipherment",
        "-gen_authority_key_id",
        "-out",
        "gm-leaf.pem",
    ]);
    let ours = |args: &[&str]| shangmi_ok(d, args);
    for k in ["our-ca.key", "our-leaf.key"] {
        ours(&["sm2", "keygen", "-o", k, "--password-file", "pw.txt"]);
    }
    ours(&[
        "x509",
        "req",
        "--key",
        "our-ca.key",
        "--password-file",
        "pw.txt",
        "--subject",
        "/CN=shangmi Root/O=shangmi",
        "-o",
        "our-ca.csr",
    ]);
    ours(&[
        "x509",
        "sign",
        "--csr",
        "our-ca.csr",
        "--self",
        "--key",
        "our-ca.key",
        "--password-file",
        "pw.txt",
        "--ca",
        "--days",
        "30",
        "-o",
        "our-ca.pem",
    ]);
    ours(&[
        "x509",
        "req",
        "--key",
        "our-leaf.key",
        "--password-file",
        "pw.txt",
        "--subject",
        "/CN=shangmi leaf/O=shangmi",
        "--san",
        "DNS:leaf.example",
        "-o",
        "our-leaf.csr",
    ]);
    ours(&[
        "x509",
        "sign",
        "--csr",
        "our-leaf.csr",
        "--ca-cert",
        "our-ca.pem",
        "--ca-key",
        "our-ca.key",
        "--password-file",
        "pw.txt",
        "--days",
        "10",
        "-o",
        "our-leaf.pem",
    ]);
}

#[test]
fn certificates_requests_and_crls_cross_both_ways() {
    let Some(tool) = peer_tool("gmssl") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    both_pkis(&tool, d);
    // Each verifies the other's chain; a wrong anchor fails on both sides.
    assert_eq!(
        shangmi_code(d, &["x509", "verify", "--ca", "gm-ca.pem", "gm-leaf.pem"]),
        0
    );
    assert_eq!(
        shangmi_code(d, &["x509", "verify", "--ca", "our-ca.pem", "gm-leaf.pem"]),
        1
    );
    assert!(gmssl(
        &tool,
        d,
        &["certverify", "-in", "our-leaf.pem", "-cacert", "our-ca.pem"]
    ));
    assert!(!gmssl(
        &tool,
        d,
        &["certverify", "-in", "our-leaf.pem", "-cacert", "gm-ca.pem"]
    ));
    // Each signs the other's request (GmSSL with shangmi's encrypted CA key, and the
    // reverse), and each verifies what the other issued from its own request.
    assert!(gmssl(
        &tool,
        d,
        &[
            "reqsign",
            "-in",
            "our-leaf.csr",
            "-days",
            "10",
            "-cacert",
            "gm-ca.pem",
            "-key",
            "gm-ca.key",
            "-pass",
            "pw",
            "-out",
            "our-leaf-by-gm.pem",
        ]
    ));
    assert_eq!(
        shangmi_code(
            d,
            &["x509", "verify", "--ca", "gm-ca.pem", "our-leaf-by-gm.pem"]
        ),
        0
    );
    assert!(gmssl(
        &tool,
        d,
        &[
            "reqsign",
            "-in",
            "gm-leaf.csr",
            "-days",
            "10",
            "-cacert",
            "our-ca.pem",
            "-key",
            "our-ca.key",
            "-pass",
            "pw",
            "-out",
            "gm-leaf-by-gm-with-our-key.pem",
        ]
    ));
    assert_eq!(
        shangmi_code(
            d,
            &[
                "x509",
                "verify",
                "--ca",
                "our-ca.pem",
                "gm-leaf-by-gm-with-our-key.pem"
            ]
        ),
        0
    );
    shangmi_ok(
        d,
        &[
            "x509",
            "sign",
            "--csr",
            "gm-leaf.csr",
            "--ca-cert",
            "our-ca.pem",
            "--ca-key",
            "our-ca.key",
            "--password-file",
            "pw.txt",
            "--days",
            "10",
            "-o",
            "gm-leaf-by-us.pem",
        ],
    );
    assert!(gmssl(
        &tool,
        d,
        &[
            "certverify",
            "-in",
            "gm-leaf-by-us.pem",
            "-cacert",
            "our-ca.pem"
        ]
    ));
    // CRLs: GmSSL's revokes its leaf here; ours (DER, the form GmSSL reads) verifies there.
    assert!(gmssl(
        &tool,
        d,
        &[
            "certrevoke",
            "-in",
            "gm-leaf.pem",
            "-reason",
            "keyCompromise",
            "-out",
            "rev.der"
        ]
    ));
    assert!(gmssl(
        &tool,
        d,
        &[
            "crlgen",
            "-in",
            "rev.der",
            "-cacert",
            "gm-ca.pem",
            "-key",
            "gm-ca.key",
            "-pass",
            "pw",
            "-out",
            "gm.crl",
        ]
    ));
    assert_eq!(
        shangmi_code(
            d,
            &[
                "x509",
                "verify",
                "--ca",
                "gm-ca.pem",
                "--crl",
                "gm.crl",
                "gm-leaf.pem"
            ]
        ),
        1
    );
    assert_eq!(
        shangmi_code(
            d,
            &[
                "x509",
                "verify",
                "--ca",
                "gm-ca.pem",
                "--crl",
                "gm.crl",
                "our-leaf-by-gm.pem"
            ]
        ),
        0
    );
    shangmi_ok(
        d,
        &[
            "x509",
            "crl",
            "--ca-cert",
            "our-ca.pem",
            "--ca-key",
            "our-ca.key",
            "--password-file",
            "pw.txt",
            "--revoke",
            "our-leaf.pem",
            "--der",
            "-o",
            "our.crl",
        ],
    );
    assert!(gmssl(
        &tool,
        d,
        &["crlverify", "-in", "our.crl", "-cacert", "our-ca.pem"]
    ));
    assert!(!gmssl(
        &tool,
        d,
        &["crlverify", "-in", "our.crl", "-cacert", "gm-ca.pem"]
    ));
}

#[test]
fn signed_and_enveloped_data_cross_both_ways() {
    let Some(tool) = peer_tool("gmssl") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    both_pkis(&tool, d);
    let msg = b"a document GmSSL and shangmi both sign and seal\n".repeat(4);
    std::fs::write(d.join("msg"), &msg).unwrap();
    // GmSSL's SignedData verifies here in its own form (and only when asked: it is not
    // PKCS#7's signature).
    assert!(gmssl(
        &tool,
        d,
        &[
            "cmssign",
            "-key",
            "gm-leaf.key",
            "-pass",
            "pw",
            "-cert",
            "gm-leaf.pem",
            "-in",
            "msg",
            "-out",
            "gm-signed.pem",
        ]
    ));
    assert_eq!(
        shangmi_code(
            d,
            &[
                "cms",
                "verify",
                "--ca",
                "gm-ca.pem",
                "--gmssl",
                "-i",
                "gm-signed.pem",
                "-o",
                "a"
            ]
        ),
        0
    );
    assert_eq!(std::fs::read(d.join("a")).unwrap(), msg);
    assert_eq!(
        shangmi_code(
            d,
            &["cms", "verify", "--ca", "gm-ca.pem", "-i", "gm-signed.pem"]
        ),
        1
    );
    assert_eq!(
        shangmi_code(
            d,
            &[
                "cms",
                "verify",
                "--ca",
                "our-ca.pem",
                "--gmssl",
                "-i",
                "gm-signed.pem"
            ]
        ),
        1
    );
    // Ours in GmSSL's form verifies there.
    shangmi_ok(
        d,
        &[
            "cms",
            "sign",
            "--cert",
            "our-leaf.pem",
            "--key",
            "our-leaf.key",
            "--password-file",
            "pw.txt",
            "--gmssl",
            "-i",
            "msg",
            "-o",
            "our-signed.pem",
        ],
    );
    assert!(gmssl(
        &tool,
        d,
        &["cmsverify", "-in", "our-signed.pem", "-out", "b"]
    ));
    assert_eq!(std::fs::read(d.join("b")).unwrap(), msg);
    // EnvelopedData: GmSSL's opens here with the key GmSSL wrote; ours opens there.
    assert!(gmssl(
        &tool,
        d,
        &[
            "cmsencrypt",
            "-rcptcert",
            "our-leaf.pem",
            "-in",
            "msg",
            "-out",
            "gm-env.pem"
        ]
    ));
    shangmi_ok(
        d,
        &[
            "cms",
            "decrypt",
            "--key",
            "our-leaf.key",
            "--password-file",
            "pw.txt",
            "-i",
            "gm-env.pem",
            "-o",
            "c",
        ],
    );
    assert_eq!(std::fs::read(d.join("c")).unwrap(), msg);
    assert_eq!(
        shangmi_code(
            d,
            &[
                "cms",
                "decrypt",
                "--key",
                "our-ca.key",
                "--password-file",
                "pw.txt",
                "-i",
                "gm-env.pem",
                "-o",
                "never",
            ]
        ),
        1
    );
    shangmi_ok(
        d,
        &[
            "cms",
            "encrypt",
            "--recipient",
            "gm-leaf.pem",
            "--gmssl",
            "-i",
            "msg",
            "-o",
            "our-env.pem",
        ],
    );
    assert!(gmssl(
        &tool,
        d,
        &[
            "cmsdecrypt",
            "-key",
            "gm-leaf.key",
            "-pass",
            "pw",
            "-cert",
            "gm-leaf.pem",
            "-in",
            "our-env.pem",
            "-out",
            "e",
        ]
    ));
    assert_eq!(std::fs::read(d.join("e")).unwrap(), msg);
}
