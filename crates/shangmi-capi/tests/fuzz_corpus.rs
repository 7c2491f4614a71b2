//! The C ABI fuzz target's check (`fuzz/capi_checks.rs`) over its committed seeds and
//! regressions, on stable, in every test run.

#[path = "../../../fuzz/capi_checks.rs"]
mod capi_checks;

#[test]
fn capi_parsers_corpus() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz");
    let mut n = 0;
    for dir in ["seeds", "regressions"] {
        let Ok(entries) = std::fs::read_dir(format!("{root}/{dir}/capi_parsers")) else {
            continue;
        };
        for e in entries {
            capi_checks::capi_parsers(&std::fs::read(e.expect("entry").path()).expect("reads"));
            n += 1;
        }
    }
    assert!(n > 0, "no seeds for capi_parsers");
}
