//! `shangmi`: China's commercial cryptography on files and streams.
//!
//! Exit codes: 0 success; 1 a verification or authentication failed (a checksum mismatch, a bad
//! signature, a tampered ciphertext); 2 usage, input or I/O error. Errors are one line on
//! stderr naming the file and the cause. Output files appear only when complete.

mod cmd;
mod fail;
mod ffi_init;
mod files;
mod held;
mod keyio;
mod net;
mod progress;
mod secrets;
mod signals;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "shangmi",
    version,
    about = "SM2, SM3 and SM4: fast, constant-time, interoperable",
    after_help = "\
Examples:
  shangmi sm3 file.iso
  shangmi sm2 keygen -o key.pem --pubout pub.pem
  shangmi seal --recipient pub.pem -i report.pdf -o report.pdf.sm
  shangmi open --key key.pem -i report.pdf.sm -o report.pdf
  shangmi x509 verify --ca ca.pem server.pem

Exit status: 0 success, 1 verification or authentication failed, 2 usage, input or I/O error."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// SM3 checksums (the format of sha256sum).
    Sm3(cmd::sm3::Args),
    /// HMAC-SM3 of files.
    Hmac(cmd::mac::HmacArgs),
    /// The SM3 key-derivation function.
    Kdf(cmd::mac::KdfArgs),
    /// SM4 in a mode of operation, compatible with `openssl enc`.
    Sm4(cmd::sm4::Args),
    /// SM2 keys, signatures and public-key encryption.
    Sm2(cmd::sm2::Args),
    /// Encrypt and authenticate a file for SM2 recipients or under a password.
    Seal(cmd::seal::SealArgs),
    /// Decrypt a sealed file.
    Open(cmd::seal::OpenArgs),
    /// Measure shangmi's speed on this machine.
    Speed(cmd::speed::Args),
    /// SM2 certificates, requests and CRLs: issue, verify, show.
    X509(cmd::x509::Args),
    /// CMS / PKCS#7 with SM2 (GM/T 0010): SignedData and EnvelopedData, key envelopes.
    Cms(cmd::cms::Args),
    /// CFCA's .sm2 key files: import a key and certificate, or export them.
    Cfca(cmd::cfca::Args),
    /// PKCS#12 keystores (.p12/.pfx) with SM2 keys: export, show, import.
    Pkcs12(cmd::pkcs12::Args),
    /// TLS 1.3 with the SM suites (RFC 8998): connect to a server, or serve.
    Tls(cmd::tls::Args),
    /// TLCP (GB/T 38636): the national TLS with signing and encryption certificates.
    Tlcp(cmd::tlcp::Args),
}

fn main() -> ExitCode {
    let cli = match parse() {
        Ok(cli) => cli,
        Err(e) => return usage(&e),
    };
    signals::install();
    let result = match cli.command {
        Command::Sm3(args) => Ok(cmd::sm3::run(args)),
        Command::Hmac(args) => cmd::mac::hmac(args),
        Command::Kdf(args) => cmd::mac::kdf(args),
        Command::Sm4(args) => cmd::sm4::run(args),
        Command::Sm2(args) => cmd::sm2::run(args),
        Command::Seal(args) => cmd::seal::seal(args),
        Command::Open(args) => cmd::seal::open(args),
        Command::Speed(args) => cmd::speed::run(args),
        Command::X509(args) => cmd::x509::run(args),
        Command::Cms(args) => cmd::cms::run(args),
        Command::Cfca(args) => cmd::cfca::run(args),
        Command::Pkcs12(args) => cmd::pkcs12::run(args),
        Command::Tls(args) => cmd::tls::run(args),
        Command::Tlcp(args) => cmd::tlcp::run(args),
    };
    match result {
        Ok(outcome) => ExitCode::from(outcome.code()),
        Err(f) => {
            eprintln!("shangmi: {}", f.message);
            ExitCode::from(f.outcome.code())
        }
    }
}

/// The arguments, with `--version` saying what this CPU runs each algorithm on.
fn parse() -> Result<Cli, clap::Error> {
    let long: &'static str = Box::leak(version_text().into_boxed_str());
    let matches = Cli::command().long_version(long).try_get_matches()?;
    Cli::from_arg_matches(&matches)
}

/// The version, the CPU, and one line per algorithm with the implementation it runs on: what
/// to paste into a bug report.
fn version_text() -> String {
    let best = shangmi::Backend::best();
    let others: Vec<&str> = shangmi::Backend::available()
        .into_iter()
        .filter(|b| *b != best)
        .map(|b| b.name())
        .collect();
    let mut text = format!(
        "{}\ncpu: {} (profile {best}; also runs: {})",
        env!("CARGO_PKG_VERSION"),
        cpu_model(),
        others.join(", ")
    );
    if let Ok(list) = shangmi::implementations(best) {
        for (algorithm, implementation) in list {
            text.push_str(&format!("\n{algorithm:<10} {implementation}"));
        }
    }
    text
}

/// The CPU's model name, where the system says it.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, name)| name.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

/// --help and --version print in full (exit 0, or 2 if stdout cannot take them); a usage
/// mistake is one line on stderr naming the mistake and where help is (exit 2).
fn usage(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            match files::print(&e.render().to_string()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(f) => {
                    eprintln!("shangmi: {}", f.message);
                    ExitCode::from(2)
                }
            }
        }
        _ => {
            eprintln!("shangmi: {}", one_line(&e.render().to_string()));
            ExitCode::from(2)
        }
    }
}

/// clap's message ("error: ...", the arguments it concerns on the lines after, a tip, the
/// usage, "For more information, try '...'") as one line: the error with what it names, then
/// the help of the command that was being used.
fn one_line(rendered: &str) -> String {
    let lines: Vec<&str> = rendered.lines().map(str::trim).collect();
    let mut rest = lines.iter().copied().skip_while(|l| l.is_empty());
    let first = rest.next().unwrap_or("invalid usage");
    let mut what = first.strip_prefix("error: ").unwrap_or(first).to_string();
    if what.ends_with(':') {
        // "the following required arguments were not provided:" and the list below it.
        let named: Vec<&str> = rest
            .take_while(|l| !l.is_empty() && !l.starts_with("Usage:"))
            .collect();
        if !named.is_empty() {
            what = format!("{} {}", what, named.join(", "));
        }
    }
    // The command being used, from the usage line: `shangmi sm2 sign --help`.
    let command: Option<String> = lines
        .iter()
        .find_map(|l| l.strip_prefix("Usage: "))
        .map(|u| {
            u.split_whitespace()
                .take_while(|w| !w.starts_with(['-', '[', '<']))
                .collect::<Vec<_>>()
                .join(" ")
        });
    let help = match command {
        Some(c) if !c.is_empty() => format!("'{c} --help'"),
        _ => lines
            .iter()
            .find_map(|l| l.strip_prefix("For more information, try "))
            .map(|h| h.trim_end_matches('.').to_string())
            .unwrap_or_else(|| "'shangmi --help'".into()),
    };
    if what.starts_with("Usage:") || what.starts_with("SM2, SM3 and SM4") {
        // A command or subcommand is missing: clap shows the help; one line says so.
        return format!("a command is needed; try {help}");
    }
    format!("{what} (try {help})")
}
