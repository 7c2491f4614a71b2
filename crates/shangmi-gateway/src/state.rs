//! What every connection shares: the configuration in force (replaced whole on reload, each
//! replacement numbered so that older connections learn of it), the metrics, admission (the
//! connection count, per-address limits and rates), the response budget, the access log, the
//! signal to drain and the gatherer of key agreements.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::watch;

use crate::admission::{Address, Admission, Buckets};
use crate::budget;
use crate::gather::Gatherer;
use crate::identity::ClientIdentity;
use crate::log::{self, Sink};
use crate::metrics::Metrics;
use crate::site::{self, Generation};

/// The process's shared state.
pub struct Shared {
    /// The configuration file (none for a server assembled in code, which cannot reload).
    pub path: Option<PathBuf>,
    current: RwLock<Arc<Generation>>,
    /// The number of the configuration in force and when it came into force.
    generations: watch::Sender<(u64, Instant)>,
    /// One reload at a time.
    reloading: Mutex<()>,
    /// The counters.
    pub metrics: Metrics,
    /// Who may connect and send.
    pub admission: Arc<Admission>,
    /// All connections' response bytes in flight.
    pub budget: Arc<budget::Global>,
    /// Failure lines by address (a client failing on purpose is logged a few times a second).
    failure_lines: Mutex<Buckets>,
    /// Accept loops that ended for another reason than draining, by listener.
    dead_listeners: Mutex<Vec<usize>>,
    draining: AtomicBool,
    stop: watch::Sender<bool>,
    gatherer: OnceLock<Option<Gatherer>>,
}

