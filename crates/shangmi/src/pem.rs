//! Reading PEM the way RFC 7468 asks readers to (its "lax" parser): text before, between and
//! after blocks is ignored (`openssl pkcs12` bag attributes, `openssl pkey -text` dumps), the
//! base64 may come on one line or in lines of any length (Java's MIME encoder writes 76), with
//! spaces, tabs and CRLF anywhere, and a file may hold several blocks, of which the reader takes
//! the one of the type it needs. What is strict: the base64 itself (alphabet and padding), and
//! an END line that names its BEGIN's label.
//!
//! The body of a private-key block encodes the key, so it is gathered and decoded in buffers
//! that are wiped when dropped.

use zeroize::Zeroizing;

use crate::sm2::KeyFileError;

/// One PEM block: its label and its decoded contents (wiped when dropped: it may be a key).
pub struct PemBlock {
    /// The label of its BEGIN and END lines, e.g. `PRIVATE KEY`.
    pub label: String,
    /// The base64 body, decoded.
    pub der: Zeroizing<Vec<u8>>,
}

fn begin_label(line: &str) -> Option<&str> {
    line.strip_prefix("-----BEGIN ")?.strip_suffix("-----")
}

fn end_label(line: &str) -> Option<&str> {
    line.strip_prefix("-----END ")?.strip_suffix("-----")
}

/// Every PEM block in `text`, in order, read as leniently as described above; an error for a
/// block without its END line, an END that names another label, or a body that is not
/// base64.
pub fn pem_blocks(text: &str) -> Result<Vec<PemBlock>, KeyFileError> {
    let mut out = Vec::new();
    let mut lines = text.lines().map(str::trim);
    while let Some(line) = lines.next() {
        let Some(label) = begin_label(line) else {
            continue;
        };
        // Sized once (the text bounds the body): growing would free copies of a key's base64
        // unwiped.
        let mut body = Zeroizing::new(String::with_capacity(text.len()));
        let mut closed = false;
        let mut first = true;
        for line in lines.by_ref() {
            if let Some(end) = end_label(line) {
                if end != label {
                    return Err(KeyFileError::Malformed(
                        "a PEM END line names another label than its BEGIN",
                    ));
                }
                closed = true;
                break;
            }
            // RFC 1421 headers come first in a block: OpenSSL's legacy encrypted keys.
            if first && line.contains(':') {
                if line.starts_with("Proc-Type:") && line.contains("ENCRYPTED") {
                    return Err(KeyFileError::Unsupported(
                        "OpenSSL's legacy encrypted PEM (Proc-Type: 4,ENCRYPTED); convert it \
                         to encrypted PKCS#8 with `openssl pkcs8 -topk8`"
                            .into(),
                    ));
                }
                // Other headers (and the blank line after them) carry nothing needed.
                continue;
            }
            first = false;
            body.extend(line.chars().filter(|c| !c.is_ascii_whitespace()));
        }
        if !closed {
            return Err(KeyFileError::Malformed("a PEM block has no END line"));
        }
        let der = decode_base64(&body)?;
        out.push(PemBlock {
            label: label.to_string(),
            der,
        });
    }
    Ok(out)
}

fn decode_base64(body: &str) -> Result<Zeroizing<Vec<u8>>, KeyFileError> {
    use base64ct::Encoding;
    let mut buf = Zeroizing::new(vec![0u8; body.len() / 4 * 3 + 3]);
    let n = base64ct::Base64::decode(body.as_bytes(), &mut buf)
        .map_err(|_| KeyFileError::Malformed("the PEM body is not valid base64"))?
        .len();
    buf.truncate(n);
    Ok(buf)
}

