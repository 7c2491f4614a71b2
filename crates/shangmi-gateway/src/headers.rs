//! A request's headers as the upstream gets them: only the gateway says who the client is.
//!
//! Removed from every request: hop-by-hop headers (and those `Connection` names); every header
//! a proxy or a TLS terminator uses to tell an upstream about the client (`Forwarded`,
//! `X-Forwarded-*`, `X-Real-IP`, `X-SM-*`, `X-Client-Cert`, `X-Client-Verify` and their kin,
//! `X-SSL-*`, `SSL-Client-*`), whatever their case; and names with an underscore (dropped, or the request refused), because
//! WSGI, CGI and Rack servers read `X_SM_Client_Subject` and `X-SM-Client-Subject` as one
//! variable. Refused with 400: a second Host, an HTTP/1.1 request without one, an HTTP/2
//! `:authority` and `Host` that disagree, and a `Connection` that names Host or a header the
//! gateway writes (it would delete them on the next hop). Then the gateway writes its own.

use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::{Uri, Version};

use crate::config::Underscores;
use crate::state::Session;

/// Connection-level headers: meaningful on one hop only (RFC 9110 section 7.6.1).
const HOP: [HeaderName; 8] = [
    header::CONNECTION,
    HeaderName::from_static("keep-alive"),
    HeaderName::from_static("proxy-connection"),
    header::PROXY_AUTHENTICATE,
    header::PROXY_AUTHORIZATION,
    header::TE,
    header::TRAILER,
    header::TRANSFER_ENCODING,
];

/// Prefixes (of lower-case names) of the headers only the gateway may write: what proxies
/// and TLS terminators (nginx, Envoy, Apache, F5, HAProxy) pass client identities in.
/// `X-Client-Id` and the like are an application's own and pass.
const OWNED_PREFIXES: [&str; 12] = [
    "x-forwarded-",
    "x-sm-",
    "x-real-ip",
    "x-ssl-",
    "ssl-client-",
    "x-client-cert",
    "x-client-verify",
    "x-client-dn",
    "x-client-subject",
    "x-client-issuer",
    "x-client-serial",
    "x-client-fingerprint",
];

/// Whether a client may not send the header `name` (lower case, as hyper keeps names).
pub fn gateway_owned(name: &str) -> bool {
    name == "forwarded" || OWNED_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// The tokens of every `Connection` header, lower case.
fn connection_tokens(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty())
        .collect()
}

/// Removes hop-by-hop headers, and those `Connection` names.
pub fn strip_hop(headers: &mut HeaderMap) {
    let listed: Vec<HeaderName> = connection_tokens(headers)
        .iter()
        .filter_map(|n| HeaderName::from_bytes(n.as_bytes()).ok())
        .collect();
    for n in listed.iter().chain(HOP.iter()) {
        headers.remove(n);
    }
    headers.remove(header::UPGRADE);
}

/// The host a request names (lower case, without its port), from `Host` or the HTTP/2
/// authority; or why the request is refused.
pub fn host(
    version: Version,
    uri: &Uri,
    headers: &HeaderMap,
) -> Result<Option<String>, &'static str> {
    let mut hosts = headers.get_all(header::HOST).iter();
    let host = hosts.next();
    if hosts.next().is_some() {
        return Err("two Host headers");
    }
    let host = match host {
        Some(h) => Some(h.to_str().map_err(|_| "a Host that is not text")?),
        None => None,
    };
    let authority = uri.authority().map(|a| a.as_str());
    let named = match (host, authority) {
        (Some(h), Some(a)) if !h.eq_ignore_ascii_case(a) => {
            return Err("a Host that is not the request's authority");
        }
        (Some(h), _) => Some(h),
        (None, Some(a)) => Some(a),
        (None, None) if version == Version::HTTP_11 => return Err("no Host"),
        (None, None) => None,
    };
    Ok(named.map(|n| without_port(n).to_ascii_lowercase()))
}

/// `example.cn:8443` → `example.cn`, `[::1]:8443` → `::1`.
fn without_port(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match authority.rsplit_once(':') {
        Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => authority,
    }
}

