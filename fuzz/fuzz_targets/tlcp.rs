#![no_main]

#[path = "../tlcp_checks.rs"]
mod tlcp_checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| tlcp_checks::tlcp(data));
