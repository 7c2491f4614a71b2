//! shangmi-gateway: one port that answers TLCP, TLS 1.3 with the SM suites (RFC 8998) and
//! international TLS in front of an HTTP or TCP service.
//!
//! Each connection's first flight decides its protocol ([`detect`], sans-I/O and fuzzed); the
//! site is chosen by its server name; TLCP runs on shangmi-tlcp's async stream, RFC 8998 on
//! rustls with shangmi-rustls, international TLS on rustls with aws-lc-rs ([`handshake`]). The binary `shangmi-gateway` reads a TOML file ([`config`], checked whole by
//! [`site::load`]) and serves it ([`run`]).

// The README's examples are doctests: a quick start that stops compiling fails the tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

#[cfg(feature = "server")]
pub mod admin;
#[cfg(feature = "server")]
pub mod admission;
#[cfg(feature = "server")]
pub mod budget;
#[cfg(feature = "server")]
pub mod config;
pub mod detect;
#[cfg(feature = "server")]
pub mod gather;
#[cfg(feature = "server")]
pub mod handshake;
#[cfg(feature = "server")]
pub mod headers;
#[cfg(feature = "server")]
pub mod identity;
#[cfg(feature = "international")]
mod international;
#[cfg(all(feature = "server", not(feature = "international")))]
#[path = "no_international.rs"]
mod international;
#[cfg(feature = "server")]
pub mod io;
#[cfg(feature = "server")]
mod keys;
#[cfg(feature = "server")]
pub mod local;
#[cfg(feature = "server")]
pub mod log;
#[cfg(feature = "server")]
pub mod metrics;
#[cfg(feature = "server")]
pub mod proxy;
#[cfg(feature = "server")]
pub mod relay;
#[cfg(feature = "server")]
pub mod run;
#[cfg(feature = "server")]
pub mod serve;
#[cfg(feature = "server")]
pub mod site;
#[cfg(feature = "server")]
pub mod state;
#[cfg(feature = "server")]
mod tickets;
#[cfg(feature = "server")]
pub mod upstream;
