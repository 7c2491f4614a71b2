//! `--check-peers`: the in-bench figures of emmansun/gmsm beside what gmsm's own benchmarks
//! (`go test -bench`, run here on the same machine) report for the same ops and sizes, so
//! anyone can see that the harness measures the peer as fairly as the peer measures itself.

use std::process::Command;

use crate::go_peers;
use crate::harness::{self, Case, Plan};
use crate::{sm3_ops, sm4_ops};

/// An op of the bench and gmsm's own benchmark of it (package, function, message size).
struct Pair {
    case: fn() -> Case,
    package: &'static str,
    bench: &'static str,
}

/// gmsm's own message sizes: 8 KiB, 1 KiB for ECB, and 8 KiB - 5 for CTR (`almost8K`).
const PAIRS: [Pair; 5] = [
    Pair {
        case: || sm3_ops::sm3_case(8192),
        package: "github.com/emmansun/gmsm/sm3",
        bench: "BenchmarkHash8K",
    },
    Pair {
        case: || sm4_ops::ecb_case(1024),
        package: "github.com/emmansun/gmsm/cipher",
        bench: "BenchmarkSM4ECBEncrypt1K",
    },
    Pair {
        case: || sm4_ops::cbc_enc_case(8192),
        package: "github.com/emmansun/gmsm/cipher",
        bench: "BenchmarkSM4CBCEncrypt8K",
    },
    Pair {
        case: || sm4_ops::ctr_case(8192 - 5),
        package: "github.com/emmansun/gmsm/cipher",
        bench: "BenchmarkSM4CTR8K",
    },
    Pair {
        case: || sm4_ops::gcm_case(8192, true),
        package: "github.com/emmansun/gmsm/cipher",
        bench: "BenchmarkSM4GCMSeal8K",
    },
];

/// gmsm's own figure: the median MB/s of `rounds` runs of one benchmark function.
fn own_benchmark(pair: &Pair, rounds: usize) -> Result<f64, String> {
    let out = Command::new("go")
        .args(["test", "-run", "^$", "-benchtime", "300ms"])
        .arg(format!("-count={rounds}"))
        .arg(format!("-bench=^{}$", pair.bench))
        .arg(pair.package)
        .current_dir(go_peers::source_dir())
        .output()
        .map_err(|e| format!("go test: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let rates: Vec<f64> = text
        .lines()
        .filter(|l| l.starts_with(pair.bench))
        .filter_map(|l| {
            let mut words = l.split_whitespace().rev();
            (words.next() == Some("MB/s")).then(|| words.next()?.parse().ok())?
        })
        .collect();
    if rates.is_empty() {
        return Err(format!(
            "no figure from go test -bench {} ({})",
            pair.bench,
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ));
    }
    Ok(harness::median(rates))
}

/// Runs the check; prints a table and whether each pair agrees within 10%.
pub fn run(plan: &Plan) -> Result<(), String> {
    let mut go = go_peers::start(plan)?;
    println!("| op | size | gmsm in shangmi-bench | gmsm `go test -bench` | ratio | |");
    println!("|---|---|---:|---:|---:|---|");
    let mut all_agree = true;
    for pair in &PAIRS {
        let mut case = (pair.case)();
        let ours = harness::measure(&mut case, plan, &mut go)
            .into_iter()
            .find(|f| f.imp == "gmsm")
            .map(|f| f.median)
            .ok_or_else(|| format!("{}: no gmsm figure in the bench", case.op))?;
        let own = own_benchmark(pair, plan.rounds)?;
        let ratio = ours / own;
        let agrees = (0.9..=1.1).contains(&ratio);
        all_agree &= agrees;
        println!(
            "| {} | {} | {ours:.0} MB/s | {own:.0} MB/s ({}) | {ratio:.2} | {} |",
            case.op,
            harness::size_label(case.size),
            pair.bench,
            if agrees { "within 10%" } else { "DIFFERS" }
        );
    }
    if all_agree {
        Ok(())
    } else {
        Err("the in-bench gmsm figures differ from gmsm's own by more than 10%".into())
    }
}
