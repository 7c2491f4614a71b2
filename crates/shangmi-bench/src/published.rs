//! The published SM-versus-international comparisons, reproduced from this run's figures:
//! SM3 vs SHA-256, SM2 signatures vs ECDSA (P-256, secp256k1) and RSA-2048/3072, SM2
//! encryption vs RSA-OAEP, SM4 vs AES-128 (ECB, CBC). Each ratio is given for shangmi and for
//! OpenSSL's SM implementation against the international algorithm (OpenSSL), with two
//! statistics of the same rounds: our median, and the studies' mean after dropping the largest
//! and smallest round. A ratio above 1 means the SM algorithm is faster.

use std::fmt::Write;

use crate::harness::{Figure, size_label};

fn get<'a>(figs: &'a [Figure], op: &str, size: Option<usize>, imp: &str) -> Option<&'a Figure> {
    figs.iter()
        .find(|f| f.op == op && f.size == size && f.imp == imp)
}

/// "1.23 / 1.25": median ratio / trimmed-mean ratio, or "-" if a figure is missing.
fn ratio(figs: &[Figure], a: (&str, &str), b: (&str, &str), size: Option<usize>) -> String {
    match (get(figs, a.0, size, a.1), get(figs, b.0, size, b.1)) {
        (Some(x), Some(y)) if y.median > 0.0 && y.trimmed > 0.0 => {
            format!("{:.2} / {:.2}", x.median / y.median, x.trimmed / y.trimmed)
        }
        _ => "-".into(),
    }
}

fn value(figs: &[Figure], op: &str, size: Option<usize>, imp: &str) -> String {
    get(figs, op, size, imp).map_or("-".into(), |f| {
        if f.median >= 100.0 {
            format!("{:.0}", f.median)
        } else {
            format!("{:.1}", f.median)
        }
    })
}

fn sizes_of(figs: &[Figure], op: &str) -> Vec<usize> {
    let mut s: Vec<usize> = figs
        .iter()
        .filter(|f| f.op == op)
        .filter_map(|f| f.size)
        .collect();
    s.sort_unstable();
    s.dedup();
    s
}

