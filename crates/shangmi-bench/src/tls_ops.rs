//! TLS 1.3 at the connection level: RFC 8998 on shangmi's rustls provider beside rustls with
//! aws-lc-rs doing X25519 or P-256 + ECDSA-P256 + AES-128-GCM, and beside OpenSSL 4.0's own
//! RFC 8998 (`tls_openssl4`, out of process).
//!
//! Client and server run in this thread over memory buffers; the time each side spends in
//! its own calls (creating the connection, reading, processing, writing) is summed apart, so
//! a full handshake gives one rate per side, as rustls' own benchmark reports them. Resumed
//! handshakes use TLS 1.3 tickets. Records: 16 KiB of application data sealed by one side and
//! opened by the other, beside the same work on the bare AEAD (the algorithm-level rate).

use std::io::{Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, ServerConfig, ServerConnection};

use crate::harness::{Figure, Plan, Unit, median, trimmed_mean};

/// The ops this module reports, in table order.
pub const OPS: [&str; 5] = [
    "tls13-full-handshake-client",
    "tls13-full-handshake-server",
    "tls13-resumed-handshake-client",
    "tls13-resumed-handshake-server",
    "tls13-records-16k",
];

const RECORD: usize = 16 << 10;

/// One configuration pair to measure.
pub struct Setup {
    pub imp: &'static str,
    /// Without session resumption: every handshake full.
    client_full: Arc<ClientConfig>,
    /// With resumption: every handshake after the first resumes with a ticket.
    client_resume: Arc<ClientConfig>,
    server: Arc<ServerConfig>,
}

impl Setup {
    fn new(imp: &'static str, client: ClientConfig, server: ServerConfig) -> Self {
        let mut full = client.clone();
        full.resumption = rustls::client::Resumption::disabled();
        Setup {
            imp,
            client_full: Arc::new(full),
            client_resume: Arc::new(client),
            server: Arc::new(server),
        }
    }
}

/// The SM setup: curveSM2, sm2sig_sm3, TLS_SM4_GCM_SM3, an SM2 chain (root and leaf).
pub fn sm_setup() -> Setup {
    sm_setup_with("shangmi", shangmi_rustls::CURVE_SM2_GROUP)
}

/// The post-quantum names of the hybrid comparison.
pub const SM_HYBRID: &str = "shangmi curveSM2MLKEM768";
pub const AWS_HYBRID: &str = "rustls+aws-lc-rs X25519MLKEM768";

/// [`sm_setup`] with `group` as the only key exchange.
pub fn sm_setup_with(
    imp: &'static str,
    group: &'static dyn rustls::crypto::SupportedKxGroup,
) -> Setup {
    let root_key = shangmi::sm2::SigningKey::random().expect("key");
    let root = shangmi_pki::self_signed(&root_key, "/CN=bench root", &shangmi_pki::Issue::ca(30))
        .expect("root");
    let key = shangmi::sm2::SigningKey::random().expect("key");
    let csr = shangmi_pki::request(&key, "/CN=localhost", &["DNS:localhost"]).expect("csr");
    let leaf = shangmi_pki::sign_request(&csr, &root, &root_key, &shangmi_pki::Issue::leaf(30))
        .expect("leaf");
    let der =
        |c: &shangmi_pki::Certificate| CertificateDer::from(der::Encode::to_der(c).expect("der"));
    let provider = Arc::new(CryptoProvider {
        cipher_suites: vec![shangmi_rustls::TLS13_SM4_GCM_SM3],
        kx_groups: vec![group],
        ..shangmi_rustls::provider()
    });
    let certified = shangmi_rustls::certified_key(
        vec![der(&leaf)],
        // As `shangmi tls serve` signs by default: every nonce hedged (no presign pool, which
        // a duplicated VM would replay).
        shangmi_rustls::Sm2SigningKey::new(key),
    )
    .expect("matching key");
    let mut server = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("TLS 1.3")
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(shangmi_rustls::SmCertResolver::new(certified)));
    server.ticketer = shangmi_rustls::ticketer().expect("ticketer");
    let roots = shangmi_rustls::Roots::from_ders([der(&root).as_ref()]).expect("anchor");
    let verifier =
        shangmi_rustls::Sm2ServerVerifier::new(Arc::new(roots), provider.clone()).expect("roots");
    let client = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("TLS 1.3")
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Setup::new(imp, client, server)
}

