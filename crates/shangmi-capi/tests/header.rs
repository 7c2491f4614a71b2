//! The checked-in `include/shangmi.h` is what cbindgen generates from the code now.
//! `SHANGMI_BLESS=1 cargo test -p shangmi-capi --test header` rewrites it.

#[test]
fn header_is_current() {
    let generated = include_str!(concat!(env!("OUT_DIR"), "/shangmi.h"));
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/include/shangmi.h");
    if std::env::var_os("SHANGMI_BLESS").is_some() {
        std::fs::write(path, generated).expect("writes the header");
        return;
    }
    let checked_in = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "include/shangmi.h is stale: run SHANGMI_BLESS=1 cargo test -p shangmi-capi --test header"
    );
}
