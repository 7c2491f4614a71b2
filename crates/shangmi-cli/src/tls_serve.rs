//! `shangmi tls serve`: an RFC 8998 server that keeps serving whatever its clients do.
//!
//! Each connection runs on a thread of its own, at most `--max-connections` at
//! once: beyond that a connection is closed as soon as it is accepted. The handshake has a
//! deadline, an idle connection a timeout, a write to a client that reads nothing another, and
//! connecting to the back end the handshake's, so stalled, garbage-sending, non-reading or
//! resetting clients cost a bounded number of threads for a bounded time. Every connection that fails is logged
//! in one line on stderr and the server goes on.

use std::io::Write;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use clap::{ArgGroup, Args as ClapArgs};
use rustls::ServerConfig;

use crate::fail::{Outcome, Result, error};
use crate::tls_cmd::{
    Suite, certified_key, group_name, handshake_kind, provider, roots, suite_name,
};
use crate::tls_relay::{self, End, Plain};

#[derive(ClapArgs)]
#[command(group(ArgGroup::new("mode").required(true).args(["echo", "forward", "response"])))]
pub struct ServeArgs {
    /// The server's certificate chain (leaf first; PEM or DER).
    #[arg(long, value_name = "FILE")]
    cert: PathBuf,
    /// The certificate's SM2 private key.
    #[arg(long, value_name = "FILE")]
    key: PathBuf,
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
    /// Connections served at once; more are closed on arrival.
    #[arg(long, default_value_t = 256, value_name = "N")]
    max_connections: usize,
    /// Seconds a client has to complete its handshake.
    #[arg(long, default_value_t = 10, value_name = "S")]
    handshake_timeout: u64,
    /// Seconds without traffic before a connection is closed.
    #[arg(long, default_value_t = 300, value_name = "S")]
    idle_timeout: u64,
    /// Seconds a write may wait on a client (or back end) that reads nothing before the
    /// connection is closed.
    #[arg(long, default_value_t = 30, value_name = "S")]
    write_timeout: u64,
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

#[derive(Clone)]
enum Mode {
    Echo,
    Forward(String),
    Response(Arc<[u8]>),
}

struct Shared {
    config: Arc<ServerConfig>,
    mode: Mode,
    handshake_timeout: Duration,
    idle_timeout: Duration,
    write_timeout: Duration,
}

pub fn serve(a: ServeArgs) -> Result<Outcome> {
    let provider = provider(a.suite);
    let mut key = certified_key(&a.cert, &a.key, a.password_file.as_deref(), a.presign)?;
    if let Some(chain) = &a.chain {
        let extra = shangmi_rustls::load_certificates(&crate::tls_cmd::read_file(chain)?)
            .map_err(|e| error(chain.display(), e))?;
        key.cert.extend(extra);
    }
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| error("configuration", e))?;
    let builder = match &a.client_ca {
        Some(ca) => builder.with_client_cert_verifier(
            shangmi_rustls::Sm2ClientVerifier::new(roots(ca)?, provider)
                .map_err(|e| error(ca.display(), e))?,
        ),
        None => builder.with_no_client_auth(),
    };
    let mut config = builder.with_cert_resolver(Arc::new(shangmi_rustls::SmCertResolver::new(key)));
    config.ticketer = shangmi_rustls::ticketer().map_err(|e| error("session tickets", e))?;
    let mode = match (a.echo, a.forward, a.response) {
        (_, Some(f), _) => Mode::Forward(f),
        (_, _, Some(r)) => Mode::Response(r.into_bytes().into()),
        _ => Mode::Echo,
    };
    let shared = Arc::new(Shared {
        config: Arc::new(config),
        mode,
        handshake_timeout: Duration::from_secs(a.handshake_timeout.max(1)),
        idle_timeout: Duration::from_secs(a.idle_timeout.max(1)),
        write_timeout: Duration::from_secs(a.write_timeout.max(1)),
    });
    let listener = TcpListener::bind(&a.listen).map_err(|e| error(&a.listen, e))?;
    let local = listener.local_addr().map_err(|e| error(&a.listen, e))?;
    eprintln!("listening on {local}");
    let active = Arc::new(AtomicUsize::new(0));
    loop {
        let (sock, peer) = match listener.accept() {
            Ok(c) => c,
            Err(e) => {
                // Out of descriptors, a connection reset before accept: log, pause, go on.
                log(None, format_args!("accept: {}", crate::fail::io_cause(&e)));
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
        };
        if active.load(Ordering::Acquire) >= a.max_connections.max(1) {
            log(
                Some(peer),
                format_args!("refused: {} connections already", a.max_connections),
            );
            let _ = sock.shutdown(Shutdown::Both);
            continue;
        }
        active.fetch_add(1, Ordering::AcqRel);
        let (shared, count) = (Arc::clone(&shared), Arc::clone(&active));
        let spawned = std::thread::Builder::new()
            .name(format!("tls {peer}"))
            .stack_size(crate::net::CONNECTION_STACK)
            .spawn(move || {
                let line = serve_one(&shared, sock, peer);
                log(Some(peer), format_args!("{line}"));
                count.fetch_sub(1, Ordering::AcqRel);
            });
        if let Err(e) = spawned {
            active.fetch_sub(1, Ordering::AcqRel);
            log(Some(peer), format_args!("no thread for it: {e}"));
        }
    }
}

fn log(peer: Option<SocketAddr>, what: std::fmt::Arguments<'_>) {
    let mut err = std::io::stderr().lock();
    let _ = match peer {
        Some(p) => writeln!(err, "shangmi: {p}: {what}"),
        None => writeln!(err, "shangmi: {what}"),
    };
}

/// One connection from accept to close; the line to log about it.
fn serve_one(shared: &Shared, mut sock: TcpStream, _peer: SocketAddr) -> String {
    let _ = sock.set_nodelay(true);
    crate::net::bound_writes(&sock, shared.write_timeout);
    let conn = match rustls::ServerConnection::new(shared.config.clone()) {
        Ok(c) => c,
        Err(e) => return format!("connection setup failed: {e}"),
    };
    let mut conn = rustls::Connection::Server(conn);
    if let Err(e) = tls_relay::handshake(&mut conn, &mut sock, shared.handshake_timeout) {
        return format!("handshake failed: {e}");
    }
    let what = format!(
        "{} {} {}",
        conn.negotiated_cipher_suite()
            .map(|s| suite_name(s.suite()))
            .unwrap_or_default(),
        conn.negotiated_key_exchange_group()
            .map(|g| group_name(g.name()))
            .unwrap_or_default(),
        handshake_kind(conn.handshake_kind()),
    );
    let end = match &shared.mode {
        Mode::Echo => tls_relay::relay(conn, sock, Plain::Echo, shared.idle_timeout),
        Mode::Response(r) => {
            let r = Arc::clone(r);
            let mut sink = std::io::sink();
            tls_relay::relay(
                conn,
                sock,
                Plain::Pipe {
                    source: Box::new(std::io::Cursor::new(r)),
                    sink: &mut sink,
                    on_close: None,
                },
                shared.idle_timeout,
            )
        }
        Mode::Forward(to) => {
            let backend = match crate::net::connect(to, shared.handshake_timeout) {
                Ok(b) => b,
                Err(e) => {
                    let _ = sock.shutdown(Shutdown::Both);
                    return format!("{what}; forward to {to}: {}", crate::fail::io_cause(&e));
                }
            };
            // The back end gets the idle timeout too: a silent one cannot hold the thread.
            let _ = backend.set_read_timeout(Some(shared.idle_timeout));
            crate::net::bound_writes(&backend, shared.write_timeout);
            let (reader, closer) = match (backend.try_clone(), backend.try_clone()) {
                (Ok(r), Ok(c)) => (r, c),
                (Err(e), _) | (_, Err(e)) => return format!("{what}; forward: {e}"),
            };
            let mut sink = backend;
            let end = tls_relay::relay(
                conn,
                sock,
                Plain::Pipe {
                    source: Box::new(reader),
                    sink: &mut sink,
                    // The client is done sending: the back end reads end-of-file, and its
                    // answer still reaches the client before the connection closes.
                    on_close: Some(Box::new(move || {
                        let _ = closer.shutdown(Shutdown::Write);
                    })),
                },
                shared.idle_timeout,
            );
            let _ = sink.shutdown(Shutdown::Both);
            end
        }
    };
    match end {
        End::Clean => format!("{what}, closed"),
        End::Truncated => format!("{what}, ended without close_notify"),
        End::Failed(e) => format!("{what}, failed: {e}"),
    }
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
