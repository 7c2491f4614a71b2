//! The tokio stream (the `tokio` feature): a client and a server over an in-memory duplex
//! pipe of a few bytes, so every record crosses in pieces and every write waits on the reader.
#![cfg(feature = "tokio")]

use std::sync::Arc;

use der::Encode;
use shangmi::sm2::SigningKey;
use shangmi_pki::Issue;
use shangmi_tlcp::{AsyncStream, ClientConfig, Identity, ServerConfig, Suite};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use x509_cert::ext::pkix::{KeyUsage, KeyUsages};

fn identity(ca: &shangmi_pki::Cert, ca_key: &SigningKey, usage: KeyUsages) -> Identity {
    let key = SigningKey::random().unwrap();
    let csr = shangmi_pki::request(&key, "/CN=localhost", &[]).unwrap();
    let issue = Issue {
        key_usage: Some(KeyUsage(usage.into())),
        san: vec!["DNS:localhost".into()],
        ..Issue::leaf(2)
    };
    let cert = shangmi_pki::sign_request(&csr, ca, ca_key, &issue).unwrap();
    Identity::new(vec![cert.to_der().unwrap()], key).unwrap()
}

#[tokio::test]
async fn a_client_and_a_server_talk_through_a_narrow_pipe() {
    let ca_key = SigningKey::random().unwrap();
    let ca = shangmi_pki::self_signed(&ca_key, "/CN=async CA", &Issue::ca(2)).unwrap();
    let server = Arc::new(
        ServerConfig::new(
            identity(&ca, &ca_key, KeyUsages::DigitalSignature),
            identity(&ca, &ca_key, KeyUsages::KeyEncipherment),
        )
        .unwrap(),
    );
    let client = Arc::new(ClientConfig::new(vec![ca]).with_suites(&[Suite::ECC_SM4_GCM_SM3]));
    let (a, b) = tokio::io::duplex(7);
    let serving = tokio::spawn(async move {
        let mut s = AsyncStream::server(server, b);
        s.handshake().await.unwrap();
        let mut got = vec![0u8; 100_000];
        s.read_exact(&mut got).await.unwrap();
        s.write_all(&got).await.unwrap();
        s.shutdown().await.unwrap();
    });
    let mut c = AsyncStream::client(client, "localhost", a).unwrap();
    let agreed = c.handshake().await.unwrap();
    assert_eq!(agreed.suite, Suite::ECC_SM4_GCM_SM3);
    let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7) as u8).collect();
    let (mut r, mut w) = tokio::io::split(c);
    // Queued records go out as the stream is polled again: a writer flushes at the end, as
    // with tokio-rustls.
    let writing = tokio::spawn(async move {
        w.write_all(&data).await?;
        w.flush().await.map(|()| data)
    });
    let mut back = Vec::new();
    r.read_to_end(&mut back).await.unwrap();
    let data = writing.await.unwrap().unwrap();
    assert_eq!(back, data);
    serving.await.unwrap();
}
