//! Client authentication that nothing gets around (SECURITY-CHECKLIST section 7): a session
//! ticket or TLCP session resumes only where it was issued and brings back the client it was
//! made with; the identity headers reach the upstream only as the gateway writes them,
//! whatever spelling a client sends; a Host of another site is misdirected; a revoked client
//! certificate is refused on every protocol.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use shangmi_tlcp::Suite;

fn http(port: u16) -> String {
    format!("\"http://127.0.0.1:{port}\"")
}

/// The site table every test here serves: all three protocols.
fn site(upstream: &str, names: &str, extra: &str) -> String {
    format!(
        r#"
[[listener.site]]
server_names = [{names}]
upstream = [{upstream}]
tlcp = {{ sign_cert = "ss.pem", sign_key = "ss.key", enc_cert = "se.pem", enc_key = "se.key" }}
sm2 = {{ cert = "sm2.pem", key = "sm2.key" }}
international = [ {{ cert = "ecdsa.pem", key = "ecdsa.key" }} ]
{extra}
"#
    )
}

/// A configuration of `listeners` (each a list of site tables) with an admin listener and
/// `head` before them.
fn write_config(dir: &Path, head: &str, listeners: &[Vec<String>]) -> PathBuf {
    let mut text = format!(
        "[admin]\nlisten = \"127.0.0.1:0\"\ntoken_file = \"admin.token\"\n\n[limits]\nhandshake_timeout = 3\nidle_timeout = 5\n\n[log]\naccess = \"stderr\"\n\n{head}\n"
    );
    for sites in listeners {
        text.push_str("\n[[listener]]\nlisten = \"127.0.0.1:0\"\n");
        for s in sites {
            text.push_str(s);
        }
    }
    let path = dir.join("gateway.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// A ticket key file, and the `[tickets]` table naming it.
fn tickets(dir: &Path) -> String {
    std::fs::write(dir.join("tickets.key"), format!("{}\n", "ab".repeat(32))).unwrap();
    "[tickets]\nkey_file = \"tickets.key\"\n".into()
}

/// A GET over a resumable rustls client: the response, or the handshake's failure; and
/// whether the session was resumed.
fn try_get(config: &Arc<rustls::ClientConfig>, port: u16) -> (String, bool) {
    let mut s = rustls_stream(config.clone(), port);
    let r = get(&mut s, "");
    (
        r,
        s.conn.handshake_kind() == Some(rustls::HandshakeKind::Resumed),
    )
}

#[test]
fn a_ticket_opens_only_in_the_scope_that_issued_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    let backend = Backend::start("backend-a");
    let up = http(backend.port);
    let open = site(&up, "\"localhost\"", "");
    let guarded = site(&up, "\"localhost\"", "client_ca = \"ca.pem\"");
    let path = write_config(d, &tickets(d), &[vec![open.clone()], vec![guarded.clone()]]);
    let gw = Gateway::start(&path, 2, true);
    let (free, strict) = (gw.ports[0], gw.ports[1]);
    for client in [sm_client(d, false), intl_client(d, &rustls::version::TLS13)] {
        let (r, _) = try_get(&client, free);
        assert!(r.contains("backend-a"), "{r}");
        // Within its scope the ticket resumes (the check below is not passing by accident).
        let (r, resumed) = try_get(&client, free);
        assert!(r.contains("backend-a") && resumed, "{r}");
        // The same name on the listener whose site requires certificates: no resumption,
        // so a full handshake, which asks for the certificate this client does not have.
        let (r, resumed) = try_get(&client, strict);
        assert!(
            !resumed && !r.contains("backend-a"),
            "resumed into the strict site: {r}"
        );
    }

    // A reload that adds client_ca to the site that issued the tickets ends them there too.
    let client = sm_client(d, false);
    assert!(try_get(&client, free).0.contains("backend-a"));
    write_config(d, &tickets(d), &[vec![guarded.clone()], vec![guarded]]);
    assert_eq!(gw.admin("POST", "/reload").0, 200);
    let (r, resumed) = try_get(&client, free);
    assert!(
        !resumed && !r.contains("backend-a"),
        "resumed across the reload: {r}"
    );
    // A client with a certificate gets in, and its subject reaches the upstream.
    let r = get(rustls_stream(sm_client(d, true), free), "");
    assert!(
        r.contains("x-sm-client-subject: CN=sm2 client,O=shangmi test"),
        "{r}"
    );
}

#[test]
fn a_resumed_tlcp_session_brings_back_its_client() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    let backend = Backend::start("backend-a");
    let guarded = site(
        &http(backend.port),
        "\"localhost\"",
        "client_ca = \"ca.pem\"",
    );
    let gw = Gateway::start(&write_config(d, "", &[vec![guarded]]), 1, true);
    let client = tlcp_client(d, &[Suite::ECC_SM4_GCM_SM3], true);
    for round in 0..3 {
        let s = shangmi_tlcp::Stream::client(client.clone(), "localhost", tcp(gw.port())).unwrap();
        let r = get(s, "X_SM_Client_Subject: CN=admin\r\n");
        assert!(
            r.contains("x-sm-client-subject: CN=tlcp client,O=shangmi test"),
            "{round}: {r}"
        );
        assert!(r.contains("x-sm-client-cert: Hash="), "{r}");
        assert!(!r.contains("CN=admin"), "{r}");
    }
    assert!(gw.wait_log("\"resumed\":true", Duration::from_secs(2)));
}

