//! A configuration made ready to serve: every certificate and key read and matched, the
//! protocols' server configurations built, the upstreams parsed. What `--check` runs, and what
//! a reload builds before it replaces anything.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rustls::sign::CertifiedKey;
use toml::Spanned;
use zeroize::Zeroizing;

use crate::config::{self, Limits, Pair, Problem, Source};
use crate::upstream::{self, Kind, Upstream};

/// A configuration ready to serve.
pub struct Generation {
    /// The admin listener's address.
    pub admin: Option<SocketAddr>,
    /// Limits.
    pub limits: Limits,
    /// Where access log lines go: "stdout", "stderr" or "off" (JSON), or "lines" (sentences
    /// on stderr, for the command line's servers).
    pub access_log: String,
    /// The listeners, in the file's order.
    pub listeners: Vec<Listener>,
}

impl Generation {
    /// One listener with one site, assembled in code rather than read from a file (the
    /// command line's `tls serve` and `tlcp serve`); its log lines are sentences on stderr.
    pub fn single(addr: SocketAddr, site: Site, limits: Limits) -> Generation {
        Generation {
            admin: None,
            limits,
            access_log: "lines".into(),
            listeners: vec![Listener {
                addr,
                reuse_port: false,
                sites: vec![Arc::new(site)],
            }],
        }
    }
}

/// One listening address and its sites.
pub struct Listener {
    /// Where it listens.
    pub addr: SocketAddr,
    /// SO_REUSEPORT.
    pub reuse_port: bool,
    /// The sites; the first is the default.
    pub sites: Vec<Arc<Site>>,
}

/// What one site serves.
pub struct Site {
    /// Lower-case names, exact or `*.suffix`.
    pub names: Vec<String>,
    /// TLCP.
    pub tlcp: Option<Arc<shangmi_tlcp::ServerConfig>>,
    /// RFC 8998.
    pub sm2: Option<Arc<rustls::ServerConfig>>,
    /// International TLS 1.2 and 1.3.
    pub international: Option<Arc<rustls::ServerConfig>>,
    /// Where requests go.
    pub upstream: Upstream,
}

impl Listener {
    /// The site for `name` (SNI): an exact name, then the longest matching wildcard, then the
    /// default.
    pub fn site(&self, name: Option<&str>) -> &Arc<Site> {
        if let Some(name) = name {
            if let Some(s) = self
                .sites
                .iter()
                .find(|s| s.names.iter().any(|n| n == name))
            {
                return s;
            }
            let wild = self
                .sites
                .iter()
                .flat_map(|s| s.names.iter().map(move |n| (s, n)))
                .filter_map(|(s, n)| {
                    let suffix = n.strip_prefix('*')?;
                    let head = name.strip_suffix(suffix)?;
                    (!head.is_empty() && !head.contains('.')).then_some((s, suffix.len()))
                })
                .max_by_key(|&(_, len)| len);
            if let Some((s, _)) = wild {
                return s;
            }
        }
        &self.sites[0]
    }
}

fn secs(src: &Source, what: &str, v: f64) -> Result<Duration, Problem> {
    Duration::try_from_secs_f64(v)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            src.problem(
                0..0,
                format!("[limits] {what}: a positive number of seconds"),
            )
        })
}

