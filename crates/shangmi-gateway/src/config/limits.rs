//! `[limits]`: what one client, or all of them, may cost, with the bounds each value must keep
//! so that no setting can make a connection panic (an `Instant` too far away) or a protocol
//! misbehave (an HTTP/2 window past 2^31 - 1).

use serde::Deserialize;

/// `[limits]`: what one client, or all of them, may cost.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Connections open at once across listeners; more are closed on arrival.
    pub max_connections: usize,
    /// Seconds from accepting a connection to a completed handshake.
    pub handshake_timeout: f64,
    /// Seconds without a byte moved before a connection is closed.
    pub idle_timeout: f64,
    /// Seconds a write may wait on a client that reads nothing before its connection closes.
    pub write_timeout: f64,
    /// Seconds to connect to an upstream before it counts as down.
    pub connect_timeout: f64,
    /// Seconds an upstream has to answer a request's head.
    pub upstream_timeout: f64,
    /// Seconds SIGTERM waits for connections in flight before exiting.
    pub drain_timeout: f64,
    /// Seconds an upstream that failed to connect is skipped.
    pub upstream_retry: f64,
    /// The largest request head (HTTP/1.1) or header list (HTTP/2), bytes.
    pub max_header_bytes: usize,
    /// Requests (and TCP connections) per second per client address; 0 for no limit.
    pub requests_per_second: f64,
    /// How many requests above the rate a client may send in a burst.
    pub burst: f64,
    /// RFC 8998 servers' curveSM2 agreements: gathered across connections or computed inline.
    pub key_agreements: KeyAgreements,
    /// Connections open at once from one address (IPv6: one /64); 0 for no limit.
    pub max_connections_per_address: usize,
    /// Handshakes begun per second from one address (IPv6: one /64); 0 for no limit.
    pub handshakes_per_second: f64,
    /// How many handshakes above that rate an address may begin at once.
    pub handshake_burst: f64,
    /// Requests (HTTP/2 streams) one connection may carry before it is asked to close.
    pub max_requests_per_connection: usize,
    /// HTTP/2 streams open at once on one connection.
    pub max_concurrent_streams: u32,
    /// HTTP/2 receive window per stream (what a client may upload ahead), bytes.
    pub stream_window: u32,
    /// HTTP/2 receive window per connection, bytes.
    pub connection_window: u32,
    /// Response bytes one connection may hold that its client has not taken yet; the
    /// upstream is read no faster than the client reads.
    pub response_buffer: usize,
    /// The same, all connections together.
    pub response_budget: usize,
    /// Requests in flight to one site's upstreams; more are answered 503.
    pub max_upstream_requests: usize,
    /// Connections open to one site's upstreams; a request that needs one more is answered
    /// 503.
    pub max_upstream_connections: usize,
    /// Seconds a client connection may live before it is asked to close (HTTP) or closed.
    pub max_connection_age: f64,
    /// Seconds after a reload that connections made before it are asked to close.
    pub reload_grace: f64,
}

/// `key_agreements`: where RFC 8998 handshakes' curveSM2 agreements are computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyAgreements {
    /// In each connection's handshake, one by one.
    #[default]
    Inline,
    /// Gathered across connections (`gather`), eight at a time at most: for CPUs with
    /// AVX512-IFMA lanes and arrival rates that fill them.
    Gathered,
}

impl KeyAgreements {
    /// Whether to gather.
    pub fn gathered(self) -> bool {
        self == KeyAgreements::Gathered
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 10_000,
            handshake_timeout: 10.0,
            idle_timeout: 60.0,
            write_timeout: 30.0,
            connect_timeout: 5.0,
            upstream_timeout: 60.0,
            drain_timeout: 30.0,
            upstream_retry: 10.0,
            max_header_bytes: 16 * 1024,
            requests_per_second: 0.0,
            burst: 50.0,
            key_agreements: KeyAgreements::Inline,
            max_connections_per_address: 1000,
            handshakes_per_second: 0.0,
            handshake_burst: 100.0,
            max_requests_per_connection: 1000,
            max_concurrent_streams: 100,
            stream_window: 256 * 1024,
            connection_window: 1024 * 1024,
            response_buffer: 1024 * 1024,
            response_budget: 256 * 1024 * 1024,
            max_upstream_requests: 1024,
            max_upstream_connections: 512,
            max_connection_age: 3600.0,
            reload_grace: 30.0,
        }
    }
}

/// The most seconds any timeout may be (a day: an `Instant` plus anything larger is a panic
/// waiting to happen, and no server wants a handshake that long).
const MAX_SECONDS: f64 = 86_400.0;

impl Limits {
    /// Every value within what the gateway can serve with, or the problem with the first
    /// that is not.
    pub fn check(&self) -> Result<(), String> {
        let secs = [
            ("handshake_timeout", self.handshake_timeout, MAX_SECONDS),
            ("idle_timeout", self.idle_timeout, MAX_SECONDS),
            ("write_timeout", self.write_timeout, MAX_SECONDS),
            ("connect_timeout", self.connect_timeout, MAX_SECONDS),
            ("upstream_timeout", self.upstream_timeout, MAX_SECONDS),
            ("drain_timeout", self.drain_timeout, MAX_SECONDS),
            ("upstream_retry", self.upstream_retry, MAX_SECONDS),
            ("reload_grace", self.reload_grace, MAX_SECONDS),
            (
                "max_connection_age",
                self.max_connection_age,
                30.0 * MAX_SECONDS,
            ),
        ];
        for (what, v, most) in secs {
            if !(v > 0.0 && v <= most) {
                return Err(format!("{what}: seconds, above 0 and at most {most}"));
            }
        }
        let counts = [
            ("max_connections", self.max_connections, 1, 1 << 24),
            (
                "max_connections_per_address",
                self.max_connections_per_address,
                0,
                1 << 24,
            ),
            ("max_header_bytes", self.max_header_bytes, 8 << 10, 1 << 20),
            (
                "max_requests_per_connection",
                self.max_requests_per_connection,
                1,
                1 << 30,
            ),
            ("response_buffer", self.response_buffer, 16 << 10, 1 << 30),
            ("response_budget", self.response_budget, 1 << 20, 1 << 40),
            (
                "max_upstream_requests",
                self.max_upstream_requests,
                1,
                1 << 20,
            ),
            (
                "max_upstream_connections",
                self.max_upstream_connections,
                1,
                1 << 20,
            ),
        ];
        for (what, v, least, most) in counts {
            if !(least..=most).contains(&v) {
                return Err(format!("{what}: from {least} to {most}"));
            }
        }
        if !(1..=1000).contains(&self.max_concurrent_streams) {
            return Err("max_concurrent_streams: from 1 to 1000".into());
        }
        for (what, v) in [
            ("stream_window", self.stream_window),
            ("connection_window", self.connection_window),
        ] {
            // HTTP/2's bounds on a window (RFC 9113 section 6.9.1).
            if !(65_535..=(1 << 31) - 1).contains(&v) {
                return Err(format!("{what}: from 65535 to 2147483647 bytes"));
            }
        }
        let rates = [
            ("requests_per_second", self.requests_per_second, 0.0),
            ("burst", self.burst, 1.0),
            ("handshakes_per_second", self.handshakes_per_second, 0.0),
            ("handshake_burst", self.handshake_burst, 1.0),
        ];
        for (what, v, least) in rates {
            if !(v >= least && v <= 1e9) {
                return Err(format!("{what}: from {least} to 1e9"));
            }
        }
        Ok(())
    }
}
