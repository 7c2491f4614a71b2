//! Editing DER by hand, as tests need to make encodings no writer here makes: one element's
//! tag, contents and length, its children, and certificates re-signed with explicit DEFAULT
//! values. Test code: lengths up to 64 KiB, and a malformed input panics.

use shangmi::sm2::SigningKey;

/// One DER element's tag, contents and whole length.
pub fn tlv(der: &[u8]) -> (u8, &[u8], usize) {
    let (len, head) = match der[1] {
        n if n < 0x80 => (n as usize, 2),
        0x81 => (der[2] as usize, 3),
        0x82 => (((der[2] as usize) << 8) | der[3] as usize, 4),
        _ => panic!("length form"),
    };
    (der[0], &der[head..head + len], head + len)
}

/// One DER element of `tag` around `contents`.
pub fn encode(tag: u8, contents: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    match contents.len() {
        n if n < 0x80 => out.push(n as u8),
        n if n < 0x100 => out.extend([0x81, n as u8]),
        n => out.extend([0x82, (n >> 8) as u8, n as u8]),
    }
    out.extend_from_slice(contents);
    out
}

/// The elements inside `contents`, each whole.
pub fn children(mut contents: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    while !contents.is_empty() {
        let n = tlv(contents).2;
        out.push(contents[..n].to_vec());
        contents = &contents[n..];
    }
    out
}

/// A certificate (extensions under `[3]`) or CRL (under `[0]`) with `critical FALSE` written out
/// in every non-critical extension (as some CAs encode it; DER leaves the default out),
/// signed again by `issuer` over those bytes.
pub fn with_explicit_defaults(signed: &[u8], issuer: &SigningKey, extensions_tag: u8) -> Vec<u8> {
    let parts = children(tlv(signed).1);
    let mut fields = children(tlv(&parts[0]).1);
    let last = fields.len() - 1;
    assert_eq!(fields[last][0], extensions_tag, "extensions are last");
    let exts = children(tlv(tlv(&fields[last]).1).1)
        .into_iter()
        .map(|ext| {
            let f = children(tlv(&ext).1);
            if f.len() == 2 {
                encode(
                    0x30,
                    &[f[0].clone(), vec![0x01, 0x01, 0x00], f[1].clone()].concat(),
                )
            } else {
                ext
            }
        })
        .collect::<Vec<_>>()
        .concat();
    fields[last] = encode(extensions_tag, &encode(0x30, &exts));
    let tbs = encode(0x30, &fields.concat());
    let sig = issuer.sign(&tbs).unwrap().to_der();
    encode(
        0x30,
        &[
            tbs,
            parts[1].clone(),
            encode(0x03, &[&[0u8][..], &sig].concat()),
        ]
        .concat(),
    )
}
