//! TLCP client and server against each other in memory: every suite, client certificates,
//! resumption, and the failures the protocol must catch (tampered records and Finished,
//! wrong certificates, a server sending one certificate, renegotiation, data before the
//! handshake).

use std::sync::Arc;

use der::Encode;
use der::flagset::FlagSet;
use shangmi::sm2::SigningKey;
use shangmi_pki::Issue;
use shangmi_tlcp::{ClientConfig, Connection, Error, Identity, ServerConfig, Suite};
use x509_cert::ext::pkix::{KeyUsage, KeyUsages};

struct Pki {
    ca: shangmi_pki::Cert,
    ca_key: SigningKey,
}

impl Pki {
    fn new(name: &str) -> Pki {
        let ca_key = SigningKey::random().unwrap();
        let ca = shangmi_pki::self_signed(&ca_key, &format!("/CN={name}"), &Issue::ca(2)).unwrap();
        Pki { ca, ca_key }
    }

    fn leaf(&self, cn: &str, usage: impl Into<FlagSet<KeyUsages>>) -> Identity {
        let issue = Issue {
            key_usage: Some(KeyUsage(usage.into())),
            san: vec!["DNS:localhost".into()],
            ..Issue::leaf(2)
        };
        self.leaf_with(&format!("/CN={cn}"), issue)
    }

    fn leaf_with(&self, subject: &str, issue: Issue) -> Identity {
        let key = SigningKey::random().unwrap();
        let csr = shangmi_pki::request(&key, subject, &[]).unwrap();
        let cert = shangmi_pki::sign_request(&csr, &self.ca, &self.ca_key, &issue).unwrap();
        Identity::new(vec![cert.to_der().unwrap()], key).unwrap()
    }

    fn sign(&self, cn: &str) -> Identity {
        self.leaf(cn, KeyUsages::DigitalSignature)
    }

    fn enc(&self, cn: &str) -> Identity {
        self.leaf(cn, KeyUsages::KeyEncipherment | KeyUsages::KeyAgreement)
    }
}

fn server(pki: &Pki, client_ca: Option<&Pki>) -> Arc<ServerConfig> {
    let mut c = ServerConfig::new(pki.sign("server sign"), pki.enc("server enc")).unwrap();
    if let Some(ca) = client_ca {
        c = c.with_client_auth(vec![ca.ca.clone()]).unwrap();
    }
    Arc::new(c)
}

fn client(pki: &Pki, certs: Option<&Pki>, suites: &[Suite]) -> Arc<ClientConfig> {
    let mut c = ClientConfig::new(vec![pki.ca.clone()]).with_suites(suites);
    if let Some(p) = certs {
        c = c.with_certificates(p.sign("client sign"), p.enc("client enc"));
    }
    Arc::new(c)
}

/// Moves bytes both ways until neither side has anything to send.
fn pump(c: &mut Connection, s: &mut Connection) -> Result<(), Error> {
    for _ in 0..20 {
        let a = c.take_tls();
        let b = s.take_tls();
        if a.is_empty() && b.is_empty() {
            return Ok(());
        }
        if !a.is_empty() {
            s.read_tls_bytes(&a)?;
        }
        if !b.is_empty() {
            c.read_tls_bytes(&b)?;
        }
    }
    Ok(())
}

fn connect(
    cc: &Arc<ClientConfig>,
    sc: &Arc<ServerConfig>,
) -> Result<(Connection, Connection), Error> {
    let mut c = Connection::client(cc.clone(), "localhost")?;
    let mut s = Connection::server(sc.clone());
    pump(&mut c, &mut s)?;
    Ok((c, s))
}

fn exchange(c: &mut Connection, s: &mut Connection) {
    c.send(b"ping from client").unwrap();
    pump(c, s).unwrap();
    assert_eq!(s.take_plaintext(), b"ping from client");
    let big = vec![0x5a; 40_000];
    s.send(&big).unwrap();
    pump(c, s).unwrap();
    assert_eq!(c.take_plaintext(), big);
}

