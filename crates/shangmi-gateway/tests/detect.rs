//! The first-flight decision on hellos real clients send: rustls with the SM provider (RFC
//! 8998) and with aws-lc-rs (international), shangmi-tlcp (a TLCP record), a TLS hello
//! carrying TLCP suites as the 360 browser sends it, a hello split over many records and over
//! many reads; and garbage, which is refused without waiting.

use std::sync::Arc;

use shangmi_gateway::detect::{Detected, Detector, Hello, MAX_FIRST_FLIGHT, Protocol, detect};

fn rustls_hello(provider: rustls::crypto::CryptoProvider, sni: &str) -> Vec<u8> {
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(provider))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth();
    let mut c =
        rustls::ClientConnection::new(Arc::new(config), sni.to_string().try_into().unwrap())
            .unwrap();
    let mut out = Vec::new();
    c.write_tls(&mut out).unwrap();
    out
}

fn hello(bytes: &[u8]) -> Hello {
    match detect(bytes) {
        Detected::Hello(h) => h,
        other => panic!("{other:?}"),
    }
}

/// Every strict prefix asks for more, and never for less than it has.
fn prefixes_ask_for_more(bytes: &[u8]) {
    for n in 0..bytes.len() {
        match detect(&bytes[..n]) {
            Detected::NeedMore(want) => assert!(want > n && want <= bytes.len(), "{n}: {want}"),
            other => panic!("prefix of {n}: {other:?}"),
        }
    }
}

#[test]
fn rfc8998_and_international_hellos_are_told_apart() {
    let sm = rustls_hello(shangmi_rustls::provider(), "SM.Example.com");
    let h = hello(&sm);
    assert!(h.rfc8998 && !h.tlcp_record && !h.tlcp_suites);
    assert_eq!(h.server_name.as_deref(), Some("sm.example.com"));
    assert_eq!(h.choose(true, true, true), Some(Protocol::Rfc8998));
    // A site without an SM2 certificate serves it internationally if it can (it cannot
    // here: the hello offers only SM suites, and rustls will say so).
    assert_eq!(h.choose(true, false, true), Some(Protocol::International));
    prefixes_ask_for_more(&sm);

    let intl = rustls_hello(
        rustls::crypto::aws_lc_rs::default_provider(),
        "www.example.com",
    );
    let h = hello(&intl);
    assert!(!h.rfc8998 && !h.tlcp_record && !h.tlcp_suites);
    assert_eq!(h.choose(true, true, true), Some(Protocol::International));
    assert_eq!(h.choose(true, true, false), None);
    // A site with one protocol answers with it: the client then hears rustls' alert.
    assert_eq!(h.choose(false, true, false), Some(Protocol::Rfc8998));
    prefixes_ask_for_more(&intl);
}

#[test]
fn the_sm2_point_is_found_when_rustls_will_agree_with_it() {
    const SM2: u16 = 0x0029;
    const HYBRID: u16 = 0x11EE;
    let h = hello(&rustls_hello(shangmi_rustls::provider(), "sm.example.com"));
    let point = h.sm2_point(&[SM2]).expect("curveSM2 offered first");
    assert!(shangmi_rustls::parse_key_share(point).is_ok());
    assert_eq!(h.sm2_point(&[HYBRID, SM2]), Some(point));
    assert_eq!(
        h.sm2_point(&[0x001D]),
        None,
        "a server without the SM groups"
    );
    assert_eq!(h.sm2_point(&[HYBRID]), None, "no hybrid share sent");

    // A client preferring the hybrid sends both shares, and the hybrid's point comes first in
    // its own share; which point is used follows the group the server will choose.
    let mut provider = shangmi_rustls::provider();
    provider
        .kx_groups
        .insert(0, shangmi_rustls::CURVE_SM2_MLKEM768_GROUP);
    let h = hello(&rustls_hello(provider, "sm.example.com"));
    assert_eq!(h.groups[..2], [HYBRID, SM2]);
    let (sm2, hybrid) = (
        h.sm2_points.curve_sm2.clone().unwrap(),
        h.sm2_points.hybrid.clone().unwrap(),
    );
    assert_eq!(sm2, hybrid, "one point offered twice");
    assert_eq!(h.sm2_point(&[SM2, HYBRID]), Some(&hybrid[..]));
    assert_eq!(h.sm2_point(&[SM2]), Some(&sm2[..]));

    let intl = rustls_hello(
        rustls::crypto::aws_lc_rs::default_provider(),
        "www.example.com",
    );
    assert_eq!(hello(&intl).sm2_point(&[SM2, 0x001D]), None);
}

