//! shangmi-gateway: one port that answers TLCP, TLS 1.3 with the SM suites (RFC 8998) and
//! international TLS. This crate grows into the gateway; today it holds the first piece, the
//! decision on a connection's first flight ([`detect`]), sans-I/O and fuzzed.

pub mod detect;
