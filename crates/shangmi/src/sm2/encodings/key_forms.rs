//! Key files of whatever form they come in, told apart by their shape: PEM, the DER
//! structures, or a bare key as the JavaScript and Python SM libraries keep it (d alone; the
//! point as 04 || x || y, x || y or compressed), in bytes or hex digits. One reader for the
//! command line, the C library and the Python package.

use super::super::{SigningKey, VerifyingKey};
use super::keyfile::KeyFileError;
use super::pbes2::is_encrypted_pkcs8_der;

/// PEM anywhere in a text file (readers skip what surrounds the block). DER is never valid
/// UTF-8 with such a line in it: the length bytes of a key-sized structure are not UTF-8.
fn as_pem(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data)
        .ok()
        .filter(|t| t.contains("-----BEGIN "))
}

/// The bytes of a bare key: hex digits (whitespace allowed, decoded in constant time) or the
/// bytes themselves.
fn bare(data: &[u8]) -> zeroize::Zeroizing<Vec<u8>> {
    crate::hex::decode_secret(data).unwrap_or_else(|| zeroize::Zeroizing::new(data.to_vec()))
}

impl SigningKey {
    /// Reads a private key in DER: encrypted PKCS#8 (which needs `password`), PKCS#8 or SEC1.
    pub fn from_der(der: &[u8], password: Option<&[u8]>) -> Result<Self, KeyFileError> {
        if is_encrypted_pkcs8_der(der) {
            return match password {
                Some(p) => Self::from_pkcs8_encrypted_der(der, p),
                None => Err(KeyFileError::PasswordRequired),
            };
        }
        Self::from_pkcs8_der(der).or_else(|e| {
            Self::from_sec1_der(der).map_err(|e2| match e2 {
                // Neither parsed: report the PKCS#8 reader's view, unless SEC1 got further.
                KeyFileError::Malformed(_) => e,
                other => other,
            })
        })
    }

    /// Reads a private key file of any form: PEM (as [`SigningKey::from_pem`]), DER (as
    /// [`SigningKey::from_der`]), or a bare d of 32 bytes or 64 hex digits.
    pub fn from_key_file(data: &[u8], password: Option<&[u8]>) -> Result<Self, KeyFileError> {
        if let Some(text) = as_pem(data) {
            return Self::from_pem(text, password);
        }
        let d = bare(data);
        if let Ok(d) = <&[u8; 32]>::try_from(d.as_slice()) {
            return Self::from_bytes(d).map_err(|_| KeyFileError::InvalidKey);
        }
        if data.first() != Some(&0x30) {
            return Err(KeyFileError::Malformed(
                "neither PEM, DER, nor a bare key in hex or bytes",
            ));
        }
        Self::from_der(data, password)
    }
}

impl VerifyingKey {
    /// Reads a public key file of any form: PEM `PUBLIC KEY`, SubjectPublicKeyInfo DER, or a
    /// bare point (04 || x || y, x || y, compressed) in bytes or hex digits.
    pub fn from_key_file(data: &[u8]) -> Result<Self, KeyFileError> {
        if let Some(text) = as_pem(data) {
            return Self::from_public_key_pem(text);
        }
        let b = bare(data);
        let point = match (b.len(), b.first()) {
            (65, Some(4)) | (33, Some(2 | 3)) => Some(b.to_vec()),
            (64, _) => Some([&[4u8][..], &b].concat()),
            _ => None,
        };
        if let Some(p) = point {
            return Self::from_sec1_bytes(&p).map_err(|_| KeyFileError::InvalidKey);
        }
        if data.first() != Some(&0x30) {
            return Err(KeyFileError::Malformed(
                "neither PEM, DER, nor a bare point in hex or bytes",
            ));
        }
        Self::from_public_key_der(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_of_one_key_reads_as_that_key() {
        let k = SigningKey::from_bytes(&[7; 32]).unwrap();
        let pw = b"pw".as_slice();
        let enc = k
            .to_pkcs8_encrypted_der(pw, crate::sm2::EncryptionParams::default())
            .unwrap();
        let forms: Vec<(Vec<u8>, Option<&[u8]>)> = vec![
            (k.to_pkcs8_der().unwrap().to_vec(), None),
            (k.to_sec1_der().unwrap().to_vec(), None),
            (k.to_pkcs8_pem().unwrap().as_bytes().to_vec(), None),
            (enc.to_vec(), Some(pw)),
            (vec![7; 32], None),
            (
                b"0707070707070707070707070707070707070707070707070707070707070707\n".to_vec(),
                None,
            ),
        ];
        for (data, p) in &forms {
            let got = SigningKey::from_key_file(data, *p).unwrap();
            assert_eq!(got.to_bytes(), k.to_bytes());
        }
        assert_eq!(
            SigningKey::from_der(&enc, None).err(),
            Some(KeyFileError::PasswordRequired)
        );
        assert_eq!(
            SigningKey::from_der(&enc, Some(b"no")).err(),
            Some(KeyFileError::WrongPassword)
        );
        let v = k.verifying_key();
        let point = v.to_uncompressed();
        for data in [
            v.to_public_key_der().unwrap(),
            v.to_public_key_pem().unwrap().into_bytes(),
            point.to_vec(),
            point[1..].to_vec(),
            v.to_sec1_bytes(true),
        ] {
            assert_eq!(VerifyingKey::from_key_file(&data).unwrap(), *v);
        }
        assert!(SigningKey::from_key_file(b"hello", None).is_err());
        assert!(VerifyingKey::from_key_file(&[0x30, 0x03, 1, 2, 3]).is_err());
    }
}
