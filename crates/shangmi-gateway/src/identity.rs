//! Who the client is, as its verified certificate says: read once per connection from the
//! leaf its handshake verified (for TLCP, the signing certificate), and written to the
//! upstream in forms it can rely on. `X-SM-Client-Subject` is the subject in RFC 4514 form
//! (special characters escaped as RFC 4514 says, so `O="Evil, CN=victim"` cannot read as two
//! attributes); `X-SM-Client-Cert` carries, in the manner of Envoy's
//! `x-forwarded-client-cert`, the certificate's SHA-256 fingerprint (what `openssl x509
//! -fingerprint -sha256` prints, without colons), its serial number and its subject and issuer
//! quoted: `Hash=...;Serial=...;Subject="...";Issuer="..."`.

use sha2::{Digest, Sha256};

/// A client certificate's identity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientIdentity {
    /// The subject, RFC 4514.
    pub subject: String,
    /// The issuer, RFC 4514.
    pub issuer: String,
    /// The serial number, hex (lower case, as encoded).
    pub serial: String,
    /// SHA-256 of the certificate's DER, hex (lower case).
    pub sha256: String,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `s` as a quoted string: `"` and `\` escaped with a backslash.
fn quoted(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            q.push('\\');
        }
        q.push(c);
    }
    q.push('"');
    q
}

impl ClientIdentity {
    /// The identity of the certificate `der`; `None` when it does not parse (it was verified,
    /// so it does).
    pub fn of(der: &[u8]) -> Option<ClientIdentity> {
        let c = <shangmi_pki::Certificate as der::Decode>::from_der(der).ok()?;
        let tbs = c.tbs_certificate();
        Some(ClientIdentity {
            subject: tbs.subject().to_string(),
            issuer: tbs.issuer().to_string(),
            serial: hex(tbs.serial_number().as_bytes()),
            sha256: hex(&Sha256::digest(der)),
        })
    }

    /// The `X-SM-Client-Cert` value.
    pub fn header(&self) -> String {
        format!(
            "Hash={};Serial={};Subject={};Issuer={}",
            self.sha256,
            self.serial,
            quoted(&self.subject),
            quoted(&self.issuer)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_cannot_be_closed_from_inside() {
        assert_eq!(quoted(r#"CN=a\"b"#), r#""CN=a\\\"b""#);
        let id = ClientIdentity {
            subject: r#"O=Evil\, CN\=x";Hash=00"#.into(),
            issuer: "CN=CA".into(),
            serial: "01".into(),
            sha256: "ab".into(),
        };
        let h = id.header();
        assert!(h.starts_with("Hash=ab;Serial=01;Subject=\""), "{h}");
        // The only unescaped quotes are the four that delimit the two strings.
        let bytes = h.as_bytes();
        let bare = (0..bytes.len())
            .filter(|&i| bytes[i] == b'"' && (i == 0 || bytes[i - 1] != b'\\'))
            .count();
        assert_eq!(bare, 4, "{h}");
    }
}
