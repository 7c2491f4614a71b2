//! EnvelopedData opened: the content key unwrapped from any layout met, the content cipher named
//! by the message, and the content decrypted (ECB only when asked for).

use cms::enveloped_data::{EnvelopedData, RecipientInfo};
use der::asn1::OctetString;
use shangmi::sm2::{Format, SigningKey};
use shangmi::sm4::Sm4;
use shangmi::sm4::modes::{cbc, ecb, gcm::Sm4Gcm, padding};
use spki::AlgorithmIdentifierOwned;
use x509_cert::Certificate;
use zeroize::Zeroizing;

use super::{GcmParameters, is_sm2_key_transport, names};
use crate::Error;
use crate::oid::ENVELOPED_DATA as PKCS7_ENVELOPED;
use crate::oid::GM_ENVELOPED_DATA as GM_ENVELOPED;
use crate::oid::SM4;
use crate::oid::SM4_CBC;
use crate::oid::SM4_ECB;
use crate::oid::SM4_GCM;

/// The content key from a wrapped key in any layout met: DER, or raw with or without the 04
/// in either order (the order cannot be told from the bytes; C3 decides).
pub(crate) fn unwrap_key(key: &SigningKey, wrapped: &[u8]) -> Option<Zeroizing<[u8; 16]>> {
    let attempt = |ct: &[u8], format| {
        let k = Zeroizing::new(key.decrypt(ct, format).ok()?);
        <[u8; 16]>::try_from(k.as_slice()).ok().map(Zeroizing::new)
    };
    if wrapped.first() == Some(&0x30)
        && let Some(k) = attempt(wrapped, Format::Der)
    {
        return Some(k);
    }
    let prefixed;
    let raw = if wrapped.first() == Some(&0x04) && wrapped.len() == 1 + 64 + 32 + 16 {
        wrapped
    } else {
        prefixed = [&[4u8][..], wrapped].concat();
        &prefixed
    };
    attempt(raw, Format::C1C2C3).or_else(|| attempt(raw, Format::C1C3C2))
}

/// The content cipher named by an EncryptedContentInfo, with its parameters read.
pub(crate) enum Cipher {
    Cbc([u8; 16]),
    Gcm {
        nonce: Vec<u8>,
        tag_len: usize,
    },
    /// SM4-ECB: the SM4-ECB OID, or the bare SM4 OID with no IV (gmsm, and the CA key
    /// deliveries of GM/T 0014). Read, never written.
    Ecb,
}

pub(crate) fn content_cipher(alg: &AlgorithmIdentifierOwned) -> Result<Cipher, Error> {
    let params = alg.parameters.as_ref().filter(|p| !p.is_null());
    if alg.oid == SM4_ECB || (alg.oid == SM4 && params.is_none()) {
        return Ok(Cipher::Ecb);
    }
    // The bare SM4 OID with an IV means CBC to the writers that use it (gmsm, CFCA).
    if alg.oid == SM4_CBC || alg.oid == SM4 {
        let iv = params
            .ok_or_else(|| Error::Malformed("SM4-CBC without an IV".into()))?
            .decode_as::<OctetString>()?
            .as_bytes()
            .try_into()
            .map_err(|_| Error::Malformed("the SM4-CBC IV is not 16 bytes".into()))?;
        return Ok(Cipher::Cbc(iv));
    }
    if alg.oid == SM4_GCM {
        let p: GcmParameters = params
            .ok_or_else(|| Error::Malformed("SM4-GCM without GCMParameters".into()))?
            .decode_as()?;
        let nonce = p.nonce.as_bytes().to_vec();
        if nonce.is_empty() || nonce.len() > 64 {
            return Err(Error::Malformed(format!(
                "an SM4-GCM nonce of {} bytes",
                nonce.len()
            )));
        }
        let tag_len = usize::from(p.icv_len);
        if !(12..=16).contains(&tag_len) {
            return Err(Error::Unsupported(format!(
                "an SM4-GCM tag of {tag_len} bytes (12 to 16 are read)"
            )));
        }
        return Ok(Cipher::Gcm { nonce, tag_len });
    }
    Err(Error::Unsupported(format!(
        "content encryption {} (SM4-CBC {SM4_CBC}, SM4-GCM {SM4_GCM} and SM4-ECB are read)",
        alg.oid
    )))
}

