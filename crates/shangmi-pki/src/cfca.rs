//! CFCA's own key formats, as its SADK toolkit writes them and its CA returns them:
//!
//! - the `.sm2` file, a user's signing key and certificate under a password:
//!   `SEQUENCE { INTEGER 1, SEQUENCE { OID data, OID SM4, OCTET STRING key },
//!   SEQUENCE { OID data, OCTET STRING certificate } }` (data is GM/T 0010's
//!   1.2.156.10197.6.1.4.2.1), the key d under SM4-CBC with PKCS#7 padding, the IV and the key
//!   the first and last 16 bytes of SM3-KDF(password, 32);
//! - the escrowed encryption key, returned for a request that carried a temporary public key:
//!   `SEQUENCE { INTEGER 1 OPTIONAL, OCTET STRING }`, the octets C1 (no 04) || C3 || C2 to the
//!   temporary key, C2 the pair x || y || d; as DER, Base64, or Base64 with commas behind CFCA's
//!   80-digit header (64 digits of version, then 16 of the length that follows).

use base64ct::{Base64, Encoding};
use const_oid::ObjectIdentifier;
use der::asn1::OctetString;
use der::{Decode, Encode, Sequence};
use shangmi::sm2::{Format, SigningKey, VerifyingKey};
use shangmi::sm4::{Sm4, modes::cbc};
use x509_cert::Certificate;
use zeroize::Zeroizing;

use crate::{Cert, Error};

use crate::oid::GM_DATA;
use crate::oid::SM4;
use crate::oid::SM4_CBC;
/// What precedes the length in CFCA's text form of an escrowed key.
const ESCROW_HEADER: &str = "0000000000000001000000000000000100000000000000000000000000000000";

#[derive(Sequence)]
struct Sm2File {
    version: u8,
    key: EncryptedKey,
    certificate: CertificateData,
}

#[derive(Sequence)]
struct EncryptedKey {
    content_type: ObjectIdentifier,
    algorithm: ObjectIdentifier,
    encrypted: OctetString,
}

#[derive(Sequence)]
struct CertificateData {
    content_type: ObjectIdentifier,
    certificate: OctetString,
}

#[derive(Sequence)]
struct Escrowed {
    #[asn1(optional = "true")]
    version: Option<u8>,
    encrypted: OctetString,
}

/// DER from DER, PEM of any label, or bare Base64 (whitespace and, as CFCA writes them, commas
/// ignored).
fn der_of(data: &[u8], what: &str) -> Result<Vec<u8>, Error> {
    if data.first() == Some(&0x30) {
        return Ok(data.to_vec());
    }
    let text = std::str::from_utf8(data)
        .map_err(|_| Error::Malformed(format!("{what}: neither DER, PEM nor Base64")))?;
    if text.contains("-----BEGIN ") {
        return crate::read::der_of_any(data, what);
    }
    let b64: String = text
        .chars()
        .filter(|c| !c.is_ascii_whitespace() && *c != ',')
        .collect();
    Base64::decode_vec(&b64).map_err(|_| Error::Malformed(format!("{what}: not Base64")))
}

/// The IV and key a `.sm2` file's password gives.
fn password_cipher(password: &[u8]) -> Result<(Sm4, Zeroizing<[u8; 16]>), Error> {
    if password.is_empty() {
        return Err(Error::InvalidArgument(
            "a CFCA .sm2 file needs a password".into(),
        ));
    }
    let mut ivkey = Zeroizing::new([0u8; 32]);
    shangmi::sm3::kdf_into(password, &mut ivkey[..]).map_err(|e| Error::Crypto(e.to_string()))?;
    let mut iv = Zeroizing::new([0u8; 16]);
    iv.copy_from_slice(&ivkey[..16]);
    let key: &[u8; 16] = ivkey[16..].try_into().expect("16 bytes");
    Ok((Sm4::new(key), iv))
}

