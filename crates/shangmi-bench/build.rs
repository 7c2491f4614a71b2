//! Records the versions of the Rust peers (from the workspace's Cargo.lock) for the report.

fn main() {
    let lock_path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock_path.display());
    let lock = std::fs::read_to_string(&lock_path).unwrap_or_default();
    for (krate, var) in [
        ("sm2", "PEER_RUSTCRYPTO_SM2"),
        ("sm3", "PEER_RUSTCRYPTO_SM3"),
        ("sm4", "PEER_RUSTCRYPTO_SM4"),
        ("libsm", "PEER_LIBSM"),
        ("gmcrypto-core", "PEER_GMCRYPTO"),
    ] {
        let version = lock
            .split("[[package]]")
            .find(|p| p.contains(&format!("\nname = \"{krate}\"\n")))
            .and_then(|p| p.lines().find(|l| l.starts_with("version = ")))
            .map(|l| {
                l.trim_start_matches("version = ")
                    .trim_matches('"')
                    .to_string()
            })
            .unwrap_or_else(|| "?".into());
        println!("cargo:rustc-env={var}={version}");
    }
}