impl Cipher {
    /// The plaintext under `key`; None for a tag or padding that does not check. ECB's is
    /// returned with its padding, if any: see [`ecb_unpadded`].
    pub(crate) fn decrypt(&self, key: &[u8; 16], ciphertext: &[u8]) -> Option<Zeroizing<Vec<u8>>> {
        let plain = match self {
            Cipher::Cbc(iv) => cbc::decrypt_padded(&Sm4::new(key), iv, ciphertext).ok()?,
            Cipher::Gcm { nonce, tag_len } => Sm4Gcm::with_tag_len(key, *tag_len)
                .ok()?
                .decrypt(nonce, &[], ciphertext)
                .ok()?,
            Cipher::Ecb => {
                let mut buf = Zeroizing::new(ciphertext.to_vec());
                ecb::decrypt(&Sm4::new(key), &mut buf).ok()?;
                return Some(buf);
            }
        };
        Some(Zeroizing::new(plain))
    }
}

/// ECB plaintext without its PKCS#7 padding when it has valid padding. Writers of ECB
/// content pad it or (for a whole number of blocks, as key deliveries are) do not, and the
/// bytes cannot tell which: a signature over the content decides where there is one.
pub(crate) fn ecb_unpadded(plain: &[u8]) -> Option<&[u8]> {
    let last: &[u8; 16] = plain.last_chunk()?;
    let n = padding::unpad_len(last).ok()?;
    Some(&plain[..plain.len() - n])
}

/// Decrypts EnvelopedData (DER or BER ContentInfo, or PEM `PKCS7`/`CMS`) with `key`: the
/// recipient is the one `cert` names when given, else each key-transport recipient is tried.
/// Any failure (no recipient for the key, a key that does not decrypt, bad padding, a GCM tag
/// that does not match) is one error with no plaintext.
///
/// EnvelopedData is not signed: anyone holding the recipient's certificate can make one, and
/// SM4-CBC content is not authenticated either (a changed ciphertext decrypts to changed
/// content whenever its padding still checks). SM4-GCM content is authenticated against
/// changes, not against who made it; signed delivery is SignedAndEnvelopedData
/// ([`crate::signed_envelope::decrypt_and_verify`]). SM4-ECB content is refused here (see
/// [`decrypt_allowing_ecb`]).
pub fn decrypt(
    message: &[u8],
    key: &SigningKey,
    cert: Option<&Certificate>,
) -> Result<Zeroizing<Vec<u8>>, Error> {
    decrypt_impl(message, key, cert, false)
}

/// [`decrypt`], also reading SM4-ECB content (the SM4-ECB OID, or the bare SM4 OID with no
/// IV, as some key deliveries write): no IV, so equal blocks of content show as equal blocks,
/// and nothing authenticated. Opt-in, for the senders that still write it.
pub fn decrypt_allowing_ecb(
    message: &[u8],
    key: &SigningKey,
    cert: Option<&Certificate>,
) -> Result<Zeroizing<Vec<u8>>, Error> {
    decrypt_impl(message, key, cert, true)
}

fn decrypt_impl(
    message: &[u8],
    key: &SigningKey,
    cert: Option<&Certificate>,
    allow_ecb: bool,
) -> Result<Zeroizing<Vec<u8>>, Error> {
    let ci = crate::read::content_info(message)?;
    if ci.content_type != PKCS7_ENVELOPED && ci.content_type != GM_ENVELOPED {
        return Err(Error::Unsupported(format!(
            "content type {} (EnvelopedData is {PKCS7_ENVELOPED} or {GM_ENVELOPED})",
            ci.content_type
        )));
    }
    let ed: EnvelopedData = ci.content.decode_as()?;
    let eci = &ed.encrypted_content;
    let cipher = content_cipher(&eci.content_enc_alg)?;
    if matches!(cipher, Cipher::Ecb) && !allow_ecb {
        return Err(Error::Unsupported(
            "SM4-ECB content (no IV: equal blocks show; nothing authenticated) is read only \
             when asked for (decrypt_allowing_ecb, `cms decrypt --allow-ecb`)"
                .into(),
        ));
    }
    let ciphertext = eci
        .encrypted_content
        .as_ref()
        .ok_or_else(|| Error::Malformed("no encrypted content".into()))?;
    let failed = || Error::Decryption("not a recipient for this key, or tampered".into());
    for ri in ed.recip_infos.0.iter() {
        let RecipientInfo::Ktri(k) = ri else { continue };
        if let Some(c) = cert
            && !names(c, &k.rid)
        {
            continue;
        }
        if !is_sm2_key_transport(&k.key_enc_alg.oid) {
            continue;
        }
        let Some(k16) = unwrap_key(key, k.enc_key.as_bytes()) else {
            continue;
        };
        let plain = cipher
            .decrypt(&k16, ciphertext.as_bytes())
            .ok_or_else(failed)?;
        if let Cipher::Ecb = cipher {
            // As gmsm reads ECB content: unpadded when the padding is valid.
            return Ok(Zeroizing::new(
                ecb_unpadded(&plain).unwrap_or(&plain).to_vec(),
            ));
        }
        return Ok(plain);
    }
    Err(failed())
}