/// Reads and checks `path`; the generation it describes.
pub fn load(path: &Path) -> Result<Generation, Problem> {
    let src = Source::read(path)?;
    let f = &src.file;
    let l = &f.limits;
    for (what, v) in [
        ("handshake_timeout", l.handshake_timeout),
        ("idle_timeout", l.idle_timeout),
        ("write_timeout", l.write_timeout),
        ("connect_timeout", l.connect_timeout),
        ("upstream_timeout", l.upstream_timeout),
        ("drain_timeout", l.drain_timeout),
        ("upstream_retry", l.upstream_retry),
    ] {
        secs(&src, what, v)?;
    }
    if l.max_connections == 0 {
        return Err(src.problem(0..0, "[limits] max_connections: at least 1"));
    }
    if l.max_header_bytes < 8192 {
        return Err(src.problem(0..0, "[limits] max_header_bytes: at least 8192"));
    }
    if !(l.requests_per_second >= 0.0 && l.burst >= 1.0) {
        return Err(src.problem(0..0, "[limits] requests_per_second >= 0 and burst >= 1"));
    }
    if !["stdout", "stderr", "off"].contains(&f.log.access.as_str()) {
        return Err(src.problem(0..0, "[log] access: \"stdout\", \"stderr\" or \"off\""));
    }
    let admin = match &f.admin {
        Some(a) => Some(config::socket_addr(&src, &a.listen)?),
        None => None,
    };
    if f.listener.is_empty() {
        return Err(src.problem(0..0, "no [[listener]]"));
    }
    let tickets = match &f.tickets {
        Some(t) => Some(ticket_keys(&src, t)?),
        None => None,
    };
    let mut listeners: Vec<Listener> = Vec::new();
    for l in &f.listener {
        let addr = config::socket_addr(&src, &l.listen)?;
        if addr.port() != 0 && (listeners.iter().any(|o| o.addr == addr) || admin == Some(addr)) {
            return Err(src.problem(l.listen.span(), format!("{addr} is listed twice")));
        }
        if l.site.is_empty() {
            return Err(src.problem(l.listen.span(), "a listener needs a [[listener.site]]"));
        }
        let mut sites: Vec<Arc<Site>> = Vec::new();
        for s in &l.site {
            let site = build_site(&src, s, tickets.as_ref())?;
            for (n, span) in site.names.iter().zip(s.get_ref().server_names.iter()) {
                if sites.iter().any(|o| o.names.contains(n)) {
                    return Err(src.problem(span.span(), format!("`{n}` names two sites")));
                }
            }
            sites.push(Arc::new(site));
        }
        listeners.push(Listener {
            addr,
            reuse_port: l.reuse_port,
            sites,
        });
    }
    Ok(Generation {
        admin,
        limits: f.limits.clone(),
        access_log: f.log.access.clone(),
        listeners,
    })
}

pub(crate) fn read(
    src: &Source,
    span: std::ops::Range<usize>,
    p: &str,
) -> Result<Vec<u8>, Problem> {
    let path = src.resolve(p);
    match std::fs::metadata(&path) {
        Ok(m) if m.len() > 1 << 20 => {
            return Err(src.problem(span, format!("{}: larger than 1 MiB", path.display())));
        }
        Err(e) => return Err(src.problem(span, format!("{}: {e}", path.display()))),
        Ok(_) => {}
    }
    std::fs::read(&path).map_err(|e| src.problem(span, format!("{}: {e}", path.display())))
}

pub(crate) type Ticketer = Arc<dyn rustls::server::ProducesTickets>;

/// The shared ticket keys: one secret per line in hex, `#` comments and blank lines skipped.
fn ticket_keys(src: &Source, t: &config::Tickets) -> Result<Ticketer, Problem> {
    let span = t.key_file.span();
    let text = Zeroizing::new(read(src, span.clone(), t.key_file.get_ref())?);
    let text = std::str::from_utf8(&text)
        .map_err(|_| src.problem(span.clone(), "the ticket key file is not text"))?;
    let mut secrets = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut secret = Zeroizing::new([0u8; 32]);
        let ok = line.len() == 64
            && line.is_ascii()
            && (0..32).all(|j| {
                u8::from_str_radix(&line[2 * j..2 * j + 2], 16)
                    .map(|b| secret[j] = b)
                    .is_ok()
            });
        if !ok {
            return Err(src.problem(
                span,
                format!(
                    "{} line {}: a ticket key is 64 hex digits",
                    t.key_file.get_ref(),
                    i + 1
                ),
            ));
        }
        secrets.push(*secret);
    }
    let made = shangmi_rustls::shared_ticketer(&secrets, t.lifetime);
    for s in secrets.iter_mut() {
        zeroize::Zeroize::zeroize(s);
    }
    made.map_err(|e| src.problem(span, format!("{}: {e}", t.key_file.get_ref())))
}

