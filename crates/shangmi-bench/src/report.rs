//! The Markdown table, the target checks and the JSON records.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::Duration;

use crate::harness::{Figure, Plan, Unit, size_label};

mod targets;
use targets::target_checks;

pub struct Environment {
    pub cpu: String,
    pub backend: String,
    pub openssl: String,
    /// impl -> version, for the report and the JSON records.
    pub versions: Vec<(String, String)>,
    /// Why the Go peers are absent, when they are.
    pub go_missing: Option<String>,
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
        let openssl = openssl::version::version().to_string();
        let versions = vec![
            ("shangmi".to_string(), env!("CARGO_PKG_VERSION").to_string()),
            ("openssl".to_string(), openssl.clone()),
            (
                "rustcrypto".to_string(),
                format!(
                    "sm2 {}, sm3 {}, sm4 {}",
                    env!("PEER_RUSTCRYPTO_SM2"),
                    env!("PEER_RUSTCRYPTO_SM3"),
                    env!("PEER_RUSTCRYPTO_SM4")
                ),
            ),
            ("libsm".to_string(), env!("PEER_LIBSM").to_string()),
            (
                "gmcrypto".to_string(),
                format!("gmcrypto-core {}", env!("PEER_GMCRYPTO")),
            ),
        ];
        Environment {
            cpu,
            backend: profile_label(shangmi::Backend::best()),
            openssl,
            versions,
            go_missing: None,
        }
    }

    pub fn version(&self, imp: &str) -> &str {
        self.versions
            .iter()
            .find(|(i, _)| i == imp)
            .map_or("", |(_, v)| v.as_str())
    }
}

/// Implementations in the column order of the table.
pub const IMPLS: [&str; 9] = [
    "shangmi",
    "openssl",
    "aws-lc-rs",
    "rustcrypto",
    "libsm",
    "gmcrypto",
    "gmsm",
    "tjfoc",
    "per-counter",
];

pub fn markdown(env: &Environment, figs: &[Figure], plan: &Plan, took: Duration) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "## shangmi-bench\n");
    let _ = writeln!(
        s,
        "CPU: {} (shangmi backend: {}); {} rounds of {} ms per implementation, medians; \
         took {:.0} s.\n",
        env.cpu,
        env.backend,
        plan.rounds,
        plan.slice.as_millis(),
        took.as_secs_f64()
    );
    let versions: Vec<String> = env
        .versions
        .iter()
        .map(|(i, v)| format!("{i} {v}"))
        .collect();
    let _ = writeln!(s, "Versions: {}.\n", versions.join("; "));
    if let Some(why) = &env.go_missing {
        let _ = writeln!(s, "Go peers (gmsm, tjfoc) not measured: {why}.\n");
    }
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
            match row.get(*i) {
                Some(f) => {
                    let _ = write!(s, " {} |", number(f.median));
                }
                None => {
                    let _ = write!(s, " |");
                }
            }
        }
        let best_peer = best_peer(&row);
        match (row.get("shangmi"), best_peer) {
            (Some(me), Some(peer)) => {
                let _ = writeln!(s, " {:.2}x |", me.median / peer);
            }
            _ => {
                let _ = writeln!(s, " |");
            }
        }
    }
    let losses: Vec<String> = rows(figs)
        .into_iter()
        .filter_map(|((op, size), row)| {
            let me = row.get("shangmi")?;
            let (who, peer) = row
                .values()
                .filter(|f| is_peer(&f.imp))
                .map(|f| (f.imp.clone(), f.median))
                .max_by(|a, b| a.1.total_cmp(&b.1))?;
            (me.median < peer).then(|| {
                format!(
                    "{op} {}: {who} {:.2}x shangmi",
                    size_label(size),
                    peer / me.median
                )
            })
        })
        .collect();
    if losses.is_empty() {
        let _ = writeln!(
            s,
            "\nshangmi is the fastest on every op with a peer in this run."
        );
    } else {
        let _ = writeln!(s, "\nWhere a peer is faster than shangmi in this run:\n");
        for l in losses {
            let _ = writeln!(s, "- {l}");
        }
    }
    s.push_str(&tiers_table(figs));
    let checks = target_checks(figs);
    if !checks.is_empty() {
        let _ = writeln!(s, "\nRatios the performance targets name (same run):\n");
        for c in checks {
            let _ = writeln!(s, "- {c}");
        }
    }
    s
}

