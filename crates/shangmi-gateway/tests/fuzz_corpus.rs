//! The first-flight fuzz target's check (`fuzz/detect_checks.rs`) over its committed seeds and
//! regressions, on stable, in every test run.

#[path = "../../../fuzz/detect_checks.rs"]
mod detect_checks;

#[test]
fn seeds_and_regressions_replay() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz");
    let mut n = 0;
    for dir in ["seeds/gateway_detect", "regressions/gateway_detect"] {
        let Ok(entries) = std::fs::read_dir(format!("{root}/{dir}")) else {
            continue;
        };
        for e in entries {
            detect_checks::detect_flight(&std::fs::read(e.expect("entry").path()).expect("reads"));
            n += 1;
        }
    }
    assert!(n >= 4, "only {n} seeds");
}
