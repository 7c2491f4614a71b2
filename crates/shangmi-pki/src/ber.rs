//! BER as CMS senders write it (Java's BouncyCastle and Windows by default: indefinite
//! lengths, content octets in chunks), re-encoded as the DER the parsers read.
//!
//! Indefinite lengths become definite, long-form lengths minimal, and a constructed OCTET
//! STRING the primitive one holding its chunks. Nothing else changes: a DER input comes out
//! byte for byte as it went in, and what was signed (signed attributes, certificates) is DER
//! already in any sender that signs correctly. One implicitly tagged OCTET STRING is known by
//! its place: an EncryptedContentInfo (`SEQUENCE { OID, AlgorithmIdentifier, [0] }`) whose
//! encrypted content comes in chunks, as BouncyCastle's and Windows' EnvelopedData do.

use crate::Error;

/// Nesting deeper than any CMS message, where hostile input would recurse.
const MAX_DEPTH: usize = 48;

fn malformed(what: &str) -> Error {
    Error::Malformed(format!("BER: {what}"))
}

/// `input` (one BER element, nothing after it) as DER.
pub(crate) fn to_der(input: &[u8]) -> Result<Vec<u8>, Error> {
    let mut out = Vec::with_capacity(input.len());
    let used = element(input, 0, &mut out)?;
    if used != input.len() {
        return Err(malformed("data after the message"));
    }
    Ok(out)
}

/// The identifier octets at the start of `b`: (their length, constructed?).
fn identifier(b: &[u8]) -> Result<(usize, bool), Error> {
    let first = *b.first().ok_or_else(|| malformed("truncated"))?;
    let mut n = 1;
    if first & 0x1f == 0x1f {
        loop {
            let more = *b.get(n).ok_or_else(|| malformed("truncated tag"))?;
            n += 1;
            if more & 0x80 == 0 {
                break;
            }
            if n > 6 {
                return Err(malformed("tag number too long"));
            }
        }
    }
    Ok((n, first & 0x20 != 0))
}

/// The length octets at the start of `b`: (their length, the content length or None for the
/// indefinite form).
fn length(b: &[u8]) -> Result<(usize, Option<usize>), Error> {
    let first = *b.first().ok_or_else(|| malformed("truncated length"))?;
    if first < 0x80 {
        return Ok((1, Some(first as usize)));
    }
    if first == 0x80 {
        return Ok((1, None));
    }
    let n = (first & 0x7f) as usize;
    if n > 4 {
        return Err(malformed("length over 4 octets"));
    }
    let bytes = b
        .get(1..1 + n)
        .ok_or_else(|| malformed("truncated length"))?;
    let len = bytes.iter().fold(0usize, |acc, &x| (acc << 8) | x as usize);
    Ok((1 + n, Some(len)))
}

