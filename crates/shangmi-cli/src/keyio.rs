//! Reading and writing SM2 key files: PEM as OpenSSL writes them, DER too; encrypted private
//! keys take a password from a file or the terminal.

use std::path::Path;

use shangmi::sm2::{KeyFileError, SigningKey, VerifyingKey};

use zeroize::Zeroizing;

use crate::fail::{Failure, Result, error, rejected};
use crate::files::read_small;
use crate::secrets;
use crate::sm2_forms::hex_secret;

/// Key files are a few hundred bytes; the bound keeps a wrong path such as /dev/zero from
/// exhausting memory.
const KEY_FILE_LIMIT: u64 = 1 << 20;

fn read(path: &Path) -> Result<Zeroizing<Vec<u8>>> {
    read_small(path, KEY_FILE_LIMIT)
}

/// PEM anywhere in a text file: readers skip what surrounds the block (`openssl pkcs12`
/// output starts with bag attributes). DER is never valid UTF-8 with such a line in it: its
/// length bytes for a key-sized structure are not UTF-8.
fn is_pem(data: &[u8]) -> bool {
    std::str::from_utf8(data).is_ok_and(|t| t.contains("-----BEGIN "))
}

/// The bytes of a bare key file: hex digits (whitespace allowed) or the bytes themselves.
fn bare(data: &[u8]) -> Zeroizing<Vec<u8>> {
    hex_secret(data).unwrap_or_else(|| Zeroizing::new(data.to_vec()))
}

/// A private key as the JavaScript and Python SM libraries keep it: d alone, 32 bytes or 64
/// hex digits.
fn bare_private(data: &[u8]) -> Option<Zeroizing<[u8; 32]>> {
    let b = bare(data);
    let d: [u8; 32] = b.as_slice().try_into().ok()?;
    Some(Zeroizing::new(d))
}

/// A public key as those libraries write it: 04 || x || y, x || y (gmssl) or compressed, in
/// bytes or hex digits; returned as a SEC1 point.
fn bare_public(data: &[u8]) -> Option<Vec<u8>> {
    let b = bare(data);
    match (b.len(), b.first()) {
        (65, Some(4)) | (33, Some(2 | 3)) => Some(b.to_vec()),
        (64, _) => Some([&[4u8][..], &b].concat()),
        _ => None,
    }
}

fn not_a_key(path: &Path, data: &[u8]) -> Failure {
    error(
        path.display(),
        format!(
            "not a key file: neither PEM, DER, nor a bare key in hex or bytes ({} bytes)",
            data.len()
        ),
    )
}

/// A wrong password is a failed authentication (exit 1), like a wrong key for `open`;
/// anything else about a key file is an input error (exit 2).
fn key_error(path: &Path, e: KeyFileError) -> Failure {
    match e {
        KeyFileError::WrongPassword => rejected(path.display(), e),
        e => error(path.display(), e),
    }
}

/// A private key file: PEM (`PRIVATE KEY`, `EC PRIVATE KEY`, `SM2 PRIVATE KEY`, `ENCRYPTED
/// PRIVATE KEY`), the same structures in DER, or a bare d (32 bytes or 64 hex digits).
pub fn private_key(path: &Path, password_file: Option<&Path>) -> Result<SigningKey> {
    let data = read(path)?;
    let ask = || {
        secrets::password(
            password_file,
            &format!("Password for {}", path.display()),
            false,
        )
    };
    if is_pem(&data) {
        let text = std::str::from_utf8(&data).map_err(|_| error(path.display(), "not text"))?;
        return match SigningKey::from_pem(text, None) {
            Err(KeyFileError::PasswordRequired) => {
                SigningKey::from_pem(text, Some(&ask()?)).map_err(|e| key_error(path, e))
            }
            r => r.map_err(|e| key_error(path, e)),
        };
    }
    if let Some(d) = bare_private(&data) {
        return SigningKey::from_bytes(&d).map_err(|_| {
            error(
                path.display(),
                "a bare private key (32 bytes, or 64 hex digits) outside [1, n-2]",
            )
        });
    }
    if data.first() != Some(&0x30) {
        return Err(not_a_key(path, &data));
    }
    // DER: encrypted PKCS#8, PKCS#8 or SEC1.
    if shangmi::sm2::is_encrypted_pkcs8_der(&data) {
        return SigningKey::from_pkcs8_encrypted_der(&data, &ask()?)
            .map_err(|e| key_error(path, e));
    }
    SigningKey::from_pkcs8_der(&data).or_else(|e| {
        SigningKey::from_sec1_der(&data).map_err(|e2| match e2 {
            // Neither parsed: report the PKCS#8 reader's view, unless SEC1 got further.
            KeyFileError::Malformed(_) => key_error(path, e),
            other => key_error(path, other),
        })
    })
}

/// A public key file: PEM `PUBLIC KEY`, SubjectPublicKeyInfo DER, or a bare point (04 || x ||
/// y, x || y, compressed; bytes or hex). A private key file is accepted too (its public half
/// is used).
pub fn public_key(path: &Path, password_file: Option<&Path>) -> Result<VerifyingKey> {
    let data = read(path)?;
    if is_pem(&data) {
        let text = std::str::from_utf8(&data).map_err(|_| error(path.display(), "not text"))?;
        return match VerifyingKey::from_public_key_pem(text) {
            Ok(k) => Ok(k),
            Err(KeyFileError::UnexpectedLabel(l)) if l.contains("PRIVATE KEY") => {
                Ok(*private_key(path, password_file)?.verifying_key())
            }
            Err(e) => Err(key_error(path, e)),
        };
    }
    if let Some(point) = bare_public(&data) {
        return VerifyingKey::from_sec1_bytes(&point).map_err(|_| {
            error(
                path.display(),
                "a bare public key (04 || x || y, x || y or compressed) not on the curve",
            )
        });
    }
    if bare_private(&data).is_some() {
        return Ok(*private_key(path, password_file)?.verifying_key());
    }
    if data.first() != Some(&0x30) {
        return Err(not_a_key(path, &data));
    }
    VerifyingKey::from_public_key_der(&data).or_else(|e| {
        private_key(path, password_file)
            .map(|k| *k.verifying_key())
            .map_err(|_| key_error(path, e))
    })
}
