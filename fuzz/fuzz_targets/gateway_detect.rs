#![no_main]

#[path = "../detect_checks.rs"]
mod detect_checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| detect_checks::detect_flight(data));
