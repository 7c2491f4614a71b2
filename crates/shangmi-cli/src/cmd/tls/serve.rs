//! `shangmi tls serve`: an RFC 8998 server that keeps serving whatever its clients do, on
//! the servers' common path (`net::serve`).

use std::path::PathBuf;
use std::sync::Arc;

use clap::{ArgGroup, Args as ClapArgs};

use super::{Group, Suite, certified_key, keystore_key, provider, roots};
use crate::fail::{Outcome, Result, error};
use crate::net::peer::read_file;
use crate::net::serve::{Answer, Bounds, Protocol, serve_site};

#[derive(ClapArgs)]
#[command(group(ArgGroup::new("mode").required(true).args(["echo", "forward", "response"])))]
pub struct ServeArgs {
    /// The server's certificate chain (leaf first; PEM or DER).
    #[arg(long, value_name = "FILE", required_unless_present = "p12")]
    cert: Option<PathBuf>,
    /// The certificate's SM2 private key.
    #[arg(long, value_name = "FILE", required_unless_present = "p12")]
    key: Option<PathBuf>,
    /// The key and its chain from a PKCS#12 keystore instead (its password from
    /// --password-file, or asked).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["cert", "key", "chain"])]
    p12: Option<PathBuf>,
    /// Intermediate certificates to send after the leaf, if not in --cert.
    #[arg(long, value_name = "FILE")]
    chain: Option<PathBuf>,
    /// Require client certificates chaining to these roots.
    #[arg(long, value_name = "FILE")]
    client_ca: Option<PathBuf>,
    /// Reads the key's password from this file when it is encrypted.
    #[arg(long, value_name = "F")]
    password_file: Option<PathBuf>,
    /// Where to listen, ADDR:PORT (port 0 picks a free one; the line on stderr names it).
    #[arg(long, value_name = "ADDR:PORT")]
    listen: String,
    /// Send back whatever each client sends.
    #[arg(long)]
    echo: bool,
    /// Relay each connection to this TCP service (TLS termination).
    #[arg(long, value_name = "ADDR:PORT")]
    forward: Option<String>,
    /// Answer each connection with this text, then close.
    #[arg(long, value_name = "TEXT")]
    response: Option<String>,
    /// Accept only this suite (default: both).
    #[arg(long, value_enum)]
    suite: Option<Suite>,
    /// Key exchange groups to accept (the client's order decides among them).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "curveSM2,curveSM2MLKEM768"
    )]
    groups: Vec<Group>,
    #[command(flatten)]
    bounds: Bounds,
    /// Sign handshakes with nonces prepared in batches from the system's generator (a
    /// signature then costs about a fifth), instead of hedging each with the key and the
    /// transcript. Only for a process that is never duplicated while running: a VM snapshot
    /// restored twice or a checkpoint restored twice replays the same prepared nonces, and two
    /// signatures with one nonce reveal the key (fork alone is detected).
    #[arg(long, conflicts_with = "hedged")]
    presign: bool,
    /// Hedge every signature's nonce with the key and the transcript (the default; kept for
    /// scripts that ask for it).
    #[arg(long, hide = true)]
    hedged: bool,
}

pub fn serve(a: ServeArgs) -> Result<Outcome> {
    let provider = provider(a.suite, &a.groups);
    let mut key = match (&a.p12, &a.cert, &a.key) {
        (Some(p12), _, _) => keystore_key(p12, a.password_file.as_deref(), a.presign)?,
        (None, Some(cert), Some(key)) => {
            certified_key(cert, key, a.password_file.as_deref(), a.presign)?
        }
        _ => return Err(error("serve", "--cert and --key, or --p12")),
    };
    if let Some(chain) = &a.chain {
        let extra = shangmi_rustls::load_certificates(&read_file(chain)?)
            .map_err(|e| error(chain.display(), e))?;
        key.cert.extend(extra);
    }
    let client_auth = match &a.client_ca {
        Some(ca) => Some(
            shangmi_rustls::Sm2ClientVerifier::new(roots(ca)?, provider.clone())
                .map_err(|e| error(ca.display(), e))?
                as Arc<dyn rustls::server::danger::ClientCertVerifier>,
        ),
        None => None,
    };
    let ticketer = shangmi_rustls::ticketer().map_err(|e| error("session tickets", e))?;
    let config = shangmi_rustls::server_config(key, provider, client_auth, ticketer, Vec::new())
        .map_err(|e| error("configuration", e))?;
    let answer = match (a.forward, a.response) {
        (Some(f), _) => Answer::Forward(f),
        (_, Some(r)) => Answer::Respond(r.into_bytes()),
        _ => Answer::Echo,
    };
    serve_site(
        &a.listen,
        Protocol::Rfc8998(Arc::new(config)),
        answer,
        &a.bounds,
        a.client_ca.is_some(),
    )
}

#[cfg(test)]
mod tests {
    use clap::{Args as _, FromArgMatches as _};

    use super::ServeArgs;

    fn parse(extra: &[&str]) -> ServeArgs {
        let cmd = ServeArgs::augment_args(clap::Command::new("serve"));
        let mut argv = vec![
            "serve", "--cert", "c", "--key", "k", "--listen", "l", "--echo",
        ];
        argv.extend(extra);
        ServeArgs::from_arg_matches(&cmd.try_get_matches_from(argv).unwrap()).unwrap()
    }

    /// Prepared nonces replay in a duplicated VM: handshakes are signed with hedged nonces
    /// unless the operator asks for the pool.
    #[test]
    fn handshake_signatures_are_hedged_unless_asked() {
        assert!(!parse(&[]).presign);
        assert!(!parse(&["--hedged"]).presign);
        assert!(parse(&["--presign"]).presign);
    }
}
