//! The issues' target ratios checked against a run's figures, one line each.

use super::{fastest_peer, find};
use crate::harness::Figure;

/// The target ratios of the issues. Every ratio is between two rates timed in the same case, in
/// alternating rounds: a peer of the op, or a yardstick algorithm timed alongside it.
pub(super) fn target_checks(figs: &[Figure]) -> Vec<String> {
    let mut out = Vec::new();
    let ratio = |a: Option<&Figure>, b: Option<&Figure>| a.zip(b).map(|(a, b)| a.median / b.median);
    let me = |op: &str, size: Option<usize>| find(figs, op, size, "shangmi");
    let (k8, m1, b32, none) = (Some(8192), Some(1 << 20), Some(32), None);
    let mut line = |what: &str, r: Option<f64>, goal: f64| {
        if let Some(r) = r {
            let verdict = if r >= goal { "met" } else { "NOT met" };
            out.push(format!("{what}: {r:.2}x (target {goal}x: {verdict})"));
        }
    };
    line(
        "sm3 8 KiB, shangmi / openssl",
        ratio(me("sm3", k8), find(figs, "sm3", k8, "openssl")),
        1.3,
    );
    line(
        "sm3 8 KiB, shangmi / fastest peer",
        ratio(me("sm3", k8), fastest_peer(figs, "sm3", k8)),
        1.1,
    );
    line(
        "sm3-x16 8 KiB (shangmi) / SHA-256 (openssl) on the same 16 messages",
        ratio(
            me("sm3-x16", k8),
            find(figs, "sm3-x16", k8, "yardstick:sha256"),
        ),
        1.0,
    );
    line(
        "sm3-kdf 1 MiB, shangmi / per-counter",
        ratio(me("sm3-kdf", m1), find(figs, "sm3-kdf", m1, "per-counter")),
        4.0,
    );
    for op in ["sm4-ecb", "sm4-cbc-dec", "sm4-ctr"] {
        line(
            &format!("{op} 8 KiB, shangmi / openssl"),
            ratio(me(op, k8), find(figs, op, k8, "openssl")),
            10.0,
        );
    }
    line(
        "sm4-cbc-enc 8 KiB, shangmi / openssl",
        ratio(
            me("sm4-cbc-enc", k8),
            find(figs, "sm4-cbc-enc", k8, "openssl"),
        ),
        2.0,
    );
    let ecdsa_sign = |op: &str| {
        ratio(
            me(op, none),
            find(figs, op, none, "yardstick:ecdsa-p256-sign"),
        )
    };
    line(
        "sm2-sign / ecdsa-p256-sign (openssl)",
        ecdsa_sign("sm2-sign"),
        1.5,
    );
    line(
        "sm2-sign-pool / ecdsa-p256-sign (openssl)",
        ecdsa_sign("sm2-sign-pool"),
        3.2,
    );
    line(
        "sm2-keygen / ecdsa-p256-sign (openssl)",
        ecdsa_sign("sm2-keygen"),
        3.5,
    );
    line(
        "sm2-verify / ecdsa-p256-verify (openssl)",
        ratio(
            me("sm2-verify", none),
            find(figs, "sm2-verify", none, "yardstick:ecdsa-p256-verify"),
        ),
        1.4,
    );
    line(
        "sm2-verify-precomputed / sm2-verify (shangmi)",
        ratio(
            me("sm2-verify-precomputed", none),
            find(figs, "sm2-verify-precomputed", none, "yardstick:sm2-verify"),
        ),
        1.3,
    );
    line(
        "sm2-ecdh / x25519 (aws-lc-rs) (1.0x on IFMA hosts; 0.8x shown, for ADX hosts)",
        ratio(
            me("sm2-ecdh", none),
            find(figs, "sm2-ecdh", none, "yardstick:x25519"),
        ),
        0.8,
    );
    line(
        "sm2-ecdh-batch (64, one thread) / the same one by one, per agreement (1.5x with IFMA lanes)",
        ratio(
            me("sm2-ecdh-batch", none),
            find(
                figs,
                "sm2-ecdh-batch",
                none,
                "yardstick:sm2-ecdh-one-by-one",
            ),
        ),
        1.5,
    );
    let batch = |op: &str| ratio(me(op, none), find(figs, op, none, "yardstick:sm2-verify"));
    line(
        "sm2-verify-batch (64, one thread) / sm2-verify, per signature (1.5x with IFMA lanes)",
        batch("sm2-verify-batch"),
        1.5,
    );
    line(
        "sm2-verify-batch-2t (64, two threads) / sm2-verify, per signature",
        batch("sm2-verify-batch-2t"),
        1.8,
    );
    for op in ["sm2-encrypt", "sm2-decrypt"] {
        line(
            &format!("{op} 32 B, shangmi / openssl"),
            ratio(me(op, b32), find(figs, op, b32, "openssl")),
            5.0,
        );
        line(
            &format!("{op} 32 B, shangmi / fastest peer"),
            ratio(me(op, b32), fastest_peer(figs, op, b32)),
            1.0,
        );
    }
    line(
        "sm2-encrypt 1 MiB / sm3 1 MiB (shangmi)",
        ratio(
            me("sm2-encrypt", m1),
            find(figs, "sm2-encrypt", m1, "yardstick:sm3"),
        ),
        0.7,
    );
    line(
        "sm2-encrypt 1 MiB (shangmi) / sm4-cbc-enc 1 MiB (openssl)",
        ratio(
            me("sm2-encrypt", m1),
            find(figs, "sm2-encrypt", m1, "yardstick:openssl-sm4-cbc-enc"),
        ),
        1.0,
    );
    line(
        "sm2-encrypt 1 MiB, shangmi / gmsm",
        ratio(me("sm2-encrypt", m1), find(figs, "sm2-encrypt", m1, "gmsm")),
        1.0,
    );
    for op in ["sm4-gcm-seal", "sm4-gcm-open", "sm4-xts", "sm4-ctr"] {
        if let Some(r) = ratio(me(op, k8), find(figs, op, k8, "yardstick:aes128-gcm")) {
            out.push(format!("{op} 8 KiB / aes128-gcm 8 KiB (openssl): {r:.2}x"));
        }
    }
    out
}
