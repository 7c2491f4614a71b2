//! A configuration made ready to serve: every certificate and key read and matched
//! (`keys.rs`), the protocols' server configurations built, the upstreams parsed, the
//! session tickets scoped to what they may skip. What `--check` runs, and what a reload
//! builds before it replaces anything.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use toml::Spanned;
use zeroize::Zeroizing;

use crate::config::{self, Http, Limits, Problem, Source};
use crate::keys::{self, ClientAuth, read};
use crate::tickets::{Scope, TicketKeys};
use crate::upstream::{self, Kind, Upstream};

/// A configuration ready to serve.
pub struct Generation {
    /// The admin listener.
    pub admin: Option<Admin>,
    /// Limits.
    pub limits: Limits,
    /// What reaches HTTP upstreams.
    pub http: Http,
    /// Where access log lines go: "stdout", "stderr" or "off" (JSON), or "lines" (sentences
    /// on stderr, for the command line's servers).
    pub access_log: String,
    /// The listeners, in the file's order.
    pub listeners: Vec<Listener>,
}

/// The admin listener: where, and the token that reloads.
pub struct Admin {
    /// Its address (loopback unless a token is set).
    pub addr: SocketAddr,
    /// `POST /reload` presents it as `Authorization: Bearer TOKEN`; none: no reload by HTTP.
    pub token: Option<Zeroizing<String>>,
}

impl Generation {
    /// One listener with one site, assembled in code rather than read from a file (the
    /// command line's `tls serve` and `tlcp serve`); its log lines are sentences on stderr.
    pub fn single(addr: SocketAddr, site: Site, limits: Limits) -> Generation {
        Generation {
            admin: None,
            limits,
            http: Http::default(),
            access_log: "lines".into(),
            listeners: vec![Listener {
                addr,
                reuse_port: false,
                check_host: site.client_auth,
                sites: vec![Arc::new(site)],
            }],
        }
    }

    /// The admin listener's address.
    pub fn admin_addr(&self) -> Option<SocketAddr> {
        self.admin.as_ref().map(|a| a.addr)
    }
}

/// One listening address and its sites.
pub struct Listener {
    /// Where it listens.
    pub addr: SocketAddr,
    /// SO_REUSEPORT.
    pub reuse_port: bool,
    /// Whether a request's Host must name the site its server name chose (421 otherwise):
    /// `[http] check_host`, or any of its sites requiring client certificates.
    pub check_host: bool,
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
    /// International TLS.
    pub international: Option<International>,
    /// Whether it requires client certificates (every protocol).
    pub client_auth: bool,
    /// Where requests go.
    pub upstream: Upstream,
}

/// International TLS: TLS 1.3 (and 1.2) for clients that offer 1.3, with tickets; TLS 1.2
/// alone for the others, which resume by session ID unless `[tickets] tls12` is set.
pub struct International {
    /// For hellos offering TLS 1.3.
    pub tls13: Arc<rustls::ServerConfig>,
    /// For hellos offering TLS 1.2 only.
    pub tls12: Arc<rustls::ServerConfig>,
}

impl International {
    /// The configuration for a hello that offers TLS 1.3 or not.
    pub fn for_hello(&self, tls13: bool) -> &Arc<rustls::ServerConfig> {
        if tls13 { &self.tls13 } else { &self.tls12 }
    }
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

/// Reads and checks `path`; the generation it describes.
pub fn load(path: &Path) -> Result<Generation, Problem> {
    let src = Source::read(path)?;
    let f = &src.file;
    f.limits
        .check()
        .map_err(|e| src.problem(0..0, format!("[limits] {e}")))?;
    if !["stdout", "stderr", "off"].contains(&f.log.access.as_str()) {
        return Err(src.problem(0..0, "[log] access: \"stdout\", \"stderr\" or \"off\""));
    }
    if let Some(u) = f
        .http
        .upgrades
        .iter()
        .find(|u| u.is_empty() || !u.is_ascii())
    {
        return Err(src.problem(0..0, format!("[http] upgrades: `{u}` is not a token")));
    }
    let admin = match &f.admin {
        Some(a) => Some(admin(&src, a)?),
        None => None,
    };
    if f.listener.is_empty() {
        return Err(src.problem(0..0, "no [[listener]]"));
    }
    let tickets = match &f.tickets {
        Some(t) => Some(TicketKeys::read(&src, t)?),
        None => None,
    };
    let mut listeners: Vec<Listener> = Vec::new();
    for l in &f.listener {
        let addr = config::socket_addr(&src, &l.listen)?;
        let admin_addr = admin.as_ref().map(|a| a.addr);
        if addr.port() != 0
            && (listeners.iter().any(|o| o.addr == addr) || admin_addr == Some(addr))
        {
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
            check_host: f.http.check_host || sites.iter().any(|s| s.client_auth),
            sites,
        });
    }
    Ok(Generation {
        admin,
        limits: f.limits.clone(),
        http: f.http.clone(),
        access_log: f.log.access.clone(),
        listeners,
    })
}

