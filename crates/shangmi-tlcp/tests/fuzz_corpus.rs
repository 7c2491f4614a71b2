//! The TLCP fuzz target's check (`fuzz/tlcp_checks.rs`) over its committed seeds and
//! regressions, on stable, in every test run.

#[path = "../../../fuzz/tlcp_checks.rs"]
mod tlcp_checks;

#[test]
fn tlcp_corpus() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz");
    let mut n = 0;
    for dir in ["seeds", "regressions"] {
        let Ok(entries) = std::fs::read_dir(format!("{root}/{dir}/tlcp")) else {
            continue;
        };
        for e in entries {
            tlcp_checks::tlcp(&std::fs::read(e.expect("entry").path()).expect("reads"));
            n += 1;
        }
    }
    assert!(n > 0, "no seeds for tlcp");
}
