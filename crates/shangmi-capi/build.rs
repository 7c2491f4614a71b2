//! Generates `shangmi.h` from the `extern "C"` items with cbindgen, into OUT_DIR; the copy in
//! `include/` is checked against it by `tests/header.rs` (run with SHANGMI_BLESS=1 to update).

fn main() {
    let crate_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it");
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it"));
    println!("cargo:rerun-if-changed=src");
    // A SONAME with the ABI's major version, so programs link against `libshangmi_c.so.0`
    // (install-c.sh installs the versioned name and the links to it).
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libshangmi_c.so.0");
    }
    println!("cargo:rerun-if-changed=cbindgen.toml");
    let config = cbindgen::Config::from_file(format!("{crate_dir}/cbindgen.toml"))
        .expect("cbindgen.toml parses");
    cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("the C header generates")
        .write_to_file(out.join("shangmi.h"));
}