/// Another implementation of the same op (not shangmi or one of its other tiers, not a
/// baseline or a yardstick).
fn is_peer(imp: &str) -> bool {
    imp != "shangmi"
        && !imp.starts_with("shangmi-")
        && imp != "per-counter"
        && !imp.starts_with("yardstick:")
}

/// shangmi's other tiers beside the one it picked and OpenSSL, in the cases that time them.
fn tiers_table(figs: &[Figure]) -> String {
    let mut tiers: Vec<&str> = Vec::new();
    for f in figs {
        if let Some(t) = f.imp.strip_prefix("shangmi-")
            && !tiers.contains(&t)
        {
            tiers.push(t);
        }
    }
    // Fastest profile first, so the last column is the portable code.
    let rank = |t: &str| {
        ["avx512", "avx2-gfni", "avx2-vaes", "avx2", "portable"]
            .iter()
            .position(|r| *r == t)
    };
    tiers.sort_by_key(|t| rank(t).unwrap_or(usize::MAX));
    let mut s = String::new();
    if tiers.is_empty() {
        return s;
    }
    let _ = write!(
        s,
        "\n### shangmi's other backends (same cases, same alternation)\n\n\
         What shangmi does on CPUs without this one's extensions, forced onto each profile \
         here (what each algorithm runs on in each: below the table). `portable` is the \
         constant-time code with no SIMD (bitsliced S-box); OpenSSL's SM4 uses table lookups \
         indexed by data.\n\n| op | size | {} (chosen) |",
        shangmi::Backend::best().name()
    );
    for t in &tiers {
        let _ = write!(s, " {t} |");
    }
    let _ = writeln!(s, " openssl | {} / openssl |", tiers[tiers.len() - 1]);
    let _ = write!(s, "|---|---|---:|");
    for _ in &tiers {
        let _ = write!(s, "---:|");
    }
    let _ = writeln!(s, "---:|---:|");
    for ((op, size), row) in rows(figs) {
        if !tiers
            .iter()
            .any(|t| row.contains_key(&format!("shangmi-{t}")))
        {
            continue;
        }
        let cell = |imp: &str| row.get(imp).map_or(String::new(), |f| number(f.median));
        let _ = write!(s, "| {op} | {} | {} |", size_label(size), cell("shangmi"));
        for t in &tiers {
            let _ = write!(s, " {} |", cell(&format!("shangmi-{t}")));
        }
        let last = row.get(format!("shangmi-{}", tiers[tiers.len() - 1]).as_str());
        let ratio = match (last, row.get("openssl")) {
            (Some(a), Some(b)) => format!("{:.2}x", a.median / b.median),
            _ => String::new(),
        };
        let _ = writeln!(s, " {} | {ratio} |", cell("openssl"));
    }
    let _ = writeln!(s);
    for b in shangmi::Backend::available().into_iter().rev() {
        let _ = writeln!(s, "- {}", profile_label(b));
    }
    s
}

/// A profile and what each algorithm runs on in it: `avx2-vaes (sm3 bmi2, sm4 vaes-avx2, ...)`.
pub fn profile_label(b: shangmi::Backend) -> String {
    let list: Vec<String> = shangmi::implementations(b)
        .map(|l| l.iter().map(|(a, i)| format!("{a} {i}")).collect())
        .unwrap_or_default();
    format!("{} ({})", b.name(), list.join(", "))
}

