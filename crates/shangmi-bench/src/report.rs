//! The Markdown table, the target checks and the JSON records.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::Duration;

use crate::harness::{Figure, Plan, Unit, size_label};

pub struct Environment {
    pub cpu: String,
    pub backend: &'static str,
    pub openssl: String,
}

impl Environment {
    pub fn detect() -> Self {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| std::env::consts::ARCH.to_string());
        Environment {
            cpu,
            backend: shangmi::Backend::best().name(),
            openssl: openssl::version::version().to_string(),
        }
    }
}

/// Peers in the column order of the table.
const IMPLS: [&str; 4] = ["shangmi", "openssl", "rustcrypto", "per-counter"];

pub fn markdown(env: &Environment, figs: &[Figure], plan: &Plan, took: Duration) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "## shangmi-bench\n");
    let _ = writeln!(
        s,
        "CPU: {} (shangmi backend: {}); {}; {} rounds of {} ms per implementation, medians; \
         took {:.0} s.\n",
        env.cpu,
        env.backend,
        env.openssl,
        plan.rounds,
        plan.slice.as_millis(),
        took.as_secs_f64()
    );
    let present: Vec<&str> = IMPLS
        .iter()
        .copied()
        .filter(|i| figs.iter().any(|f| f.imp == *i))
        .collect();
    let _ = write!(s, "| op | size | unit |");
    for i in &present {
        let _ = write!(s, " {i} |");
    }
    let _ = writeln!(s, " shangmi / best peer |");
    let _ = write!(s, "|---|---|---|");
    for _ in &present {
        let _ = write!(s, "---:|");
    }
    let _ = writeln!(s, "---:|");
    for ((op, size), row) in rows(figs) {
        let unit = row.values().next().map_or(Unit::MBps, |f| f.unit);
        let _ = write!(s, "| {op} | {} | {} |", size_label(size), unit.label());
        for i in &present {
            match row.get(i) {
                Some(f) => {
                    let _ = write!(s, " {} |", number(f.median));
                }
                None => {
                    let _ = write!(s, " |");
                }
            }
        }
        let best_peer = row
            .values()
            .filter(|f| f.imp != "shangmi" && f.imp != "per-counter")
            .map(|f| f.median)
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
        match (row.get("shangmi"), best_peer) {
            (Some(me), Some(peer)) => {
                let _ = writeln!(s, " {:.2}x |", me.median / peer);
            }
            _ => {
                let _ = writeln!(s, " |");
            }
        }
    }
    let checks = target_checks(figs);
    if !checks.is_empty() {
        let _ = writeln!(s, "\nRatios the performance targets name (same run):\n");
        for c in checks {
            let _ = writeln!(s, "- {c}");
        }
    }
    s
}

type Key = (&'static str, Option<usize>);
type Row<'a> = BTreeMap<&'static str, &'a Figure>;

fn rows(figs: &[Figure]) -> Vec<(Key, Row<'_>)> {
    // Keep the order in which the cases were measured.
    let mut order: Vec<Key> = Vec::new();
    let mut map: BTreeMap<Key, Row> = BTreeMap::new();
    for f in figs {
        let key = (f.op, f.size);
        if !order.contains(&key) {
            order.push(key);
        }
        map.entry(key).or_default().insert(f.imp, f);
    }
    order
        .into_iter()
        .map(|k| (k, map.remove(&k).unwrap_or_default()))
        .collect()
}

fn find<'a>(figs: &'a [Figure], op: &str, size: Option<usize>, imp: &str) -> Option<&'a Figure> {
    figs.iter()
        .find(|f| f.op == op && f.size == size && f.imp == imp)
}

