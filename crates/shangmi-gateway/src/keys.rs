//! The files a site names, read and matched: SM2 keys in any form OpenSSL, GmSSL and
//! shangmi write (with their password files), PKCS#12 keystores, certificate chains, and
//! the TLCP pairs, each key checked against its certificate. Every file is bounded in size.

use std::sync::Arc;

use rustls::sign::CertifiedKey;
use toml::Spanned;
use zeroize::Zeroizing;

use crate::config::{self, Pair, Problem, Source};

/// The largest file a configuration may name (a wrong path such as /dev/zero stops here).
const MAX_FILE: u64 = 1 << 20;

pub(crate) fn read(
    src: &Source,
    span: std::ops::Range<usize>,
    p: &str,
) -> Result<Vec<u8>, Problem> {
    let path = src.resolve(p);
    match std::fs::metadata(&path) {
        Ok(m) if m.len() > MAX_FILE => {
            return Err(src.problem(span, format!("{}: larger than 1 MiB", path.display())));
        }
        Err(e) => return Err(src.problem(span, format!("{}: {e}", path.display()))),
        Ok(_) => {}
    }
    std::fs::read(&path).map_err(|e| src.problem(span, format!("{}: {e}", path.display())))
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

pub(crate) fn sm2_key(src: &Source, p: &Spanned<Pair>) -> Result<CertifiedKey, Problem> {
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

/// A site's TLCP server configuration: its pairs, and its client authentication.
pub(crate) fn tlcp_config(
    src: &Source,
    t: &Spanned<config::Tlcp>,
    client_auth: Option<&ClientAuth>,
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
    if let Some(auth) = client_auth {
        let roots = shangmi_pki::certificates(&auth.pem)
            .map_err(|e| src.problem(auth.span.clone(), format!("client_ca: {e}")))?;
        if roots.is_empty() {
            return Err(src.problem(auth.span.clone(), "client_ca: no certificate"));
        }
        c = c
            .with_client_auth(roots)
            .map_err(|e| src.problem(auth.span.clone(), format!("client_ca: {e}")))?;
        if let Some((span, crl)) = &auth.crl {
            c = c
                .with_client_crls(crl)
                .map_err(|e| src.problem(span.clone(), format!("client_crl: {e}")))?;
        }
    }
    Ok(c)
}

/// A site's client authentication as the file gives it: the CA certificates (PEM) and CRLs.
pub(crate) struct ClientAuth {
    pub(crate) span: std::ops::Range<usize>,
    pub(crate) pem: Vec<u8>,
    pub(crate) crl: Option<(std::ops::Range<usize>, Vec<u8>)>,
}

impl ClientAuth {
    /// The verifier rustls servers use: SM2 chains through shangmi-pki, the others with
    /// `provider`'s algorithms, both against the CRLs when there are any.
    pub(crate) fn verifier(
        &self,
        src: &Source,
        provider: Arc<rustls::crypto::CryptoProvider>,
    ) -> Result<Arc<dyn rustls::server::danger::ClientCertVerifier>, Problem> {
        let roots = shangmi_rustls::load_roots(&self.pem)
            .map(Arc::new)
            .map_err(|e| src.problem(self.span.clone(), format!("client_ca: {e}")))?;
        Ok(match &self.crl {
            None => shangmi_rustls::Sm2ClientVerifier::new(roots, provider)
                .map_err(|e| src.problem(self.span.clone(), format!("client_ca: {e}")))?,
            Some((span, crl)) => shangmi_rustls::Sm2ClientVerifier::with_crls(roots, provider, crl)
                .map_err(|e| src.problem(span.clone(), format!("client_crl: {e}")))?,
        })
    }
}
