//! `shangmi sm2 inspect` and `shangmi sm2 convert`: what a key, signature or ciphertext file
//! is, and the same contents in another layout or encoding. For a user holding a peer's bytes
//! who needs to see the format before fixing it.
//!
//! Inspecting never prints a private key and never needs a password; everything it says comes
//! from the structure (a ciphertext's C3 and the order of C3 and C2 can only be checked with
//! the private key, and it says so).

use clap::ValueEnum;
use shangmi::hex::decode_secret;
use shangmi::sm2::{self, Format, KeyFileError, Signature, SigningKey, VerifyingKey};
use zeroize::Zeroizing;

use super::forms::{SigForm, hex_line, hex_line_secret, looks_hex};

/// What the bytes of one file (or PEM block) can be, one line each.
fn describe_bytes(b: &[u8], out: &mut Vec<String>) {
    let before = out.len();
    if b.first() == Some(&0x30) {
        describe_der(b, out);
    }
    // Bare values start with 0x30 one time in 256: a private key, r or x may well.
    if out.len() == before {
        describe_bare(b, out);
    }
    if out.len() == before {
        out.push(format!(
            "none of the SM2 structures ({} bytes): not a key, signature or ciphertext",
            b.len()
        ));
    }
}

fn describe_der(b: &[u8], out: &mut Vec<String>) {
    match SigningKey::from_pkcs8_der(b) {
        Ok(_) => out.push("PKCS#8 private key (SM2)".into()),
        Err(KeyFileError::Malformed(_)) => {}
        Err(e) => out.push(format!("a PKCS#8 private key, refused: {e}")),
    }
    if sm2::is_encrypted_pkcs8_der(b) {
        out.push("encrypted PKCS#8 private key (PBES2; a password is needed to read it)".into());
    }
    match SigningKey::from_sec1_der(b) {
        Ok(_) => out.push("SEC1 ECPrivateKey (SM2)".into()),
        Err(KeyFileError::Malformed(_)) => {}
        Err(e) => out.push(format!("a SEC1 private key, refused: {e}")),
    }
    match VerifyingKey::from_public_key_der(b) {
        Ok(k) => out.push(format!(
            "SubjectPublicKeyInfo public key (SM2): {}",
            crate::fail::to_hex(&k.to_uncompressed())
        )),
        Err(KeyFileError::Malformed(_)) => {}
        Err(e) => out.push(format!("a SubjectPublicKeyInfo public key, refused: {e}")),
    }
    if let Ok(s) = Signature::from_der(b) {
        out.push(format!(
            "DER signature SEQUENCE {{ r, s }} ({} bytes; r || s = {})",
            b.len(),
            crate::fail::to_hex(&s.to_bytes())
        ));
    }
    if let Ok(raw) = sm2::convert(b, Format::Der, Format::C1C3C2, Default::default()) {
        out.push(format!(
            "DER ciphertext SEQUENCE {{ x, y, C3, C2 }} (GM/T 0009, OpenSSL): C1 on the curve, \
             C2 {} bytes; --format asn1",
            raw.len() - 97
        ));
    }
}

/// Whether 04 || xy is a point of the curve.
fn on_curve(xy: &[u8]) -> bool {
    xy.len() == 64 && VerifyingKey::from_sec1_bytes(&[&[4u8][..], xy].concat()).is_ok()
}

fn describe_bare(b: &[u8], out: &mut Vec<String>) {
    match b.len() {
        32 => out.push(
            if SigningKey::from_bytes(b.try_into().expect("32 bytes")).is_ok() {
                "32 bytes: a bare private key d (in range)".into()
            } else {
                "32 bytes, out of range for a private key".into()
            },
        ),
        64 => {
            if Signature::from_bytes(b).is_ok() {
                out.push("64 bytes: a raw signature r || s (both in range); --sig-form raw".into());
            }
            if on_curve(b) {
                out.push(
                    "64 bytes: a bare public key x || y on the curve (no 04, as gmssl writes)"
                        .into(),
                );
            }
        }
        65 if b[0] == 4 && on_curve(&b[1..]) => {
            out.push("65 bytes: an uncompressed public key 04 || x || y on the curve".into());
        }
        33 if matches!(b[0], 2 | 3) && VerifyingKey::from_sec1_bytes(b).is_ok() => {
            out.push("33 bytes: a compressed public key on the curve".into());
        }
        _ => {}
    }
    // Raw ciphertext layouts: C1, then C3 and C2 in an order only the key can tell.
    let order = "C1C3C2 or C1C2C3 (the order, and C3, need the private key)";
    if b.len() > 97 && b[0] == 4 && on_curve(&b[1..65]) {
        out.push(format!(
            "raw ciphertext {order}: C1 uncompressed, C2 {} bytes; --format c1c3c2 or c1c2c3",
            b.len() - 97
        ));
    }
    if b.len() > 65 && matches!(b[0], 2 | 3) && VerifyingKey::from_sec1_bytes(&b[..33]).is_ok() {
        out.push(format!(
            "raw ciphertext {order}: C1 compressed, C2 {} bytes; --format c1c3c2 or c1c2c3",
            b.len() - 65
        ));
    }
    if b.len() > 96 && b[0] != 4 && on_curve(&b[..64]) {
        out.push(format!(
            "raw ciphertext {order}: C1 without its 04 (sm-crypto, gmssl), C2 {} bytes; \
             --format c1c3c2 --no-prefix (or c1c2c3)",
            b.len() - 96
        ));
    }
}

