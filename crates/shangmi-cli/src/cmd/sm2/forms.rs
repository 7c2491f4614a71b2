//! The encodings other SM2 tools exchange, and the hints that name a format mistake.
//!
//! The JavaScript and Python SM libraries pass keys, signatures and ciphertexts as hex text:
//! `d` as 64 digits, public keys as `04 || x || y` or bare `x || y`, signatures as `r || s`,
//! ciphertexts with C1 written without its `04`. Each form is chosen by an option, never
//! guessed for signatures and ciphertexts; when a check then fails, a structural look at the
//! input says which option it probably needed (on stderr; the verdict and exit status are what
//! they would be anyway).

use clap::ValueEnum;
use shangmi::sm2::{self, Signature};
use zeroize::Zeroizing;

/// Hex text: ASCII whitespace anywhere (a trailing newline, wrapped lines) is skipped.
fn hex_digits(text: &[u8]) -> Zeroizing<Vec<u8>> {
    Zeroizing::new(
        text.iter()
            .copied()
            .filter(|c| !c.is_ascii_whitespace())
            .collect(),
    )
}

/// Decodes hex text without branching on its digits (it may be a private key): the
/// library's reader for secrets.
use shangmi::hex::decode_secret;

/// Whether `data` is hex text (public data: a quick look, not constant time).
pub fn looks_hex(data: &[u8]) -> bool {
    let digits = hex_digits(data);
    !digits.is_empty() && digits.len().is_multiple_of(2) && digits.iter().all(u8::is_ascii_hexdigit)
}

/// Lower-case hex and a newline, as the other tools print it.
pub fn hex_line(bytes: &[u8]) -> Vec<u8> {
    hex_line_secret(bytes).to_vec()
}

/// [`hex_line`] for a secret: written without branching on it, into one buffer that is wiped.
pub fn hex_line_secret(bytes: &[u8]) -> Zeroizing<Vec<u8>> {
    let mut out = Zeroizing::new(vec![b'\n'; bytes.len() * 2 + 1]);
    let n = bytes.len() * 2;
    base16ct::lower::encode(bytes, &mut out[..n]).expect("sized for the digits");
    out
}

/// How a signature file is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SigForm {
    /// DER SEQUENCE { r, s } (OpenSSL, GmSSL, BouncyCastle).
    Der,
    /// r || s, 64 bytes.
    Raw,
    /// r || s as 128 hex digits (sm-crypto, gmssl for Python).
    Hex,
    /// DER as hex digits (sm-crypto with `{der: true}`).
    DerHex,
}

impl SigForm {
    pub fn encode(self, sig: &Signature) -> Vec<u8> {
        match self {
            SigForm::Der => sig.to_der(),
            SigForm::Raw => sig.to_bytes().to_vec(),
            SigForm::Hex => hex_line(&sig.to_bytes()),
            SigForm::DerHex => hex_line(&sig.to_der()),
        }
    }

    pub fn decode(self, data: &[u8]) -> Option<Signature> {
        let raw = |b: &[u8]| {
            <[u8; 64]>::try_from(b)
                .ok()
                .and_then(|b| Signature::from_bytes(&b).ok())
        };
        match self {
            SigForm::Der => Signature::from_der(data).ok(),
            SigForm::Raw => raw(data),
            SigForm::Hex => raw(&decode_secret(data)?),
            SigForm::DerHex => Signature::from_der(&decode_secret(data)?).ok(),
        }
    }

    /// The form `data` is in, when it is one and not `self` (for a hint after a failure).
    pub fn other_form_of(self, data: &[u8]) -> Option<SigForm> {
        [SigForm::Der, SigForm::Raw, SigForm::Hex, SigForm::DerHex]
            .into_iter()
            .filter(|&f| f != self)
            .find(|f| f.decode(data).is_some())
    }

    pub fn name(self) -> &'static str {
        match self {
            SigForm::Der => "der",
            SigForm::Raw => "raw",
            SigForm::Hex => "hex",
            SigForm::DerHex => "der-hex",
        }
    }
}

