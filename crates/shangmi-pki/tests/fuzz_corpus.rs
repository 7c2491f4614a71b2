//! The PKI fuzz target's check (`fuzz/pki_checks.rs`) over its committed seeds and
//! regressions, on stable, in every test run.

#[path = "../../../fuzz/pki_checks.rs"]
mod pki_checks;

#[test]
fn pki_parsers_corpus() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz");
    let mut n = 0;
    for dir in ["seeds", "regressions"] {
        let Ok(entries) = std::fs::read_dir(format!("{root}/{dir}/pki_parsers")) else {
            continue;
        };
        for e in entries {
            pki_checks::pki_parsers(&std::fs::read(e.expect("entry").path()).expect("reads"));
            n += 1;
        }
    }
    assert!(n > 0, "no seeds for pki_parsers");
}