type Key = (String, Option<usize>);
type Row<'a> = BTreeMap<String, &'a Figure>;

fn best_peer(row: &Row<'_>) -> Option<f64> {
    row.values()
        .filter(|f| is_peer(&f.imp))
        .map(|f| f.median)
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
}

fn rows(figs: &[Figure]) -> Vec<(Key, Row<'_>)> {
    // Keep the order in which the cases were measured.
    let mut order: Vec<Key> = Vec::new();
    let mut map: BTreeMap<Key, Row> = BTreeMap::new();
    for f in figs {
        let key = (f.op.clone(), f.size);
        if !order.contains(&key) {
            order.push(key.clone());
        }
        map.entry(key).or_default().insert(f.imp.clone(), f);
    }
    order
        .into_iter()
        .map(|k| {
            let row = map.remove(&k).unwrap_or_default();
            (k, row)
        })
        .collect()
}

/// The fastest implementation of an op other than shangmi (and the per-counter baseline).
fn fastest_peer<'a>(figs: &'a [Figure], op: &str, size: Option<usize>) -> Option<&'a Figure> {
    figs.iter()
        .filter(|f| f.op == op && f.size == size && is_peer(&f.imp))
        .max_by(|a, b| a.median.total_cmp(&b.median))
}

fn find<'a>(figs: &'a [Figure], op: &str, size: Option<usize>, imp: &str) -> Option<&'a Figure> {
    figs.iter()
        .find(|f| f.op == op && f.size == size && f.imp == imp)
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
            "{}\n  {{\"op\": \"{}\", \"size\": {size}, \"impl\": \"{}\", \"peer_version\": \"{}\", \"unit\": \"{}\", \"median\": {:.3}, \"trimmed_mean\": {:.3}}}",
            if i == 0 { "" } else { "," },
            f.op,
            f.imp,
            escape_json(env.version(&f.imp)),
            f.unit.label(),
            f.median,
            f.trimmed
        );
    }
    s.push_str("\n]}\n");
    s
}

/// Writes report.md, results.json and the SVG charts into `dir`.
pub fn write_dir(
    dir: &std::path::Path,
    markdown_text: &str,
    env: &Environment,
    figs: &[Figure],
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir.join("charts"))?;
    let imps: Vec<String> = IMPLS
        .iter()
        .filter(|i| figs.iter().any(|f| f.imp == **i))
        .map(|i| i.to_string())
        .chain(
            figs.iter()
                .map(|f| f.imp.clone())
                .filter(|i| !IMPLS.contains(&i.as_str())),
        )
        .fold(Vec::new(), |mut v, i| {
            if !v.contains(&i) {
                v.push(i);
            }
            v
        });
    let mut charts = crate::charts::throughput(figs, &imps, &dir.join("charts"));
    for (name, ops, title) in [
        (
            "sm2-rates.svg",
            &["sm2-sign", "sm2-verify", "sm2-keygen"][..],
            "SM2 sign, verify, keygen: operations per second",
        ),
        (
            "signatures-vs-international.svg",
            &[
                "sm2-sign",
                "ecdsa-p256-sign",
                "ecdsa-secp256k1-sign",
                "rsa2048-sign",
                "sm2-verify",
                "ecdsa-p256-verify",
                "ecdsa-secp256k1-verify",
                "rsa2048-verify",
            ][..],
            "Signatures: SM2 vs ECDSA and RSA-2048 (operations per second)",
        ),
    ] {
        if crate::charts::bars(figs, &imps, ops, title, &dir.join("charts").join(name)).is_ok() {
            charts.push(name.to_string());
        }
    }
    let mut md = markdown_text.to_string();
    md.push_str("\n## Charts\n\n");
    for c in &charts {
        md.push_str(&format!("![{c}](charts/{c})\n\n"));
    }
    std::fs::write(dir.join("report.md"), md)?;
    std::fs::write(dir.join("results.json"), json(env, figs))
}