#[test]
fn every_suite_with_and_without_client_certificates() {
    let pki = Pki::new("tlcp test CA");
    for suite in Suite::ALL {
        let needs_certs = suite.key_exchange() == shangmi_tlcp::KeyExchange::Ecdhe;
        for with_certs in [false, true] {
            if needs_certs && !with_certs {
                continue;
            }
            let sc = server(&pki, with_certs.then_some(&pki));
            let cc = client(&pki, with_certs.then_some(&pki), &[suite]);
            let (mut c, mut s) = connect(&cc, &sc).unwrap();
            assert!(!c.is_handshaking() && !s.is_handshaking(), "{suite}");
            assert_eq!(c.agreed().unwrap().suite, suite);
            assert_eq!(
                s.agreed().unwrap().peer_certificates.len(),
                if with_certs { 2 } else { 0 }
            );
            exchange(&mut c, &mut s);
            c.close();
            pump(&mut c, &mut s).unwrap();
            assert!(s.peer_closed());
        }
    }
}

/// A transport that takes at most `step` bytes a call each way, and reports WouldBlock when
/// it has nothing to give: what a nonblocking socket does to a reader and a writer.
struct Trickle {
    inbox: std::collections::VecDeque<u8>,
    sent: Vec<u8>,
    step: usize,
}

impl std::io::Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.inbox.is_empty() {
            return Err(std::io::ErrorKind::WouldBlock.into());
        }
        let n = buf.len().min(self.step).min(self.inbox.len());
        for b in &mut buf[..n] {
            *b = self.inbox.pop_front().unwrap();
        }
        Ok(n)
    }
}

impl std::io::Write for Trickle {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.step);
        self.sent.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Moves what `from` has to send into `to` through `wire`: written and read back in pieces.