fn target_checks(figs: &[Figure]) -> Vec<String> {
    let mut out = Vec::new();
    let ratio = |a: Option<&Figure>, b: Option<&Figure>| a.zip(b).map(|(a, b)| a.median / b.median);
    let k8 = Some(8192);
    let mut line = |what: &str, r: Option<f64>, goal: f64| {
        if let Some(r) = r {
            let verdict = if r >= goal { "met" } else { "NOT met" };
            out.push(format!("{what}: {r:.2}x (target {goal}x: {verdict})"));
        }
    };
    line(
        "sm3 8 KiB, shangmi / openssl",
        ratio(
            find(figs, "sm3", k8, "shangmi"),
            find(figs, "sm3", k8, "openssl"),
        ),
        1.3,
    );
    line(
        "sm3 8 KiB, shangmi / rustcrypto",
        ratio(
            find(figs, "sm3", k8, "shangmi"),
            find(figs, "sm3", k8, "rustcrypto"),
        ),
        1.1,
    );
    line(
        "sm3-x16 8 KiB (shangmi) / sha256 8 KiB (openssl)",
        ratio(
            find(figs, "sm3-x16", k8, "shangmi"),
            find(figs, "sha256", k8, "openssl"),
        ),
        1.0,
    );
    let m1 = Some(1 << 20);
    line(
        "sm3-kdf 1 MiB, shangmi / per-counter",
        ratio(
            find(figs, "sm3-kdf", m1, "shangmi"),
            find(figs, "sm3-kdf", m1, "per-counter"),
        ),
        4.0,
    );
    for op in ["sm4-ecb", "sm4-cbc-dec", "sm4-ctr"] {
        line(
            &format!("{op} 8 KiB, shangmi / openssl"),
            ratio(find(figs, op, k8, "shangmi"), find(figs, op, k8, "openssl")),
            10.0,
        );
    }
    line(
        "sm4-cbc-enc 8 KiB, shangmi / openssl",
        ratio(
            find(figs, "sm4-cbc-enc", k8, "shangmi"),
            find(figs, "sm4-cbc-enc", k8, "openssl"),
        ),
        2.0,
    );
    let none = None;
    let vs_ecdsa = |op: &str, base: &str| {
        ratio(
            find(figs, op, none, "shangmi"),
            find(figs, base, none, "openssl"),
        )
    };
    line(
        "sm2-sign / ecdsa-p256-sign (openssl)",
        vs_ecdsa("sm2-sign", "ecdsa-p256-sign"),
        1.5,
    );
    line(
        "sm2-sign-pool / ecdsa-p256-sign (openssl)",
        vs_ecdsa("sm2-sign-pool", "ecdsa-p256-sign"),
        3.2,
    );
    line(
        "sm2-keygen / ecdsa-p256-sign (openssl)",
        vs_ecdsa("sm2-keygen", "ecdsa-p256-sign"),
        3.5,
    );
    line(
        "sm2-verify / ecdsa-p256-verify (openssl)",
        vs_ecdsa("sm2-verify", "ecdsa-p256-verify"),
        1.4,
    );
    line(
        "sm2-verify-precomputed / sm2-verify (shangmi)",
        ratio(
            find(figs, "sm2-verify-precomputed", none, "shangmi"),
            find(figs, "sm2-verify", none, "shangmi"),
        ),
        1.3,
    );
    let b32 = Some(32);
    for op in ["sm2-encrypt", "sm2-decrypt"] {
        line(
            &format!("{op} 32 B, shangmi / openssl"),
            ratio(
                find(figs, op, b32, "shangmi"),
                find(figs, op, b32, "openssl"),
            ),
            5.0,
        );
    }
    line(
        "sm2-encrypt 1 MiB / sm3 1 MiB (shangmi)",
        ratio(
            find(figs, "sm2-encrypt", m1, "shangmi"),
            find(figs, "sm3", m1, "shangmi"),
        ),
        0.7,
    );
    line(
        "sm2-encrypt 1 MiB (shangmi) / sm4-cbc-enc 1 MiB (openssl)",
        ratio(
            find(figs, "sm2-encrypt", m1, "shangmi"),
            find(figs, "sm4-cbc-enc", m1, "openssl"),
        ),
        1.0,
    );
    for op in ["sm4-gcm-seal", "sm4-gcm-open", "sm4-xts", "sm4-ctr"] {
        if let (Some(me), Some(aes)) = (
            find(figs, op, k8, "shangmi"),
            find(figs, "aes128-gcm", k8, "openssl"),
        ) {
            out.push(format!(
                "{op} 8 KiB / aes128-gcm 8 KiB (openssl): {:.2}x",
                me.median / aes.median
            ));
        }
    }
    out
}

fn number(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

fn escape_json(s: &str) -> String {
    s.chars()
        .flat_map(|c| match c {
            '"' => vec!['\\', '"'],
            '\\' => vec!['\\', '\\'],
            c if (c as u32) < 0x20 => format!("\\u{:04x}", c as u32).chars().collect(),
            c => vec![c],
        })
        .collect()
}

pub fn json(env: &Environment, figs: &[Figure]) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "{{\"cpu\": \"{}\", \"backend\": \"{}\", \"openssl\": \"{}\", \"results\": [",
        escape_json(&env.cpu),
        env.backend,
        escape_json(&env.openssl)
    );
    for (i, f) in figs.iter().enumerate() {
        let size = f.size.map_or("null".to_string(), |n| n.to_string());
        let _ = write!(
            s,
            "{}\n  {{\"op\": \"{}\", \"size\": {size}, \"impl\": \"{}\", \"unit\": \"{}\", \"median\": {:.3}}}",
            if i == 0 { "" } else { "," },
            f.op,
            f.imp,
            f.unit.label(),
            f.median
        );
    }
    s.push_str("\n]}\n");
    s
}
