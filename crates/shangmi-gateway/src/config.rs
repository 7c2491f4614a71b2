//! The configuration file: TOML, read whole and checked before anything uses it. Every problem
//! is reported as `FILE:LINE: what`, and paths are relative to the file's directory.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

mod limits;
pub use limits::{KeyAgreements, Limits};

/// The whole file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct File {
    /// The admin listener (metrics, health, reload); none when absent.
    pub admin: Option<Admin>,
    /// Limits, all with defaults.
    #[serde(default)]
    pub limits: Limits,
    /// Logging.
    #[serde(default)]
    pub log: Log,
    /// What the gateway lets through to HTTP upstreams.
    #[serde(default)]
    pub http: Http,
    /// Session tickets shared between processes.
    pub tickets: Option<Tickets>,
    /// The listeners: at least one.
    #[serde(default)]
    pub listener: Vec<Listener>,
}

/// `[admin]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Admin {
    /// ADDR:PORT; loopback unless a token is set.
    #[serde(default = "default_admin_listen")]
    pub listen: Spanned<String>,
    /// A file holding the token `POST /reload` must present (`Authorization: Bearer ...`);
    /// without one, reloads are by SIGHUP only.
    pub token_file: Option<Spanned<String>>,
}

fn default_admin_listen() -> Spanned<String> {
    Spanned::new(0..0, "127.0.0.1:9901".into())
}

/// `[http]`: which parts of a client's request reach an HTTP upstream.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Http {
    /// Request headers whose name has an underscore: "drop" them (as nginx does) or
    /// "refuse" the request (400). Servers that fold `_` into `-` (WSGI, CGI, Rack) would
    /// otherwise read a client's `X_SM_Client_Subject` as the gateway's header.
    pub underscore_headers: Underscores,
    /// Answer 421 when the Host does not name the site the server name chose; always on for
    /// listeners where a site requires client certificates.
    pub check_host: bool,
    /// The HTTP/1.1 upgrades relayed to the upstream, by their `Upgrade` token.
    pub upgrades: Vec<String>,
}

impl Default for Http {
    fn default() -> Self {
        Http {
            underscore_headers: Underscores::Drop,
            check_host: false,
            upgrades: vec!["websocket".into()],
        }
    }
}

/// `underscore_headers`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Underscores {
    /// Removed from the request.
    Drop,
    /// The request is answered 400.
    Refuse,
}

/// `[log]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Log {
    /// Access log lines (JSON) to "stdout", "stderr" or "off".
    pub access: String,
}

impl Default for Log {
    fn default() -> Self {
        Log {
            access: "stdout".into(),
        }
    }
}

/// `[tickets]`: TLS 1.3 session tickets sealed under keys read from a file, so that every
/// gateway process given the same file (replicas, or processes sharing a port) resumes the
/// others' sessions.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tickets {
    /// One secret per line, 64 hex digits (`shangmi-gateway --new-ticket-key` makes one); the
    /// first seals, all open. Re-read on reload.
    pub key_file: Spanned<String>,
    /// Seconds a ticket is good for (told to clients).
    #[serde(default = "default_ticket_lifetime")]
    pub lifetime: u32,
    /// Also issue TLS 1.2 tickets (off: a TLS 1.2 ticket carries the session's master secret
    /// under the ticket key, with no forward secrecy; TLS 1.2 clients resume by session ID).
    #[serde(default)]
    pub tls12: bool,
}

fn default_ticket_lifetime() -> u32 {
    12 * 60 * 60
}

/// `[[listener]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Listener {
    /// ADDR:PORT.
    pub listen: Spanned<String>,
    /// Share the port with other processes (SO_REUSEPORT).
    #[serde(default)]
    pub reuse_port: bool,
    /// The sites: the first is the default.
    #[serde(default)]
    pub site: Vec<Spanned<Site>>,
}