fn trickle(from: &mut Connection, to: &mut Connection, wire: &mut Trickle) -> Result<bool, Error> {
    let mut moved = false;
    while from.wants_write() {
        assert!(from.write_tls(wire).unwrap() <= wire.step);
    }
    wire.inbox.extend(wire.sent.drain(..));
    loop {
        match to.read_tls(wire) {
            Ok(n) => moved |= n > 0,
            Err(Error::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(moved),
            Err(e) => return Err(e),
        }
    }
}

#[test]
fn connections_are_driven_through_readers_and_writers_in_pieces() {
    let pki = Pki::new("tlcp test CA");
    let sc = server(&pki, Some(&pki));
    for suite in Suite::ALL {
        let cc = client(&pki, Some(&pki), &[suite]);
        let mut c = Connection::client(cc, "localhost").unwrap();
        let mut s = Connection::server(sc.clone());
        let mut wire = Trickle {
            inbox: Default::default(),
            sent: Vec::new(),
            step: 7,
        };
        while c.is_handshaking() || s.is_handshaking() {
            let a = trickle(&mut c, &mut s, &mut wire).unwrap();
            let b = trickle(&mut s, &mut c, &mut wire).unwrap();
            assert!(a || b, "{suite}: the handshake stalled");
        }
        assert_eq!(c.agreed().unwrap().suite, suite);
        let big = vec![0xa5; 40_000];
        c.send(&big).unwrap();
        wire.step = 1000;
        trickle(&mut c, &mut s, &mut wire).unwrap();
        assert_eq!(s.take_plaintext(), big, "{suite}");
    }
}

#[test]
fn sessions_resume_by_id() {
    let pki = Pki::new("tlcp test CA");
    let sc = server(&pki, None);
    let cc = client(
        &pki,
        None,
        &[Suite::ECC_SM4_GCM_SM3, Suite::ECC_SM4_CBC_SM3],
    );
    let (c, _) = connect(&cc, &sc).unwrap();
    assert!(!c.agreed().unwrap().resumed);
    let (mut c, mut s) = connect(&cc, &sc).unwrap();
    assert!(c.agreed().unwrap().resumed && s.agreed().unwrap().resumed);
    exchange(&mut c, &mut s);
    // Another server (no such session) runs a full handshake.
    let (c, _) = connect(&cc, &server(&pki, None)).unwrap();
    assert!(!c.agreed().unwrap().resumed);
}

/// A resumed session is the client it was made with: the server gets back the certificates
/// the full handshake verified (and the client the server's), so a proxy that passes the
/// client's identity on does not lose it, or take it from anywhere else, on resumption.
#[test]
fn a_resumed_session_brings_back_the_certificates_it_was_made_with() {
    let pki = Pki::new("tlcp test CA");
    let sc = server(&pki, Some(&pki));
    let cc = client(&pki, Some(&pki), &[Suite::ECC_SM4_GCM_SM3]);
    let (c, s) = connect(&cc, &sc).unwrap();
    let (full_c, full_s) = (c.agreed().unwrap().clone(), s.agreed().unwrap().clone());
    assert!(!full_s.resumed && full_s.peer_certificates.len() >= 2);
    let (c, s) = connect(&cc, &sc).unwrap();
    let (again_c, again_s) = (c.agreed().unwrap(), s.agreed().unwrap());
    assert!(again_s.resumed && again_c.resumed);
    assert_eq!(again_s.peer_certificates, full_s.peer_certificates);
    assert_eq!(again_c.peer_certificates, full_c.peer_certificates);
}

/// A revoked client certificate is refused once its CA's CRL is given.
#[test]
fn client_certificates_are_checked_against_crls() {
    let pki = Pki::new("tlcp test CA");
    let key = SigningKey::random().unwrap();
    let csr = shangmi_pki::request(&key, "/CN=client sign", &[]).unwrap();
    let issue = Issue {
        key_usage: Some(KeyUsage(KeyUsages::DigitalSignature.into())),
        ..Issue::leaf(2)
    };
    let cert = shangmi_pki::sign_request(&csr, &pki.ca, &pki.ca_key, &issue).unwrap();
    let serial = cert.tbs_certificate().serial_number().as_bytes().to_vec();
    let sign = Identity::new(vec![cert.to_der().unwrap()], key).unwrap();
    let enc = pki.enc("client enc");
    let revoked = [(serial, std::time::SystemTime::now())];
    let crl = shangmi_pki::crl(&pki.ca, &pki.ca_key, &revoked, 1, 1, b"1234567812345678");
    let crl_der = crl.unwrap().to_der().unwrap();
    let sc = Arc::new(
        ServerConfig::new(pki.sign("server sign"), pki.enc("server enc"))
            .unwrap()
            .with_client_auth(vec![pki.ca.clone()])
            .unwrap()
            .with_client_crls(&crl_der)
            .unwrap(),
    );
    let cc = Arc::new(
        ClientConfig::new(vec![pki.ca.clone()])
            .with_suites(&[Suite::ECC_SM4_GCM_SM3])
            .with_certificates(sign, enc),
    );
    assert!(connect(&cc, &sc).is_err());
    // An unrevoked pair still gets in.
    assert!(connect(&client(&pki, Some(&pki), &[Suite::ECC_SM4_GCM_SM3]), &sc).is_ok());
    // CRLs without client authentication are a mistake, refused.
    let plain = ServerConfig::new(pki.sign("server sign"), pki.enc("server enc")).unwrap();
    assert!(plain.with_client_crls(&crl_der).is_err());
}

#[test]
fn sessions_expire_on_both_sides() {
    let pki = Pki::new("tlcp test CA");
    let suites = [Suite::ECC_SM4_GCM_SM3];
    let short = std::time::Duration::from_millis(300);
    let long_server = server(&pki, None);
    let short_server = Arc::new(
        ServerConfig::new(pki.sign("server sign"), pki.enc("server enc"))
            .unwrap()
            .with_session_lifetime(short),
    );
    let short_client = Arc::new(
        ClientConfig::new(vec![pki.ca.clone()])
            .with_suites(&suites)
            .with_session_lifetime(short),
    );
    let long_client = client(&pki, None, &suites);
    for (cc, sc) in [(&long_client, &short_server), (&short_client, &long_server)] {
        let (c, _) = connect(cc, sc).unwrap();
        assert!(!c.agreed().unwrap().resumed);
        let (c, _) = connect(cc, sc).unwrap();
        assert!(c.agreed().unwrap().resumed);
        std::thread::sleep(short * 2);
        let (c, s) = connect(cc, sc).unwrap();
        assert!(!c.agreed().unwrap().resumed && !s.agreed().unwrap().resumed);
    }
}

#[test]
fn ecdhe_without_client_certificates_is_not_offered_or_chosen() {
    let pki = Pki::new("tlcp test CA");
    // A client without certificates cannot offer ECDHE at all.
    assert!(
        Connection::client(client(&pki, None, &[Suite::ECDHE_SM4_GCM_SM3]), "localhost").is_err()
    );
    // A server without client CAs does not choose ECDHE.
    let cc = client(&pki, Some(&pki), &[Suite::ECDHE_SM4_GCM_SM3]);
    assert!(matches!(
        connect(&cc, &server(&pki, None)),
        Err(Error::PeerAlert(_) | Error::HandshakeFailure(_))
    ));
}

#[test]
fn untrusted_wrong_name_and_wrong_usage_certificates_are_refused() {
    let pki = Pki::new("tlcp test CA");
    let other = Pki::new("another CA");
    let sc = server(&pki, None);
    let cc = client(&other, None, &[Suite::ECC_SM4_CBC_SM3]);
    assert!(matches!(connect(&cc, &sc), Err(Error::Certificate(_))));
    // Name: the server's certificates say localhost.
    let cc = client(&pki, None, &[Suite::ECC_SM4_CBC_SM3]);
    let mut c = Connection::client(cc, "example.com").unwrap();
    let mut s = Connection::server(sc.clone());
    assert!(matches!(pump(&mut c, &mut s), Err(Error::Certificate(_))));
    // An encryption certificate that only signs: the server refuses to be configured with
    // it, and a client refuses it from a server (a raw configuration built around the check).
    let bad_enc = pki.leaf("enc", KeyUsages::DigitalSignature);
    assert!(matches!(
        ServerConfig::new(pki.sign("s"), bad_enc),
        Err(Error::Certificate(_))
    ));
    // A client pair with a bad encryption certificate is refused by the server.
    let cc = Arc::new(
        ClientConfig::new(vec![pki.ca.clone()])
            .with_suites(&[Suite::ECC_SM4_GCM_SM3])
            .with_certificates(
                pki.sign("c"),
                pki.leaf("c enc", KeyUsages::DigitalSignature),
            ),
    );
    assert!(connect(&cc, &server(&pki, Some(&pki))).is_err());
    // Client certificates from an untrusted CA.
    let cc = client(&pki, Some(&other), &[Suite::ECC_SM4_GCM_SM3]);
    assert!(connect(&cc, &server(&pki, Some(&pki))).is_err());
}

/// A full handshake of `cc` to `sc` for `host`.
fn connect_to(cc: &Arc<ClientConfig>, sc: &Arc<ServerConfig>, host: &str) -> Result<(), Error> {
    let mut c = Connection::client(cc.clone(), host)?;
    let mut s = Connection::server(sc.clone());
    pump(&mut c, &mut s)?;
    assert!(!c.is_handshaking());
    Ok(())
}

#[test]
fn names_are_read_from_attributes_and_wildcards_skip_addresses() {
    let pki = Pki::new("tlcp test CA");
    let cc = client(&pki, None, &[Suite::ECC_SM4_GCM_SM3]);
    let sign_with = |subject: &str, san: &[&str]| {
        let issue = Issue {
            key_usage: Some(KeyUsage(KeyUsages::DigitalSignature.into())),
            san: san.iter().map(|s| s.to_string()).collect(),
            ..Issue::leaf(2)
        };
        Arc::new(ServerConfig::new(pki.leaf_with(subject, issue), pki.enc("server enc")).unwrap())
    };
    // No SAN: "CN=victim.example" quoted inside O is not a common name.
    for subject in [
        r"CN=attacker.example,O=Evil\, CN=victim.example",
        r"O=Evil\, CN=victim.example,CN=attacker.example",
    ] {
        let sc = sign_with(subject, &[]);
        assert!(
            matches!(
                connect_to(&cc, &sc, "victim.example"),
                Err(Error::Certificate(_))
            ),
            "{subject}"
        );
        connect_to(&cc, &sc, "attacker.example").unwrap();
    }
    // A DNS wildcard never stands for part of an IP address, in the SAN or the CN.
    for san in [&["DNS:*.0.0.1"][..], &[]] {
        let sc = sign_with("/CN=*.0.0.1", san);
        assert!(matches!(
            connect_to(&cc, &sc, "127.0.0.1"),
            Err(Error::Certificate(_))
        ));
    }
    connect_to(&cc, &sign_with("/CN=x", &["IP:127.0.0.1"]), "127.0.0.1").unwrap();
}

#[test]
fn extended_key_usage_is_checked_when_present() {
    const SERVER: &str = "1.3.6.1.5.5.7.3.1";
    const CLIENT: &str = "1.3.6.1.5.5.7.3.2";
    let pki = Pki::new("tlcp test CA");
    let with_eku = |cn: &str, ku: KeyUsages, eku: &str| {
        let issue = Issue {
            key_usage: Some(KeyUsage(ku.into())),
            extended_key_usage: vec![eku.parse().unwrap()],
            san: vec!["DNS:localhost".into()],
            ..Issue::leaf(2)
        };
        pki.leaf_with(&format!("/CN={cn}"), issue)
    };
    let enc = KeyUsages::KeyEncipherment;
    let sign = KeyUsages::DigitalSignature;
    let cc = client(&pki, None, &[Suite::ECC_SM4_GCM_SM3]);
    // A server whose certificates are for clients only is refused; for servers, accepted.
    let sc = Arc::new(
        ServerConfig::new(with_eku("s", sign, CLIENT), with_eku("e", enc, SERVER)).unwrap(),
    );
    assert!(matches!(connect(&cc, &sc), Err(Error::Certificate(_))));
    let sc = Arc::new(
        ServerConfig::new(with_eku("s", sign, SERVER), with_eku("e", enc, CLIENT)).unwrap(),
    );
    assert!(matches!(connect(&cc, &sc), Err(Error::Certificate(_))));
    let sc = Arc::new(
        ServerConfig::new(with_eku("s", sign, SERVER), with_eku("e", enc, SERVER))
            .unwrap()
            .with_client_auth(vec![pki.ca.clone()])
            .unwrap(),
    );
    // And a client whose signing certificate is a server's is refused by the server.
    let cc = Arc::new(
        ClientConfig::new(vec![pki.ca.clone()])
            .with_suites(&[Suite::ECC_SM4_GCM_SM3])
            .with_certificates(with_eku("c", sign, SERVER), with_eku("ce", enc, CLIENT)),
    );
    assert!(connect(&cc, &sc).is_err());
    let cc = Arc::new(
        ClientConfig::new(vec![pki.ca.clone()])
            .with_suites(&[Suite::ECC_SM4_GCM_SM3])
            .with_certificates(with_eku("c", sign, CLIENT), with_eku("ce", enc, CLIENT)),
    );
    connect(&cc, &sc).unwrap();
}

#[test]
fn tampering_ends_the_connection_and_releases_nothing() {
    let pki = Pki::new("tlcp test CA");
    for suite in [Suite::ECC_SM4_CBC_SM3, Suite::ECC_SM4_GCM_SM3] {
        let sc = server(&pki, None);
        let cc = client(&pki, None, &[suite]);
        let (mut c, mut s) = connect(&cc, &sc).unwrap();
        c.send(b"secret").unwrap();
        let mut rec = c.take_tls();
        let n = rec.len();
        rec[n - 3] ^= 1;
        assert!(matches!(s.read_tls_bytes(&rec), Err(Error::BadRecordMac)));
        assert!(s.take_plaintext().is_empty());
        // The alert went out: bad_record_mac (20), fatal.
        let alert = s.take_tls();
        assert_eq!(alert[0], 21);
        assert!(s.send(b"more").is_err());
    }
    // A tampered handshake (the client's Finished): the server fails.
    let sc = server(&pki, None);
    let cc = client(&pki, None, &[Suite::ECC_SM4_CBC_SM3]);
    let mut c = Connection::client(cc, "localhost").unwrap();
    let mut s = Connection::server(sc);
    s.read_tls_bytes(&c.take_tls()).unwrap();
    c.read_tls_bytes(&s.take_tls()).unwrap();
    let mut flight = c.take_tls();
    let n = flight.len();
    flight[n - 1] ^= 1;
    assert!(s.read_tls_bytes(&flight).is_err());
    assert!(s.agreed().is_none());
}

#[test]
fn application_data_before_the_handshake_and_renegotiation_are_refused() {
    let pki = Pki::new("tlcp test CA");
    let sc = server(&pki, None);
    let mut s = Connection::server(sc.clone());
    // An application-data record first.
    assert!(s.read_tls_bytes(&[23, 1, 1, 0, 3, 1, 2, 3]).is_err());
    assert!(s.take_plaintext().is_empty());
    // A wrong version in a ClientHello body.
    let mut s = Connection::server(sc.clone());
    let hello = [22, 1, 1, 0, 45, 1, 0, 0, 41, 3, 3];
    let mut h = hello.to_vec();
    h.extend_from_slice(&[0; 32]);
    h.extend_from_slice(&[0, 0, 2, 0xe0, 0x13, 1, 0]);
    assert!(matches!(
        s.read_tls_bytes(&h),
        Err(Error::ProtocolVersion(0x0303))
    ));
    // Renegotiation after the handshake: a second ClientHello is refused.
    let cc = client(&pki, None, &[Suite::ECC_SM4_GCM_SM3]);
    let (_, mut s) = connect(&cc, &sc).unwrap();
    let mut c2 = Connection::client(cc, "localhost").unwrap();
    let hello = c2.take_tls();
    // Not encrypted under the session's keys, so it fails the record check first; either way
    // the connection ends with an error.
    assert!(s.read_tls_bytes(&hello).is_err());
}

#[test]
fn garbage_and_truncation_never_panic() {
    let pki = Pki::new("tlcp test CA");
    let sc = server(&pki, None);
    let cc = client(&pki, None, &[Suite::ECC_SM4_CBC_SM3]);
    let mut c = Connection::client(cc, "localhost").unwrap();
    let hello = c.take_tls();
    for cut in 0..hello.len() {
        let mut s = Connection::server(sc.clone());
        let _ = s.read_tls_bytes(&hello[..cut]);
        let mut flipped = hello.clone();
        flipped[cut] ^= 0xff;
        let mut s = Connection::server(sc.clone());
        let _ = s.read_tls_bytes(&flipped);
    }
}

#[test]
fn blocking_streams_over_tcp() {
    use std::io::{Read, Write};
    let pki = Pki::new("tlcp test CA");
    let sc = server(&pki, Some(&pki));
    let cc = client(&pki, Some(&pki), &[Suite::ECDHE_SM4_CBC_SM3]);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let t = std::thread::spawn(move || {
        let (sock, _) = listener.accept().unwrap();
        let mut s = shangmi_tlcp::Stream::server(sc, sock);
        let mut buf = [0u8; 64];
        let n = s.read(&mut buf).unwrap();
        s.write_all(&buf[..n].iter().rev().copied().collect::<Vec<_>>())
            .unwrap();
        // The client's close_notify ends the stream cleanly: a read of 0.
        assert_eq!(s.read(&mut buf).unwrap(), 0);
        s.close().unwrap();
    });
    let sock = std::net::TcpStream::connect(addr).unwrap();
    let mut c = shangmi_tlcp::Stream::client(cc, "localhost", sock).unwrap();
    let agreed = c.handshake().unwrap();
    assert_eq!(agreed.suite, Suite::ECDHE_SM4_CBC_SM3);
    assert_eq!(agreed.peer_certificates.len(), 2);
    c.write_all(b"abc").unwrap();
    let mut buf = [0u8; 3];
    c.read_exact(&mut buf).unwrap();
    assert_eq!(&buf, b"cba");
    c.close().unwrap();
    t.join().unwrap();
}

/// The records of a flight: (type, fragment).
fn records(mut flight: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut out = Vec::new();
    while flight.len() >= 5 {
        let len = usize::from(u16::from_be_bytes([flight[3], flight[4]]));
        out.push((flight[0], flight[5..5 + len].to_vec()));
        flight = &flight[5 + len..];
    }
    out
}

fn join(recs: &[(u8, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (t, f) in recs {
        out.extend_from_slice(&[*t, 1, 1]);
        out.extend_from_slice(&(f.len() as u16).to_be_bytes());
        out.extend_from_slice(f);
    }
    out
}

#[test]
fn a_server_sending_one_certificate_is_refused() {
    let pki = Pki::new("tlcp test CA");
    let mut c =
        Connection::client(client(&pki, None, &[Suite::ECC_SM4_CBC_SM3]), "localhost").unwrap();
    let mut s = Connection::server(server(&pki, None));
    s.read_tls_bytes(&c.take_tls()).unwrap();
    let mut recs = records(&s.take_tls());
    // The Certificate message (its own record here): keep only the signing certificate.
    let (_, cert_msg) = recs
        .iter_mut()
        .find(|(t, f)| *t == 22 && f[0] == 11)
        .unwrap();
    let list_len =
        usize::from(cert_msg[4]) << 16 | usize::from(cert_msg[5]) << 8 | usize::from(cert_msg[6]);
    assert_eq!(list_len + 7, cert_msg.len());
    let first_len =
        usize::from(cert_msg[7]) << 16 | usize::from(cert_msg[8]) << 8 | usize::from(cert_msg[9]);
    let first = cert_msg[7..10 + first_len].to_vec();
    let mut body = Vec::new();
    body.extend_from_slice(&(first.len() as u32).to_be_bytes()[1..]);
    body.extend_from_slice(&first);
    let mut msg = vec![11];
    msg.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
    msg.extend_from_slice(&body);
    *cert_msg = msg;
    match c.read_tls_bytes(&join(&recs)) {
        Err(Error::Certificate(why)) => assert!(why.contains("two"), "{why}"),
        other => panic!("expected a certificate error, got {other:?}"),
    }
    assert_eq!(c.take_tls()[..2], [21, 1], "an alert follows");
}

#[test]
fn an_encrypted_pre_master_secret_failing_c3_is_refused() {
    let pki = Pki::new("tlcp test CA");
    let mut c =
        Connection::client(client(&pki, None, &[Suite::ECC_SM4_GCM_SM3]), "localhost").unwrap();
    let mut s = Connection::server(server(&pki, None));
    s.read_tls_bytes(&c.take_tls()).unwrap();
    c.read_tls_bytes(&s.take_tls()).unwrap();
    let mut recs = records(&c.take_tls());
    // ClientKeyExchange: 16, length, then the SM2 ciphertext (DER) with a 2-byte length; flip
    // a byte of its tail (C2 or C3), which SM2 decryption's check refuses.
    let (_, cke) = recs
        .iter_mut()
        .find(|(t, f)| *t == 22 && f[0] == 16)
        .unwrap();
    let n = cke.len();
    cke[n - 5] ^= 1;
    // The server goes on with a random secret, so the failure comes at the client's
    // Finished (as with any wrong key), not with an alert that names the check.
    let r = s.read_tls_bytes(&join(&recs));
    assert!(
        matches!(r, Err(Error::BadRecordMac | Error::DecryptError(_))),
        "{r:?}"
    );
    assert!(s.agreed().is_none() && s.take_plaintext().is_empty());
}

/// Certificates written with explicit DEFAULT values (`critical FALSE`, as some CAs encode
/// them) verify on both sides: each side checks the bytes the peer sent, not a re-encoding
/// (which the CA never signed). The server's pair and the client's pair are both written so.
#[test]
fn certificates_with_explicit_defaults_verify_in_the_handshake() {
    use shangmi_testkit::der_edit::with_explicit_defaults;
    let pki = Pki::new("tlcp explicit CA");
    let explicit = |cn: &str, usage: FlagSet<KeyUsages>| {
        let key = SigningKey::random().unwrap();
        let csr = shangmi_pki::request(&key, &format!("/CN={cn}"), &[]).unwrap();
        let issue = Issue {
            key_usage: Some(KeyUsage(usage)),
            san: vec!["DNS:localhost".into()],
            ..Issue::leaf(2)
        };
        let cert = shangmi_pki::sign_request(&csr, &pki.ca, &pki.ca_key, &issue).unwrap();
        let raw = with_explicit_defaults(&cert.to_der().unwrap(), &pki.ca_key, 0xa3);
        // A parse drops the explicit values: the re-encoding is not what the CA signed.
        let parsed = shangmi_pki::Cert::from_der(&raw).unwrap();
        assert_ne!(parsed.certificate().to_der().unwrap(), raw);
        Identity::new(vec![raw], key).unwrap()
    };
    let sign = || explicit("sign", KeyUsages::DigitalSignature.into());
    let enc = || explicit("enc", KeyUsages::KeyEncipherment | KeyUsages::KeyAgreement);
    let sc = Arc::new(
        ServerConfig::new(sign(), enc())
            .unwrap()
            .with_client_auth(vec![pki.ca.clone()])
            .unwrap(),
    );
    for suite in Suite::ALL {
        let cc = Arc::new(
            ClientConfig::new(vec![pki.ca.clone()])
                .with_suites(&[suite])
                .with_certificates(sign(), enc()),
        );
        let (mut c, mut s) = connect(&cc, &sc).unwrap();
        assert!(!c.is_handshaking() && !s.is_handshaking(), "{suite}");
        assert_eq!(s.agreed().unwrap().peer_certificates.len(), 2);
        exchange(&mut c, &mut s);
    }
}
