//! TLCP (GB/T 38636-2020), the Chinese national TLS: client and server with the four SM
//! suites (ECC_SM4_CBC_SM3, ECC_SM4_GCM_SM3, ECDHE_SM4_CBC_SM3, ECDHE_SM4_GCM_SM3), a
//! signing and an encryption certificate on each side, client authentication, resumption by
//! session ID, renegotiation refused.
//!
//! [`Connection`] is the protocol without I/O, driven as a rustls connection is
//! (`read_tls` from a reader, `write_tls` to a writer, or the byte-slice forms
//! `read_tls_bytes`/`take_tls`); [`Stream`] runs it over a blocking `Read + Write`, and
//! `AsyncStream` (the `tokio` feature) over tokio's `AsyncRead + AsyncWrite`. Nothing of the
//! application's data is released before the handshake has completed, and CBC records are
//! checked in constant time (`record.rs`).
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::io::{Read, Write};
//! use std::sync::Arc;
//! let roots = shangmi_pki::certificates(&std::fs::read("ca.pem")?)?;
//! let config = Arc::new(shangmi_tlcp::ClientConfig::new(roots));
//! let tcp = std::net::TcpStream::connect("127.0.0.1:4433")?;
//! let mut tls = shangmi_tlcp::Stream::client(config, "localhost", tcp)?;
//! println!("{}", tls.handshake()?.suite);
//! tls.write_all(b"hello")?;
//! # Ok(()) }
//! ```

// The README's examples are doctests: a quick start that stops compiling fails the tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

#[cfg(feature = "tokio")]
mod async_stream;
mod client;
mod codec;
mod common;
mod config;
mod conn;
mod error;
mod messages;
mod prf;
mod record;
mod server;
mod state;
mod stream;
mod suite;

#[cfg(feature = "tokio")]
pub use async_stream::AsyncStream;
pub use common::Agreed;
pub use config::{ClientConfig, DEFAULT_SESSION_LIFETIME, Identity, ServerConfig};
pub use conn::Connection;
pub use error::{Alert, Error};
pub use stream::Stream;
pub use suite::{KeyExchange, Protection, Suite};

#[doc(hidden)]
/// For the fuzz targets: every parser of peer input, on arbitrary bytes.
pub mod fuzzing {
    /// Runs the record deframer, the handshake message parsers and a server and client state
    /// machine's first steps over `data`; must never panic.
    pub fn parse_all(data: &[u8]) {
        use crate::messages;
        let _ = messages::ClientHello::parse(data);
        let _ = messages::ServerHello::parse(data);
        let _ = messages::parse_certificates(data);
        let _ = messages::parse_certificate_request(data);
        let mut r = crate::codec::Reader::new(data);
        let _ = messages::parse_ecdh_params(&mut r);
        let mut d = crate::record::Deframer::default();
        d.push(data);
        while let Ok(Some(_)) = d.next() {}
    }
}

#[doc(hidden)]
/// For the timing test: one CBC record's check, as a connection runs it.
pub mod testing {
    /// Opens `fragment` (explicit IV, then the CBC body) as application data at sequence
    /// number 0 under these keys: whether MAC and padding both held.
    pub fn cbc_open(mac_key: &[u8; 32], enc_key: &[u8; 16], fragment: &[u8]) -> bool {
        let mut p = crate::record::Protector::Cbc {
            mac: shangmi::sm3::HmacSm3::new(mac_key),
            cipher: Box::new(shangmi::sm4::Sm4::new(enc_key)),
            seq: 0,
        };
        p.open(crate::record::APPLICATION_DATA, fragment).is_ok()
    }
}
