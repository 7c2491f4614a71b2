//! The Go peers (emmansun/gmsm and tjfoc/gmsm), measured by `bench/go` in a child process
//! that takes its turn at the end of every round of each case, with the same slices, so their
//! figures come from the same moments as the in-process ones. Before timing, each peer reports
//! the SM3 digest of what it computed; a peer that disagrees with shangmi's output is reported
//! and its figures dropped.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use crate::harness::{Figure, Peers, Plan, Unit, median, trimmed_mean};

pub struct GoPeers {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// impl -> version, as the peers report them.
    pub versions: Vec<(String, String)>,
    /// The case in progress: op, size, and per peer (impl, unit, agrees, rates).
    case: Option<(&'static str, Option<usize>, Vec<Peer>)>,
}

struct Peer {
    imp: String,
    unit: Unit,
    agrees: bool,
    rates: Vec<f64>,
}

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `bench/go`, the Go module of the peers (where `go test -bench` of gmsm runs too).
pub fn source_dir() -> PathBuf {
    workspace().join("bench/go")
}

/// Builds `bench/go` (Go caches the build) and starts it; `Err` says why not (no Go, no
/// network for the modules...), for the report.
pub fn start(plan: &Plan) -> Result<GoPeers, String> {
    let src = source_dir();
    let out = workspace().join("target/go-peers/gmpeers");
    let version = Command::new("go")
        .arg("version")
        .output()
        .map_err(|_| "Go is not installed".to_string())?;
    if !version.status.success() {
        return Err("`go version` failed".into());
    }
    eprintln!("shangmi-bench: building the Go peers (bench/go)");
    let build = Command::new("go")
        .args(["build", "-o"])
        .arg(&out)
        .arg(".")
        .current_dir(&src)
        .output()
        .map_err(|e| format!("go build: {e}"))?;
    if !build.status.success() {
        let err = String::from_utf8_lossy(&build.stderr);
        return Err(format!(
            "go build failed: {}",
            err.lines().last().unwrap_or("")
        ));
    }
    let mut child = Command::new(&out)
        .args(["-slice-ms", &plan.slice.as_millis().to_string()])
        .arg("-pki-dir")
        .arg(crate::pki_ops::dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting the Go peers: {e}"))?;
    let stdin = child.stdin.take().expect("piped");
    let stdout = BufReader::new(child.stdout.take().expect("piped"));
    Ok(GoPeers {
        child,
        stdin,
        stdout,
        versions: Vec::new(),
        case: None,
    })
}

/// The value of `"key":` in a flat JSON object line (numbers, strings or null).
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let at = line.find(&format!("\"{key}\":"))? + key.len() + 3;
    let rest = &line[at..];
    if let Some(s) = rest.strip_prefix('"') {
        return s.split('"').next();
    }
    rest.split([',', '}']).next()
}

impl GoPeers {
    fn send(&mut self, line: &str) -> bool {
        writeln!(self.stdin, "{line}").is_ok() && self.stdin.flush().is_ok()
    }

    fn read(&mut self) -> Option<String> {
        let mut line = String::new();
        match self.stdout.read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim().to_string()),
        }
    }
}

impl Peers for GoPeers {
    fn begin(&mut self, op: &'static str, size: Option<usize>, reference: &[u8]) {
        self.case = None;
        let want = shangmi::sm3::hash(reference)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>();
        if !self.send(&format!("case {op} {}", size.unwrap_or(0))) {
            return;
        }
        let mut peers = Vec::new();
        while let Some(line) = self.read() {
            if line == "{}" {
                break;
            }
            let (Some(imp), Some(unit), Some(check), Some(version)) = (
                field(&line, "impl"),
                field(&line, "unit"),
                field(&line, "check"),
                field(&line, "version"),
            ) else {
                eprintln!("shangmi-bench: unreadable Go peer line: {line}");
                continue;
            };
            let agrees = check == want;
            if !agrees {
                eprintln!(
                    "shangmi-bench: {op} {size:?}: {imp} disagrees with shangmi; not reported"
                );
            }
            if !self.versions.iter().any(|(i, _)| i == imp) {
                self.versions.push((imp.to_string(), version.to_string()));
            }
            peers.push(Peer {
                imp: imp.to_string(),
                unit: if unit == "ops/s" {
                    Unit::OpsPerSec
                } else {
                    Unit::MBps
                },
                agrees,
                rates: Vec::new(),
            });
        }
        self.case = Some((op, size, peers));
    }

    fn round(&mut self) {
        if !matches!(&self.case, Some((_, _, p)) if !p.is_empty()) || !self.send("round") {
            return;
        }
        let Some(line) = self.read() else { return };
        let rates: Vec<f64> = line
            .split(['[', ']'])
            .nth(1)
            .unwrap_or("")
            .split(',')
            .filter_map(|v| v.trim().parse().ok())
            .collect();
        if let Some((_, _, peers)) = self.case.as_mut() {
            if rates.len() != peers.len() {
                eprintln!("shangmi-bench: unreadable Go peer round: {line}");
                return;
            }
            for (p, r) in peers.iter_mut().zip(rates) {
                p.rates.push(r);
            }
        }
    }

    fn end(&mut self) -> Vec<Figure> {
        let Some((op, size, peers)) = self.case.take() else {
            return Vec::new();
        };
        peers
            .into_iter()
            .filter(|p| p.agrees && !p.rates.is_empty())
            .map(|p| Figure {
                op: op.to_string(),
                size,
                imp: p.imp,
                unit: p.unit,
                trimmed: trimmed_mean(&p.rates),
                median: median(p.rates),
            })
            .collect()
    }
}

impl Drop for GoPeers {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