fn put_length(out: &mut Vec<u8>, len: usize) {
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes = len.to_be_bytes();
        let skip = bytes.iter().take_while(|&&x| x == 0).count();
        out.push(0x80 | (bytes.len() - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
}

/// Re-encodes the element at the start of `b` onto `out`; returns how much of `b` it took.
fn element(b: &[u8], depth: usize, out: &mut Vec<u8>) -> Result<usize, Error> {
    if depth > MAX_DEPTH {
        return Err(malformed("nested too deeply"));
    }
    let (tag_len, constructed) = identifier(b)?;
    let (len_len, len) = length(&b[tag_len..])?;
    let start = tag_len + len_len;
    let tag = &b[..tag_len];
    if !constructed {
        let len = len.ok_or_else(|| malformed("indefinite length on a primitive element"))?;
        let end = start.checked_add(len).filter(|&e| e <= b.len());
        let end = end.ok_or_else(|| malformed("truncated content"))?;
        out.extend_from_slice(tag);
        put_length(out, len);
        out.extend_from_slice(&b[start..end]);
        return Ok(end);
    }
    // The children, re-encoded; `limit` bounds them for the definite form.
    let limit = match len {
        Some(l) => start
            .checked_add(l)
            .filter(|&e| e <= b.len())
            .ok_or_else(|| malformed("truncated content"))?,
        None => b.len(),
    };
    let mut body = Vec::new();
    let mut pos = start;
    let mut chunks: Vec<(usize, usize)> = Vec::new();
    loop {
        if len.is_some() && pos == limit {
            break;
        }
        if len.is_none() && b.get(pos..pos + 2) == Some(&[0, 0]) {
            pos += 2;
            break;
        }
        if pos >= limit {
            return Err(malformed("missing end of contents"));
        }
        let before = body.len();
        pos += element(&b[pos..limit], depth + 1, &mut body)?;
        chunks.push((before, body.len()));
    }
    if tag == [0x24] {
        // A constructed OCTET STRING: DER has the primitive one with the chunks' contents.
        let mut content = Vec::new();
        for (from, to) in chunks {
            let chunk = &body[from..to];
            if chunk.first() != Some(&0x04) {
                return Err(malformed("an OCTET STRING chunk that is not one"));
            }
            let (hl, cl) = length(&chunk[1..])?;
            content.extend_from_slice(&chunk[1 + hl..1 + hl + cl.unwrap_or(0)]);
        }
        out.push(0x04);
        put_length(out, content.len());
        out.extend_from_slice(&content);
    } else {
        if tag == [0x30] {
            join_encrypted_content(&mut body, &chunks)?;
        }
        out.extend_from_slice(tag);
        put_length(out, body.len());
        out.extend_from_slice(&body);
    }
    Ok(pos)
}

/// The contents of a run of DER primitive OCTET STRINGs, or None if `b` is anything else.
fn octet_string_chunks(mut b: &[u8]) -> Result<Option<Vec<u8>>, Error> {
    let mut content = Vec::with_capacity(b.len());
    while !b.is_empty() {
        if b[0] != 0x04 {
            return Ok(None);
        }
        let (hl, cl) = length(&b[1..])?;
        let end = cl
            .and_then(|cl| (1 + hl).checked_add(cl))
            .filter(|&e| e <= b.len())
            .ok_or_else(|| malformed("truncated content"))?;
        content.extend_from_slice(&b[1 + hl..end]);
        b = &b[end..];
    }
    Ok(Some(content))
}

/// In a SEQUENCE's re-encoded `body` (children at `chunks`) shaped as an EncryptedContentInfo,
/// a constructed `[0]` of OCTET STRING chunks becomes the primitive `[0]` DER has. An
/// EncapsulatedContentInfo (`SEQUENCE { OID, [0] EXPLICIT OCTET STRING }`) has no
/// AlgorithmIdentifier before its `[0]` and so is left alone.
fn join_encrypted_content(body: &mut Vec<u8>, chunks: &[(usize, usize)]) -> Result<(), Error> {
    let [oid, alg, enc] = chunks else {
        return Ok(());
    };
    if body[oid.0] != 0x06 || body[alg.0] != 0x30 || body[enc.0] != 0xa0 {
        return Ok(());
    }
    let child = &body[enc.0..enc.1];
    let (hl, _) = length(&child[1..])?;
    let Some(content) = octet_string_chunks(&child[1 + hl..])? else {
        return Ok(());
    };
    let mut joined = Vec::with_capacity(body.len());
    joined.extend_from_slice(&body[..enc.0]);
    joined.push(0x80);
    put_length(&mut joined, content.len());
    joined.extend_from_slice(&content);
    *body = joined;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn der_passes_through_and_ber_becomes_der() {
        let der = [0x30, 0x06, 0x02, 0x01, 0x05, 0x04, 0x01, 0xaa];
        assert_eq!(to_der(&der).unwrap(), der);
        // Indefinite SEQUENCE holding a chunked OCTET STRING and a long-form length.
        let ber = [
            0x30, 0x80, 0x24, 0x80, 0x04, 0x01, 0xaa, 0x04, 0x02, 0xbb, 0xcc, 0x00, 0x00, 0x02,
            0x81, 0x01, 0x07, 0x00, 0x00,
        ];
        assert_eq!(
            to_der(&ber).unwrap(),
            [0x30, 0x08, 0x04, 0x03, 0xaa, 0xbb, 0xcc, 0x02, 0x01, 0x07]
        );
    }

    #[test]
    fn chunked_encrypted_content_is_joined_and_encapsulated_content_is_not() {
        // SEQUENCE { OID, SEQUENCE {}, [0] { 04 01 aa, 04 01 bb } }, indefinite.
        let eci = [
            0x30, 0x80, 0x06, 0x01, 0x2a, 0x30, 0x00, 0xa0, 0x80, 0x04, 0x01, 0xaa, 0x04, 0x01,
            0xbb, 0x00, 0x00, 0x00, 0x00,
        ];
        assert_eq!(
            to_der(&eci).unwrap(),
            [
                0x30, 0x09, 0x06, 0x01, 0x2a, 0x30, 0x00, 0x80, 0x02, 0xaa, 0xbb
            ]
        );
        // SEQUENCE { OID, [0] EXPLICIT OCTET STRING }: the [0] stays explicit.
        let encap = [0x30, 0x08, 0x06, 0x01, 0x2a, 0xa0, 0x03, 0x04, 0x01, 0xaa];
        assert_eq!(to_der(&encap).unwrap(), encap);
        // A fourth child means another structure: left as it is.
        let other = [
            0x30, 0x0c, 0x06, 0x01, 0x2a, 0x30, 0x00, 0xa0, 0x03, 0x04, 0x01, 0xaa, 0x05, 0x00,
        ];
        assert_eq!(to_der(&other).unwrap(), other);
    }

    #[test]
    fn hostile_ber_is_refused() {
        for bad in [
            &[0x30, 0x80][..],                           // no end of contents
            &[0x04, 0x80, 0x00, 0x00],                   // indefinite primitive
            &[0x30, 0x85, 1, 0, 0, 0, 0],                // five length octets
            &[0x30, 0x03, 0x02, 0x05, 0x00],             // child longer than its parent
            &[0x24, 0x80, 0x02, 0x01, 0x00, 0x00, 0x00], // chunk of another type
            &[0x1f, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01], // tag number too long
        ] {
            assert!(to_der(bad).is_err(), "{bad:02x?}");
        }
        let mut deep = [0x30, 0x80].repeat(100);
        deep.extend([0, 0].repeat(100));
        assert!(to_der(&deep).is_err());
    }
}
