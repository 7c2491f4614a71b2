#![no_main]

#[path = "../tls_checks.rs"]
mod tls_checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| tls_checks::tls_rfc8998(data));