/// Makes the client's headers safe to pass on (see the module's notes); the reason when the
/// request must be refused instead.
pub fn clean(headers: &mut HeaderMap, underscores: Underscores) -> Result<(), &'static str> {
    for t in connection_tokens(headers) {
        if t == "host" || gateway_owned(&t) {
            return Err("a Connection header that names Host or a header the gateway writes");
        }
    }
    let doomed: Vec<HeaderName> = headers
        .keys()
        .filter(|n| gateway_owned(n.as_str()) || n.as_str().contains('_'))
        .cloned()
        .collect();
    for n in doomed {
        if n.as_str().contains('_') && underscores == Underscores::Refuse {
            return Err("a header name with an underscore");
        }
        headers.remove(&n);
    }
    strip_hop(headers);
    Ok(())
}

/// A header value from any text: bytes outside visible ASCII written as `\xNN`.
pub fn header_value(s: &str) -> HeaderValue {
    HeaderValue::from_str(s).unwrap_or_else(|_| {
        let escaped: String = s
            .bytes()
            .map(|b| {
                if (0x20..0x7f).contains(&b) && b != b'\\' {
                    (b as char).to_string()
                } else {
                    format!("\\x{b:02x}")
                }
            })
            .collect();
        HeaderValue::from_str(&escaped).unwrap_or(HeaderValue::from_static("-"))
    })
}

/// Writes what the gateway tells the upstream about the client: its address, how it
/// connected, the server name it asked for, and its certificate when it presented one.
pub fn write_ours(headers: &mut HeaderMap, s: &Session) {
    headers.insert("x-forwarded-for", header_value(&s.client.ip().to_string()));
    headers.insert("x-forwarded-proto", HeaderValue::from_static("https"));
    headers.insert("x-sm-protocol", header_value(&s.header()));
    if let Some(sni) = &s.sni {
        headers.insert("x-sm-server-name", header_value(sni));
    }
    if let Some(id) = &s.client_identity {
        headers.insert("x-sm-client-subject", header_value(&id.subject));
        headers.insert("x-sm-client-cert", header_value(&id.header()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        h
    }

    #[test]
    fn every_spelling_of_an_identity_header_is_removed() {
        let mut h = map(&[
            ("X_SM_Client_Subject", "CN=admin"),
            ("x-sm-client-subject", "CN=admin"),
            ("X-Forwarded_For", "10.0.0.1"),
            ("X-Forwarded-Host", "evil"),
            ("Forwarded", "for=10.0.0.1"),
            ("X-Real-IP", "10.0.0.1"),
            ("X-Client-Cert", "x"),
            ("X-SSL-Client-DN", "x"),
            ("SSL-Client-Verify", "SUCCESS"),
            ("Accept", "*/*"),
            ("X-Request-Id", "7"),
            ("X-Client-Id", "app-7"),
        ]);
        clean(&mut h, Underscores::Drop).unwrap();
        let mut left: Vec<&str> = h.keys().map(|k| k.as_str()).collect();
        left.sort_unstable();
        assert_eq!(left, ["accept", "x-client-id", "x-request-id"]);
        let mut h = map(&[("X_Anything", "1")]);
        assert!(clean(&mut h, Underscores::Refuse).is_err());
    }

    #[test]
    fn connection_may_not_delete_what_the_gateway_writes() {
        for bad in ["host", "close, X-SM-Client-Subject", "x-forwarded-for"] {
            let mut h = map(&[("Connection", bad)]);
            assert!(clean(&mut h, Underscores::Drop).is_err(), "{bad}");
        }
        let mut h = map(&[("Connection", "keep-alive, x-trace"), ("x-trace", "1")]);
        clean(&mut h, Underscores::Drop).unwrap();
        assert!(h.is_empty());
    }

    #[test]
    fn host_is_one_and_agrees_with_the_authority() {
        let uri: Uri = "/".parse().unwrap();
        let h = |v: &[(&str, &str)]| host(Version::HTTP_11, &uri, &map(v));
        assert_eq!(
            h(&[("Host", "Example.CN:8443")]),
            Ok(Some("example.cn".into()))
        );
        assert_eq!(h(&[("Host", "[::1]:443")]), Ok(Some("::1".into())));
        assert!(h(&[("Host", "a"), ("Host", "b")]).is_err());
        assert!(h(&[]).is_err());
        let h2: Uri = "https://a.example.cn/x".parse().unwrap();
        let h = |v: &[(&str, &str)]| host(Version::HTTP_2, &h2, &map(v));
        assert_eq!(h(&[]), Ok(Some("a.example.cn".into())));
        assert!(h(&[("Host", "b.example.cn")]).is_err());
    }
}