#[test]
fn identity_headers_reach_the_upstream_only_as_the_gateway_writes_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    let backend = Backend::start("backend-a");
    let up = http(backend.port);
    let path = write_config(
        d,
        "",
        &[vec![site(&up, "\"localhost\"", "client_ca = \"ca.pem\"")]],
    );
    let gw = Gateway::start(&path, 1, true);
    let forged = "X_SM_Client_Subject: CN=admin\r\nX-SM-Client-Subject: CN=admin\r\n\
                  X_SM_Protocol: TLCP forged\r\nX-Forwarded_For: 10.9.9.9\r\n\
                  Forwarded: for=10.9.9.9\r\nX-Real-IP: 10.9.9.9\r\n\
                  X-Forwarded-Host: forged.example\r\nX-Client-Cert: forged\r\n\
                  X-SSL-Client-DN: CN=admin\r\nX-SM-Server-Name: forged.example\r\n\
                  X-Client-Id: app-7\r\n";
    let r = get(rustls_stream(sm_client(d, true), gw.port()), forged);
    assert!(r.starts_with("HTTP/1.1 200"), "{r}");
    let upstream_saw = r.to_ascii_lowercase();
    for gone in ["cn=admin", "forged", "10.9.9.9", "x_sm", "x-forwarded_for"] {
        assert!(
            !upstream_saw.contains(gone),
            "{gone} reached the upstream: {r}"
        );
    }
    assert!(
        r.contains("x-sm-client-subject: CN=sm2 client,O=shangmi test"),
        "{r}"
    );
    assert!(r.contains("x-sm-server-name: localhost"), "{r}");
    assert!(r.contains("x-forwarded-for: 127.0.0.1\r\n"), "{r}");
    assert!(
        r.contains("x-client-id: app-7"),
        "an application's own header: {r}"
    );
    let cert = r
        .lines()
        .find_map(|l| l.strip_prefix("x-sm-client-cert: "))
        .unwrap_or_else(|| panic!("{r}"));
    let fingerprint = {
        use sha2::Digest;
        let der = der_of(&d.join("client.pem"));
        sha2::Sha256::digest(der)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    assert!(
        cert.starts_with(&format!("Hash={fingerprint};Serial=")),
        "{cert}"
    );
    assert!(
        cert.contains(";Subject=\"CN=sm2 client,O=shangmi test\";Issuer=\""),
        "{cert}"
    );

    // What would delete the gateway's headers on the next hop, and a second Host: refused.
    for bad in [
        "Connection: host\r\n",
        "Connection: close, X-SM-Client-Subject\r\n",
        "Host: other.example\r\n",
    ] {
        let r = get(rustls_stream(sm_client(d, true), gw.port()), bad);
        assert!(r.starts_with("HTTP/1.1 400"), "{bad}: {r}");
    }

    // With underscore_headers = "refuse", a name with an underscore is a 400.
    let refuse = "[http]\nunderscore_headers = \"refuse\"\n";
    write_config(
        d,
        refuse,
        &[vec![site(&up, "\"localhost\"", "client_ca = \"ca.pem\"")]],
    );
    assert_eq!(gw.admin("POST", "/reload").0, 200);
    let r = get(
        rustls_stream(sm_client(d, true), gw.port()),
        "X_Trace: 1\r\n",
    );
    assert!(r.starts_with("HTTP/1.1 400"), "{r}");
    let r = get(
        rustls_stream(sm_client(d, true), gw.port()),
        "X-Trace: 1\r\n",
    );
    assert!(r.starts_with("HTTP/1.1 200"), "{r}");
}

