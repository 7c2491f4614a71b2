//! `shangmi-gateway --config FILE [--check]`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

/// One port for TLCP, RFC 8998 and international TLS in front of an HTTP or TCP service.
#[derive(Parser)]
#[command(name = "shangmi-gateway", version)]
struct Args {
    /// The configuration file (TOML).
    #[arg(
        long,
        short,
        value_name = "FILE",
        required_unless_present = "new_ticket_key"
    )]
    config: Option<PathBuf>,
    /// Print a new random session-ticket secret (a line for `[tickets] key_file`) and exit.
    #[arg(long, conflicts_with_all = ["config", "check"])]
    new_ticket_key: bool,
    /// Check the configuration (syntax, files, keys against certificates) and exit: 0 when it
    /// can serve, 1 with the line and the problem when it cannot.
    #[arg(long)]
    check: bool,
    /// Worker threads (default: one per CPU).
    #[arg(long, value_name = "N")]
    workers: Option<usize>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.new_ticket_key {
        let mut secret = zeroize::Zeroizing::new([0u8; 32]);
        if let Err(e) = getrandom::fill(&mut secret[..]) {
            eprintln!("shangmi-gateway: the system's generator: {e}");
            return ExitCode::FAILURE;
        }
        let line: zeroize::Zeroizing<String> =
            zeroize::Zeroizing::new(secret.iter().map(|b| format!("{b:02x}")).collect());
        println!("{}", line.as_str());
        return ExitCode::SUCCESS;
    }
    let Some(config) = args.config else {
        return ExitCode::FAILURE;
    };
    let generation = match shangmi_gateway::site::load(&config) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("shangmi-gateway: {e}");
            return ExitCode::FAILURE;
        }
    };
    if args.check {
        let sites: usize = generation.listeners.iter().map(|l| l.sites.len()).sum();
        println!(
            "{}: ok ({} listeners, {sites} sites)",
            config.display(),
            generation.listeners.len()
        );
        return ExitCode::SUCCESS;
    }
    // Every connection is a descriptor: take what the hard limit allows (as servers do), so
    // the soft default of 1024 on many systems does not cap max_connections.
    let _ = rlimit::increase_nofile_limit(u64::MAX);
    let mut rt = tokio::runtime::Builder::new_multi_thread();
    rt.enable_all();
    if let Some(n) = args.workers {
        rt.worker_threads(n.max(1));
    }
    let rt = match rt.build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("shangmi-gateway: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(shangmi_gateway::run::run(config, generation)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("shangmi-gateway: {e}");
            ExitCode::FAILURE
        }
    }
}
