//! `shangmi x509` as a user runs it, beside the `openssl` command: a CA and a server
//! certificate made here verify in OpenSSL (with GM/T 0009's ID), OpenSSL's verify here, a
//! revoked certificate and a wrong ID exit 1, and usage mistakes exit 2.

mod common;

use common::{code, ok, openssl, run};

#[test]
fn x509_both_ways_with_openssl() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    ok(d, &["sm2", "keygen", "-o", "ca.key"]);
    ok(
        d,
        &[
            "x509",
            "req",
            "--key",
            "ca.key",
            "--subject",
            "/C=CN/O=Example/CN=Root",
            "-o",
            "ca.csr",
        ],
    );
    ok(
        d,
        &[
            "x509", "sign", "--csr", "ca.csr", "--self", "--key", "ca.key", "--ca", "--days", "30",
            "-o", "ca.pem",
        ],
    );
    ok(d, &["sm2", "keygen", "-o", "s.key"]);
    ok(
        d,
        &[
            "x509",
            "req",
            "--key",
            "s.key",
            "--subject",
            "/CN=www.example",
            "--san",
            "DNS:www.example",
            "-o",
            "s.csr",
        ],
    );
    ok(
        d,
        &[
            "x509",
            "sign",
            "--csr",
            "s.csr",
            "--ca-cert",
            "ca.pem",
            "--ca-key",
            "ca.key",
            "--days",
            "5",
            "-o",
            "s.pem",
        ],
    );
    let out = String::from_utf8(ok(d, &["x509", "verify", "--ca", "ca.pem", "s.pem"])).unwrap();
    assert!(out.contains("OK"), "{out}");
    // OpenSSL verifies ours with GM/T 0009's ID, and reads the request.
    let o = openssl(
        d,
        &[
            "verify",
            "-CAfile",
            "ca.pem",
            "-vfyopt",
            "distid:1234567812345678",
            "s.pem",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = openssl(
        d,
        &[
            "req",
            "-verify",
            "-noout",
            "-in",
            "s.csr",
            "-vfyopt",
            "distid:1234567812345678",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Exit 1: a wrong ID, a revoked certificate; the reason names the certificate and rule.
    let o = run(
        d,
        &["x509", "verify", "--ca", "ca.pem", "--sm2-id", "", "s.pem"],
        None,
    );
    assert_eq!(code(&o), 1);
    assert!(String::from_utf8_lossy(&o.stderr).contains("signature"));
    ok(
        d,
        &[
            "x509",
            "crl",
            "--ca-cert",
            "ca.pem",
            "--ca-key",
            "ca.key",
            "--revoke",
            "s.pem",
            "-o",
            "ca.crl",
        ],
    );
    let o = run(
        d,
        &[
            "x509", "verify", "--ca", "ca.pem", "--crl", "ca.crl", "s.pem",
        ],
        None,
    );
    assert_eq!(code(&o), 1);
    assert!(String::from_utf8_lossy(&o.stderr).contains("revocation"));
    let o = openssl(d, &["crl", "-in", "ca.crl", "-noout", "-text"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("Revoked Certificates"));
    // A time outside the validity.
    let o = run(
        d,
        &[
            "x509",
            "verify",
            "--ca",
            "ca.pem",
            "--at",
            "2099-01-01T00:00:00Z",
            "s.pem",
        ],
        None,
    );
    assert_eq!(code(&o), 1);

    // OpenSSL's CA and certificate, made with the ID option, verify here.
    for args in [
        vec!["genpkey", "-algorithm", "SM2", "-out", "o.key"],
        vec![
            "req",
            "-new",
            "-x509",
            "-key",
            "o.key",
            "-subj",
            "/CN=OpenSSL Root",
            "-days",
            "10",
            "-sigopt",
            "distid:1234567812345678",
            "-out",
            "o.pem",
        ],
        vec!["genpkey", "-algorithm", "SM2", "-out", "ol.key"],
        vec![
            "req",
            "-new",
            "-key",
            "ol.key",
            "-subj",
            "/CN=openssl-leaf",
            "-sigopt",
            "distid:1234567812345678",
            "-out",
            "ol.csr",
        ],
        vec![
            "x509",
            "-req",
            "-in",
            "ol.csr",
            "-CA",
            "o.pem",
            "-CAkey",
            "o.key",
            "-CAcreateserial",
            "-days",
            "5",
            "-sigopt",
            "distid:1234567812345678",
            "-vfyopt",
            "distid:1234567812345678",
            "-out",
            "ol.pem",
        ],
    ] {
        let o = openssl(d, &args);
        assert!(
            o.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    ok(d, &["x509", "verify", "--ca", "o.pem", "ol.pem"]);
    // Their request signed here, by our CA; shown as text.
    ok(
        d,
        &[
            "x509",
            "sign",
            "--csr",
            "ol.csr",
            "--ca-cert",
            "ca.pem",
            "--ca-key",
            "ca.key",
            "-o",
            "ol2.pem",
        ],
    );
    ok(d, &["x509", "verify", "--ca", "ca.pem", "ol2.pem"]);
    let text = String::from_utf8(ok(d, &["x509", "show", "ol2.pem"])).unwrap();
    assert!(
        text.contains("CN=openssl-leaf") && text.contains("SM2-with-SM3"),
        "{text}"
    );

    // CMS SignedData with the server's key: attached and detached, PKCS#7 and GM/T 0010 OIDs;
    // a tampered content exits 1 and writes nothing.
    std::fs::write(d.join("doc"), b"a document to sign\n".repeat(50)).unwrap();
    ok(
        d,
        &[
            "cms", "sign", "--cert", "s.pem", "--key", "s.key", "-i", "doc", "-o", "doc.p7",
        ],
    );
    ok(
        d,
        &[
            "cms", "verify", "--ca", "ca.pem", "-i", "doc.p7", "-o", "doc.out",
        ],
    );
    assert_eq!(
        std::fs::read(d.join("doc.out")).unwrap(),
        std::fs::read(d.join("doc")).unwrap()
    );
    ok(
        d,
        &[
            "cms",
            "sign",
            "--cert",
            "s.pem",
            "--key",
            "s.key",
            "--gm",
            "--detached",
            "--pem",
            "-i",
            "doc",
            "-o",
            "det.p7",
        ],
    );
    ok(
        d,
        &[
            "cms",
            "verify",
            "--ca",
            "ca.pem",
            "--content",
            "doc",
            "-i",
            "det.p7",
        ],
    );
    std::fs::write(d.join("doc2"), b"another document").unwrap();
    let o = run(
        d,
        &[
            "cms",
            "verify",
            "--ca",
            "ca.pem",
            "--content",
            "doc2",
            "-i",
            "det.p7",
            "-o",
            "never",
        ],
        None,
    );
    assert_eq!(code(&o), 1);
    assert!(!d.join("never").exists());
    let o = run(d, &["cms", "verify", "--ca", "o.pem", "-i", "doc.p7"], None);
    assert_eq!(code(&o), 1, "an untrusted signer");

    // EnvelopedData to the server's certificate, opened with its key; another key exits 1
    // and writes nothing.
    for form in [
        &[][..],
        &["--gm"],
        &["--cipher", "sm4-gcm"],
        &["--cfca", "--by-key-id", "--cipher", "sm4-gcm"],
    ] {
        let mut args = vec![
            "cms",
            "encrypt",
            "--recipient",
            "s.pem",
            "-i",
            "doc",
            "-o",
            "env.p7",
        ];
        args.extend(form);
        ok(d, &args);
        ok(
            d,
            &[
                "cms", "decrypt", "--key", "s.key", "--cert", "s.pem", "-i", "env.p7", "-o",
                "env.out",
            ],
        );
        assert_eq!(
            std::fs::read(d.join("env.out")).unwrap(),
            std::fs::read(d.join("doc")).unwrap()
        );
        let o = run(
            d,
            &[
                "cms", "decrypt", "--key", "ca.key", "-i", "env.p7", "-o", "never",
            ],
            None,
        );
        assert_eq!(code(&o), 1);
        assert!(!d.join("never").exists());
        // --ca asks for a signed delivery: an unsigned envelope, which anyone holding the
        // recipient's certificate can make, is refused with nothing written.
        let o = run(
            d,
            &[
                "cms", "decrypt", "--key", "s.key", "--ca", "ca.pem", "-i", "env.p7", "-o", "never",
            ],
            None,
        );
        assert_eq!(code(&o), 1);
        assert!(String::from_utf8_lossy(&o.stderr).contains("not signed"));
        assert!(!d.join("never").exists());
    }

    // SignedAndEnvelopedData: the CA signs, the server opens with its key once the CA's
    // signature verifies; without --ca a usage error, under another anchor exit 1, no output.
    ok(
        d,
        &[
            "cms",
            "encrypt",
            "--recipient",
            "s.pem",
            "--sign-cert",
            "ca.pem",
            "--sign-key",
            "ca.key",
            "--gm",
            "-i",
            "doc",
            "-o",
            "sed.p7",
        ],
    );
    let o = run(
        d,
        &[
            "cms", "decrypt", "--key", "s.key", "--ca", "ca.pem", "-i", "sed.p7", "-o", "sed.out",
        ],
        None,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("signed by:"));
    assert_eq!(
        std::fs::read(d.join("sed.out")).unwrap(),
        std::fs::read(d.join("doc")).unwrap()
    );
    let o = run(
        d,
        &[
            "cms", "decrypt", "--key", "s.key", "-i", "sed.p7", "-o", "never",
        ],
        None,
    );
    assert_eq!(code(&o), 2);
    let o = run(
        d,
        &[
            "cms", "decrypt", "--key", "s.key", "--ca", "o.pem", "-i", "sed.p7", "-o", "never",
        ],
        None,
    );
    assert_eq!(code(&o), 1, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!d.join("never").exists());

    // A key pair enveloped to the server (GB/T 35276), opened with its key, refused with another.
    ok(d, &["sm2", "keygen", "-o", "enc.key"]);
    ok(
        d,
        &[
            "cms",
            "wrap-key",
            "--recipient",
            "s.pem",
            "--key",
            "enc.key",
            "-o",
            "enc.env",
        ],
    );
    ok(
        d,
        &[
            "cms",
            "unwrap-key",
            "--key",
            "s.key",
            "-i",
            "enc.env",
            "-o",
            "enc2.key",
        ],
    );
    let o = run(
        d,
        &[
            "sm2", "sign", "--key", "enc2.key", "-i", "doc", "-o", "doc.sig",
        ],
        None,
    );
    assert_eq!(code(&o), 0);
    ok(
        d,
        &[
            "sm2", "verify", "--pub", "enc.key", "--sig", "doc.sig", "-i", "doc",
        ],
    );
    let o = run(
        d,
        &[
            "cms",
            "unwrap-key",
            "--key",
            "ca.key",
            "-i",
            "enc.env",
            "-o",
            "never",
        ],
        None,
    );
    assert_eq!(code(&o), 1);
    assert!(!d.join("never").exists());

    // Several certificates after one option: two revoked in one CRL, two recipients.
    ok(
        d,
        &[
            "x509",
            "crl",
            "--ca-cert",
            "ca.pem",
            "--ca-key",
            "ca.key",
            "--revoke",
            "s.pem",
            "ol2.pem",
            "-o",
            "two.crl",
        ],
    );
    let o = run(
        d,
        &[
            "x509", "verify", "--ca", "ca.pem", "--crl", "two.crl", "ol2.pem",
        ],
        None,
    );
    assert_eq!(code(&o), 1);
    ok(
        d,
        &[
            "cms",
            "encrypt",
            "--recipient",
            "s.pem",
            "ol2.pem",
            "-i",
            "doc",
            "-o",
            "two.p7",
        ],
    );
    for key in ["s.key", "ol.key"] {
        ok(
            d,
            &[
                "cms", "decrypt", "--key", key, "-i", "two.p7", "-o", "two.out",
            ],
        );
        assert_eq!(
            std::fs::read(d.join("two.out")).unwrap(),
            std::fs::read(d.join("doc")).unwrap()
        );
    }

    // Usage and input errors exit 2.
    assert_eq!(code(&run(d, &["x509", "verify", "s.pem"], None)), 2);
    assert_eq!(
        code(&run(d, &["x509", "verify", "--ca", "s.key", "s.pem"], None)),
        2
    );
    assert_eq!(code(&run(d, &["x509", "show", "s.key"], None)), 2);
}