fn build_site(
    src: &Source,
    s: &Spanned<config::Site>,
    tickets: Option<&Ticketer>,
) -> Result<Site, Problem> {
    let span = s.span();
    let s = s.get_ref();
    if s.tlcp.is_none() && s.sm2.is_none() && s.international.is_empty() {
        return Err(src.problem(
            span,
            "a site needs at least one of tlcp, sm2 and international",
        ));
    }
    let mut names = Vec::new();
    for n in &s.server_names {
        let v = n.get_ref().to_ascii_lowercase();
        let bare = v.strip_prefix("*.").unwrap_or(&v);
        let ok = !bare.is_empty()
            && !bare.contains('*')
            && bare.split('.').all(|l| {
                !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            });
        if !ok {
            return Err(src.problem(n.span(), format!("`{}` is not a host name", n.get_ref())));
        }
        names.push(v);
    }
    if s.upstream.is_empty() {
        return Err(src.problem(span, "upstream: at least one address"));
    }
    let mut kind = None;
    let mut addrs = Vec::new();
    for u in &s.upstream {
        let (k, a) = upstream::parse(u.get_ref()).map_err(|e| src.problem(u.span(), e))?;
        if kind.as_ref().is_some_and(|o| *o != k) {
            return Err(src.problem(u.span(), "one kind of upstream per site"));
        }
        kind = Some(k);
        addrs.push(a);
    }
    let kind = kind.unwrap_or(Kind::Http);
    let alpn: Vec<Vec<u8>> = if kind.is_http() {
        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
    } else {
        Vec::new()
    };
    let limits = &src.file.limits;
    let upstream = Upstream::new(
        kind,
        addrs,
        Duration::from_secs_f64(limits.connect_timeout),
        Duration::from_secs_f64(limits.upstream_retry),
    )
    .map_err(|e| src.problem(span.clone(), e))?;

    let client_ca = match &s.client_ca {
        Some(ca) => Some((ca.span(), read(src, ca.span(), ca.get_ref())?)),
        None => None,
    };

    let tlcp = match &s.tlcp {
        Some(t) => Some(Arc::new(tlcp_config(src, t, client_ca.as_ref())?)),
        None => None,
    };
    let sm2 = match &s.sm2 {
        Some(p) => {
            let key = sm2_key(src, p)?;
            // The hybrid is taken only from a client that offers it (rustls follows the
            // client's order), so listing it costs the others nothing.
            let mut groups = shangmi_rustls::provider();
            groups
                .kx_groups
                .push(shangmi_rustls::CURVE_SM2_MLKEM768_GROUP);
            let provider = Arc::new(groups);
            let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
                .with_protocol_versions(&[&rustls::version::TLS13])
                .map_err(|e| src.problem(p.span(), e.to_string()))?;
            let builder = match &client_ca {
                Some((span, pem)) => builder.with_client_cert_verifier(
                    shangmi_rustls::Sm2ClientVerifier::new(roots(src, span, pem)?, provider)
                        .map_err(|e| src.problem(span.clone(), e.to_string()))?,
                ),
                None => builder.with_no_client_auth(),
            };
            let mut c =
                builder.with_cert_resolver(Arc::new(shangmi_rustls::SmCertResolver::new(key)));
            c.ticketer = match tickets {
                Some(t) => t.clone(),
                None => shangmi_rustls::ticketer()
                    .map_err(|e| src.problem(p.span(), format!("session tickets: {e}")))?,
            };
            c.alpn_protocols = alpn.clone();
            Some(Arc::new(c))
        }
        None => None,
    };
    let international = if s.international.is_empty() {
        None
    } else {
        Some(crate::international::config(
            src,
            span.clone(),
            &s.international,
            client_ca.as_ref(),
            tickets,
            alpn,
        )?)
    };
    Ok(Site {
        names,
        tlcp,
        sm2,
        international,
        upstream,
    })
}

pub(crate) fn roots(
    src: &Source,
    span: &std::ops::Range<usize>,
    pem: &[u8],
) -> Result<Arc<shangmi_rustls::Roots>, Problem> {
    shangmi_rustls::load_roots(pem)
        .map(Arc::new)
        .map_err(|e| src.problem(span.clone(), format!("client_ca: {e}")))
}

fn password(
    src: &Source,
    span: std::ops::Range<usize>,
    file: Option<&str>,
) -> Result<Option<Zeroizing<Vec<u8>>>, Problem> {
    let Some(f) = file else { return Ok(None) };
    let mut pw = Zeroizing::new(read(src, span, f)?);
    // One line, as `echo secret > file` writes it.
    while pw.last().is_some_and(|&b| b == b'\n' || b == b'\r') {
        pw.pop();
    }
    Ok(Some(pw))
}

fn sm2_signing_key(
    src: &Source,
    span: std::ops::Range<usize>,
    p: &str,
    password_file: Option<&str>,
) -> Result<shangmi::sm2::SigningKey, Problem> {
    let data = Zeroizing::new(read(src, span.clone(), p)?);
    let pw = password(src, span.clone(), password_file)?;
    shangmi::sm2::SigningKey::from_key_file(&data, pw.as_deref().map(|v| v.as_slice()))
        .map_err(|e| src.problem(span, format!("{p}: {e}")))
}

/// A PKCS#12 keystore of the configuration, read with its password file.
fn keystore(
    src: &Source,
    span: std::ops::Range<usize>,
    p12: &str,
    password_file: Option<&str>,
) -> Result<shangmi_pki::pkcs12::Pkcs12, Problem> {
    let data = Zeroizing::new(read(src, span.clone(), p12)?);
    let pw = password(src, span.clone(), password_file)?;
    shangmi_pki::pkcs12::read(&data, pw.as_deref().map(|v| v.as_slice()).unwrap_or(b""))
        .map_err(|e| src.problem(span, format!("{p12}: {e}")))
}

