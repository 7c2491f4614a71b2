//! Driving rustls connections in memory: handshakes (one at a time or 64 in flight, gathered or
//! not), records, and the seconds each side spent.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;
use rustls::{ClientConnection, ServerConnection};

use super::{RECORD, Setup};

/// Seconds each side spent.
#[derive(Default, Clone, Copy)]
pub(super) struct Sides {
    client: f64,
    server: f64,
}

fn timed<T>(acc: &mut f64, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let r = f();
    *acc += t.elapsed().as_secs_f64();
    r
}

/// Moves the pending bytes of `from` into `to` and processes them.
fn pass(
    from: &mut dyn Side,
    to: &mut dyn Side,
    t_from: &mut f64,
    t_to: &mut f64,
    buf: &mut Vec<u8>,
) {
    buf.clear();
    timed(t_from, || {
        while from.wants_write() {
            from.write_tls(buf).expect("write_tls");
        }
    });
    timed(t_to, || {
        let mut rd = &buf[..];
        while !rd.is_empty() {
            to.read_tls(&mut rd).expect("read_tls");
            to.process().expect("handshake");
        }
    });
}

/// The calls the timing needs, on either connection type.
trait Side {
    fn wants_write(&self) -> bool;
    fn write_tls(&mut self, out: &mut dyn Write) -> std::io::Result<usize>;
    fn read_tls(&mut self, rd: &mut dyn Read) -> std::io::Result<usize>;
    fn process(&mut self) -> Result<(), rustls::Error>;
    fn handshaking(&self) -> bool;
}

macro_rules! side {
    ($t:ty) => {
        impl Side for $t {
            fn wants_write(&self) -> bool {
                (**self).wants_write()
            }
            fn write_tls(&mut self, out: &mut dyn Write) -> std::io::Result<usize> {
                (**self).write_tls(out)
            }
            fn read_tls(&mut self, rd: &mut dyn Read) -> std::io::Result<usize> {
                (**self).read_tls(rd)
            }
            fn process(&mut self) -> Result<(), rustls::Error> {
                (**self).process_new_packets().map(|_| ())
            }
            fn handshaking(&self) -> bool {
                (**self).is_handshaking()
            }
        }
    };
}
side!(ClientConnection);
side!(ServerConnection);

/// One handshake (full, or resumed when the client holds a ticket), with the tickets the
/// server sends afterwards delivered; returns the connections and what each side took.
pub(super) fn handshake(
    s: &Setup,
    resume: bool,
    sides: &mut Sides,
) -> (ClientConnection, ServerConnection) {
    let name = ServerName::try_from("localhost").expect("name");
    let config = if resume {
        &s.client_resume
    } else {
        &s.client_full
    };
    let mut c = timed(&mut sides.client, || {
        ClientConnection::new(config.clone(), name).expect("client")
    });
    let mut srv = timed(&mut sides.server, || {
        ServerConnection::new(s.server.clone()).expect("server")
    });
    let mut buf = Vec::with_capacity(4096);
    flights(&mut c, &mut srv, sides, &mut buf, s.imp);
    (c, srv)
}

/// Passes flights both ways, the client's first, until the handshake is done and the server's
/// tickets are delivered.
fn flights(
    c: &mut ClientConnection,
    srv: &mut ServerConnection,
    sides: &mut Sides,
    buf: &mut Vec<u8>,
    imp: &str,
) {
    for _ in 0..8 {
        pass(c, srv, &mut sides.client, &mut sides.server, buf);
        pass(srv, c, &mut sides.server, &mut sides.client, buf);
        if !c.handshaking() && !srv.handshaking() && !srv.wants_write() {
            break;
        }
    }
    assert!(
        !c.handshaking() && !srv.handshaking(),
        "{imp}: handshake did not finish"
    );
}

/// Handshakes for one slice: per-side rates (handshakes per second of that side's time).
pub(super) fn handshake_slice(s: &Setup, resumed: bool, slice: Duration) -> (f64, f64) {
    let mut sides = Sides::default();
    let start = Instant::now();
    let mut n = 0u32;
    while start.elapsed() < slice || n < 2 {
        let (c, _) = handshake(s, resumed, &mut sides);
        let kind = c.handshake_kind();
        assert_eq!(
            kind == Some(rustls::HandshakeKind::Resumed),
            resumed,
            "{}: {kind:?}",
            s.imp
        );
        n += 1;
    }
    (n as f64 / sides.client, n as f64 / sides.server)
}

/// The op of [`interleaved_slice`]: server handshakes with 64 clients in flight.
pub const INTERLEAVED: &str = "tls13-full-handshake-server-64-in-flight";
/// Its shangmi columns: agreements gathered (as the gateway computes them) or one by one.
pub const GATHERED: &str = "shangmi, agreements gathered";
pub const ONE_BY_ONE: &str = "shangmi, one by one";
pub(super) const IN_FLIGHT: usize = 64;

