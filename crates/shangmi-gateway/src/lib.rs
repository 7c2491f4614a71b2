//! shangmi-gateway: one port that answers TLCP, TLS 1.3 with the SM suites (RFC 8998) and
//! international TLS in front of an HTTP or TCP service.
//!
//! Each connection's first flight decides its protocol ([`detect`], sans-I/O and fuzzed); the
//! site is chosen by its server name; TLCP runs on shangmi-tlcp through an async adapter
//! ([`tlcp_io`]), RFC 8998 on rustls with shangmi-rustls, international TLS on rustls with
//! aws-lc-rs. The binary `shangmi-gateway` reads a TOML file ([`config`], checked whole by
//! [`site::load`]) and serves it ([`run`]).

pub mod admin;
pub mod config;
pub mod detect;
pub mod io;
pub mod metrics;
pub mod proxy;
pub mod relay;
pub mod run;
pub mod serve;
pub mod site;
pub mod state;
pub mod tlcp_io;
pub mod upstream;
