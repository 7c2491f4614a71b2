//! `shangmi-bench`: shangmi beside its peers, measured in the same process in alternating
//! rounds, reported as medians and ratios.

mod charts;
mod ecdh_ops;
mod go_peers;
mod harness;
mod input;
mod intl_ops;
mod openssl_evp;
mod openssl_ffi;
mod peer_check;
mod pki_ops;
mod published;
mod report;
mod sm2_ops;
mod sm3_ops;
mod sm4_ops;
mod tlcp_ops;
mod tls_openssl4;
mod tls_ops;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;

/// Measure shangmi against OpenSSL, RustCrypto, libsm and the Go SM libraries on this machine.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// The short run (under 90 s): every op at the sizes the performance targets name.
    #[arg(long)]
    quick: bool,
    /// Also write the results as JSON to this file.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Write report.md, results.json and SVG charts into this directory.
    #[arg(long, value_name = "DIR")]
    report: Option<PathBuf>,
    /// Leave out the Go peers (bench/go).
    #[arg(long)]
    no_go: bool,
    /// Only ops whose name contains one of these comma-separated texts (e.g. "sm3-kdf,sm4-gcm").
    #[arg(long)]
    only: Option<String>,
    /// Rounds per case (default 7 with --quick, 10 otherwise, as the published studies).
    #[arg(long)]
    rounds: Option<usize>,
    /// Milliseconds per implementation per round (default 30 with --quick, 100 otherwise).
    #[arg(long)]
    slice_ms: Option<u64>,
    /// One case (HMAC-SM3 at 8 KiB) for one short round, without the Go peers: checks that
    /// the benchmark builds and runs (the test command runs the README's command with it).
    #[arg(long)]
    smoke: bool,
    /// Instead of the benchmark: the in-bench figures of gmsm beside gmsm's own
    /// `go test -bench` on this machine, for five ops (fails if any differs by over 10%).
    #[arg(long)]
    check_peers: bool,
}

fn main() -> ExitCode {
    let mut args = Args::parse();
    if args.smoke {
        args.only = Some("hmac-sm3".into());
        args.rounds = Some(1);
        args.slice_ms = Some(10);
        args.no_go = true;
    }
    let plan = harness::Plan {
        rounds: args
            .rounds
            .unwrap_or(if args.quick { 7 } else { 10 })
            .max(1),
        slice: Duration::from_millis(args.slice_ms.unwrap_or(if args.quick { 30 } else { 100 })),
    };
    if args.check_peers {
        return match peer_check::run(&plan) {
            Ok(()) => ExitCode::SUCCESS,
            Err(why) => {
                eprintln!("shangmi-bench: {why}");
                ExitCode::FAILURE
            }
        };
    }
    let mut cases = sm3_ops::cases(args.quick);
    cases.extend(sm4_ops::cases(args.quick));
    cases.extend(sm2_ops::cases(args.quick));
    cases.extend(intl_ops::cases(args.quick));
    cases.extend(ecdh_ops::cases());
    let pki = args.only.as_deref().is_none_or(|o| {
        o.split(',').any(|o| {
            ["x509-verify-chain", "cms-sign", "cms-verify"]
                .iter()
                .any(|op| op.contains(o))
        })
    });
    if pki {
        cases.extend(pki_ops::cases());
    }
    if let Some(only) = &args.only {
        cases.retain(|c| only.split(',').any(|o| c.op.contains(o)));
    }
    let started = Instant::now();
    let mut env = report::Environment::detect();
    let mut go = if args.no_go {
        env.go_missing = Some("left out (--no-go)".into());
        None
    } else {
        match go_peers::start(&plan) {
            Ok(g) => Some(g),
            Err(why) => {
                eprintln!("shangmi-bench: Go peers not measured: {why}");
                env.go_missing = Some(why);
                None
            }
        }
    };
    eprintln!("shangmi-bench: {} cases on {}", cases.len(), env.cpu);
    let mut figures = Vec::new();
    for case in &mut cases {
        eprintln!("  {} {}", case.op, harness::size_label(case.size));
        let peers: &mut dyn harness::Peers = match go.as_mut() {
            Some(g) => g,
            None => &mut harness::NoPeers,
        };
        figures.extend(harness::measure(case, &plan, peers));
    }
    if let Some(g) = &go {
        env.versions.extend(g.versions.iter().cloned());
    }
    drop(go);
    let tls = args.only.as_deref().is_none_or(|o| {
        o.split(',')
            .any(|o| "tls13".contains(o) || o.contains("tls"))
    });
    let mut tls_text = String::new();
    let mut tls_figures = Vec::new();
    if tls {
        eprintln!("  TLS 1.3 handshakes and records");
        let peer = tls_openssl4::start();
        let mut extra = || match &peer {
            Ok(p) => p.round(plan.slice),
            Err(_) => Vec::new(),
        };
        tls_figures = tls_ops::measure(&plan, &mut extra);
        tls_text = tls_ops::markdown(
            &tls_figures,
            peer.as_ref()
                .map(|p| p.version.as_str())
                .map_err(|e| e.as_str()),
        );
    }
    let tlcp = args.only.as_deref().is_none_or(|o| {
        o.split(',')
            .any(|o| "tlcp".contains(o) || o.contains("tlcp"))
    });
    if tlcp {
        eprintln!("  TLCP handshakes and records");
        let (figs, text) = tlcp_ops::measure(&plan);
        tls_text.push_str(&text);
        tls_figures.extend(figs);
    }
    // The TLS figures have their own table (their references are not the algorithm peers).
    let mut text = report::markdown(&env, &figures, &plan, started.elapsed());
    text.push_str(&tls_text);
    text.push_str(&published::markdown(&figures));
    figures.extend(tls_figures);
    print!("{text}");
    if let Some(dir) = &args.report
        && let Err(e) = report::write_dir(dir, &text, &env, &figures)
    {
        eprintln!("shangmi-bench: {}: {e}", dir.display());
        return ExitCode::from(2);
    }
    if let Some(path) = args.json
        && let Err(e) = std::fs::write(&path, report::json(&env, &figures))
    {
        eprintln!("shangmi-bench: {}: {e}", path.display());
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}