/// Full handshakes with [`IN_FLIGHT`] clients in flight, interleaved flight by flight in this
/// thread as a server with that many clients sees them: server handshakes per second of
/// server time. With `gather`, the ClientHellos' curveSM2 shares are taken out (the gateway's
/// first-flight parse) and their agreements computed in one call before the servers process
/// the hellos, which is the gateway's gathered path without its threads.
pub(super) fn interleaved_slice(s: &Setup, gather: bool, slice: Duration) -> f64 {
    let mut server = 0.0;
    let mut n = 0;
    let start = Instant::now();
    while start.elapsed() < slice || n == 0 {
        n += interleaved(s, gather, &mut server);
    }
    n as f64 / server
}

pub(super) fn interleaved(s: &Setup, gather: bool, server: &mut f64) -> usize {
    use shangmi_gateway::detect::{Detected, detect};
    let name = ServerName::try_from("localhost").expect("name");
    let mut clients: Vec<ClientConnection> = (0..IN_FLIGHT)
        .map(|_| ClientConnection::new(s.client_full.clone(), name.clone()).expect("client"))
        .collect();
    let hellos: Vec<Vec<u8>> = clients
        .iter_mut()
        .map(|c| {
            let mut b = Vec::new();
            while c.wants_write() {
                c.write_tls(&mut b).expect("write_tls");
            }
            b
        })
        .collect();
    let groups: Vec<u16> = s
        .server
        .crypto_provider()
        .kx_groups
        .iter()
        .map(|g| u16::from(g.name()))
        .collect();
    let mut servers: Vec<ServerConnection> = timed(server, || {
        let found: Vec<Option<Vec<u8>>> = hellos
            .iter()
            .map(|h| match detect(h) {
                Detected::Hello(h) if gather => h.sm2_point(&groups).map(<[u8]>::to_vec),
                _ => None,
            })
            .collect();
        let shares: Vec<&[u8]> = found.iter().flatten().map(|v| &v[..]).collect();
        let mut agreed = shangmi_rustls::prepare_agreements(&shares).into_iter();
        hellos
            .iter()
            .zip(&found)
            .map(|(hello, share)| {
                let mut prepared = share.as_ref().and_then(|_| agreed.next()?.ok());
                let mut srv = ServerConnection::new(s.server.clone()).expect("server");
                let mut rd = &hello[..];
                while !rd.is_empty() {
                    srv.read_tls(&mut rd).expect("read_tls");
                    shangmi_rustls::with_prepared(&mut prepared, || srv.process_new_packets())
                        .expect("handshake");
                }
                assert!(prepared.is_none(), "{}: a gathered agreement unused", s.imp);
                srv
            })
            .collect()
    });
    // The rest of each handshake (the client has nothing to send until the server answers).
    let mut sides = Sides::default();
    let mut buf = Vec::with_capacity(4096);
    for (c, srv) in clients.iter_mut().zip(&mut servers) {
        flights(c, srv, &mut sides, &mut buf, s.imp);
    }
    *server += sides.server;
    IN_FLIGHT
}

/// 16 KiB records one way on an established connection: MB/s of sealing and opening together.
pub(super) fn record_slice(
    c: &mut ClientConnection,
    srv: &mut ServerConnection,
    slice: Duration,
) -> f64 {
    let data = vec![0x5au8; RECORD];
    let mut wire = Vec::with_capacity(RECORD + 64);
    let mut got = vec![0u8; RECORD];
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < slice || n < 4 {
        c.writer().write_all(&data).expect("write");
        wire.clear();
        while c.wants_write() {
            c.write_tls(&mut wire).expect("write_tls");
        }
        let mut rd = &wire[..];
        while !rd.is_empty() {
            srv.read_tls(&mut rd).expect("read_tls");
            srv.process_new_packets().expect("records");
        }
        srv.reader().read_exact(&mut got).expect("read");
        n += 1;
    }
    (n as f64 * RECORD as f64) / start.elapsed().as_secs_f64() / 1e6
}

/// The bare AEAD over the same 16 KiB: seal and open (shangmi's SM4-GCM).
pub(super) fn sm4_gcm_slice(slice: Duration) -> f64 {
    let gcm = shangmi::sm4::modes::gcm::Sm4Gcm::new(&[7; 16]);
    let mut buf = vec![0x5au8; RECORD + 1];
    let (nonce, aad) = ([1u8; 12], [0x17u8, 3, 3, 0x40, 0x11]);
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < slice || n < 4 {
        let tag = gcm
            .encrypt_in_place_detached(&nonce, &aad, &mut buf)
            .expect("seal");
        gcm.decrypt_in_place_detached(&nonce, &aad, &mut buf, &tag[..16])
            .expect("open");
        n += 1;
    }
    (n as f64 * RECORD as f64) / start.elapsed().as_secs_f64() / 1e6
}