#[test]
fn a_tlcp_record_is_tlcp() {
    let config = shangmi_tlcp::ClientConfig::new(Vec::<shangmi_pki::Cert>::new());
    let mut c = shangmi_tlcp::Connection::client(Arc::new(config), "localhost").unwrap();
    let flight = c.take_tls();
    assert_eq!(&flight[1..3], &[0x01, 0x01]);
    let h = hello(&flight);
    assert!(h.tlcp_record && h.tlcp_suites && !h.rfc8998);
    assert_eq!(h.server_name, None);
    assert_eq!(h.choose(true, true, true), Some(Protocol::Tlcp));
    assert_eq!(h.choose(false, true, true), None);
    assert_eq!(h.choose(false, false, true), Some(Protocol::International));
    prefixes_ask_for_more(&flight);
}

/// A TLS 1.2 record and hello carrying ECC_SM4_CBC_SM3 and ECDHE_SM4_GCM_SM3 beside
/// international suites, as the 360 browser offers them.
fn hello_360() -> Vec<u8> {
    hello_padded(0)
}

/// [`hello_360`] with a padding extension (RFC 7685) of `pad` bytes before the server name.
fn hello_padded(pad: usize) -> Vec<u8> {
    let mut body = vec![0x03, 0x03];
    body.extend([0x11; 32]);
    body.push(0);
    let suites: [u16; 4] = [0xE013, 0xE051, 0xC02B, 0x002F];
    body.extend(((suites.len() * 2) as u16).to_be_bytes());
    for s in suites {
        body.extend(s.to_be_bytes());
    }
    body.extend([1, 0]);
    let name = b"bank.example.cn";
    let mut sni = Vec::new();
    sni.extend(((name.len() + 3) as u16).to_be_bytes());
    sni.push(0);
    sni.extend((name.len() as u16).to_be_bytes());
    sni.extend(name);
    let mut exts = Vec::new();
    if pad > 0 {
        exts.extend([0, 21]);
        exts.extend((pad as u16).to_be_bytes());
        exts.resize(exts.len() + pad, 0);
    }
    exts.extend([0, 0]);
    exts.extend((sni.len() as u16).to_be_bytes());
    exts.extend(sni);
    body.extend((exts.len() as u16).to_be_bytes());
    body.extend(exts);
    let mut msg = vec![1, 0];
    msg.extend((body.len() as u16).to_be_bytes());
    msg.extend(body);
    let mut rec = vec![22, 0x03, 0x01];
    rec.extend((msg.len() as u16).to_be_bytes());
    rec.extend(msg);
    rec
}

#[test]
fn tlcp_suites_in_a_tls_hello_are_answered_with_tlcp() {
    let h = hello(&hello_360());
    assert!(h.tlcp_suites && !h.tlcp_record && !h.rfc8998);
    assert_eq!(h.server_name.as_deref(), Some("bank.example.cn"));
    assert_eq!(h.choose(true, true, true), Some(Protocol::Tlcp));
    assert_eq!(h.choose(false, true, true), Some(Protocol::International));
}

/// A first flight over 4 KiB (post-quantum key shares, long padding), whole or in records of
/// 4 KiB, is read to its end: the server name after the padding is found.
#[test]
fn a_hello_over_4_kib_is_read_whole() {
    let big = hello_padded(6000);
    assert!(big.len() > 6000);
    for flight in [big.clone(), reframe(&big, 4096)] {
        let h = hello(&flight);
        assert_eq!(h.server_name.as_deref(), Some("bank.example.cn"));
        assert!(h.tlcp_suites);
        prefixes_ask_for_more(&flight);
    }
}

/// The same handshake message re-framed in records of `size` bytes.
fn reframe(flight: &[u8], size: usize) -> Vec<u8> {
    let (header, message) = flight.split_at(5);
    let mut out = Vec::new();
    for piece in message.chunks(size) {
        out.extend(&header[..3]);
        out.extend((piece.len() as u16).to_be_bytes());
        out.extend(piece);
    }
    out
}

#[test]
fn a_hello_over_many_records_is_reassembled() {
    let sm = rustls_hello(shangmi_rustls::provider(), "localhost");
    let whole = hello(&sm);
    for size in [1, 3, 4, 5, 100] {
        let split = reframe(&sm, size);
        assert_eq!(hello(&split), whole, "records of {size}");
        prefixes_ask_for_more(&split);
    }
    // Application data after the hello (0-RTT, or a pipelining client) changes nothing.
    let mut more = sm.clone();
    more.extend([23, 3, 3, 0, 1, 0]);
    assert_eq!(hello(&more), whole);
}

