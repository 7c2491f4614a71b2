//! What every connection shares: the configuration in force (replaced whole on reload), the
//! metrics, the per-address rate, the access log, the signal to drain and the gatherer of
//! key agreements.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::watch;

use crate::gather::Gatherer;
use crate::metrics::Metrics;
use crate::site::{self, Generation};

/// The process's shared state.
pub struct Shared {
    /// The configuration file (none for a server assembled in code, which cannot reload).
    pub path: Option<PathBuf>,
    current: RwLock<Arc<Generation>>,
    /// The counters.
    pub metrics: Metrics,
    rate: Mutex<HashMap<IpAddr, (f64, Instant)>>,
    draining: AtomicBool,
    stop: watch::Sender<bool>,
    gatherer: OnceLock<Option<Gatherer>>,
}

impl Shared {
    /// State for `generation`, read from `path`.
    pub fn new(path: Option<PathBuf>, generation: Generation) -> Arc<Shared> {
        Arc::new(Shared {
            path,
            current: RwLock::new(Arc::new(generation)),
            metrics: Metrics::default(),
            rate: Mutex::new(HashMap::new()),
            draining: AtomicBool::new(false),
            stop: watch::channel(false).0,
            gatherer: OnceLock::new(),
        })
    }

    /// The gatherer of curveSM2 agreements, started on first use; `None` if its thread could
    /// not start (the handshakes then compute inline).
    pub fn gatherer(&self) -> Option<&Gatherer> {
        self.gatherer
            .get_or_init(|| match Gatherer::start(self.metrics.gathering.clone()) {
                Ok(g) => Some(g),
                Err(e) => {
                    event("gather", &format!("computing inline: {e}"));
                    None
                }
            })
            .as_ref()
    }

    /// The configuration in force; a connection keeps the one it started with.
    pub fn current(&self) -> Arc<Generation> {
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Re-reads the file and puts it in force, or keeps the old one and says why.
    pub fn reload(&self) -> Result<(), String> {
        let result = self.try_reload();
        match &result {
            Ok(()) => {
                self.metrics.reload("ok");
                let from = self.path.as_deref().unwrap_or(std::path::Path::new(""));
                event("reload", &format!("{} in force", from.display()));
            }
            Err(e) => {
                self.metrics.reload("refused");
                event("reload refused, the old configuration keeps serving", e);
            }
        }
        result
    }

    fn try_reload(&self) -> Result<(), String> {
        let path = self
            .path
            .as_deref()
            .ok_or("this server was not read from a file")?;
        let new = site::load(path).map_err(|e| e.to_string())?;
        let old = self.current();
        let addrs = |g: &Generation| {
            g.listeners
                .iter()
                .map(|l| (l.addr, l.reuse_port))
                .collect::<Vec<_>>()
        };
        if addrs(&new) != addrs(&old) || new.admin != old.admin {
            return Err("listen addresses changed: restart the gateway to change them".into());
        }
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(new);
        Ok(())
    }

    /// Whether a request (or TCP connection) from `ip` is within the configured rate.
    pub fn allow(&self, ip: IpAddr, per_second: f64, burst: f64) -> bool {
        if per_second <= 0.0 {
            return true;
        }
        let now = Instant::now();
        let mut m = self.rate.lock().unwrap_or_else(|p| p.into_inner());
        if m.len() >= 1 << 16 {
            // Full buckets carry no state worth keeping.
            m.retain(|_, (_, t)| now.duration_since(*t).as_secs_f64() * per_second < burst);
        }
        let (tokens, last) = m.entry(ip).or_insert((burst, now));
        *tokens = (*tokens + now.duration_since(*last).as_secs_f64() * per_second).min(burst);
        *last = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            true
        } else {
            self.metrics
                .limited
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            false
        }
    }

    /// Starts draining: listeners stop accepting, connections finish what is in flight.
    pub fn drain(&self) {
        self.draining.store(true, Ordering::SeqCst);
        let _ = self.stop.send(true);
    }

    /// Whether the gateway is draining.
    pub fn draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    /// Changes to true when draining starts.
    pub fn stopping(&self) -> watch::Receiver<bool> {
        self.stop.subscribe()
    }

    /// Writes an access log line, where the configuration sends them: JSON, or for "lines"
    /// (the command line's servers) one sentence on stderr.
    pub fn access(&self, generation: &Generation, mut line: serde_json::Value) {
        let to = generation.access_log.as_str();
        if to == "off" {
            return;
        }
        if to == "lines" {
            eprintln!("shangmi: {}", sentence(&line));
            return;
        }
        line["time"] = serde_json::Value::String(now_rfc3339());
        let text = format!("{line}\n");
        use std::io::Write;
        let _ = if to == "stderr" {
            std::io::stderr().lock().write_all(text.as_bytes())
        } else {
            std::io::stdout().lock().write_all(text.as_bytes())
        };
    }
}

/// An access log entry as `CLIENT: what happened`.
fn sentence(line: &serde_json::Value) -> String {
    let field = |k: &str| line.get(k).and_then(|v| v.as_str()).unwrap_or("");
    let mut s = format!("{}: ", field("client"));
    if !field("event").is_empty() {
        s += field("event");
        for k in ["reason", "detail"] {
            if !field(k).is_empty() {
                s = format!("{s}: {}", field(k));
            }
        }
        return s;
    }
    for k in ["protocol", "suite", "group"] {
        if !field(k).is_empty() {
            s = format!("{s}{} ", field(k));
        }
    }
    let resumed = line.get("resumed").and_then(|v| v.as_bool()) == Some(true);
    format!(
        "{s}{}, {}",
        if resumed { "resumed" } else { "full" },
        field("status")
    )
}

/// A line on stderr about the gateway itself.
pub fn event(what: &str, detail: &str) {
    eprintln!("{} {what}: {detail}", now_rfc3339());
}

/// What a connection agreed, for headers and logs.
pub struct Session {
    /// The client's address.
    pub client: SocketAddr,
    /// "TLCP", "TLSv1.3" or "TLSv1.2".
    pub protocol: &'static str,
    /// The suite's standard name.
    pub suite: String,
    /// The key exchange group (`curveSM2`, `X25519`, ...); none for TLCP.
    pub group: Option<String>,
    /// The name the client asked for.
    pub sni: Option<String>,
    /// The verified client certificate's subject (RFC 4514).
    pub client_subject: Option<String>,
    /// From accept to the end of the handshake.
    pub handshake: Duration,
    /// Whether the handshake resumed a session.
    pub resumed: bool,
}

impl Session {
    /// The `X-SM-Protocol` value, e.g. `TLCP ECC_SM4_GCM_SM3`.
    pub fn header(&self) -> String {
        format!("{} {}", self.protocol, self.suite)
    }
}

/// The time now, UTC, to the millisecond.
pub fn now_rfc3339() -> String {
    let d = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}