/// `cert` and `key`, or `p12`: which files a pair names.
pub(crate) fn pair_files<'a>(
    src: &Source,
    span: std::ops::Range<usize>,
    pair: &'a Pair,
) -> Result<Result<(&'a str, &'a str), &'a str>, Problem> {
    match (&pair.cert, &pair.key, &pair.p12) {
        (Some(c), Some(k), None) => Ok(Ok((c, k))),
        (None, None, Some(p)) => Ok(Err(p)),
        _ => Err(src.problem(span, "give cert and key, or p12")),
    }
}

fn sm2_key(src: &Source, p: &Spanned<Pair>) -> Result<CertifiedKey, Problem> {
    let span = p.span();
    let pair = p.get_ref();
    let (chain, key, what) = match pair_files(src, span.clone(), pair)? {
        Ok((cert, key_file)) => {
            let chain = shangmi_rustls::load_certificates(&read(src, span.clone(), cert)?)
                .map_err(|e| src.problem(span.clone(), format!("{cert}: {e}")))?;
            let key = sm2_signing_key(src, span.clone(), key_file, pair.password_file.as_deref())?;
            (chain, key, format!("{cert} with {key_file}"))
        }
        Err(p12) => {
            let first = keystore(src, span.clone(), p12, pair.password_file.as_deref())?
                .key_chains()
                .map_err(|e| src.problem(span.clone(), format!("{p12}: {e}")))?
                .into_iter()
                .next()
                .ok_or_else(|| src.problem(span.clone(), format!("{p12}: no key")))?;
            let chain = first.chain.into_iter().map(Into::into).collect();
            (chain, first.key, p12.to_string())
        }
    };
    shangmi_rustls::certified_key(chain, shangmi_rustls::Sm2SigningKey::new(key))
        .map_err(|e| src.problem(span, format!("{what}: {}", key_mismatch(e))))
}

pub(crate) fn key_mismatch(e: rustls::Error) -> String {
    match e {
        rustls::Error::InconsistentKeys(_) => {
            "the private key is not the one the certificate names".into()
        }
        e => e.to_string(),
    }
}

fn tlcp_config(
    src: &Source,
    t: &Spanned<config::Tlcp>,
    client_ca: Option<&(std::ops::Range<usize>, Vec<u8>)>,
) -> Result<shangmi_tlcp::ServerConfig, Problem> {
    let span = t.span();
    let t = t.get_ref();
    let identity = |cert: &str, key: &str| {
        let chain = shangmi_pki::certificate_ders(&read(src, span.clone(), cert)?)
            .map_err(|e| src.problem(span.clone(), format!("{cert}: {e}")))?;
        let k = sm2_signing_key(src, span.clone(), key, t.password_file.as_deref())?;
        shangmi_tlcp::Identity::new(chain, k)
            .map_err(|e| src.problem(span.clone(), format!("{cert} with {key}: {e}")))
    };
    let (sign, enc) = match (&t.sign_cert, &t.sign_key, &t.enc_cert, &t.enc_key, &t.p12) {
        (Some(sc), Some(sk), Some(ec), Some(ek), None) => (identity(sc, sk)?, identity(ec, ek)?),
        (None, None, None, None, Some(p12)) => {
            let (s, e) = keystore(src, span.clone(), p12, t.password_file.as_deref())?
                .tlcp_pair()
                .map_err(|e| src.problem(span.clone(), format!("{p12}: {e}")))?;
            let id = |k: shangmi_pki::pkcs12::KeyWithChain| {
                shangmi_tlcp::Identity::new(k.chain, k.key)
                    .map_err(|e| src.problem(span.clone(), format!("{p12}: {e}")))
            };
            (id(s)?, id(e)?)
        }
        _ => {
            return Err(src.problem(
                span,
                "give sign_cert, sign_key, enc_cert and enc_key, or p12",
            ));
        }
    };
    let mut c = shangmi_tlcp::ServerConfig::new(sign, enc)
        .map_err(|e| src.problem(span.clone(), e.to_string()))?;
    if let Some((ca_span, pem)) = client_ca {
        let roots = shangmi_pki::certificates(pem)
            .map_err(|e| src.problem(ca_span.clone(), format!("client_ca: {e}")))?;
        if roots.is_empty() {
            return Err(src.problem(ca_span.clone(), "client_ca: no certificate"));
        }
        c = c
            .with_client_auth(roots)
            .map_err(|e| src.problem(ca_span.clone(), format!("client_ca: {e}")))?;
    }
    Ok(c)
}
