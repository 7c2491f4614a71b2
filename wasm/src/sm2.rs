//! SM2: keys from and to bytes, hex, PEM and DER; signatures with an ID, DER or raw r || s;
//! encryption in C1C3C2, C1C2C3 or ASN.1, C1 with or without its 04.

use js_sys::Uint8Array;
use shangmi::sm2::{
    DEFAULT_ID, EncryptionParams, Format, KeyFileError, Signature, SigningKey, VerifyingKey,
};
use wasm_bindgen::prelude::*;
use zeroize::Zeroizing;

use crate::{fail, secret_out};

fn format(name: &str) -> Result<Format, JsError> {
    match name {
        "c1c3c2" => Ok(Format::C1C3C2),
        "c1c2c3" => Ok(Format::C1C2C3),
        "asn1" | "der" => Ok(Format::Der),
        other => Err(fail(
            "SM2 ciphertext format",
            format!("{other:?}: \"c1c3c2\", \"c1c2c3\" or \"asn1\""),
        )),
    }
}

fn key_err(e: KeyFileError) -> JsError {
    fail("SM2 key", e)
}

fn id_or_default(id: Option<Vec<u8>>) -> Vec<u8> {
    id.unwrap_or_else(|| DEFAULT_ID.to_vec())
}

fn unhex(text: &str, what: &str) -> Result<Zeroizing<Vec<u8>>, JsError> {
    shangmi::hex::decode_secret(text.trim().as_bytes())
        .ok_or_else(|| fail(what, "not hex (an even number of 0-9, a-f digits)"))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// An SM2 private key. Its scalar lives in module memory that is wiped when the key is freed
/// (call `free()`, or let the garbage collector's finalizer do it).
#[wasm_bindgen(js_name = PrivateKey)]
pub struct PrivateKey {
    inner: SigningKey,
}

#[wasm_bindgen(js_class = PrivateKey)]
impl PrivateKey {
    /// A fresh key from `crypto.getRandomValues`.
    pub fn generate() -> Result<PrivateKey, JsError> {
        Ok(PrivateKey {
            inner: SigningKey::random().map_err(|e| fail("SM2 key generation", e))?,
        })
    }

    /// The key d as 32 big-endian bytes.
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(d: Vec<u8>) -> Result<PrivateKey, JsError> {
        let d = Zeroizing::new(d);
        let d: &[u8; 32] = d[..]
            .try_into()
            .map_err(|_| fail("SM2 private key", format!("{} bytes, 32 needed", d.len())))?;
        Ok(PrivateKey {
            inner: SigningKey::from_bytes(d).map_err(|e| fail("SM2 private key", e))?,
        })
    }

    /// The key d as 64 hex digits.
    #[wasm_bindgen(js_name = fromHex)]
    pub fn from_hex(hex: &str) -> Result<PrivateKey, JsError> {
        Self::from_bytes(unhex(hex, "SM2 private key")?.to_vec())
    }

    /// A PEM key (PKCS#8, SEC1, or encrypted PKCS#8 with `password`).
    #[wasm_bindgen(js_name = fromPem)]
    pub fn from_pem(pem: &str, password: Option<Vec<u8>>) -> Result<PrivateKey, JsError> {
        let password = password.map(Zeroizing::new);
        Ok(PrivateKey {
            inner: SigningKey::from_pem(pem, password.as_deref().map(|p| &p[..]))
                .map_err(key_err)?,
        })
    }

    /// A DER key (PKCS#8, SEC1, or encrypted PKCS#8 with `password`).
    #[wasm_bindgen(js_name = fromDer)]
    pub fn from_der(der: Vec<u8>, password: Option<Vec<u8>>) -> Result<PrivateKey, JsError> {
        let (der, password) = (Zeroizing::new(der), password.map(Zeroizing::new));
        Ok(PrivateKey {
            inner: SigningKey::from_key_file(&der, password.as_deref().map(|p| &p[..]))
                .map_err(key_err)?,
        })
    }

    /// d as 32 bytes.
    #[wasm_bindgen(js_name = toBytes)]
    pub fn to_bytes(&self) -> Uint8Array {
        Uint8Array::from(&self.inner.to_bytes()[..])
    }

    /// d as 64 hex digits.
    #[wasm_bindgen(js_name = toHex)]
    pub fn to_hex(&self) -> String {
        hex(&self.inner.to_bytes()[..])
    }

    /// PKCS#8 PEM, encrypted (PBES2, PBKDF2-HMAC-SM3, SM4-CBC) when `password` is given.
    #[wasm_bindgen(js_name = toPem)]
    pub fn to_pem(&self, password: Option<Vec<u8>>) -> Result<String, JsError> {
        match password.map(Zeroizing::new) {
            Some(p) => self
                .inner
                .to_pkcs8_encrypted_pem(&p, EncryptionParams::default())
                .map_err(key_err),
            None => self
                .inner
                .to_pkcs8_pem()
                .map(|p| p.to_string())
                .map_err(key_err),
        }
    }

    /// PKCS#8 DER, encrypted when `password` is given.
    #[wasm_bindgen(js_name = toDer)]
    pub fn to_der(&self, password: Option<Vec<u8>>) -> Result<Uint8Array, JsError> {
        let der = match password.map(Zeroizing::new) {
            Some(p) => Zeroizing::new(
                self.inner
                    .to_pkcs8_encrypted_der(&p, EncryptionParams::default())
                    .map_err(key_err)?,
            ),
            None => self.inner.to_pkcs8_der().map_err(key_err)?,
        };
        Ok(secret_out(der))
    }

    /// The public key.
    #[wasm_bindgen(js_name = publicKey)]
    pub fn public_key(&self) -> PublicKey {
        PublicKey {
            inner: *self.inner.verifying_key(),
        }
    }

    /// An SM2 signature over `message` with `id` (default 1234567812345678): DER, or the
    /// 64-byte r || s when `der` is false.
    pub fn sign(&self, message: &[u8], id: Option<Vec<u8>>, der: bool) -> Result<Vec<u8>, JsError> {
        let sig = self
            .inner
            .sign_with_id(&id_or_default(id), message)
            .map_err(|e| fail("SM2 sign", e))?;
        Ok(if der {
            sig.to_der()
        } else {
            sig.to_bytes().to_vec()
        })
    }

    /// An SM2 signature over a 32-byte digest e computed elsewhere (Z included by the caller).
    #[wasm_bindgen(js_name = signDigest)]
    pub fn sign_digest(&self, digest: &[u8], der: bool) -> Result<Vec<u8>, JsError> {
        let e: &[u8; 32] = digest
            .try_into()
            .map_err(|_| fail("SM2 digest", format!("{} bytes, 32 needed", digest.len())))?;
        let sig = self.inner.sign_digest(e).map_err(|e| fail("SM2 sign", e))?;
        Ok(if der {
            sig.to_der()
        } else {
            sig.to_bytes().to_vec()
        })
    }

    /// Decrypts an SM2 ciphertext in `format`; a raw C1 without its 04 (as sm-crypto writes)
    /// is read too. Any failure is one error, and nothing is returned.
    pub fn decrypt(&self, ciphertext: &[u8], format: &str) -> Result<Uint8Array, JsError> {
        let f = self::format(format)?;
        let failed = || fail("SM2 decrypt", "the ciphertext does not open with this key");
        let attempt = |ct: &[u8]| self.inner.decrypt(ct, f).ok().map(Zeroizing::new);
        let opened = match f {
            Format::Der => attempt(ciphertext),
            // The order and the prefix cannot be told from the bytes alone: C3 decides.
            _ => (ciphertext.first() == Some(&4))
                .then(|| attempt(ciphertext))
                .flatten()
                .or_else(|| attempt(&[&[4u8][..], ciphertext].concat())),
        };
        opened.map(secret_out).ok_or_else(failed)
    }
}

/// An SM2 public key.
#[wasm_bindgen(js_name = PublicKey)]
pub struct PublicKey {
    inner: VerifyingKey,
}

#[wasm_bindgen(js_class = PublicKey)]
impl PublicKey {
    /// A point: 04 || x || y, 02/03 || x, or x || y without the 04 (as gmssl and sm-crypto
    /// sometimes write it).
    #[wasm_bindgen(js_name = fromBytes)]
    pub fn from_bytes(point: &[u8]) -> Result<PublicKey, JsError> {
        let prefixed;
        let p = if point.len() == 64 {
            prefixed = [&[4u8][..], point].concat();
            &prefixed[..]
        } else {
            point
        };
        Ok(PublicKey {
            inner: VerifyingKey::from_sec1_bytes(p).map_err(|e| fail("SM2 public key", e))?,
        })
    }

    /// A point in hex, in any form [`PublicKey::from_bytes`] takes.
    #[wasm_bindgen(js_name = fromHex)]
    pub fn from_hex(hex: &str) -> Result<PublicKey, JsError> {
        Self::from_bytes(&unhex(hex, "SM2 public key")?)
    }

    /// A PEM public key (SubjectPublicKeyInfo), or a private key's public half.
    #[wasm_bindgen(js_name = fromPem)]
    pub fn from_pem(pem: &str) -> Result<PublicKey, JsError> {
        Ok(PublicKey {
            inner: VerifyingKey::from_key_file(pem.as_bytes()).map_err(key_err)?,
        })
    }

    /// A DER SubjectPublicKeyInfo.
    #[wasm_bindgen(js_name = fromDer)]
    pub fn from_der(der: &[u8]) -> Result<PublicKey, JsError> {
        Ok(PublicKey {
            inner: VerifyingKey::from_public_key_der(der).map_err(key_err)?,
        })
    }

    /// The point: 04 || x || y (65 bytes), or 02/03 || x when `compressed`.
    #[wasm_bindgen(js_name = toBytes)]
    pub fn to_bytes(&self, compressed: bool) -> Vec<u8> {
        self.inner.to_sec1_bytes(compressed)
    }

    /// The point in hex.
    #[wasm_bindgen(js_name = toHex)]
    pub fn to_hex(&self, compressed: bool) -> String {
        hex(&self.inner.to_sec1_bytes(compressed))
    }

    /// SubjectPublicKeyInfo PEM.
    #[wasm_bindgen(js_name = toPem)]
    pub fn to_pem(&self) -> Result<String, JsError> {
        self.inner.to_public_key_pem().map_err(key_err)
    }

    /// SubjectPublicKeyInfo DER.
    #[wasm_bindgen(js_name = toDer)]
    pub fn to_der(&self) -> Result<Vec<u8>, JsError> {
        self.inner.to_public_key_der().map_err(key_err)
    }

    /// Whether `signature` (DER, or r || s when `der` is false) is this key's over `message`
    /// with `id` (default 1234567812345678).
    pub fn verify(
        &self,
        message: &[u8],
        signature: &[u8],
        id: Option<Vec<u8>>,
        der: bool,
    ) -> Result<bool, JsError> {
        let sig = if der {
            Signature::from_der(signature)
        } else {
            Signature::from_bytes(signature)
        };
        let Ok(sig) = sig else {
            return Ok(false);
        };
        let id = id_or_default(id);
        if id.len() > 8191 {
            return Err(fail("SM2 ID", "over 8191 bytes"));
        }
        Ok(self.inner.verify_with_id(&id, message, &sig).is_ok())
    }

    /// Whether `signature` is this key's over a 32-byte digest e computed elsewhere.
    #[wasm_bindgen(js_name = verifyDigest)]
    pub fn verify_digest(
        &self,
        digest: &[u8],
        signature: &[u8],
        der: bool,
    ) -> Result<bool, JsError> {
        let e: &[u8; 32] = digest
            .try_into()
            .map_err(|_| fail("SM2 digest", format!("{} bytes, 32 needed", digest.len())))?;
        let sig = if der {
            Signature::from_der(signature)
        } else {
            Signature::from_bytes(signature)
        };
        Ok(sig.is_ok_and(|s| self.inner.verify_digest(e, &s).is_ok()))
    }

    /// Encrypts `message` to this key in `format`, C1 with its 04 unless `prefix` is false
    /// (raw formats only; sm-crypto writes it without).
    pub fn encrypt(
        &self,
        message: Vec<u8>,
        format: &str,
        prefix: bool,
    ) -> Result<Vec<u8>, JsError> {
        let message = Zeroizing::new(message);
        let f = self::format(format)?;
        let mut ct = self
            .inner
            .encrypt(&message, f)
            .map_err(|e| fail("SM2 encrypt", e))?;
        if !prefix && f != Format::Der {
            ct.remove(0);
        }
        Ok(ct)
    }
}

/// A single-use ephemeral key for one SM2 key exchange (GB/T 32918.3): send `publicKey()` to
/// the peer, then pass it to `PrivateKey.exchange`, which uses it up.
#[wasm_bindgen(js_name = EphemeralKey)]
pub struct EphemeralKey {
    inner: Option<shangmi::sm2::EphemeralSecret>,
    public: VerifyingKey,
}

#[wasm_bindgen(js_class = EphemeralKey)]
impl EphemeralKey {
    /// A fresh ephemeral key.
    pub fn generate() -> Result<EphemeralKey, JsError> {
        let e =
            shangmi::sm2::EphemeralSecret::random().map_err(|e| fail("SM2 ephemeral key", e))?;
        Ok(EphemeralKey {
            public: *e.public_key(),
            inner: Some(e),
        })
    }

    /// Its public point, for the peer.
    #[wasm_bindgen(js_name = publicKey)]
    pub fn public_key(&self) -> PublicKey {
        PublicKey { inner: self.public }
    }
}

/// What a key exchange agreed: the key, this side's confirmation value to send, and a check of
/// the peer's.
#[wasm_bindgen(js_name = KeyAgreement)]
pub struct KeyAgreement {
    inner: shangmi::sm2::Agreement,
}

#[wasm_bindgen(js_class = KeyAgreement)]
impl KeyAgreement {
    /// The agreed key.
    pub fn key(&self) -> Uint8Array {
        Uint8Array::from(self.inner.key())
    }

    /// This side's confirmation value (S_A or S_B) for the peer.
    pub fn confirmation(&self) -> Vec<u8> {
        self.inner.confirmation().to_vec()
    }

    /// Whether the peer's confirmation value matches (constant time).
    #[wasm_bindgen(js_name = verifyConfirmation)]
    pub fn verify_confirmation(&self, theirs: &[u8]) -> bool {
        self.inner.verify_confirmation(theirs).is_ok()
    }
}

#[wasm_bindgen(js_class = PrivateKey)]
impl PrivateKey {
    /// One side of an SM2 key exchange: `initiator` true for A (which sends first). The peer's
    /// static and ephemeral public keys and ID (`id`/`peerId` default 1234567812345678); the
    /// ephemeral key is used up.
    #[allow(clippy::too_many_arguments)]
    pub fn exchange(
        &self,
        initiator: bool,
        ephemeral: &mut EphemeralKey,
        peer: &PublicKey,
        peer_ephemeral: &PublicKey,
        length: usize,
        id: Option<Vec<u8>>,
        peer_id: Option<Vec<u8>>,
    ) -> Result<KeyAgreement, JsError> {
        let eph = ephemeral.inner.take().ok_or_else(|| {
            fail(
                "SM2 key exchange",
                "this ephemeral key was already used: make a new one per exchange",
            )
        })?;
        let (id, peer_id) = (id_or_default(id), id_or_default(peer_id));
        let ex = shangmi::sm2::Exchange {
            role: if initiator {
                shangmi::sm2::Role::Initiator
            } else {
                shangmi::sm2::Role::Responder
            },
            own_id: &id,
            peer: &peer.inner,
            peer_id: &peer_id,
            peer_ephemeral: &peer_ephemeral.inner,
            key_len: length,
        };
        Ok(KeyAgreement {
            inner: self
                .inner
                .key_exchange(eph, &ex)
                .map_err(|e| fail("SM2 key exchange", e))?,
        })
    }
}
