//! Session tickets that resume only where they were issued. With `[tickets]`, every site's
//! TLS 1.3 tickets are sealed under keys derived from the shared secrets and the site's
//! scope: its names, its certificates, and its client authentication (the CAs and CRLs it
//! checks client certificates against, or none). A ticket from a site that asks for no
//! client certificate then never resumes on one that requires them (on another listener
//! under the same name, or after a reload that added `client_ca`), while replicas given the
//! same file and configuration resume each other's clients. Without `[tickets]` each site has
//! its own random, rotating keys, and so its own scope already. TLCP sessions live in each
//! site's own configuration and keep the client's certificates (shangmi-tlcp).

use std::sync::Arc;

use rustls::pki_types::CertificateDer;
use rustls::server::ProducesTickets;
use shangmi::sm3::Sm3;
use zeroize::Zeroizing;

use crate::config::{self, Problem, Source};
use crate::keys::{ClientAuth, read};

/// The shared secrets of `[tickets] key_file`, and how tickets are issued.
pub(crate) struct TicketKeys {
    secrets: Zeroizing<Vec<[u8; 32]>>,
    lifetime: u32,
    /// Whether TLS 1.2 clients get tickets too (international TLS only).
    #[cfg_attr(not(feature = "international"), allow(dead_code))]
    pub(crate) tls12: bool,
}

impl TicketKeys {
    /// Reads the key file: one secret per line in hex, `#` comments and blank lines skipped.
    pub(crate) fn read(src: &Source, t: &config::Tickets) -> Result<TicketKeys, Problem> {
        let span = t.key_file.span();
        let text = Zeroizing::new(read(src, span.clone(), t.key_file.get_ref())?);
        let text = std::str::from_utf8(&text)
            .map_err(|_| src.problem(span.clone(), "the ticket key file is not text"))?;
        let mut secrets = Zeroizing::new(Vec::new());
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
        if secrets.is_empty() {
            return Err(src.problem(span, format!("{}: no ticket key", t.key_file.get_ref())));
        }
        Ok(TicketKeys {
            secrets,
            lifetime: t.lifetime,
            tls12: t.tls12,
        })
    }

    /// The ticketer of one site's protocol, for `scope` ([`Scope::finish`]).
    pub(crate) fn ticketer(&self, scope: &[u8]) -> Result<Arc<dyn ProducesTickets>, rustls::Error> {
        shangmi_rustls::shared_ticketer(&self.secrets, self.lifetime, scope)
    }
}

/// What a site's tickets are bound to, hashed as it is gathered (each item length-prefixed
/// and labelled, so no two different scopes hash alike).
#[derive(Clone)]
pub(crate) struct Scope(Sm3);

impl Scope {
    /// A site's names and client authentication.
    pub(crate) fn new(names: &[String], client_auth: Option<&ClientAuth>) -> Scope {
        let mut s = Scope(Sm3::new());
        s.item(b"shangmi-gateway ticket scope 1");
        let mut sorted: Vec<&String> = names.iter().collect();
        sorted.sort();
        for n in sorted {
            s.labelled(b"name", n.as_bytes());
        }
        match client_auth {
            None => s.item(b"no client certificates"),
            Some(a) => {
                s.labelled(b"client_ca", &a.pem);
                if let Some((_, crl)) = &a.crl {
                    s.labelled(b"client_crl", crl);
                }
            }
        }
        s
    }

    fn item(&mut self, bytes: &[u8]) {
        self.0.update(&(bytes.len() as u64).to_be_bytes());
        self.0.update(bytes);
    }

    fn labelled(&mut self, label: &[u8], bytes: &[u8]) {
        self.item(label);
        self.item(bytes);
    }

    /// The certificates a protocol of the site serves.
    pub(crate) fn certificates(&mut self, protocol: &str, chain: &[CertificateDer<'_>]) {
        for c in chain {
            self.labelled(protocol.as_bytes(), c.as_ref());
        }
    }

    /// The scope of `protocol`'s tickets ("rfc8998", "international").
    pub(crate) fn finish(&self, protocol: &str) -> Vec<u8> {
        let mut s = self.clone();
        s.labelled(b"protocol", protocol.as_bytes());
        s.0.finalize().to_vec()
    }
}