/// The signing key and certificate in a CFCA `.sm2` file (DER, PEM `CFCA KEY`, or Base64),
/// opened with `password`. A wrong password, or a key that is not the certificate's, is
/// [`Error::Decryption`].
pub fn open_sm2_file(data: &[u8], password: &[u8]) -> Result<(SigningKey, Cert), Error> {
    let der = der_of(data, "CFCA .sm2 file")?;
    let file = Sm2File::from_der(&der)?;
    if file.version != 1 {
        return Err(Error::Unsupported(format!(
            "CFCA .sm2 file version {}",
            file.version
        )));
    }
    for oid in [file.key.content_type, file.certificate.content_type] {
        if oid != GM_DATA {
            return Err(Error::Unsupported(format!(
                "CFCA .sm2 content type {oid} (only {GM_DATA})"
            )));
        }
    }
    if file.key.algorithm != SM4 && file.key.algorithm != SM4_CBC {
        return Err(Error::Unsupported(format!(
            "CFCA .sm2 key cipher {} (only SM4-CBC)",
            file.key.algorithm
        )));
    }
    let cert = Cert::from_der(file.certificate.certificate.as_bytes())?;
    let (cipher, iv) = password_cipher(password)?;
    let wrong = || Error::Decryption("the .sm2 file does not open with this password".into());
    let d = Zeroizing::new(
        cbc::decrypt_padded(&cipher, &iv, file.key.encrypted.as_bytes()).map_err(|_| wrong())?,
    );
    // SADK writes d at its full 32 bytes; writers on big integers drop leading zeros.
    if d.len() > 32 || d.is_empty() {
        return Err(wrong());
    }
    let mut d32 = Zeroizing::new([0u8; 32]);
    d32[32 - d.len()..].copy_from_slice(&d);
    let key = SigningKey::from_bytes(&d32).map_err(|_| wrong())?;
    let public = crate::alg::public_key(cert.tbs_certificate().subject_public_key_info())?;
    if public != *key.verifying_key() {
        return Err(Error::Decryption(
            "the .sm2 file's key is not its certificate's".into(),
        ));
    }
    Ok((key, cert))
}

/// `key` and `cert` as a CFCA `.sm2` file (DER) under `password`, as SADK writes it.
pub fn sm2_file(key: &SigningKey, cert: &Certificate, password: &[u8]) -> Result<Vec<u8>, Error> {
    let public = crate::alg::public_key(cert.tbs_certificate().subject_public_key_info())?;
    if public != *key.verifying_key() {
        return Err(Error::InvalidArgument(
            "the key is not the certificate's".into(),
        ));
    }
    let (cipher, iv) = password_cipher(password)?;
    let d = key.to_bytes();
    let file = Sm2File {
        version: 1,
        key: EncryptedKey {
            content_type: GM_DATA,
            algorithm: SM4,
            encrypted: OctetString::new(cbc::encrypt_padded(&cipher, &iv, &d[..]))?,
        },
        certificate: CertificateData {
            content_type: GM_DATA,
            certificate: OctetString::new(cert.to_der()?)?,
        },
    };
    Ok(file.to_der()?)
}

fn is_escrow_text(data: &[u8]) -> bool {
    data.starts_with(ESCROW_HEADER.as_bytes())
}

/// Whether `data` is an escrowed key rather than another key envelope: CFCA's text form, or
/// DER, PEM or Base64 of its structure.
pub(crate) fn is_escrowed(data: &[u8]) -> bool {
    is_escrow_text(data)
        || der_of(data, "key envelope").is_ok_and(|der| Escrowed::from_der(&der).is_ok())
}

/// The encryption key pair CFCA escrowed for a request, opened with the request's temporary
/// key. The pair's stated public key must be its private key's. Any failure to open is one
/// error.
pub fn open_escrowed_key(data: &[u8], temporary: &SigningKey) -> Result<SigningKey, Error> {
    let body = if is_escrow_text(data) {
        let digits = data
            .get(64..80)
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|d| d.parse::<usize>().ok())
            .ok_or_else(|| Error::Malformed("CFCA escrowed key: its length field".into()))?;
        if digits != data.len() - 80 {
            return Err(Error::Malformed(
                "CFCA escrowed key: the length field is not the length".into(),
            ));
        }
        &data[80..]
    } else {
        data
    };
    let der = der_of(body, "CFCA escrowed key")?;
    let e = Escrowed::from_der(&der)?;
    if e.version.is_some_and(|v| v != 1) {
        return Err(Error::Unsupported("CFCA escrowed key version".into()));
    }
    let failed = || Error::Decryption("the escrowed key does not open with this key".into());
    let raw = [&[4u8][..], e.encrypted.as_bytes()].concat();
    let pair = Zeroizing::new(
        temporary
            .decrypt(&raw, Format::C1C3C2)
            .map_err(|_| failed())?,
    );
    if pair.len() != 96 {
        return Err(failed());
    }
    let d: &[u8; 32] = pair[64..].try_into().expect("32 bytes");
    let key = SigningKey::from_bytes(d).map_err(|_| failed())?;
    let stated =
        VerifyingKey::from_sec1_bytes(&[&[4u8][..], &pair[..64]].concat()).map_err(|_| failed())?;
    if stated != *key.verifying_key() {
        return Err(failed());
    }
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_with_commas_and_breaks_reads() {
        assert_eq!(der_of(b"MAA=", "x").unwrap(), [0x30, 0]);
        assert_eq!(der_of(b"MA,\nA=", "x").unwrap(), [0x30, 0]);
        assert!(der_of(b"M*A=", "x").is_err());
        assert!(der_of(&[0xff, 0xfe], "x").is_err());
    }
}
