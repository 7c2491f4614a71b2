//! Reading and writing SM2 key files: PEM as OpenSSL writes them, DER too; encrypted private
//! keys and PKCS#12 keystores take a password from a file or the terminal.

use std::path::Path;

use shangmi::sm2::{KeyFileError, SigningKey, VerifyingKey};
use shangmi_pki::pkcs12;

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
/// PRIVATE KEY`), the same structures in DER, or a bare d (32 bytes or 64 hex digits); the
/// library tells the form apart, and a password is asked for only when the key needs one.
pub fn private_key(path: &Path, password_file: Option<&Path>) -> Result<SigningKey> {
    let data = read(path)?;
    match SigningKey::from_key_file(&data, None) {
        Err(KeyFileError::PasswordRequired) => {
            let pw = secrets::password(
                password_file,
                &format!("Password for {}", path.display()),
                false,
            )?;
            SigningKey::from_key_file(&data, Some(&pw)).map_err(|e| key_error(path, e))
        }
        Err(KeyFileError::Malformed(m)) if m.starts_with("neither") => Err(not_a_key(path, &data)),
        r => r.map_err(|e| key_error(path, e)),
    }
}

/// A public key file: PEM `PUBLIC KEY`, SubjectPublicKeyInfo DER, or a bare point (04 || x ||
/// y, x || y, compressed; bytes or hex). A private key file is accepted too (its public half
/// is used).
pub fn public_key(path: &Path, password_file: Option<&Path>) -> Result<VerifyingKey> {
    let data = read(path)?;
    let public = match VerifyingKey::from_key_file(&data) {
        Ok(k) => return Ok(k),
        Err(e) => e,
    };
    // Perhaps a private key file: its public half then. Its own error wins where it got
    // further (a wrong password, a private-key PEM), the public reader's otherwise.
    match private_key(path, password_file) {
        Ok(k) => Ok(*k.verifying_key()),
        Err(private) => match public {
            KeyFileError::UnexpectedLabel(l) if l.contains("PRIVATE KEY") => Err(private),
            KeyFileError::Malformed(m) if m.starts_with("neither") => Err(not_a_key(path, &data)),
            e => Err(key_error(path, e)),
        },
    }
}

/// A PKCS#12 keystore read with its password (from `password_file`, or asked).
pub fn keystore(input: &Path, password_file: Option<&Path>) -> Result<pkcs12::Pkcs12> {
    let data = read_small(input, 16 << 20)?;
    let password = secrets::password(
        password_file,
        &format!("Password for {}", input.display()),
        false,
    )?;
    pkcs12::read(&data, &password).map_err(|e| match e {
        shangmi_pki::Error::Decryption(_) => rejected(input.display(), e),
        e => error(input.display(), e),
    })
}

/// A keystore's keys, each with its chain: what `tls serve --p12` serves.
pub fn key_chains(path: &Path, password_file: Option<&Path>) -> Result<Vec<pkcs12::KeyWithChain>> {
    keystore(path, password_file)?
        .key_chains()
        .map_err(|e| error(path.display(), e))
}

/// A keystore's TLCP pair: what `tlcp serve|connect --p12` use.
pub fn tlcp_pair(
    path: &Path,
    password_file: Option<&Path>,
) -> Result<(pkcs12::KeyWithChain, pkcs12::KeyWithChain)> {
    keystore(path, password_file)?
        .tlcp_pair()
        .map_err(|e| error(path.display(), e))
}
