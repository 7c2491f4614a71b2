//! shangmi-gateway as its users run it: the binary on a configuration file, an HTTP back end
//! behind it, and TLCP, RFC 8998 and international TLS clients on one port.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::*;
use shangmi_tlcp::Suite;

/// A configuration with one listener on a free port and one site serving all three protocols
/// to `upstream`; `site_extra` goes into the site's table.
fn config(dir: &Path, upstream: &str, site_extra: &str) -> PathBuf {
    let text = format!(
        r#"[admin]
listen = "127.0.0.1:0"

[limits]
handshake_timeout = 3
idle_timeout = 5
connect_timeout = 1

[log]
access = "stderr"

[[listener]]
listen = "127.0.0.1:0"

[[listener.site]]
server_names = ["localhost"]
upstream = [{upstream}]
tlcp = {{ sign_cert = "ss.pem", sign_key = "ss.key", enc_cert = "se.pem", enc_key = "se.key" }}
sm2 = {{ cert = "sm2.pem", key = "sm2.key" }}
international = [ {{ cert = "ecdsa.pem", key = "ecdsa.key" }}, {{ cert = "rsa.pem", key = "rsa.key" }} ]
{site_extra}
"#
    );
    let path = dir.join("gateway.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn http(port: u16) -> String {
    format!("\"http://127.0.0.1:{port}\"")
}

fn tlcp_get(dir: &Path, port: u16, suite: Suite, certs: bool) -> String {
    let c = tlcp_client(dir, &[suite], certs);
    let s = shangmi_tlcp::Stream::client(c, "localhost", tcp(port)).unwrap();
    get(s, "X-SM-Protocol: forged\r\nX-Forwarded-For: 10.9.9.9\r\n")
}

#[test]
fn one_port_answers_tlcp_rfc8998_and_international_tls() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    pki(d);
    let backend = Backend::start("backend-a");
    let gw = Gateway::start(&config(d, &http(backend.port), ""), 1, true);
    let port = gw.port();

    for suite in [Suite::EccSm4GcmSm3, Suite::EccSm4CbcSm3] {
        let r = tlcp_get(d, port, suite, false);
        assert!(r.starts_with("HTTP/1.1 200"), "{r}");
        assert!(
            r.contains(&format!("x-sm-protocol: TLCP {}", suite.name())),
            "{r}"
        );
        assert!(r.contains("x-forwarded-for: 127.0.0.1\r\n"), "{r}");
        assert!(r.contains("x-forwarded-proto: https"), "{r}");
        assert!(
            !r.contains("forged") && !r.contains("10.9.9.9"),
            "client headers passed: {r}"
        );
        assert!(r.contains("GET /hello?x=1 HTTP/1.1"), "{r}");
    }

    for (suite, name) in [
        (shangmi_rustls::TLS13_SM4_GCM_SM3, "TLS_SM4_GCM_SM3"),
        (shangmi_rustls::TLS13_SM4_CCM_SM3, "TLS_SM4_CCM_SM3"),
    ] {
        let r = get(rustls_stream(sm_client_with(d, false, &[suite]), port), "");
        assert!(r.contains(&format!("x-sm-protocol: TLSv1.3 {name}")), "{r}");
    }

    for (version, want) in [
        (&rustls::version::TLS13, "x-sm-protocol: TLSv1.3 TLS_AES_"),
        (
            &rustls::version::TLS12,
            "x-sm-protocol: TLSv1.2 TLS_ECDHE_ECDSA_WITH_",
        ),
    ] {
        let r = get(rustls_stream(intl_client(d, version), port), "");
        assert!(r.contains(want), "{r}");
    }

    let (status, metrics) = gw.admin("GET", "/metrics");
    assert_eq!(status, 200);
    for want in [
        r#"shangmi_gateway_handshakes_total{protocol="TLCP",suite="ECC_SM4_GCM_SM3",outcome="ok"} 1"#,
        r#"shangmi_gateway_handshakes_total{protocol="TLSv1.3",suite="TLS_SM4_CCM_SM3",outcome="ok"} 1"#,
        r#"shangmi_gateway_handshakes_total{protocol="TLSv1.2","#,
        r#"shangmi_gateway_requests_total{protocol="TLCP",status="200"} 2"#,
        "shangmi_gateway_handshake_seconds_count 6",
    ] {
        assert!(metrics.contains(want), "{want} not in\n{metrics}");
    }
    assert_eq!(gw.admin("GET", "/healthz"), (200, "ok\n".into()));
    assert!(gw.wait_log(r#""status":200"#, Duration::from_secs(2)));
}
