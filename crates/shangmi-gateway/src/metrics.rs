//! Counters, gauges and histograms, written in Prometheus' text format on `GET /metrics`.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

/// Histogram bounds, seconds.
const BOUNDS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// A latency histogram.
#[derive(Default)]
pub struct Histogram {
    buckets: [AtomicU64; BOUNDS.len()],
    count: AtomicU64,
    micros: AtomicU64,
}

impl Histogram {
    /// Records one observation.
    pub fn observe(&self, d: Duration) {
        let s = d.as_secs_f64();
        if let Some(i) = BOUNDS.iter().position(|&b| s <= b) {
            self.buckets[i].fetch_add(1, Ordering::Relaxed);
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        self.micros
            .fetch_add(d.as_micros() as u64, Ordering::Relaxed);
    }

    fn write(&self, out: &mut String, name: &str, help: &str) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        let mut cumulative = 0;
        for (b, n) in BOUNDS.iter().zip(&self.buckets) {
            cumulative += n.load(Ordering::Relaxed);
            let _ = writeln!(out, "{name}_bucket{{le=\"{b}\"}} {cumulative}");
        }
        let count = self.count.load(Ordering::Relaxed);
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {count}");
        let sum = self.micros.load(Ordering::Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "{name}_sum {sum}\n{name}_count {count}");
    }
}

/// Counters by label values.
#[derive(Default)]
struct Family(Mutex<BTreeMap<Vec<String>, u64>>);

impl Family {
    fn add(&self, labels: &[&str]) {
        let mut m = self.0.lock().unwrap_or_else(|p| p.into_inner());
        *m.entry(labels.iter().map(|s| s.to_string()).collect())
            .or_default() += 1;
    }

    fn write(&self, out: &mut String, name: &str, help: &str, keys: &[&str]) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
        let m = self.0.lock().unwrap_or_else(|p| p.into_inner());
        for (values, n) in m.iter() {
            let labels: Vec<String> = keys
                .iter()
                .zip(values)
                .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
                .collect();
            let _ = writeln!(out, "{name}{{{}}} {n}", labels.join(","));
        }
    }
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Everything the gateway counts.
#[derive(Default)]
pub struct Metrics {
    handshakes: Family,
    failures: Family,
    requests: Family,
    upstream_errors: Family,
    reloads: Family,
    refusals: Family,
    retirements: Family,
    /// Connections open now.
    pub active: AtomicI64,
    /// Connections accepted.
    pub accepted: AtomicU64,
    /// Requests refused by the per-address rate.
    pub limited: AtomicU64,
    /// Failure lines not written (over their per-address rate).
    pub log_suppressed: AtomicU64,
    /// From accept to a completed handshake.
    pub handshake_seconds: Histogram,
    /// From a request's head to its response's head.
    pub request_seconds: Histogram,
    /// curveSM2 agreements gathered across connections.
    pub gathering: std::sync::Arc<crate::gather::GatherCounts>,
}

impl Metrics {
    /// A handshake that completed (`outcome` "ok", `kind` "full" or "resumed") or did not.
    pub fn handshake(&self, protocol: &str, suite: &str, kind: &str, outcome: &str) {
        self.handshakes.add(&[protocol, suite, kind, outcome]);
    }

    /// A connection that ended before it carried data, or stopped reading, and why.
    pub fn failure(&self, reason: &str) {
        self.failures.add(&[reason]);
    }

    /// A request answered with `status`.
    pub fn request(&self, protocol: &str, status: u16) {
        self.requests.add(&[protocol, &status.to_string()]);
    }

    /// An upstream that could not be reached or failed (`kind`: connect, timeout, reset).
    pub fn upstream_error(&self, kind: &str) {
        self.upstream_errors.add(&[kind]);
    }

    /// A reload, "ok" or "refused".
    pub fn reload(&self, outcome: &str) {
        self.reloads.add(&[outcome]);
    }

    /// A connection closed on arrival, and why ("full", "address full", "handshake rate").
    pub fn refusal(&self, reason: &str) {
        self.refusals.add(&[reason]);
    }

    /// A connection asked to close before its client was done, and why ("reload", "age",
    /// "requests", "resets").
    pub fn retired(&self, reason: &str) {
        self.retirements.add(&[reason]);
    }

    /// The text format, with `gauges` (name, help, value) after the gateway's own.
    pub fn render(&self, gauges: &[(&str, &str, u64)]) -> String {
        let mut out = String::new();
        self.handshakes.write(
            &mut out,
            "shangmi_gateway_handshakes_total",
            "Handshakes by protocol, suite and outcome.",
            &["protocol", "suite", "kind", "outcome"],
        );
        self.failures.write(
            &mut out,
            "shangmi_gateway_connection_failures_total",
            "Connections that ended before carrying data, by reason.",
            &["reason"],
        );
        self.requests.write(
            &mut out,
            "shangmi_gateway_requests_total",
            "HTTP requests by protocol and status.",
            &["protocol", "status"],
        );
        self.upstream_errors.write(
            &mut out,
            "shangmi_gateway_upstream_errors_total",
            "Upstream failures by kind.",
            &["kind"],
        );
        self.reloads.write(
            &mut out,
            "shangmi_gateway_reloads_total",
            "Configuration reloads by outcome.",
            &["outcome"],
        );
        self.refusals.write(
            &mut out,
            "shangmi_gateway_connections_refused_total",
            "Connections closed on arrival, by reason.",
            &["reason"],
        );
        self.retirements.write(
            &mut out,
            "shangmi_gateway_connections_retired_total",
            "Connections asked to close before their client was done, by reason.",
            &["reason"],
        );
        self.write_counters(&mut out);
        let _ = writeln!(
            out,
            "# HELP shangmi_gateway_active_connections Connections open now.\n\
             # TYPE shangmi_gateway_active_connections gauge\n\
             shangmi_gateway_active_connections {}",
            self.active.load(Ordering::Relaxed)
        );
        for (name, help, v) in gauges {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {v}");
        }
        self.handshake_seconds.write(
            &mut out,
            "shangmi_gateway_handshake_seconds",
            "From accept to a completed handshake.",
        );
        self.request_seconds.write(
            &mut out,
            "shangmi_gateway_request_seconds",
            "From a request's head to the response's head.",
        );
        out
    }

    /// The counters without labels.
    fn write_counters(&self, out: &mut String) {
        for (name, help, v) in [
            (
                "shangmi_gateway_connections_accepted_total",
                "Connections accepted.",
                self.accepted.load(Ordering::Relaxed),
            ),
            (
                "shangmi_gateway_log_lines_suppressed_total",
                "Failure log lines not written, over their per-address rate.",
                self.log_suppressed.load(Ordering::Relaxed),
            ),
            (
                "shangmi_gateway_log_lines_dropped_total",
                "Log lines dropped because the log's writer was behind.",
                crate::log::dropped(),
            ),
            (
                "shangmi_gateway_rate_limited_total",
                "Requests refused by the per-address rate.",
                self.limited.load(Ordering::Relaxed),
            ),
            (
                "shangmi_gateway_gathered_agreements_total",
                "curveSM2 agreements computed gathered across connections.",
                self.gathering.agreements.load(Ordering::Relaxed),
            ),
            (
                "shangmi_gateway_agreement_batches_total",
                "Calls that computed the gathered agreements.",
                self.gathering.batches.load(Ordering::Relaxed),
            ),
            (
                "shangmi_gateway_gathered_unused_total",
                "Gathered agreements a handshake did not use (a hello retry, or it failed first).",
                self.gathering.unused.load(Ordering::Relaxed),
            ),
        ] {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {v}"
            );
        }
    }
}
