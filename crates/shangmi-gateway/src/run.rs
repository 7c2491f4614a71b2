//! The process: listeners bound once, signals (SIGHUP reloads, SIGTERM and SIGINT drain), and
//! the drain itself: stop accepting, let connections finish up to the drain timeout, exit.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tokio::net::{TcpListener, TcpSocket};
use tokio::signal::unix::{SignalKind, signal};

use crate::log;
use crate::site::Generation;
use crate::state::{Shared, event};

fn bind(addr: SocketAddr, reuse_port: bool) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    if reuse_port {
        socket.set_reuseport(true)?;
    }
    socket.bind(addr)?;
    socket.listen(4096)
}

/// The sockets of a generation, bound before anything is announced.
struct Bound {
    listeners: Vec<TcpListener>,
    admin: Option<TcpListener>,
}

fn bind_all(generation: &Generation) -> Result<Bound, String> {
    let mut listeners = Vec::new();
    for l in &generation.listeners {
        let listener =
            bind(l.addr, l.reuse_port).map_err(|e| format!("listening on {}: {e}", l.addr))?;
        listeners.push(listener);
    }
    let admin = match generation.admin_addr() {
        Some(a) => Some(bind(a, false).map_err(|e| format!("admin listener {a}: {e}"))?),
        None => None,
    };
    Ok(Bound { listeners, admin })
}

/// Says where it listens (`listening on ADDR`, the line scripts wait for) and starts
/// accepting. An accept loop that ends while the gateway is not draining (a panic) is
/// reported on `/healthz`.
fn announce(shared: &Arc<Shared>, bound: Bound) {
    for (i, listener) in bound.listeners.into_iter().enumerate() {
        if let Ok(a) = listener.local_addr() {
            log::say(&format!("listening on {a}"));
        }
        let accepting = tokio::spawn(crate::serve::accept_loop(shared.clone(), i, listener));
        let s = shared.clone();
        tokio::spawn(async move {
            let end = accepting.await;
            if !s.draining() {
                s.listener_died(i);
                event(
                    "listener stopped accepting",
                    &format!("listener {i}: {end:?}"),
                );
            }
        });
    }
    if let Some(admin) = bound.admin {
        if let Ok(a) = admin.local_addr() {
            log::say(&format!("admin on http://{a}"));
        }
        tokio::spawn(crate::admin::serve(shared.clone(), admin));
    }
}

/// Serves a generation assembled in code (the command line's `tls serve` and `tlcp serve`)
/// until the process ends: no file to reload, and the caller's own signal handling.
pub async fn serve(generation: Generation) -> Result<std::convert::Infallible, String> {
    let bound = bind_all(&generation)?;
    let shared = Shared::new(None, generation);
    announce(&shared, bound);
    std::future::pending().await
}

/// [`serve`] on a runtime of its own, one worker per CPU.
pub fn serve_blocking(generation: Generation) -> Result<std::convert::Infallible, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("the async runtime: {e}"))?
        .block_on(serve(generation))
}

/// Serves `generation` (read from `path`) until a drain ends; the process's exit code.
pub async fn run(path: std::path::PathBuf, generation: Generation) -> Result<(), String> {
    let bound = bind_all(&generation)?;
    let shared = Shared::new(Some(path), generation);
    // Signals are taken before anything is announced, so a signal after the announcement is
    // never the default action's.
    let mut hup = signal(SignalKind::hangup()).map_err(|e| e.to_string())?;
    let mut term = signal(SignalKind::terminate()).map_err(|e| e.to_string())?;
    let mut int = signal(SignalKind::interrupt()).map_err(|e| e.to_string())?;
    announce(&shared, bound);
    loop {
        tokio::select! {
            _ = hup.recv() => {
                let s = shared.clone();
                let _ = tokio::task::spawn_blocking(move || s.reload()).await;
            }
            _ = term.recv() => break,
            _ = int.recv() => break,
        }
    }
    let grace = Duration::from_secs_f64(shared.current().0.limits.drain_timeout);
    event(
        "draining",
        &format!("up to {grace:?} for connections in flight"),
    );
    shared.drain();
    let deadline = Instant::now() + grace;
    while shared.metrics.active.load(Ordering::Relaxed) > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let left = shared.metrics.active.load(Ordering::Relaxed);
    event(
        "stopped",
        &format!("{left} connections cut at the drain timeout"),
    );
    Ok(())
}
