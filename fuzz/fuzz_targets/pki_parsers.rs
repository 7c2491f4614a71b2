#![no_main]

#[path = "../pki_checks.rs"]
mod pki_checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| pki_checks::pki_parsers(data));