impl Shared {
    /// State for `generation`, read from `path`.
    pub fn new(path: Option<PathBuf>, generation: Generation) -> Arc<Shared> {
        let budget = budget::Global::new(generation.limits.response_budget);
        Arc::new(Shared {
            path,
            current: RwLock::new(Arc::new(generation)),
            generations: watch::channel((0, Instant::now())).0,
            reloading: Mutex::new(()),
            metrics: Metrics::default(),
            admission: Arc::default(),
            budget,
            failure_lines: Mutex::default(),
            dead_listeners: Mutex::default(),
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

    /// The configuration in force and its number; a connection keeps the one it started with.
    pub fn current(&self) -> (Arc<Generation>, u64) {
        // The number is read under the same lock as the configuration, so they match.
        let g = self.current.read().unwrap_or_else(|p| p.into_inner());
        (g.clone(), self.generations.borrow().0)
    }

    /// Changes whenever a reload puts a new configuration in force: its number and when.
    pub fn generations(&self) -> watch::Receiver<(u64, Instant)> {
        self.generations.subscribe()
    }

    /// Re-reads the file and puts it in force, or keeps the old one and says why (the full
    /// reason is logged; the answer names only the line, never a file's path).
    pub fn reload(&self) -> Result<(), String> {
        let _one = self.reloading.lock().unwrap_or_else(|p| p.into_inner());
        let result = self.try_reload();
        match &result {
            Ok(()) => {
                self.metrics.reload("ok");
                let from = self.path.as_deref().unwrap_or(std::path::Path::new(""));
                event("reload", &format!("{} in force", from.display()));
            }
            Err((full, _)) => {
                self.metrics.reload("refused");
                event("reload refused, the old configuration keeps serving", full);
            }
        }
        result.map_err(|(_, public)| public)
    }

    fn try_reload(&self) -> Result<(), (String, String)> {
        let path = self.path.as_deref().ok_or_else(|| {
            let why = "this server was not read from a file".to_string();
            (why.clone(), why)
        })?;
        let new = site::load(path).map_err(|e| {
            let public = match e.line {
                0 => "the new configuration has a problem (see the gateway's log)".into(),
                n => format!(
                    "the new configuration has a problem at line {n} (see the gateway's log)"
                ),
            };
            (e.to_string(), public)
        })?;
        let (old, _) = self.current();
        let addrs = |g: &Generation| {
            g.listeners
                .iter()
                .map(|l| (l.addr, l.reuse_port))
                .collect::<Vec<_>>()
        };
        if addrs(&new) != addrs(&old) || new.admin_addr() != old.admin_addr() {
            let why = "listen addresses changed: restart the gateway to change them".to_string();
            return Err((why.clone(), why));
        }
        let mut current = self.current.write().unwrap_or_else(|p| p.into_inner());
        *current = Arc::new(new);
        self.generations
            .send_modify(|(n, at)| (*n, *at) = (*n + 1, Instant::now()));
        Ok(())
    }

    /// Whether a request (or TCP connection) from `ip` is within the configured rate.
    pub fn allow(&self, ip: IpAddr, per_second: f64, burst: f64) -> bool {
        let ok = self.admission.allow_request(ip, per_second, burst);
        if !ok {
            self.metrics.limited.fetch_add(1, Ordering::Relaxed);
        }
        ok
    }

    /// Records that the accept loop of listener `index` ended while not draining.
    pub fn listener_died(&self, index: usize) {
        self.dead_listeners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(index);
    }

    /// The listeners whose accept loop ended while not draining.
    pub fn dead_listeners(&self) -> Vec<usize> {
        self.dead_listeners
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
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
    /// (the command line's servers) one sentence on stderr. Off the calling thread.
    pub fn access(&self, generation: &Generation, mut line: serde_json::Value) {
        let to = generation.access_log.as_str();
        let sink = match to {
            "off" => return,
            "lines" => {
                log::write(Sink::Stderr, format!("shangmi: {}\n", sentence(&line)));
                return;
            }
            "stderr" => Sink::Stderr,
            _ => Sink::Stdout,
        };
        line["time"] = serde_json::Value::String(now_rfc3339());
        log::write(sink, format!("{line}\n"));
    }

    /// The access log line of a connection that failed, at most a few a second per address
    /// (the rest counted), its detail cut short.
    pub fn failure_line(
        &self,
        generation: &Generation,
        client: IpAddr,
        mut line: serde_json::Value,
    ) {
        let allowed = self
            .failure_lines
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take(
                Address::of(client),
                log::FAILURE_LINES_PER_SECOND,
                log::FAILURE_LINE_BURST,
                Instant::now(),
            );
        if !allowed {
            self.metrics.log_suppressed.fetch_add(1, Ordering::Relaxed);
            return;
        }
        if let Some(d) = line.get_mut("detail")
            && let Some(text) = d.as_str()
        {
            *d = serde_json::Value::String(log::truncate(text));
        }
        self.access(generation, line);
    }

    /// How long after `seq` was replaced a connection of it is asked to close, per its
    /// generation's limits; resolves when it should be (or never, if it need not).
    pub async fn retire(&self, seq: u64, born: Instant, limits: &crate::config::Limits) -> Retire {
        let mut rx = self.generations();
        let age_due = born + Duration::from_secs_f64(limits.max_connection_age);
        let grace = Duration::from_secs_f64(limits.reload_grace);
        loop {
            let (now_seq, since) = *rx.borrow_and_update();
            let reload_due = (now_seq != seq).then_some(since + grace);
            let (due, why) = match reload_due {
                Some(r) if r < age_due => (r, Retire::Reloaded),
                _ => (age_due, Retire::Aged),
            };
            tokio::select! {
                _ = tokio::time::sleep_until(due.into()) => return why,
                r = rx.changed() => if r.is_err() {
                    // The state is being dropped: only the age is left to wait for.
                    tokio::time::sleep_until(age_due.into()).await;
                    return Retire::Aged;
                },
            }
        }
    }
}

/// Why a connection is asked to close.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retire {
    /// A reload replaced its configuration, `reload_grace` ago.
    Reloaded,
    /// It reached `max_connection_age`.
    Aged,
}

impl Retire {
    /// For logs and the metric's label.
    pub fn reason(self) -> &'static str {
        match self {
            Retire::Reloaded => "reload",
            Retire::Aged => "age",
        }
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

/// A line on stderr about the gateway itself (through the log writer).
pub fn event(what: &str, detail: &str) {
    log::write(
        Sink::Stderr,
        format!("{} {what}: {detail}\n", now_rfc3339()),
    );
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
    /// The verified client certificate, when the client presented one (restored on
    /// resumption).
    pub client_identity: Option<ClientIdentity>,
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
