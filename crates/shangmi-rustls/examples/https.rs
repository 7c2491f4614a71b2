//! An RFC 8998 HTTPS-style server and client on std's blocking sockets.
//!
//! ```sh
//! cargo run -p shangmi-rustls --example https -- serve server.pem server.key 127.0.0.1:8443
//! cargo run -p shangmi-rustls --example https -- get ca.pem localhost 127.0.0.1:8443
//! ```

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// RFC 8998 defines its suites for TLS 1.3 only.
static TLS13: &[&rustls::SupportedProtocolVersion] = &[&rustls::version::TLS13];

fn serve(cert: &str, key: &str, addr: &str) -> Result<()> {
    let key =
        shangmi_rustls::load_certified_key(&std::fs::read(cert)?, &std::fs::read(key)?, None)?;
    let mut config =
        rustls::ServerConfig::builder_with_provider(Arc::new(shangmi_rustls::provider()))
            .with_protocol_versions(TLS13)?
            .with_no_client_auth()
            .with_cert_resolver(Arc::new(shangmi_rustls::SmCertResolver::new(key)));
    config.ticketer = shangmi_rustls::ticketer()?;
    let config = Arc::new(config);
    for sock in TcpListener::bind(addr)?.incoming() {
        let conn = rustls::ServerConnection::new(config.clone())?;
        let mut tls = rustls::StreamOwned::new(conn, sock?);
        // Read the request line (the handshake happens on first use), answer, close.
        let mut line = String::new();
        if BufReader::new(&mut tls).read_line(&mut line).is_ok() {
            let body = format!(
                "hello over {:?}\n",
                tls.conn.negotiated_cipher_suite().map(|s| s.suite())
            );
            let _ = write!(
                tls,
                "HTTP/1.0 200 OK\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            );
            tls.conn.send_close_notify();
            let _ = tls.flush();
        }
    }
    Ok(())
}

fn get(ca: &str, name: &str, addr: &str) -> Result<()> {
    let provider = Arc::new(shangmi_rustls::provider());
    let roots = Arc::new(shangmi_rustls::load_roots(&std::fs::read(ca)?)?);
    let config = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(TLS13)?
        .dangerous() // the custom verifier hook; chains are still checked by webpki
        .with_custom_certificate_verifier(shangmi_rustls::Sm2ServerVerifier::new(roots, provider)?)
        .with_no_client_auth();
    let conn = rustls::ClientConnection::new(Arc::new(config), name.to_string().try_into()?)?;
    let mut tls = rustls::StreamOwned::new(conn, TcpStream::connect(addr)?);
    write!(tls, "GET / HTTP/1.0\r\nhost: {name}\r\n\r\n")?;
    let mut response = String::new();
    tls.read_to_string(&mut response)?;
    print!("{response}");
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["serve", cert, key, addr] => serve(cert, key, addr),
        ["get", ca, name, addr] => get(ca, name, addr),
        _ => Err("usage: https serve CERT KEY ADDR | https get CA NAME ADDR".into()),
    }
}
