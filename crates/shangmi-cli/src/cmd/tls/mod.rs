//! `shangmi tls`: TLS 1.3 with the SM suites (RFC 8998), shaped like `openssl s_client` and
//! `s_server`. `connect` copies stdin to the connection and the connection to stdout;
//! `serve` answers each connection with an echo, a fixed response, or a forward to a TCP
//! service (a TLS terminator).

use std::path::Path;
use std::sync::Arc;

use clap::{Args as ClapArgs, Subcommand, ValueEnum};
use rustls::crypto::CryptoProvider;

use crate::fail::{Outcome, Result, error};
use crate::net::peer::read_file;

mod connect;
mod serve;

#[derive(ClapArgs)]
#[command(after_help = "\
Examples:
  shangmi tls serve --cert server.pem --key server.key --listen 127.0.0.1:4433 --echo
  shangmi tls serve --cert server.pem --key server.key --client-ca ca.pem \\
      --listen 0.0.0.0:443 --forward 127.0.0.1:8080
  echo hello | shangmi tls connect 127.0.0.1:4433 --ca ca.pem --servername localhost
  shangmi tls connect example.cn:443 --ca root.pem --cert client.pem --key client.key

TLS 1.3 only, with TLS_SM4_GCM_SM3 and TLS_SM4_CCM_SM3, curveSM2 and sm2sig_sm3 (RFC 8998).
Certificate chains are checked with the SM2 ID 1234567812345678; handshake signatures use
RFC 8998's TLSv1.3+GM+Cipher+Suite. Certificates signed by OpenSSL 3 without
-sigopt distid:1234567812345678 do not verify (OpenSSL 3 signs with an empty ID).
Exit status (connect): 0 clean close, 1 connection, handshake or certificate failure,
2 usage or input error.")]
pub struct Args {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Connect to a server: stdin to the connection, the connection to stdout; the
    /// negotiated parameters and the server's chain on stderr.
    Connect(connect::ConnectArgs),
    /// Accept connections and echo, answer with a fixed response, or forward each one.
    Serve(serve::ServeArgs),
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Suite {
    /// TLS_SM4_GCM_SM3 (0x00C6).
    Sm4Gcm,
    /// TLS_SM4_CCM_SM3 (0x00C7).
    Sm4Ccm,
}

/// A key exchange group.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Group {
    /// curveSM2 (41): ECDH on the SM2 curve, RFC 8998.
    #[value(name = "curveSM2")]
    CurveSm2,
    /// curveSM2MLKEM768 (0x11EE): curveSM2 and ML-KEM-768, post-quantum hybrid.
    #[value(name = "curveSM2MLKEM768")]
    CurveSm2MlKem768,
}

pub fn run(args: Args) -> Result<Outcome> {
    match args.cmd {
        Cmd::Connect(a) => connect::connect(a),
        Cmd::Serve(a) => serve::serve(a),
    }
}

/// The provider, limited to one suite if asked, with `groups` in that order.
pub fn provider(suite: Option<Suite>, groups: &[Group]) -> Arc<CryptoProvider> {
    let mut p = shangmi_rustls::provider();
    p.kx_groups = groups
        .iter()
        .map(|g| match g {
            Group::CurveSm2 => shangmi_rustls::CURVE_SM2_GROUP,
            Group::CurveSm2MlKem768 => shangmi_rustls::CURVE_SM2_MLKEM768_GROUP,
        })
        .collect();
    match suite {
        Some(Suite::Sm4Gcm) => p.cipher_suites = vec![shangmi_rustls::TLS13_SM4_GCM_SM3],
        Some(Suite::Sm4Ccm) => p.cipher_suites = vec![shangmi_rustls::TLS13_SM4_CCM_SM3],
        None => {}
    }
    Arc::new(p)
}

/// A certificate chain and its key, from files; with `presign`, signing from a presign pool.
pub fn certified_key(
    cert: &Path,
    key: &Path,
    password_file: Option<&Path>,
    presign: bool,
) -> Result<rustls::sign::CertifiedKey> {
    let chain = shangmi_rustls::load_certificates(&read_file(cert)?)
        .map_err(|e| error(cert.display(), e))?;
    let mut signer =
        shangmi_rustls::Sm2SigningKey::new(crate::keyio::private_key(key, password_file)?);
    if presign {
        signer = signer.with_presign_pool(64);
    }
    shangmi_rustls::certified_key(chain, signer).map_err(|e| {
        let what = format!("{} with {}", cert.display(), key.display());
        match e {
            rustls::Error::InconsistentKeys(_) => {
                error(what, "the private key is not the one the certificate names")
            }
            e => error(what, e),
        }
    })
}

/// Trust anchors from a file.
pub fn roots(path: &Path) -> Result<Arc<shangmi_rustls::Roots>> {
    shangmi_rustls::load_roots(&read_file(path)?)
        .map(Arc::new)
        .map_err(|e| error(path.display(), e))
}

/// The first key of a PKCS#12 keystore with its chain, as rustls serves it.
pub(crate) fn keystore_key(
    p12: &Path,
    password_file: Option<&Path>,
    presign: bool,
) -> Result<rustls::sign::CertifiedKey> {
    let held = crate::keyio::key_chains(p12, password_file)?
        .into_iter()
        .next()
        .ok_or_else(|| error(p12.display(), "no key in the keystore"))?;
    let mut signer = shangmi_rustls::Sm2SigningKey::new(held.key);
    if presign {
        signer = signer.with_presign_pool(64);
    }
    let chain = held.chain.into_iter().map(Into::into).collect();
    shangmi_rustls::certified_key(chain, signer).map_err(|e| error(p12.display(), e))
}