/// rustls with aws-lc-rs: `group` + ECDSA-P256 + TLS_AES_128_GCM_SHA256, a P-256 chain made
/// with OpenSSL.
pub fn aws_setup(imp: &'static str, group: rustls::NamedGroup) -> Setup {
    use openssl::ec::{EcGroup, EcKey};
    use openssl::nid::Nid;
    use openssl::pkey::PKey;
    use openssl::x509::extension::{BasicConstraints, SubjectAlternativeName};
    use openssl::x509::{X509, X509NameBuilder};
    let base = rustls::crypto::aws_lc_rs::default_provider();
    let provider = Arc::new(CryptoProvider {
        cipher_suites: vec![rustls::crypto::aws_lc_rs::cipher_suite::TLS13_AES_128_GCM_SHA256],
        kx_groups: base
            .kx_groups
            .iter()
            .copied()
            .filter(|g| g.name() == group)
            .collect(),
        ..base
    });
    let p256 = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).expect("P-256");
    let make = |cn: &str, ca: bool, issuer: Option<(&X509, &PKey<openssl::pkey::Private>)>| {
        let key = PKey::from_ec_key(EcKey::generate(&p256).expect("key")).expect("pkey");
        let mut name = X509NameBuilder::new().expect("name");
        name.append_entry_by_text("CN", cn).expect("CN");
        let name = name.build();
        let mut b = X509::builder().expect("builder");
        b.set_version(2).expect("v3");
        let serial = openssl::bn::BigNum::from_u32(if ca { 1 } else { 2 }).expect("serial");
        b.set_serial_number(&serial.to_asn1_integer().expect("serial"))
            .expect("serial");
        b.set_subject_name(&name).expect("subject");
        b.set_issuer_name(issuer.map_or(&name, |(c, _)| c.subject_name()))
            .expect("issuer");
        b.set_pubkey(&key).expect("key");
        b.set_not_before(&openssl::asn1::Asn1Time::days_from_now(0).expect("time"))
            .expect("nb");
        b.set_not_after(&openssl::asn1::Asn1Time::days_from_now(30).expect("time"))
            .expect("na");
        if ca {
            b.append_extension(BasicConstraints::new().critical().ca().build().expect("bc"))
                .expect("bc");
        } else {
            let san = SubjectAlternativeName::new()
                .dns("localhost")
                .build(&b.x509v3_context(issuer.map(|(c, _)| c.as_ref()), None))
                .expect("san");
            b.append_extension(san).expect("san");
        }
        let signer = issuer.map_or(&key, |(_, k)| k);
        b.sign(signer, openssl::hash::MessageDigest::sha256())
            .expect("sign");
        (b.build(), key)
    };
    let (root, root_key) = make("bench root", true, None);
    let (leaf, leaf_key) = make("localhost", false, Some((&root, &root_key)));
    let leaf_der = CertificateDer::from(leaf.to_der().expect("der"));
    let key_der =
        PrivateKeyDer::try_from(leaf_key.private_key_to_pkcs8().expect("pkcs8")).expect("pkcs8");
    let mut server = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("TLS 1.3")
        .with_no_client_auth()
        .with_single_cert(vec![leaf_der], key_der)
        .expect("cert");
    server.ticketer = rustls::crypto::aws_lc_rs::Ticketer::new().expect("ticketer");
    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from(root.to_der().expect("der")))
        .expect("anchor");
    let client = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("TLS 1.3")
        .with_root_certificates(roots)
        .with_no_client_auth();
    Setup::new(imp, client, server)
}