/// The admin listener: loopback, or anywhere with a token.
fn admin(src: &Source, a: &config::Admin) -> Result<Admin, Problem> {
    let addr = config::socket_addr(src, &a.listen)?;
    let token = match &a.token_file {
        Some(t) => {
            let bytes = Zeroizing::new(read(src, t.span(), t.get_ref())?);
            let text = std::str::from_utf8(&bytes)
                .map_err(|_| src.problem(t.span(), "the admin token file is not text"))?
                .trim();
            if text.len() < 16 || !text.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(src.problem(
                    t.span(),
                    "the admin token: at least 16 printable characters, no spaces",
                ));
            }
            Some(Zeroizing::new(text.to_string()))
        }
        None => None,
    };
    if !addr.ip().is_loopback() && token.is_none() {
        return Err(src.problem(
            a.listen.span(),
            format!("admin listen {addr} is not loopback: give it a token_file"),
        ));
    }
    Ok(Admin { addr, token })
}

fn site_names(src: &Source, s: &config::Site) -> Result<Vec<String>, Problem> {
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
    Ok(names)
}

fn site_upstream(src: &Source, s: &Spanned<config::Site>) -> Result<Upstream, Problem> {
    let span = s.span();
    let s = s.get_ref();
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
    let limits = &src.file.limits;
    Upstream::new(
        kind.unwrap_or(Kind::Http),
        addrs,
        &upstream::Caps::of(limits),
    )
    .map_err(|e| src.problem(span, e))
}

fn build_site(
    src: &Source,
    s: &Spanned<config::Site>,
    tickets: Option<&TicketKeys>,
) -> Result<Site, Problem> {
    let span = s.span();
    let cfg = s.get_ref();
    if cfg.tlcp.is_none() && cfg.sm2.is_none() && cfg.international.is_empty() {
        return Err(src.problem(
            span,
            "a site needs at least one of tlcp, sm2 and international",
        ));
    }
    let names = site_names(src, cfg)?;
    let upstream = site_upstream(src, s)?;
    let alpn: Vec<Vec<u8>> = if upstream.kind.is_http() {
        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
    } else {
        Vec::new()
    };
    let client_auth = match &cfg.client_ca {
        Some(ca) => Some(ClientAuth {
            span: ca.span(),
            pem: read(src, ca.span(), ca.get_ref())?,
            crl: match &cfg.client_crl {
                Some(c) => Some((c.span(), read(src, c.span(), c.get_ref())?)),
                None => None,
            },
        }),
        None => {
            if let Some(c) = &cfg.client_crl {
                return Err(src.problem(c.span(), "client_crl needs client_ca"));
            }
            None
        }
    };
    // What a resumed session skips: the site's names, its certificates, and whom it asks
    // for client certificates (the CAs, the CRLs). Tickets open only where all of it is the
    // same (replicas with one configuration, a reload that changed none of it).
    let mut scope = Scope::new(&names, client_auth.as_ref());

    let tlcp = match &cfg.tlcp {
        Some(t) => Some(Arc::new(keys::tlcp_config(src, t, client_auth.as_ref())?)),
        None => None,
    };
    let sm2 = match &cfg.sm2 {
        Some(p) => {
            let key = keys::sm2_key(src, p)?;
            scope.certificates("sm2", &key.cert);
            // The hybrid is taken only from a client that offers it (rustls follows the
            // client's order), so listing it costs the others nothing.
            let mut groups = shangmi_rustls::provider();
            groups
                .kx_groups
                .push(shangmi_rustls::CURVE_SM2_MLKEM768_GROUP);
            let provider = Arc::new(groups);
            let verifier = match &client_auth {
                Some(a) => Some(a.verifier(src, provider.clone())?),
                None => None,
            };
            let ticketer = match tickets {
                Some(t) => t.ticketer(&scope.finish("rfc8998")),
                None => shangmi_rustls::ticketer(),
            }
            .map_err(|e| src.problem(p.span(), format!("session tickets: {e}")))?;
            let c = shangmi_rustls::server_config(key, provider, verifier, ticketer, alpn.clone())
                .map_err(|e| src.problem(p.span(), e.to_string()))?;
            Some(Arc::new(c))
        }
        None => None,
    };
    let international = if cfg.international.is_empty() {
        None
    } else {
        Some(crate::international::config(
            src,
            span,
            &cfg.international,
            client_auth.as_ref(),
            tickets,
            scope,
            alpn,
        )?)
    };
    Ok(Site {
        names,
        tlcp,
        sm2,
        international,
        client_auth: client_auth.is_some(),
        upstream,
    })
}
