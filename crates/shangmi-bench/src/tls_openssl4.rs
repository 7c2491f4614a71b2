//! OpenSSL 4.0's own RFC 8998 as a peer of the TLS figures: `bench/tls/openssl_tls.c`
//! compiled against the OpenSSL 4.0 that `scripts/peers/build.sh openssl4` builds (once, into
//! a cache), run for one slice per round with an SM2 chain written by shangmi; and the same
//! loop again with `shangmi.so` preferred through `OPENSSL_CONF` (the provider serving its
//! SM2, SM3 and SM4), as an unmodified OpenSSL 4 application would load it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use der::EncodePem;

pub struct OpenSsl4 {
    exe: PathBuf,
    dir: PathBuf,
    pub version: String,
    /// The configuration that loads the provider, when it could be built.
    provider_conf: Option<PathBuf>,
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
    let provider_conf = provider_conf(&root, &dir);
    if let Err(why) = &provider_conf {
        eprintln!("shangmi-bench: OpenSSL 4 with shangmi.so not measured: {why}");
    }
    Ok(OpenSsl4 {
        exe,
        dir,
        version,
        provider_conf: provider_conf.ok(),
    })
}

/// Builds the provider and writes the configuration that prefers it.
fn provider_conf(root: &Path, dir: &Path) -> Result<PathBuf, String> {
    let built = Command::new(root.join("scripts/build-provider.sh"))
        .current_dir(root)
        .output()
        .map_err(|e| format!("scripts/build-provider.sh: {e}"))?;
    if !built.status.success() {
        return Err("scripts/build-provider.sh failed".into());
    }
    let module = root.join(String::from_utf8_lossy(&built.stdout).trim());
    let modules = module.parent().ok_or("no module directory")?;
    let modules = modules.canonicalize().map_err(|e| e.to_string())?;
    let conf = dir.join("with-shangmi.cnf");
    std::fs::write(
        &conf,
        format!(
            "openssl_conf = openssl_init\n[openssl_init]\nproviders = provider_sect\n\
             alg_section = algorithm_sect\n[provider_sect]\ndefault = default_sect\n\
             shangmi = shangmi_sect\n[default_sect]\nactivate = 1\n[shangmi_sect]\n\
             module = {}/shangmi.so\nactivate = 1\n[algorithm_sect]\n\
             default_properties = ?provider=shangmi\n",
            modules.display()
        ),
    )
    .map_err(|e| e.to_string())?;
    Ok(conf)
}

impl OpenSsl4 {
    /// One slice of each op, without the provider and (if built) with it: (op, column, rate)
    /// triples; a failed run is reported and gives nothing.
    pub fn round(&self, slice: Duration) -> Vec<(String, String, f64)> {
        let mut out = self.run(slice, None, crate::tls_ops::OPENSSL4);
        if let Some(conf) = &self.provider_conf {
            out.extend(self.run(slice, Some(conf), crate::tls_ops::OPENSSL4_PROVIDER));
        }
        out
    }

    fn run(
        &self,
        slice: Duration,
        conf: Option<&Path>,
        column: &str,
    ) -> Vec<(String, String, f64)> {
        let mut cmd = Command::new(&self.exe);
        cmd.args(["chain.pem", "key.pem", "ca.pem"])
            .arg(slice.as_millis().to_string())
            .current_dir(&self.dir);
        match conf {
            Some(c) => cmd.env("OPENSSL_CONF", c),
            None => cmd.env_remove("OPENSSL_CONF"),
        };
        match cmd.output() {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter_map(|l| {
                    let (op, rate) = l.split_once(' ')?;
                    Some((
                        op.to_string(),
                        column.to_string(),
                        rate.trim().parse().ok()?,
                    ))
                })
                .collect(),
            Ok(o) => {
                eprintln!(
                    "shangmi-bench: OpenSSL 4 TLS loop ({column}) failed: {}",
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
