//! The Go peers (emmansun/gmsm and tjfoc/gmsm), measured by `bench/go` in a child process
//! right after the in-process candidates of the same case, with the same rounds and slices.
//! Each result carries the SM3 digest of what the peer computed; results that disagree with
//! shangmi's output are reported and dropped.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use crate::harness::{Figure, Plan, Unit};

pub struct GoPeers {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// impl -> version, as the peers report them.
    pub versions: Vec<(String, String)>,
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Builds `bench/go` (Go caches the build) and starts it; `Err` says why not (no Go, no
/// network for the modules...), for the report.
pub fn start(plan: &Plan) -> Result<GoPeers, String> {
    let src = workspace().join("bench/go");
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
        .args([
            "-rounds",
            &plan.rounds.to_string(),
            "-slice-ms",
            &plan.slice.as_millis().to_string(),
        ])
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
    /// Measures one case; `reference` is shangmi's output for it.
    pub fn measure(&mut self, op: &str, size: Option<usize>, reference: &[u8]) -> Vec<Figure> {
        let want = shangmi::sm3::hash(reference)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>();
        if writeln!(self.stdin, "{op} {}", size.unwrap_or(0)).is_err()
            || self.stdin.flush().is_err()
        {
            return Vec::new();
        }
        let mut figs = Vec::new();
        loop {
            let mut line = String::new();
            match self.stdout.read_line(&mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let line = line.trim();
            if line == "{}" {
                break;
            }
            let (Some(imp), Some(unit), Some(median), Some(trimmed), Some(check), Some(version)) = (
                field(line, "impl"),
                field(line, "unit"),
                field(line, "median").and_then(|m| m.parse::<f64>().ok()),
                field(line, "trimmed").and_then(|m| m.parse::<f64>().ok()),
                field(line, "check"),
                field(line, "version"),
            ) else {
                eprintln!("shangmi-bench: unreadable Go peer line: {line}");
                continue;
            };
            if check != want {
                eprintln!(
                    "shangmi-bench: {op} {size:?}: {imp} disagrees with shangmi; not reported"
                );
                continue;
            }
            if !self.versions.iter().any(|(i, _)| i == imp) {
                self.versions.push((imp.to_string(), version.to_string()));
            }
            figs.push(Figure {
                op: op.to_string(),
                size,
                imp: imp.to_string(),
                unit: if unit == "ops/s" {
                    Unit::OpsPerSec
                } else {
                    Unit::MBps
                },
                median,
                trimmed,
            });
        }
        figs
    }
}

impl Drop for GoPeers {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
