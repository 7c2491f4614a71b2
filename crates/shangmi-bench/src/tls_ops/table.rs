//! The TLS table: rates, then shangmi's ratio to each reference.

use super::drive::{GATHERED, IN_FLIGHT, INTERLEAVED, ONE_BY_ONE};
use super::{AWS_HYBRID, OPENSSL4, OPENSSL4_PROVIDER, OPS, SM_HYBRID};
use crate::harness::Figure;

const ALGORITHM: &str = "shangmi SM4-GCM (algorithm)";

/// The TLS table: rates, then shangmi's ratio to each reference measured in the same rounds.
pub fn markdown(figs: &[Figure], openssl4: Result<&str, &str>) -> String {
    use std::fmt::Write as _;
    let cols = [
        "shangmi",
        "rustls+aws-lc-rs X25519",
        "rustls+aws-lc-rs P-256",
        OPENSSL4,
    ];
    let get = |op: &str, imp: &str| {
        figs.iter()
            .find(|f| f.op == op && f.imp == imp)
            .map(|f| f.median)
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\n### TLS 1.3 (RFC 8998 on shangmi beside TLS 1.3 with P-256/X25519 and AES)\n"
    );
    let _ = writeln!(
        s,
        "shangmi: curveSM2 + sm2sig_sm3 + TLS_SM4_GCM_SM3 on the rustls provider (server key \
         signing with hedged nonces, as `shangmi tls serve` runs it by default); rustls 0.23 \
         with aws-lc-rs: X25519 or P-256 + ECDSA-P256 + TLS_AES_128_GCM_SHA256; {}. \
         Handshakes per second of each side's own time (client and server in one thread over \
         memory); records: MB/s of 16 KiB records sealed and opened, beside shangmi's SM4-GCM \
         sealing and opening the same 16 KiB directly.\n",
        match openssl4 {
            Ok(v) =>
                format!("OpenSSL 4.0 ({v}) with its own SM2/SM3/SM4 (bench/tls/openssl_tls.c)"),
            Err(why) => format!("OpenSSL 4.0 not measured: {why}"),
        }
    );
    let _ = writeln!(
        s,
        "| op | {} | shangmi / X25519 | shangmi / P-256 | shangmi / OpenSSL 4 |",
        cols.join(" | ")
    );
    let _ = writeln!(s, "|---|{}---:|---:|---:|", "---:|".repeat(cols.len()));
    for op in OPS {
        let unit = if op == OPS[4] { "MB/s" } else { "/s" };
        let _ = write!(s, "| {op} ({unit}) |");
        for c in cols {
            match get(op, c) {
                Some(v) => {
                    let _ = write!(s, " {v:.0} |");
                }
                None => s.push_str(" |"),
            }
        }
        let me = get(op, "shangmi");
        for c in &cols[1..] {
            match (me, get(op, c)) {
                (Some(a), Some(b)) if b > 0.0 => {
                    let _ = write!(s, " {:.2}x |", a / b);
                }
                _ => s.push_str(" |"),
            }
        }
        s.push('\n');
    }
    if let (Some(_), Some(_)) = (get(OPS[0], SM_HYBRID), get(OPS[0], AWS_HYBRID)) {
        let _ = writeln!(
            s,
            "\nPost-quantum hybrids, full handshakes (the same setups with only the hybrid \
             group: curveSM2MLKEM768 with ML-KEM from libcrux-ml-kem, X25519MLKEM768 in \
             aws-lc-rs):\n"
        );
        let _ = writeln!(
            s,
            "| op | {SM_HYBRID} | {AWS_HYBRID} | shangmi / aws-lc-rs |\n|---|---:|---:|---:|"
        );
        for op in &OPS[..2] {
            if let (Some(a), Some(b)) = (get(op, SM_HYBRID), get(op, AWS_HYBRID)) {
                let _ = writeln!(s, "| {op} (/s) | {a:.0} | {b:.0} | {:.2}x |", a / b);
            }
        }
    }
    let in_flight = [GATHERED, ONE_BY_ONE, cols[1]].map(|c| get(INTERLEAVED, c));
    if let [Some(g), Some(one), Some(x)] = in_flight {
        let _ = writeln!(
            s,
            "\nServer full handshakes with {IN_FLIGHT} clients in flight, interleaved in one \
             thread: shangmi with the ClientHellos' curveSM2 agreements gathered into one call \
             (the gateway's path; {}), one by one, and rustls + aws-lc-rs X25519:\n",
            if shangmi::sm2::EphemeralSecret::many_in_lanes() {
                "eight at a time in IFMA lanes on this CPU"
            } else {
                "no IFMA lanes on this CPU, so one after another with a shared inversion"
            }
        );
        let _ = writeln!(
            s,
            "| op | {GATHERED} | {ONE_BY_ONE} | {} | gathered / one by one | gathered / X25519 \
             |\n|---|---:|---:|---:|---:|---:|\n| {INTERLEAVED} (/s) | {g:.0} | {one:.0} | \
             {x:.0} | {:.2}x | {:.2}x |",
            cols[1],
            g / one,
            g / x
        );
    }
    if get(OPS[0], OPENSSL4_PROVIDER).is_some() {
        let _ = writeln!(
            s,
            "\nOpenSSL 4.0's libssl unchanged, with `shangmi.so` preferred through \
             `OPENSSL_CONF` (the same loop, the provider serving curveSM2, sm2sig_sm3, SM3 and \
             SM4-GCM):\n"
        );
        let _ = writeln!(
            s,
            "| op | {OPENSSL4} | {OPENSSL4_PROVIDER} | with / without |\n|---|---:|---:|---:|"
        );
        for op in OPS {
            let (Some(a), Some(b)) = (get(op, OPENSSL4_PROVIDER), get(op, OPENSSL4)) else {
                continue;
            };
            let unit = if op == OPS[4] { "MB/s" } else { "/s" };
            let _ = writeln!(s, "| {op} ({unit}) | {b:.0} | {a:.0} | {:.2}x |", a / b);
        }
    }
    if let (Some(rec), Some(alg)) = (get(OPS[4], "shangmi"), get(OPS[4], ALGORITHM)) {
        let _ = writeln!(
            s,
            "\nRecords against the algorithm: shangmi's 16 KiB records run at {rec:.0} MB/s, its \
             SM4-GCM on the same data at {alg:.0} MB/s: {:.2}x (the record layer's cost).",
            rec / alg
        );
        if let Some(aws) = get(OPS[4], "rustls+aws-lc-rs X25519") {
            let _ = writeln!(
                s,
                "AES-128-GCM records through rustls + aws-lc-rs: {aws:.0} MB/s (SM4 / AES {:.2}x).",
                rec / aws
            );
        }
    }
    s
}
