//! `shangmi`: China's commercial cryptography on files and streams.
//!
//! Exit codes: 0 success; 1 a verification failed (a checksum mismatch); 2 usage, input or I/O
//! error. Errors are one line on stderr naming the file and the cause.

mod fail;
mod sm3_cmd;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "shangmi",
    version,
    about = "SM2, SM3 and SM4: fast, constant-time, interoperable"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Sm3(sm3_cmd::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version are successes; anything else is a usage error (exit 2).
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let outcome = match cli.command {
        Command::Sm3(args) => sm3_cmd::run(args),
    };
    ExitCode::from(outcome.code())
}