/// What a failed verification probably got wrong: the signature's form, or the ID (OpenSSL
/// 3 signs with an empty one by default). `verifies_with` verifies under another ID.
pub fn verify_hint(
    form: SigForm,
    sig: &[u8],
    id: &[u8],
    verifies_with: impl Fn(&[u8], &Signature) -> bool,
) -> Option<String> {
    let Some(parsed) = form.decode(sig) else {
        return Some(match form.other_form_of(sig) {
            Some(f) => format!(
                "the signature is not {} ({} bytes) but reads as {}: try --sig-form {}",
                form.name(),
                sig.len(),
                f.name(),
                f.name()
            ),
            None => format!(
                "the signature is not {} ({} bytes), nor any other signature form",
                form.name(),
                sig.len()
            ),
        });
    };
    for (other, hint) in [
        (
            &b""[..],
            "it verifies with the empty ID (OpenSSL 3's default): pass --id ''",
        ),
        (
            sm2::DEFAULT_ID,
            "it verifies with the default ID 1234567812345678: leave out --id",
        ),
    ] {
        if other != id && verifies_with(other, &parsed) {
            return Some(hint.to_string());
        }
    }
    None
}

/// How a ciphertext file is written beyond its layout.
#[derive(Clone, Copy, Debug, Default)]
pub struct CipherText {
    /// Hex digits instead of bytes.
    pub hex: bool,
    /// C1 as bare x || y, without the 04 (raw layouts only).
    pub no_prefix: bool,
}

impl CipherText {
    pub fn is_plain(self) -> bool {
        !self.hex && !self.no_prefix
    }

    /// The library's bytes from a file's contents, or why they cannot be.
    pub fn decode(self, data: &[u8]) -> Result<Vec<u8>, &'static str> {
        let mut ct = if self.hex {
            decode_secret(data)
                .ok_or("--hex: the input is not hex digits")?
                .to_vec()
        } else {
            data.to_vec()
        };
        if self.no_prefix {
            ct.insert(0, 4);
        }
        Ok(ct)
    }

    /// The file's contents from the library's bytes (C1 uncompressed).
    pub fn encode(self, mut ct: Vec<u8>) -> Vec<u8> {
        if self.no_prefix {
            ct.remove(0);
        }
        if self.hex { hex_line(&ct) } else { ct }
    }
}

/// What a failed decryption's input suggests about the options, from its structure alone:
/// real tampering gets no hint and the same message as ever.
pub fn decrypt_hint(format: sm2::Format, form: CipherText, data: &[u8]) -> Option<&'static str> {
    if !form.hex && looks_hex(data) {
        return Some("the ciphertext is hex text: try --hex");
    }
    if form.hex && !looks_hex(data) {
        return Some("the ciphertext is not hex text: leave out --hex");
    }
    let bytes = form.decode(data).ok()?;
    let is_der = sm2::convert(
        &bytes,
        sm2::Format::Der,
        sm2::Format::C1C3C2,
        Default::default(),
    )
    .is_ok();
    match format {
        sm2::Format::Der if !is_der => Some(if matches!(bytes.first(), Some(2..=4)) {
            "not DER, but starts like a C1 point: try --format c1c3c2 or c1c2c3"
        } else {
            "not DER, and C1 does not start with 04 (sm-crypto and gmssl omit it): try \
             --format c1c3c2 --no-prefix (or c1c2c3)"
        }),
        sm2::Format::C1C3C2 | sm2::Format::C1C2C3 if is_der => {
            Some("the ciphertext is DER: try --format asn1")
        }
        sm2::Format::C1C3C2 | sm2::Format::C1C2C3 if !matches!(bytes.first(), Some(2..=4)) => Some(
            "C1 does not start with 04, 02 or 03 (sm-crypto and gmssl omit the 04): try --no-prefix",
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_secret_takes_whitespace_and_both_cases() {
        assert_eq!(decode_secret(b"0aFf\n").unwrap().as_slice(), &[0x0a, 0xff]);
        assert_eq!(
            decode_secret(b" 0a\r\nff ").unwrap().as_slice(),
            &[0x0a, 0xff]
        );
        assert!(decode_secret(b"0g").is_none());
        assert!(decode_secret(b"abc").is_none());
        assert!(decode_secret(b"").is_none());
    }

    #[test]
    fn signature_forms_round_trip_and_are_told_apart() {
        let sig = Signature::from_scalars(&[7; 32], &[9; 32]).unwrap();
        let forms = [SigForm::Der, SigForm::Raw, SigForm::Hex, SigForm::DerHex];
        for f in forms {
            let bytes = f.encode(&sig);
            assert_eq!(f.decode(&bytes), Some(sig));
            for g in forms {
                if g != f {
                    assert_eq!(g.decode(&bytes), None, "{f:?} read as {g:?}");
                    assert_eq!(g.other_form_of(&bytes), Some(f));
                }
            }
        }
    }
}
