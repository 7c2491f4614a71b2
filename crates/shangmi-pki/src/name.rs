//! Whether a certificate is for the host a client asked for: one check that TLCP, RFC 8998
//! and the gateway share.
//!
//! The subject alternative name decides when it holds DNS names or IP addresses; a
//! certificate with neither is matched on its common name (TLCP certificates often carry
//! only that), read from the name's attributes, never from its text form (where a quoted
//! value can hold "CN=" of its own). A host that is an IP address matches only an IP address
//! entry or a common name that is exactly its text: DNS wildcards never apply to it.

use std::net::IpAddr;

use der::asn1::Ia5StringRef;
use x509_cert::Certificate;
use x509_cert::ext::pkix::SubjectAltName;
use x509_cert::ext::pkix::name::{DirectoryString, GeneralName};

use crate::{Error, Rule};

use crate::oid::COMMON_NAME;

/// Checks that `cert` is for `host`: a DNS name (any case, a trailing dot ignored) or an IP
/// address in its usual text form (an IPv6 address with or without brackets). The error names
/// the certificate and what it is for instead.
pub fn check_host(cert: &Certificate, host: &str) -> Result<(), Error> {
    let host = host.strip_suffix('.').unwrap_or(host);
    let ip = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host)
        .parse::<IpAddr>()
        .ok();
    let refuse = |what: String| {
        Err(Error::Chain {
            subject: cert.tbs_certificate().subject().to_string(),
            rule: Rule::Name,
            detail: format!("not for {host}: {what}"),
        })
    };
    let san = cert
        .tbs_certificate()
        .get_extension::<SubjectAltName>()
        .map_err(|e| Error::Malformed(format!("subject alternative name: {e}")))?;
    let mut listed = Vec::new();
    for name in san.iter().flat_map(|(_, san)| san.0.iter()) {
        match name {
            GeneralName::DnsName(d) => {
                if ip.is_none() && dns_matches(d.as_str(), host) {
                    return Ok(());
                }
                listed.push(d.as_str().to_string());
            }
            GeneralName::IpAddress(a) => {
                let theirs = ip_of(a.as_bytes());
                if ip.is_some() && theirs == ip {
                    return Ok(());
                }
                listed.push(
                    theirs.map_or_else(|| "a malformed IP address".into(), |a| a.to_string()),
                );
            }
            _ => {}
        }
    }
    if !listed.is_empty() {
        return refuse(format!("its alternative names are {}", listed.join(", ")));
    }
    let cn = match common_name(cert)? {
        Some(cn) => cn,
        None => return refuse("it has no alternative name and no common name".into()),
    };
    let ok = match ip {
        Some(ip) => cn.parse::<IpAddr>().ok() == Some(ip),
        None => dns_matches(&cn, host),
    };
    if ok {
        Ok(())
    } else {
        refuse(format!("its common name is {cn}"))
    }
}

/// The subject's common name: none, or the one value every CN attribute holds (several that
/// differ are refused, as no client can know which one the CA vouched for).
fn common_name(cert: &Certificate) -> Result<Option<String>, Error> {
    let mut found: Option<String> = None;
    for atv in cert
        .tbs_certificate()
        .subject()
        .iter()
        .filter(|a| a.oid == COMMON_NAME)
    {
        let value = if let Ok(s) = DirectoryString::try_from(&atv.value) {
            s.value().into_owned()
        } else if let Ok(s) = Ia5StringRef::try_from(&atv.value) {
            s.as_str().to_string()
        } else {
            return Err(Error::Malformed(
                "a common name that is not a string".into(),
            ));
        };
        match &found {
            Some(f) if *f != value => {
                return Err(Error::Chain {
                    subject: cert.tbs_certificate().subject().to_string(),
                    rule: Rule::Name,
                    detail: "several different common names".into(),
                });
            }
            _ => found = Some(value),
        }
    }
    Ok(found)
}

fn ip_of(bytes: &[u8]) -> Option<IpAddr> {
    match bytes.len() {
        4 => <[u8; 4]>::try_from(bytes).ok().map(IpAddr::from),
        16 => <[u8; 16]>::try_from(bytes).ok().map(IpAddr::from),
        _ => None,
    }
}

/// RFC 6125's matching: labels compared without case; a wildcard only as the whole leftmost
/// label of a pattern with at least two labels after it, standing for exactly one label.
fn dns_matches(pattern: &str, host: &str) -> bool {
    let pattern = pattern.strip_suffix('.').unwrap_or(pattern);
    if pattern.is_empty() || host.is_empty() {
        return false;
    }
    match pattern.strip_prefix("*.") {
        Some(rest) => {
            rest.contains('.')
                && !rest.contains('*')
                && host
                    .split_once('.')
                    .is_some_and(|(head, tail)| !head.is_empty() && tail.eq_ignore_ascii_case(rest))
        }
        None => !pattern.contains('*') && pattern.eq_ignore_ascii_case(host),
    }
}

#[cfg(test)]
mod tests {
    use super::dns_matches;

    #[test]
    fn wildcards_stand_for_one_leftmost_label() {
        assert!(dns_matches("*.example.com", "www.Example.COM"));
        assert!(!dns_matches("*.example.com", "example.com"));
        assert!(!dns_matches("*.example.com", "a.b.example.com"));
        assert!(!dns_matches("*.com", "example.com"));
        assert!(!dns_matches("w*.example.com", "www.example.com"));
        assert!(!dns_matches("www.*.com", "www.example.com"));
        assert!(dns_matches("example.com.", "example.com"));
        assert!(!dns_matches("", ""));
    }
}
