//! Sockets with bounds, for the servers: a back end that does not answer its connection
//! attempt, or a client that stops reading, costs a connection slot for a bounded time only.

use std::io;
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// Connects to `addr` (HOST:PORT; every address it resolves to is tried in turn), each
/// attempt given at most `limit`.
pub fn connect(addr: &str, limit: Duration) -> io::Result<TcpStream> {
    let mut last = None;
    for a in addr.to_socket_addrs()? {
        match TcpStream::connect_timeout(&a, limit) {
            Ok(s) => return Ok(s),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        io::Error::new(io::ErrorKind::NotFound, "the name resolves to no address")
    }))
}

/// Bounds every write on `sock` (and its clones, which share the descriptor): a peer that
/// takes nothing for `limit` fails the write, and so its connection ends.
pub fn bound_writes(sock: &TcpStream, limit: Duration) {
    let _ = sock.set_write_timeout(Some(limit));
}

/// The stack of a connection's thread. Only the pages touched are memory, so the reserve is
/// generous: an unoptimised build's SIMD kernels (SM4 on VAES, 32 rounds unrolled) alone take
/// over 200 KiB of frame, and a handshake also parses certificates and runs SM2 below them.
pub const CONNECTION_STACK: usize = 1 << 20;