/// Seconds each side spent.
#[derive(Default, Clone, Copy)]
struct Sides {
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
fn handshake(s: &Setup, resume: bool, sides: &mut Sides) -> (ClientConnection, ServerConnection) {
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
fn handshake_slice(s: &Setup, resumed: bool, slice: Duration) -> (f64, f64) {
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
const IN_FLIGHT: usize = 64;

/// Full handshakes with [`IN_FLIGHT`] clients in flight, interleaved flight by flight in this
/// thread as a server with that many clients sees them: server handshakes per second of
/// server time. With `gather`, the ClientHellos' curveSM2 shares are taken out (the gateway's
/// first-flight parse) and their agreements computed in one call before the servers process
/// the hellos, which is the gateway's gathered path without its threads.
fn interleaved_slice(s: &Setup, gather: bool, slice: Duration) -> f64 {
    let mut server = 0.0;
    let mut n = 0;
    let start = Instant::now();
    while start.elapsed() < slice || n == 0 {
        n += interleaved(s, gather, &mut server);
    }
    n as f64 / server
}

fn interleaved(s: &Setup, gather: bool, server: &mut f64) -> usize {
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
fn record_slice(c: &mut ClientConnection, srv: &mut ServerConnection, slice: Duration) -> f64 {
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
fn sm4_gcm_slice(slice: Duration) -> f64 {
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

/// Every TLS figure, implementations alternating round by round. `extra` measures
/// out-of-process peers (OpenSSL 4) once per round and returns (op, imp, rate) triples.
pub fn measure(plan: &Plan, extra: &mut dyn FnMut() -> Vec<(String, String, f64)>) -> Vec<Figure> {
    let setups = [
        sm_setup(),
        aws_setup("rustls+aws-lc-rs X25519", rustls::NamedGroup::X25519),
        aws_setup("rustls+aws-lc-rs P-256", rustls::NamedGroup::secp256r1),
    ];
    let hybrids = [
        sm_setup_with(SM_HYBRID, shangmi_rustls::CURVE_SM2_MLKEM768_GROUP),
        aws_setup(AWS_HYBRID, rustls::NamedGroup::X25519MLKEM768),
    ];
    for s in &hybrids {
        handshake(s, false, &mut Sides::default());
    }
    // Warm each (and seed the resumption tickets).
    let mut conns: Vec<(ClientConnection, ServerConnection)> = setups
        .iter()
        .map(|s| handshake(s, true, &mut Sides::default()))
        .collect();
    let mut rates: Vec<(String, String, Vec<f64>)> = Vec::new();
    let mut push = |op: &str, imp: &str, r: f64| match rates
        .iter_mut()
        .find(|(o, i, _)| o == op && i == imp)
    {
        Some((_, _, v)) => v.push(r),
        None => rates.push((op.into(), imp.into(), vec![r])),
    };
    for round in 0..plan.rounds {
        for j in 0..setups.len() {
            let k = (round + j) % setups.len();
            let s = &setups[k];
            let (full_c, full_s) = handshake_slice(s, false, plan.slice);
            push(OPS[0], s.imp, full_c);
            push(OPS[1], s.imp, full_s);
            let (res_c, res_s) = handshake_slice(s, true, plan.slice);
            push(OPS[2], s.imp, res_c);
            push(OPS[3], s.imp, res_s);
            let (c, srv) = &mut conns[k];
            push(OPS[4], s.imp, record_slice(c, srv, plan.slice));
        }
        push(
            OPS[4],
            "shangmi SM4-GCM (algorithm)",
            sm4_gcm_slice(plan.slice),
        );
        for j in 0..3 {
            match (round + j) % 3 {
                0 => push(
                    INTERLEAVED,
                    GATHERED,
                    interleaved_slice(&setups[0], true, plan.slice),
                ),
                1 => push(
                    INTERLEAVED,
                    ONE_BY_ONE,
                    interleaved_slice(&setups[0], false, plan.slice),
                ),
                _ => push(
                    INTERLEAVED,
                    setups[1].imp,
                    interleaved_slice(&setups[1], false, plan.slice),
                ),
            }
        }
        // The post-quantum hybrids: full handshakes only (resumption and records do not
        // involve the key exchange).
        for j in 0..hybrids.len() {
            let s = &hybrids[(round + j) % hybrids.len()];
            let (full_c, full_s) = handshake_slice(s, false, plan.slice);
            push(OPS[0], s.imp, full_c);
            push(OPS[1], s.imp, full_s);
        }
        for (op, imp, r) in extra() {
            push(&op, &imp, r);
        }
    }
    rates
        .into_iter()
        .map(|(op, imp, r)| {
            let records = op == OPS[4];
            Figure {
                op,
                size: records.then_some(RECORD),
                imp,
                unit: if records { Unit::MBps } else { Unit::OpsPerSec },
                trimmed: trimmed_mean(&r),
                median: median(r),
            }
        })
        .collect()
}

/// The OpenSSL 4.0 column's name.
pub const OPENSSL4: &str = "openssl 4.0 (SM)";
/// OpenSSL 4.0's libssl with shangmi.so serving the SM algorithms.
pub const OPENSSL4_PROVIDER: &str = "openssl 4.0 + shangmi.so";
const ALGORITHM: &str = "shangmi SM4-GCM (algorithm)";

/// The TLS table: rates, then shangmi's ratio to each reference measured in the same rounds.
pub fn markdown(figs: &[Figure], openssl4: Result<&str, &str>) -> String {
    use std::fmt::Write as _;
    let cols = [
        "shangmi",
        "rustls+aws-lc-rs X25519",
        "rustls+aws-lc-rs P-256",
        OPENSSL4,
    ];
    let get = |op: &str, imp: &str| {
        figs.iter()
            .find(|f| f.op == op && f.imp == imp)
            .map(|f| f.median)
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\n### TLS 1.3 (RFC 8998 on shangmi beside TLS 1.3 with P-256/X25519 and AES)\n"
    );
    let _ = writeln!(
        s,
        "shangmi: curveSM2 + sm2sig_sm3 + TLS_SM4_GCM_SM3 on the rustls provider (server key \
         signing with hedged nonces, as `shangmi tls serve` runs it by default); rustls 0.23 \
         with aws-lc-rs: X25519 or P-256 + ECDSA-P256 + TLS_AES_128_GCM_SHA256; {}. \
         Handshakes per second of each side's own time (client and server in one thread over \
         memory); records: MB/s of 16 KiB records sealed and opened, beside shangmi's SM4-GCM \
         sealing and opening the same 16 KiB directly.\n",
        match openssl4 {
            Ok(v) =>
                format!("OpenSSL 4.0 ({v}) with its own SM2/SM3/SM4 (bench/tls/openssl_tls.c)"),
            Err(why) => format!("OpenSSL 4.0 not measured: {why}"),
        }
    );
    let _ = writeln!(
        s,
        "| op | {} | shangmi / X25519 | shangmi / P-256 | shangmi / OpenSSL 4 |",
        cols.join(" | ")
    );
    let _ = writeln!(s, "|---|{}---:|---:|---:|", "---:|".repeat(cols.len()));
    for op in OPS {
        let unit = if op == OPS[4] { "MB/s" } else { "/s" };
        let _ = write!(s, "| {op} ({unit}) |");
        for c in cols {
            match get(op, c) {
                Some(v) => {
                    let _ = write!(s, " {v:.0} |");
                }
                None => s.push_str(" |"),
            }
        }
        let me = get(op, "shangmi");
        for c in &cols[1..] {
            match (me, get(op, c)) {
                (Some(a), Some(b)) if b > 0.0 => {
                    let _ = write!(s, " {:.2}x |", a / b);
                }
                _ => s.push_str(" |"),
            }
        }
        s.push('\n');
    }
    if let (Some(_), Some(_)) = (get(OPS[0], SM_HYBRID), get(OPS[0], AWS_HYBRID)) {
        let _ = writeln!(
            s,
            "\nPost-quantum hybrids, full handshakes (the same setups with only the hybrid \
             group: curveSM2MLKEM768 with ML-KEM from libcrux-ml-kem, X25519MLKEM768 in \
             aws-lc-rs):\n"
        );
        let _ = writeln!(
            s,
            "| op | {SM_HYBRID} | {AWS_HYBRID} | shangmi / aws-lc-rs |\n|---|---:|---:|---:|"
        );
        for op in &OPS[..2] {
            if let (Some(a), Some(b)) = (get(op, SM_HYBRID), get(op, AWS_HYBRID)) {
                let _ = writeln!(s, "| {op} (/s) | {a:.0} | {b:.0} | {:.2}x |", a / b);
            }
        }
    }
    let in_flight = [GATHERED, ONE_BY_ONE, cols[1]].map(|c| get(INTERLEAVED, c));
    if let [Some(g), Some(one), Some(x)] = in_flight {
        let _ = writeln!(
            s,
            "\nServer full handshakes with {IN_FLIGHT} clients in flight, interleaved in one \
             thread: shangmi with the ClientHellos' curveSM2 agreements gathered into one call \
             (the gateway's path; {}), one by one, and rustls + aws-lc-rs X25519:\n",
            if shangmi::sm2::EphemeralSecret::many_in_lanes() {
                "eight at a time in IFMA lanes on this CPU"
            } else {
                "no IFMA lanes on this CPU, so one after another with a shared inversion"
            }
        );
        let _ = writeln!(
            s,
            "| op | {GATHERED} | {ONE_BY_ONE} | {} | gathered / one by one | gathered / X25519 \
             |\n|---|---:|---:|---:|---:|---:|\n| {INTERLEAVED} (/s) | {g:.0} | {one:.0} | \
             {x:.0} | {:.2}x | {:.2}x |",
            cols[1],
            g / one,
            g / x
        );
    }
    if get(OPS[0], OPENSSL4_PROVIDER).is_some() {
        let _ = writeln!(
            s,
            "\nOpenSSL 4.0's libssl unchanged, with `shangmi.so` preferred through \
             `OPENSSL_CONF` (the same loop, the provider serving curveSM2, sm2sig_sm3, SM3 and \
             SM4-GCM):\n"
        );
        let _ = writeln!(
            s,
            "| op | {OPENSSL4} | {OPENSSL4_PROVIDER} | with / without |\n|---|---:|---:|---:|"
        );
        for op in OPS {
            let (Some(a), Some(b)) = (get(op, OPENSSL4_PROVIDER), get(op, OPENSSL4)) else {
                continue;
            };
            let unit = if op == OPS[4] { "MB/s" } else { "/s" };
            let _ = writeln!(s, "| {op} ({unit}) | {b:.0} | {a:.0} | {:.2}x |", a / b);
        }
    }
    if let (Some(rec), Some(alg)) = (get(OPS[4], "shangmi"), get(OPS[4], ALGORITHM)) {
        let _ = writeln!(
            s,
            "\nRecords against the algorithm: shangmi's 16 KiB records run at {rec:.0} MB/s, its \
             SM4-GCM on the same data at {alg:.0} MB/s: {:.2}x (the record layer's cost).",
            rec / alg
        );
        if let Some(aws) = get(OPS[4], "rustls+aws-lc-rs X25519") {
            let _ = writeln!(
                s,
                "AES-128-GCM records through rustls + aws-lc-rs: {aws:.0} MB/s (SM4 / AES {:.2}x).",
                rec / aws
            );
        }
    }
    s
}
