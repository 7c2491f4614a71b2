//! Reading and writing SM2 key files: PEM as OpenSSL writes them, DER too; encrypted private
//! keys take a password from a file or the terminal.

use std::path::Path;

use shangmi::sm2::{KeyFileError, SigningKey, VerifyingKey};

use zeroize::Zeroizing;

use crate::fail::{Failure, Result, error, rejected};
use crate::files::read_small;
use crate::secrets;

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

/// A wrong password is a failed authentication (exit 1), like a wrong key for `open`;
/// anything else about a key file is an input error (exit 2).
fn key_error(path: &Path, e: KeyFileError) -> Failure {
    match e {
        KeyFileError::WrongPassword => rejected(path.display(), e),
        e => error(path.display(), e),
    }
}

/// A private key file: PEM (`PRIVATE KEY`, `EC PRIVATE KEY`, `SM2 PRIVATE KEY`, `ENCRYPTED
/// PRIVATE KEY`) or the same structures in DER.
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

/// A public key file: PEM `PUBLIC KEY` or SubjectPublicKeyInfo DER. A private key file is
/// accepted too (its public half is used).
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
    VerifyingKey::from_public_key_der(&data).or_else(|e| {
        private_key(path, password_file)
            .map(|k| *k.verifying_key())
            .map_err(|_| key_error(path, e))
    })
}