pub fn markdown(figs: &[Figure]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\n## The published comparisons, reproduced\n\n\
         Ratios SM / international algorithm in this run, as `median / trimmed mean` (the \
         studies' statistic: the mean of the rounds without the largest and the smallest). \
         Above 1: the SM algorithm is faster. `shangmi` is shangmi's SM algorithm, `OpenSSL SM` \
         OpenSSL's; the international algorithm is always OpenSSL's.\n"
    );

    // SM3 vs SHA-256.
    let sizes = sizes_of(figs, "sha256");
    if !sizes.is_empty() {
        let _ = writeln!(s, "### SM3 vs SHA-256 (MB/s)\n");
        let _ = writeln!(
            s,
            "| size | SHA-256 | SM3 shangmi | SM3 OpenSSL | shangmi / SHA-256 | OpenSSL SM / SHA-256 |\n|---|---:|---:|---:|---:|---:|"
        );
        for n in sizes {
            let z = Some(n);
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} |",
                size_label(z),
                value(figs, "sha256", z, "openssl"),
                value(figs, "sm3", z, "shangmi"),
                value(figs, "sm3", z, "openssl"),
                ratio(figs, ("sm3", "shangmi"), ("sha256", "openssl"), z),
                ratio(figs, ("sm3", "openssl"), ("sha256", "openssl"), z),
            );
        }
    }

    // Signatures.
    if get(figs, "ecdsa-p256-sign", None, "openssl").is_some() {
        let _ = writeln!(
            s,
            "\n### SM2 signatures vs ECDSA and RSA (operations per second)\n"
        );
        let _ = writeln!(
            s,
            "| operation | SM2 shangmi | SM2 OpenSSL | ECDSA P-256 | ECDSA secp256k1 | RSA-2048 | RSA-3072 |\n|---|---:|---:|---:|---:|---:|---:|"
        );
        let rows = [
            ("sign, hashing the message", "sign"),
            ("verify, hashing the message", "verify"),
            ("sign a digest", "sign-digest"),
            ("verify a digest", "verify-digest"),
        ];
        for (label, suffix) in rows {
            let sm2 = format!("sm2-{suffix}");
            let _ = writeln!(
                s,
                "| {label} | {} | {} | {} | {} | {} | {} |",
                value(figs, &sm2, None, "shangmi"),
                value(figs, &sm2, None, "openssl"),
                value(figs, &format!("ecdsa-p256-{suffix}"), None, "openssl"),
                value(figs, &format!("ecdsa-secp256k1-{suffix}"), None, "openssl"),
                value(figs, &format!("rsa2048-{suffix}"), None, "openssl"),
                value(figs, &format!("rsa3072-{suffix}"), None, "openssl"),
            );
        }
        let _ = writeln!(
            s,
            "\n| SM2 / international | who | vs ECDSA P-256 | vs ECDSA secp256k1 | vs RSA-2048 | vs RSA-3072 |\n|---|---|---:|---:|---:|---:|"
        );
        for (label, suffix) in rows {
            let sm2 = format!("sm2-{suffix}");
            for (who, imp) in [("shangmi", "shangmi"), ("OpenSSL SM", "openssl")] {
                let _ = writeln!(
                    s,
                    "| {label} | {who} | {} | {} | {} | {} |",
                    ratio(
                        figs,
                        (&sm2, imp),
                        (&format!("ecdsa-p256-{suffix}"), "openssl"),
                        None
                    ),
                    ratio(
                        figs,
                        (&sm2, imp),
                        (&format!("ecdsa-secp256k1-{suffix}"), "openssl"),
                        None
                    ),
                    ratio(
                        figs,
                        (&sm2, imp),
                        (&format!("rsa2048-{suffix}"), "openssl"),
                        None
                    ),
                    ratio(
                        figs,
                        (&sm2, imp),
                        (&format!("rsa3072-{suffix}"), "openssl"),
                        None
                    ),
                );
            }
        }
    }

    // Encryption.
    let sizes = sizes_of(figs, "rsa2048-oaep-encrypt");
    if !sizes.is_empty() {
        let _ = writeln!(
            s,
            "\n### SM2 encryption vs RSA-OAEP (SHA-256; messages over one OAEP block are cut into \
             blocks, as the studies did)\n\nUp to 1 KiB in operations per second, above in MB/s.\n"
        );
        for (what, op, rsa) in [
            ("encrypt", "sm2-encrypt", "oaep-encrypt"),
            ("decrypt", "sm2-decrypt", "oaep-decrypt"),
        ] {
            let _ = writeln!(
                s,
                "| {what} | SM2 shangmi | SM2 OpenSSL | RSA-2048 | RSA-3072 | shangmi / RSA-2048 | shangmi / RSA-3072 | OpenSSL SM / RSA-2048 | OpenSSL SM / RSA-3072 |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|"
            );
            for &n in &sizes {
                let z = Some(n);
                let r2 = format!("rsa2048-{rsa}");
                let r3 = format!("rsa3072-{rsa}");
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    size_label(z),
                    value(figs, op, z, "shangmi"),
                    value(figs, op, z, "openssl"),
                    value(figs, &r2, z, "openssl"),
                    value(figs, &r3, z, "openssl"),
                    ratio(figs, (op, "shangmi"), (&r2, "openssl"), z),
                    ratio(figs, (op, "shangmi"), (&r3, "openssl"), z),
                    ratio(figs, (op, "openssl"), (&r2, "openssl"), z),
                    ratio(figs, (op, "openssl"), (&r3, "openssl"), z),
                );
            }
            s.push('\n');
        }
    }

    // SM4 vs AES.
    let sizes = sizes_of(figs, "aes128-ecb");
    if !sizes.is_empty() {
        let _ = writeln!(s, "\n### SM4 vs AES-128 (MB/s)\n");
        for (mode, sm4, aes) in [
            ("ECB", "sm4-ecb", "aes128-ecb"),
            ("CBC encrypt", "sm4-cbc-enc", "aes128-cbc-enc"),
            ("CBC decrypt", "sm4-cbc-dec", "aes128-cbc-dec"),
            ("CTR", "sm4-ctr", "aes128-ctr"),
        ] {
            let _ = writeln!(
                s,
                "| {mode} | AES-128 | SM4 shangmi | SM4 OpenSSL | shangmi / AES | OpenSSL SM / AES |\n|---|---:|---:|---:|---:|---:|"
            );
            for &n in &sizes {
                let z = Some(n);
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {} | {} |",
                    size_label(z),
                    value(figs, aes, z, "openssl"),
                    value(figs, sm4, z, "shangmi"),
                    value(figs, sm4, z, "openssl"),
                    ratio(figs, (sm4, "shangmi"), (aes, "openssl"), z),
                    ratio(figs, (sm4, "openssl"), (aes, "openssl"), z),
                );
            }
            s.push('\n');
        }
    }
    s
}
