//! The RFC 8998 fuzz target's check (`fuzz/tls_checks.rs`) over its committed seeds and
//! regressions, on stable, in every test run.

#[path = "../../../fuzz/tls_checks.rs"]
mod tls_checks;

#[test]
fn tls_rfc8998_corpus() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz");
    let mut n = 0;
    for dir in ["seeds", "regressions"] {
        let Ok(entries) = std::fs::read_dir(format!("{root}/{dir}/tls_rfc8998")) else {
            continue;
        };
        for e in entries {
            tls_checks::tls_rfc8998(&std::fs::read(e.expect("entry").path()).expect("reads"));
            n += 1;
        }
    }
    assert!(n > 0, "no seeds for tls_rfc8998");
}
