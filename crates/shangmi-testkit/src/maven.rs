//! The BouncyCastle peers (`interop/bctls`, `interop/bcpkix`): Maven projects built once and
//! again only when their files change. Maven takes about nine seconds to find a build up to
//! date, and several test binaries need these peers.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// Why a peer has no classpath.
#[derive(Debug)]
pub enum PeerError {
    /// `mvn` could not be run (not installed): outside CI the interop test may skip.
    NoMaven(std::io::Error),
    /// Maven ran and failed; its output.
    BuildFailed(String),
}

impl std::fmt::Display for PeerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PeerError::NoMaven(e) => write!(f, "mvn cannot be run: {e}"),
            PeerError::BuildFailed(out) => write!(f, "the Maven build failed:\n{out}"),
        }
    }
}

/// The classpath of `interop/<name>` (its jar, then the jars it depends on), built first when
/// the jar is missing or older than the project's pom.xml or sources.
pub fn peer_classpath(name: &str) -> Result<String, PeerError> {
    static BUILD: Mutex<()> = Mutex::new(());
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../interop")
        .join(name);
    let target = dir.join("target");
    let jar = target.join(format!("{name}-peer-0.1.0.jar"));
    // One build at a time in this process; a build another test just finished is then fresh.
    let _one = BUILD.lock().unwrap_or_else(|p| p.into_inner());
    if !is_fresh(&dir, &jar) {
        let o = Command::new("mvn")
            .args(["-q", "-B", "package", "-DskipTests"])
            .current_dir(&dir)
            .output()
            .map_err(PeerError::NoMaven)?;
        if !o.status.success() {
            return Err(PeerError::BuildFailed(format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            )));
        }
    }
    Ok(format!(
        "{}:{}/*",
        jar.display(),
        target.join("lib").display()
    ))
}

/// Whether the jar and its dependency directory exist and the jar is newer than every file
/// of the project it is built from.
fn is_fresh(dir: &Path, jar: &Path) -> bool {
    let Ok(built) = std::fs::metadata(jar).and_then(|m| m.modified()) else {
        return false;
    };
    if !dir.join("target/lib").is_dir() {
        return false;
    }
    let mut pending: Vec<PathBuf> = vec![dir.join("pom.xml"), dir.join("src")];
    while let Some(p) = pending.pop() {
        let Ok(meta) = std::fs::metadata(&p) else {
            return false;
        };
        if meta.is_dir() {
            match std::fs::read_dir(&p) {
                Ok(entries) => pending.extend(entries.filter_map(|e| e.ok().map(|e| e.path()))),
                Err(_) => return false,
            }
        } else if meta.modified().map_or(true, |m| m > built) {
            return false;
        }
    }
    true
}