/// `[[listener.site]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Site {
    /// The names (SNI) this site answers: exact, or `*.example.com`.
    #[serde(default)]
    pub server_names: Vec<Spanned<String>>,
    /// `http://HOST:PORT`, `h2c://HOST:PORT` or `tcp://HOST:PORT`, one kind per site.
    pub upstream: Vec<Spanned<String>>,
    /// The TLCP signing and encryption pair.
    pub tlcp: Option<Spanned<Tlcp>>,
    /// The SM2 certificate for RFC 8998.
    pub sm2: Option<Spanned<Pair>>,
    /// International certificates (ECDSA P-256/P-384, RSA, Ed25519).
    #[serde(default)]
    pub international: Vec<Spanned<Pair>>,
    /// Require client certificates chaining to these roots (every protocol).
    pub client_ca: Option<Spanned<String>>,
    /// CRLs (PEM or DER) client certificates are checked against (with `client_ca`).
    pub client_crl: Option<Spanned<String>>,
}

/// A TLCP pair.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tlcp {
    /// The signing certificate chain.
    pub sign_cert: Option<String>,
    /// Its key.
    pub sign_key: Option<String>,
    /// The encryption certificate chain.
    pub enc_cert: Option<String>,
    /// Its key.
    pub enc_key: Option<String>,
    /// Both pairs from a PKCS#12 keystore instead (aliases sign and enc, else in order).
    pub p12: Option<String>,
    /// A file holding the keys' (or the keystore's) password.
    pub password_file: Option<String>,
}

/// A certificate chain and its key.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pair {
    /// The chain, leaf first.
    pub cert: Option<String>,
    /// The key.
    pub key: Option<String>,
    /// The key and its chain from a PKCS#12 keystore instead (SM2 keys only).
    pub p12: Option<String>,
    /// A file holding the key's (or the keystore's) password.
    pub password_file: Option<String>,
}

/// A problem, placed in the file.
#[derive(Debug)]
pub struct Problem {
    /// The file.
    pub file: PathBuf,
    /// 1-based; 0 when the problem has no place.
    pub line: usize,
    /// What is wrong.
    pub what: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}: {}", self.file.display(), self.line, self.what)
        } else {
            write!(f, "{}: {}", self.file.display(), self.what)
        }
    }
}

impl std::error::Error for Problem {}

/// The file read and parsed, with what places its problems.
pub struct Source {
    /// The file.
    pub path: PathBuf,
    text: String,
    /// The parsed form.
    pub file: File,
}

/// The largest configuration file read (a wrong path such as /dev/zero stops here).
const MAX_FILE: u64 = 4 << 20;

impl Source {
    /// Reads and parses `path` (its syntax and shape only; [`crate::site`] checks the rest).
    pub fn read(path: &Path) -> Result<Source, Problem> {
        let problem = |line, what: String| Problem {
            file: path.to_path_buf(),
            line,
            what,
        };
        let meta = std::fs::metadata(path).map_err(|e| problem(0, e.to_string()))?;
        if meta.len() > MAX_FILE {
            return Err(problem(0, format!("larger than {MAX_FILE} bytes")));
        }
        let text = std::fs::read_to_string(path).map_err(|e| problem(0, e.to_string()))?;
        let file: File = toml::from_str(&text).map_err(|e| {
            let line = e.span().map_or(0, |s| line_of(&text, s.start));
            problem(line, e.message().trim().to_string())
        })?;
        Ok(Source {
            path: path.to_path_buf(),
            text,
            file,
        })
    }

    /// A problem at `span`.
    pub fn problem(&self, span: std::ops::Range<usize>, what: impl Into<String>) -> Problem {
        Problem {
            file: self.path.clone(),
            line: line_of(&self.text, span.start),
            what: what.into(),
        }
    }

    /// A path in the file, relative to the file's directory.
    pub fn resolve(&self, p: &str) -> PathBuf {
        let p = Path::new(p);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.path.parent().unwrap_or(Path::new(".")).join(p)
        }
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// ADDR:PORT, or the problem.
pub fn socket_addr(src: &Source, s: &Spanned<String>) -> Result<SocketAddr, Problem> {
    s.get_ref()
        .parse()
        .map_err(|_| src.problem(s.span(), format!("`{}` is not ADDR:PORT", s.get_ref())))
}