/// The one block of `text` whose label is in `wanted`, as `(label, contents)`. No block at all,
/// blocks of other types only, and two blocks of a wanted type each get their own error.
pub(crate) fn select(
    text: &str,
    wanted: &[&str],
) -> Result<(String, Zeroizing<Vec<u8>>), KeyFileError> {
    let all = pem_blocks(text)?;
    if all.is_empty() {
        return Err(KeyFileError::Malformed(
            "no PEM block (a -----BEGIN ...----- line) in the text",
        ));
    }
    let labels: Vec<String> = all.iter().map(|b| b.label.clone()).collect();
    let mut matching = all
        .into_iter()
        .filter(|b| wanted.contains(&b.label.as_str()));
    match (matching.next(), matching.next()) {
        (Some(b), None) => Ok((b.label, b.der)),
        (Some(_), Some(_)) => Err(KeyFileError::Malformed(
            "several PEM blocks of the wanted type in one file: give one",
        )),
        (None, _) => Err(KeyFileError::UnexpectedLabel(labels.join("\", \""))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const B64: &str = "MFkwEwYHKoZIzj0CAQYIKoEcz1UBgi0DQgAE";

    fn expected() -> Vec<u8> {
        use base64ct::Encoding;
        base64ct::Base64::decode_vec(B64).unwrap()
    }

    #[test]
    fn lax_layouts_are_read() {
        let wrapped: String = B64
            .as_bytes()
            .chunks(5)
            .map(|c| format!("{}\r\n", std::str::from_utf8(c).unwrap()))
            .collect();
        for text in [
            format!("-----BEGIN PUBLIC KEY-----\n{B64}\n-----END PUBLIC KEY-----\n"),
            format!(
                "Bag Attributes\n    localKeyID: 01\n-----BEGIN PUBLIC KEY-----\n{B64}\n-----END PUBLIC KEY-----\nPublic-Key: (256 bit)\n"
            ),
            format!("-----BEGIN PUBLIC KEY-----\r\n{wrapped}-----END PUBLIC KEY-----"),
            format!("  -----BEGIN PUBLIC KEY-----  \n {B64} \t\n-----END PUBLIC KEY-----"),
            format!(
                "-----BEGIN PRIVATE KEY-----\n{B64}\n-----END PRIVATE KEY-----\n-----BEGIN PUBLIC KEY-----\n{B64}\n-----END PUBLIC KEY-----\n"
            ),
        ] {
            let (label, der) = select(&text, &["PUBLIC KEY"]).unwrap();
            assert_eq!(label, "PUBLIC KEY");
            assert_eq!(der.as_slice(), expected().as_slice(), "{text}");
        }
    }

    #[test]
    fn each_mistake_has_its_error() {
        let one = format!("-----BEGIN PUBLIC KEY-----\n{B64}\n-----END PUBLIC KEY-----\n");
        assert!(matches!(
            select("just text", &["PUBLIC KEY"]),
            Err(KeyFileError::Malformed(m)) if m.contains("no PEM block")
        ));
        assert_eq!(
            select(&one, &["PRIVATE KEY"]).err(),
            Some(KeyFileError::UnexpectedLabel("PUBLIC KEY".into()))
        );
        assert!(matches!(
            select(&format!("{one}{one}"), &["PUBLIC KEY"]),
            Err(KeyFileError::Malformed(m)) if m.contains("several")
        ));
        for broken in [
            format!("-----BEGIN PUBLIC KEY-----\n{B64}\n"),
            format!("-----BEGIN PUBLIC KEY-----\n{B64}\n-----END PRIVATE KEY-----\n"),
            "-----BEGIN PUBLIC KEY-----\nMFk*\n-----END PUBLIC KEY-----\n".to_string(),
            "-----BEGIN PUBLIC KEY-----\nMFk\n-----END PUBLIC KEY-----\n".to_string(),
        ] {
            assert!(
                matches!(
                    select(&broken, &["PUBLIC KEY"]),
                    Err(KeyFileError::Malformed(_))
                ),
                "{broken}"
            );
        }
        let legacy = "-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\nAAAA\n-----END EC PRIVATE KEY-----\n";
        assert!(matches!(
            select(legacy, &["EC PRIVATE KEY"]),
            Err(KeyFileError::Unsupported(m)) if m.contains("pkcs8")
        ));
    }
}