/// The description of a whole file's contents.
pub fn describe(data: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(text) = std::str::from_utf8(data)
        && text.contains("-----BEGIN ")
    {
        match shangmi::pem::pem_blocks(text) {
            Ok(blocks) => {
                out.push(format!("PEM, {} block(s)", blocks.len()));
                for b in blocks {
                    let mut lines = Vec::new();
                    describe_bytes(&b.der, &mut lines);
                    out.extend(lines.into_iter().map(|l| format!("{}: {l}", b.label)));
                }
            }
            Err(e) => out.push(format!("PEM that cannot be read: {e}")),
        }
        return out;
    }
    if looks_hex(data) {
        let bytes = decode_secret(data).expect("checked hex");
        out.push(format!("hex text, {} digits, of:", bytes.len() * 2));
        let mut lines = Vec::new();
        describe_bytes(&bytes, &mut lines);
        out.extend(lines.into_iter().map(|l| format!("  {l}")));
        return out;
    }
    out.push(format!("binary, {} bytes:", data.len()));
    let mut lines = Vec::new();
    describe_bytes(data, &mut lines);
    out.extend(lines.into_iter().map(|l| format!("  {l}")));
    out
}

/// Private-key output forms for `convert key`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum KeyOut {
    /// PKCS#8 PEM.
    Pem,
    /// PKCS#8 DER.
    Der,
    /// SEC1 `EC PRIVATE KEY` PEM.
    Sec1,
    /// SEC1 DER.
    Sec1Der,
    /// d as 64 hex digits.
    Hex,
}

pub fn key_bytes(key: &SigningKey, to: KeyOut) -> Result<Zeroizing<Vec<u8>>, KeyFileError> {
    Ok(match to {
        KeyOut::Pem => Zeroizing::new(key.to_pkcs8_pem()?.as_bytes().to_vec()),
        KeyOut::Der => Zeroizing::new(key.to_pkcs8_der()?.to_vec()),
        KeyOut::Sec1 => Zeroizing::new(key.to_sec1_pem()?.as_bytes().to_vec()),
        KeyOut::Sec1Der => Zeroizing::new(key.to_sec1_der()?.to_vec()),
        KeyOut::Hex => hex_line_secret(&key.to_bytes()[..]),
    })
}

/// Public-key output forms for `convert pub`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PubOut {
    /// SubjectPublicKeyInfo PEM.
    Pem,
    /// SubjectPublicKeyInfo DER.
    Der,
    /// 04 || x || y in hex.
    Hex,
    /// x || y in hex, without the 04 (gmssl for Python).
    XyHex,
    /// The compressed point in hex.
    CompressedHex,
    /// 04 || x || y, 65 bytes.
    Raw,
}

pub fn pub_bytes(key: &VerifyingKey, to: PubOut) -> Result<Vec<u8>, KeyFileError> {
    let point = key.to_uncompressed();
    Ok(match to {
        PubOut::Pem => key.to_public_key_pem()?.into_bytes(),
        PubOut::Der => key.to_public_key_der()?,
        PubOut::Hex => hex_line(&point),
        PubOut::XyHex => hex_line(&point[1..]),
        PubOut::CompressedHex => hex_line(&key.to_sec1_bytes(true)),
        PubOut::Raw => point.to_vec(),
    })
}

/// A signature from one form into another.
pub fn convert_sig(data: &[u8], from: SigForm, to: SigForm) -> Option<Vec<u8>> {
    Some(to.encode(&from.decode(data)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_structure_is_named() {
        let key = SigningKey::from_bytes(&[0x11; 32]).unwrap();
        let public = key.verifying_key();
        let has = |data: &[u8], what: &str| {
            let d = describe(data).join("\n");
            assert!(d.contains(what), "{what} not in:\n{d}");
        };
        has(
            key.to_pkcs8_pem().unwrap().as_bytes(),
            "PRIVATE KEY: PKCS#8",
        );
        has(&key.to_sec1_der().unwrap(), "SEC1 ECPrivateKey");
        has(&public.to_public_key_der().unwrap(), "SubjectPublicKeyInfo");
        has(&public.to_uncompressed(), "uncompressed public key");
        has(&public.to_uncompressed()[1..], "bare public key x || y");
        has(&public.to_sec1_bytes(true), "compressed public key");
        has(
            b"1111111111111111111111111111111111111111111111111111111111111111\n",
            "hex text, 64 digits",
        );
        let sig = key.sign(b"m").unwrap();
        has(&sig.to_der(), "DER signature");
        has(&sig.to_bytes(), "raw signature r || s");
        let ct = public.encrypt(b"hello", Format::Der).unwrap();
        has(&ct, "DER ciphertext");
        let raw = public.encrypt(b"hello", Format::C1C3C2).unwrap();
        has(&raw, "C1 uncompressed, C2 5 bytes");
        has(&raw[1..], "C1 without its 04");
        has(&[7u8; 10], "none of the SM2 structures");
        let mut d_30 = [1u8; 32];
        d_30[0] = 0x30;
        has(&d_30, "a bare private key d");
        let mut sig_30 = sig.to_bytes();
        sig_30[0] = 0x30;
        has(&sig_30, "raw signature r || s");
        // The private key itself is never printed.
        let d = describe(key.to_pkcs8_pem().unwrap().as_bytes()).join("\n");
        assert!(!d.contains("1111111111"), "{d}");
    }
}
