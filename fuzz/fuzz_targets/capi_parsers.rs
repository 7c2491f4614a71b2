#![no_main]

#[path = "../capi_checks.rs"]
mod capi_checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| capi_checks::capi_parsers(data));
