//! International TLS 1.2 and 1.3 for a site: rustls on aws-lc-rs (the fastest provider on
//! x86-64 and arm64, ECDSA P-256 and X25519 in assembly), ECDSA P-256/P-384, RSA and Ed25519
//! certificates chosen by what the client can verify. Behind the `international` feature (on
//! by default), so the command line, which serves RFC 8998 and TLCP only, carries no C library.

use std::ops::Range;
use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use toml::Spanned;
use zeroize::Zeroizing;

use crate::config::{Pair, Problem, Source};
use crate::keys::{ClientAuth, key_mismatch, read};
use crate::site::International;
use crate::tickets::{Scope, TicketKeys};

/// The server configurations for a site's `international` pairs: one for hellos that offer
/// TLS 1.3 (tickets scoped to the site, [`crate::tickets`]) and one with TLS 1.2 alone, which
/// issues tickets only when `[tickets] tls12` asks (a TLS 1.2 ticket holds the master secret,
/// with no forward secrecy under the ticket key) and otherwise resumes by session ID.
pub(crate) fn config(
    src: &Source,
    span: Range<usize>,
    pairs: &[Spanned<Pair>],
    client_auth: Option<&ClientAuth>,
    tickets: Option<&TicketKeys>,
    mut scope: Scope,
    alpn: Vec<Vec<u8>>,
) -> Result<International, Problem> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut keys = Vec::new();
    for p in pairs {
        let k = international_key(src, p, &provider)?;
        scope.certificates("international", &k.cert);
        keys.push(Arc::new(k));
    }
    let resolver = Arc::new(ByScheme(keys));
    let verifier = match client_auth {
        // Client certificates may be SM2 or international: verify with both.
        Some(a) => Some(a.verifier(
            src,
            Arc::new(shangmi_rustls::beside(
                rustls::crypto::aws_lc_rs::default_provider(),
            )),
        )?),
        None => None,
    };
    let scope = scope.finish("international");
    let ticketer = || match tickets {
        Some(t) => t.ticketer(&scope),
        None => rustls::crypto::aws_lc_rs::Ticketer::new(),
    };
    let build = |versions: &[&'static rustls::SupportedProtocolVersion], with_tickets: bool| {
        let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(versions)
            .map_err(|e| src.problem(span.clone(), e.to_string()))?;
        let builder = match &verifier {
            Some(v) => builder.with_client_cert_verifier(v.clone()),
            None => builder.with_no_client_auth(),
        };
        let mut c = builder.with_cert_resolver(resolver.clone());
        if with_tickets {
            c.ticketer = ticketer()
                .map_err(|e| src.problem(span.clone(), format!("session tickets: {e}")))?;
        }
        c.alpn_protocols = alpn.clone();
        Ok::<_, Problem>(Arc::new(c))
    };
    let tls12_tickets = tickets.is_some_and(|t| t.tls12);
    Ok(International {
        tls13: build(&[&rustls::version::TLS13, &rustls::version::TLS12], true)?,
        tls12: build(&[&rustls::version::TLS12], tls12_tickets)?,
    })
}

fn international_key(
    src: &Source,
    p: &Spanned<Pair>,
    provider: &CryptoProvider,
) -> Result<CertifiedKey, Problem> {
    let span = p.span();
    let pair = p.get_ref();
    let (cert, key_file) = crate::keys::pair_files(src, span.clone(), pair)?.map_err(|_| {
        src.problem(
            span.clone(),
            "international keys are read from cert and key (PEM), not p12",
        )
    })?;
    let pem = read(src, span.clone(), cert)?;
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<_, _>>()
        .map_err(|e| src.problem(span.clone(), format!("{cert}: {e:?}")))?;
    if chain.is_empty() {
        return Err(src.problem(span, format!("{cert}: no certificate")));
    }
    if pair.password_file.is_some() {
        return Err(src.problem(
            span,
            "international keys are read unencrypted (PKCS#8 or PKCS#1 PEM)",
        ));
    }
    let key_pem = Zeroizing::new(read(src, span.clone(), key_file)?);
    let key = PrivateKeyDer::from_pem_slice(&key_pem)
        .map_err(|e| src.problem(span.clone(), format!("{key_file}: {e:?}")))?;
    let signer = provider
        .key_provider
        .load_private_key(key)
        .map_err(|e| src.problem(span.clone(), format!("{key_file}: {e}")))?;
    let ck = CertifiedKey::new(chain, signer);
    ck.keys_match()
        .map_err(|e| src.problem(span, format!("{cert} with {key_file}: {}", key_mismatch(e))))?;
    Ok(ck)
}

/// International certificates chosen by what the client can verify, in the file's order.
#[derive(Debug)]
struct ByScheme(Vec<Arc<CertifiedKey>>);

impl ResolvesServerCert for ByScheme {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let offered = hello.signature_schemes();
        self.0
            .iter()
            .find(|k| k.key.choose_scheme(offered).is_some())
            .cloned()
    }
}