#[test]
fn garbage_is_refused_at_once() {
    for bad in [
        &b"GET / HTTP/1.1\r\n\r\n"[..],
        &[0x16, 0x02, 0x00, 0x00, 0x10], // SSL 2-era version
        &[0x16, 0x03, 0x03, 0x00, 0x00], // an empty record
        &[0x17, 0x03, 0x03, 0x00, 0x05, 1, 2, 3, 4, 5], // application data first
        &[0x16, 0x03, 0x03, 0x00, 0x04, 2, 0, 0, 0], // a ServerHello
        &[0x16, 0x03, 0x03, 0x00, 0x04, 1, 0, 0, 0], // an empty ClientHello
        &[0x16, 0x03, 0x03, 0x00, 0x04, 1, 0xff, 0xff, 0xff], // 16 MiB declared
    ] {
        assert!(matches!(detect(bad), Detected::Invalid(_)), "{bad:?}");
    }
    // TLS and TLCP records mixed in one flight.
    let mut mixed = reframe(&hello_360(), 10);
    mixed[5 + 10 + 1..5 + 10 + 3].copy_from_slice(&[1, 1]);
    assert!(matches!(detect(&mixed), Detected::Invalid(_)));
    // A hello larger than any client sends is refused once its length is known.
    let mut huge = vec![0x16, 0x03, 0x03, 0x00, 0x04, 1];
    huge.extend(((MAX_FIRST_FLIGHT + 1) as u32).to_be_bytes()[1..].iter());
    assert!(matches!(detect(&huge), Detected::Invalid(_)));
    // A server name that is not a host name.
    let mut odd = hello_360();
    let at = odd.windows(4).position(|w| w == b"bank").unwrap();
    odd[at] = b'/';
    assert!(matches!(detect(&odd), Detected::Invalid(_)));
}

/// Writes the fuzz target's seeds (run by hand with SHANGMI_WRITE_SEEDS=1 after a change to
/// what clients send).
#[test]
fn write_seeds_when_asked() {
    if std::env::var_os("SHANGMI_WRITE_SEEDS").is_none() {
        return;
    }
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fuzz/seeds/gateway_detect"
    );
    std::fs::create_dir_all(dir).unwrap();
    let config = shangmi_tlcp::ClientConfig::new(Vec::<shangmi_pki::Cert>::new());
    let mut tlcp = shangmi_tlcp::Connection::client(Arc::new(config), "localhost").unwrap();
    let sm = rustls_hello(shangmi_rustls::provider(), "localhost");
    for (name, bytes) in [
        ("rfc8998-hello.bin", sm.clone()),
        ("rfc8998-hello-in-7-byte-records.bin", reframe(&sm, 7)),
        (
            "international-hello.bin",
            rustls_hello(
                rustls::crypto::aws_lc_rs::default_provider(),
                "www.example.com",
            ),
        ),
        ("tlcp-hello.bin", tlcp.take_tls()),
        ("tls-hello-with-tlcp-suites.bin", hello_360()),
    ] {
        std::fs::write(format!("{dir}/{name}"), bytes).unwrap();
    }
}

/// A hello of `size` bytes of message in one-byte records.
fn tiny_records(size: usize) -> Vec<u8> {
    let mut msg = vec![1u8];
    msg.extend(((size - 4) as u32).to_be_bytes()[1..].iter());
    msg.resize(size, 0);
    msg.iter().flat_map(|&b| [22, 3, 1, 0, 1, b]).collect()
}

/// The time to decide on `flight` read a byte at a time, per record.
fn per_record(flight: &[u8]) -> f64 {
    let t = std::time::Instant::now();
    let mut d = Detector::default();
    for n in 1..=flight.len() {
        if !matches!(d.detect(&flight[..n]), Detected::NeedMore(_)) {
            break;
        }
    }
    t.elapsed().as_secs_f64() / (flight.len() / 6) as f64
}

#[test]
fn the_detector_reads_each_byte_once_however_small_the_records() {
    // Each call looks only at what arrived since the last: five times the records cost five
    // times the time, not twenty-five (a detector re-reading from the start did).
    let (short, long) = (tiny_records(2_000), tiny_records(10_000));
    per_record(&short);
    let ratio = per_record(&long) / per_record(&short);
    assert!(
        ratio < 2.5,
        "a record of the long flight cost {ratio:.1}x one of the short"
    );
    // The bound counts record headers too: a flight past MAX_FIRST_FLIGHT is refused, and
    // nothing asked for lies beyond it.
    let huge = tiny_records(12_000);
    let mut d = Detector::default();
    let mut asked = 0;
    let verdict = loop {
        match d.detect(&huge[..asked.min(huge.len())]) {
            Detected::NeedMore(n) => {
                assert!(n <= MAX_FIRST_FLIGHT, "asked for {n}");
                asked = n;
            }
            other => break other,
        }
    };
    assert!(matches!(verdict, Detected::Invalid(_)), "{verdict:?}");
}
