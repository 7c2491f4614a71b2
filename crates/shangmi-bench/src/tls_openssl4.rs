//! OpenSSL 4.0's own RFC 8998 as a peer of the TLS figures: `bench/tls/openssl_tls.c`
//! compiled against the OpenSSL 4.0 that `scripts/peers/build.sh openssl4` builds (once, into
//! a cache), run for one slice per round with an SM2 chain written by shangmi.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use der::EncodePem;

pub struct OpenSsl4 {
    exe: PathBuf,
    dir: PathBuf,
    pub version: String,
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Builds (or finds) OpenSSL 4 and the loop; `Err` says why not, for the report.
pub fn start() -> Result<OpenSsl4, String> {
    let root = workspace();
    let built = Command::new(root.join("scripts/peers/build.sh"))
        .arg("openssl4")
        .output()
        .map_err(|e| format!("scripts/peers/build.sh: {e}"))?;
    if !built.status.success() {
        return Err("OpenSSL 4.0 could not be built (scripts/peers/build.sh openssl4)".into());
    }
    let tool = PathBuf::from(String::from_utf8_lossy(&built.stdout).trim());
    let prefix = tool
        .parent()
        .and_then(Path::parent)
        .ok_or("unexpected OpenSSL 4 path")?
        .to_path_buf();
    let version = Command::new(&tool)
        .arg("version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let dir = root.join("target/tls-peers");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let exe = dir.join("openssl_tls");
    let cc = Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(root.join("bench/tls/openssl_tls.c"))
        .arg(format!("-I{}", prefix.join("include").display()))
        .arg(prefix.join("lib/libssl.a"))
        .arg(prefix.join("lib/libcrypto.a"))
        .args(["-ldl", "-lpthread"])
        .output()
        .map_err(|e| format!("cc: {e}"))?;
    if !cc.status.success() {
        return Err(format!(
            "compiling bench/tls/openssl_tls.c: {}",
            String::from_utf8_lossy(&cc.stderr)
                .lines()
                .next()
                .unwrap_or("")
        ));
    }
    // An SM2 root and a leaf for localhost, as PEM files for the loop.
    let root_key = shangmi::sm2::SigningKey::random().map_err(|e| e.to_string())?;
    let ca = shangmi_pki::self_signed(&root_key, "/CN=bench root", &shangmi_pki::Issue::ca(30))
        .map_err(|e| e.to_string())?;
    let key = shangmi::sm2::SigningKey::random().map_err(|e| e.to_string())?;
    let csr = shangmi_pki::request(&key, "/CN=localhost", &["DNS:localhost"])
        .map_err(|e| e.to_string())?;
    let leaf = shangmi_pki::sign_request(&csr, &ca, &root_key, &shangmi_pki::Issue::leaf(30))
        .map_err(|e| e.to_string())?;
    let pem = |c: &shangmi_pki::Certificate| c.to_pem(der::pem::LineEnding::LF).unwrap_or_default();
    let write =
        |name: &str, text: &str| std::fs::write(dir.join(name), text).map_err(|e| e.to_string());
    write("ca.pem", &pem(&ca))?;
    write("chain.pem", &pem(&leaf))?;
    write("key.pem", &key.to_pkcs8_pem().map_err(|e| e.to_string())?)?;
    Ok(OpenSsl4 { exe, dir, version })
}

impl OpenSsl4 {
    /// One slice of each op: (op, rate) pairs, or nothing if the run failed (reported).
    pub fn round(&self, slice: Duration) -> Vec<(String, f64)> {
        let out = Command::new(&self.exe)
            .args(["chain.pem", "key.pem", "ca.pem"])
            .arg(slice.as_millis().to_string())
            .current_dir(&self.dir)
            .output();
        match out {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter_map(|l| {
                    let (op, rate) = l.split_once(' ')?;
                    Some((op.to_string(), rate.trim().parse().ok()?))
                })
                .collect(),
            Ok(o) => {
                eprintln!(
                    "shangmi-bench: OpenSSL 4 TLS loop failed: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                Vec::new()
            }
            Err(e) => {
                eprintln!("shangmi-bench: OpenSSL 4 TLS loop: {e}");
                Vec::new()
            }
        }
    }
}