#[test]
fn a_host_of_another_site_is_misdirected() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    let backend = Backend::start("backend-a");
    let up = http(backend.port);
    let public = site(&up, "\"localhost\"", "");
    let admin = site(&up, "\"admin.example.cn\"", "client_ca = \"ca.pem\"");
    let path = write_config(d, "", &[vec![public, admin]]);
    let gw = Gateway::start(&path, 1, true);
    let port = gw.port();
    let with_host = |host: &str| {
        let c = tlcp_client(d, &[Suite::ECC_SM4_GCM_SM3], false);
        let mut s = shangmi_tlcp::Stream::client(c, "localhost", tcp(port)).unwrap();
        use std::io::{Read, Write};
        write!(
            s,
            "GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    };
    // The SNI chose the public site; a Host naming the guarded one is not served as it.
    for host in ["admin.example.cn", "ADMIN.example.cn:443"] {
        let r = with_host(host);
        assert!(r.starts_with("HTTP/1.1 421"), "{host}: {r}");
    }
    for host in ["localhost", "LOCALHOST:8443"] {
        let r = with_host(host);
        assert!(r.starts_with("HTTP/1.1 200"), "{host}: {r}");
    }
    // `Connection: host` would have deleted the Host on the way: refused before that.
    let r = get(
        rustls_stream(sm_client(d, false), port),
        "Connection: host\r\n",
    );
    assert!(r.starts_with("HTTP/1.1 400"), "{r}");
    // HTTP/2: the authority counts as the Host.
    let alpn = h2_client(d);
    let (status, _) = h2_get(&alpn, port, "admin.example.cn");
    assert_eq!(status, 421);
    let (status, body) = h2_get(&alpn, port, "localhost");
    assert_eq!(status, 200, "{body}");
}

/// An RFC 8998 client offering h2.
fn h2_client(d: &Path) -> Arc<rustls::ClientConfig> {
    let mut c = (*sm_client(d, false)).clone();
    c.alpn_protocols = vec![b"h2".to_vec()];
    Arc::new(c)
}

/// One HTTP/2 GET of `/` with `authority`: the status and the body.
fn h2_get(config: &Arc<rustls::ClientConfig>, port: u16, authority: &str) -> (u16, String) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        let tls = tokio_rustls::TlsConnector::from(config.clone())
            .connect("localhost".try_into().unwrap(), tcp)
            .await
            .unwrap();
        let (mut h2, conn) = h2::client::handshake(tls).await.unwrap();
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let req = http::Request::get(format!("https://{authority}/"))
            .body(())
            .unwrap();
        let (resp, _) = h2.send_request(req, true).unwrap();
        let resp = resp.await.unwrap();
        let status = resp.status().as_u16();
        let mut body = resp.into_body();
        let mut text = Vec::new();
        while let Some(chunk) = body.data().await {
            let chunk = chunk.unwrap();
            let _ = body.flow_control().release_capacity(chunk.len());
            text.extend_from_slice(&chunk);
        }
        (status, String::from_utf8_lossy(&text).into_owned())
    })
}

#[test]
fn revoked_client_certificates_are_refused_on_every_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    revoke(d, &["client.pem", "cs.pem"], "revoked.crl");
    let backend = Backend::start("backend-a");
    let guarded = site(
        &http(backend.port),
        "\"localhost\"",
        "client_ca = \"ca.pem\"\nclient_crl = \"revoked.crl\"",
    );
    let gw = Gateway::start(&write_config(d, "", &[vec![guarded]]), 1, true);
    let port = gw.port();
    let r = get(rustls_stream(sm_client(d, true), port), "");
    assert!(
        !r.contains("backend-a"),
        "a revoked RFC 8998 client got in: {r}"
    );
    let c = tlcp_client(d, &[Suite::ECC_SM4_GCM_SM3], true);
    let mut s = shangmi_tlcp::Stream::client(c, "localhost", tcp(port)).unwrap();
    assert!(s.handshake().is_err(), "a revoked TLCP client got in");
    // International TLS with the same (SM2) client certificate.
    let mut intl = (*intl_client(d, &rustls::version::TLS13)).clone();
    let key = shangmi_rustls::load_certified_key(
        &std::fs::read(d.join("client.pem")).unwrap(),
        &std::fs::read(d.join("client.key")).unwrap(),
        None,
    )
    .unwrap();
    intl.client_auth_cert_resolver = Arc::new(shangmi_rustls::SmClientCert::new(key));
    let r = get(rustls_stream(Arc::new(intl), port), "");
    assert!(
        !r.contains("backend-a"),
        "a revoked international client got in: {r}"
    );
    // A CRL that revokes nothing lets the same clients in.
    revoke(d, &[], "revoked.crl");
    assert_eq!(gw.admin("POST", "/reload").0, 200);
    let r = get(rustls_stream(sm_client(d, true), port), "");
    assert!(r.contains("backend-a"), "{r}");
    assert!(tlcp_get_with_certs(d, port).contains("backend-a"));
}

fn tlcp_get_with_certs(d: &Path, port: u16) -> String {
    let c = tlcp_client(d, &[Suite::ECC_SM4_GCM_SM3], true);
    get(
        shangmi_tlcp::Stream::client(c, "localhost", tcp(port)).unwrap(),
        "",
    )
}

/// Writes `crl` (DER): the test CA's CRL revoking the certificates in `certs`.
fn revoke(d: &Path, certs: &[&str], crl: &str) {
    use der::Encode;
    let ca = &shangmi_pki::certificates(&std::fs::read(d.join("ca.pem")).unwrap()).unwrap()[0];
    let key =
        shangmi::sm2::SigningKey::from_key_file(&std::fs::read(d.join("ca.key")).unwrap(), None)
            .unwrap();
    let revoked: Vec<(Vec<u8>, std::time::SystemTime)> = certs
        .iter()
        .map(|c| {
            let cert = &shangmi_pki::certificates(&std::fs::read(d.join(c)).unwrap()).unwrap()[0];
            let serial = cert.tbs_certificate().serial_number().as_bytes().to_vec();
            (serial, std::time::SystemTime::now())
        })
        .collect();
    let list = shangmi_pki::crl(ca, &key, &revoked, 1, 1, b"1234567812345678").unwrap();
    std::fs::write(d.join(crl), list.to_der().unwrap()).unwrap();
}
