//! `shangmi-bench`: shangmi beside its peers, measured in the same process in alternating
//! rounds, reported as medians and ratios.

mod harness;
mod input;
mod openssl_ffi;
mod report;
mod sm2_ops;
mod sm3_ops;
mod sm4_ops;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;

/// Measure shangmi against OpenSSL and RustCrypto on this machine.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// The short run (under 90 s): every op at the sizes the performance targets name.
    #[arg(long)]
    quick: bool,
    /// Also write the results as JSON to this file.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Only ops whose name contains one of these comma-separated texts (e.g. "sm3-kdf,sm4-gcm").
    #[arg(long)]
    only: Option<String>,
    /// Rounds per case (default 9 with --quick, 15 otherwise).
    #[arg(long)]
    rounds: Option<usize>,
    /// Milliseconds per implementation per round (default 40 with --quick, 120 otherwise).
    #[arg(long)]
    slice_ms: Option<u64>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let plan = harness::Plan {
        rounds: args
            .rounds
            .unwrap_or(if args.quick { 9 } else { 15 })
            .max(1),
        slice: Duration::from_millis(args.slice_ms.unwrap_or(if args.quick { 40 } else { 120 })),
    };
    let mut cases = sm3_ops::cases(args.quick);
    cases.extend(sm4_ops::cases(args.quick));
    cases.extend(sm2_ops::cases(args.quick));
    if let Some(only) = &args.only {
        cases.retain(|c| only.split(',').any(|o| c.op.contains(o)));
    }
    let started = Instant::now();
    let env = report::Environment::detect();
    eprintln!("shangmi-bench: {} cases on {}", cases.len(), env.cpu);
    let mut figures = Vec::new();
    for case in &mut cases {
        eprintln!("  {} {}", case.op, harness::size_label(case.size));
        figures.extend(harness::measure(case, &plan));
    }
    print!(
        "{}",
        report::markdown(&env, &figures, &plan, started.elapsed())
    );
    if let Some(path) = args.json
        && let Err(e) = std::fs::write(&path, report::json(&env, &figures))
    {
        eprintln!("shangmi-bench: {}: {e}", path.display());
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}
