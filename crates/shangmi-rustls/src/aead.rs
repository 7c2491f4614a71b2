//! RFC 8998's record protection: AEAD_SM4_GCM and AEAD_SM4_CCM (16-byte key, 12-byte
//! nonce, 16-byte tag) under TLS 1.3's record layout (RFC 8446 section 5.2).

use rustls::crypto::cipher::{
    AeadKey, InboundOpaqueMessage, InboundPlainMessage, Iv, MessageDecrypter, MessageEncrypter,
    Nonce, OutboundOpaqueMessage, OutboundPlainMessage, PrefixedPayload, Tls13AeadAlgorithm,
    UnsupportedOperationError, make_tls13_aad,
};
use rustls::{ConnectionTrafficSecrets, ContentType, Error, ProtocolVersion};
use shangmi::sm4::modes::{ccm::Sm4Ccm, gcm::Sm4Gcm};

const TAG_LEN: usize = 16;

/// One of the two AEADs; the key schedule hands it 16-byte keys and 12-byte IVs.
pub(crate) enum Sm4Aead {
    Gcm,
    Ccm,
}

/// A keyed AEAD of either kind; both wipe their key schedules on drop.
enum Keyed {
    Gcm(Box<Sm4Gcm>),
    Ccm(Box<Sm4Ccm>),
    /// A key of the wrong length (the key schedule never hands one over): every record
    /// fails, rather than being sealed under a stand-in key.
    Unusable,
}

impl Keyed {
    fn new(kind: &Sm4Aead, key: &AeadKey) -> Self {
        let Ok(mut k) = <[u8; 16]>::try_from(key.as_ref()) else {
            return Keyed::Unusable;
        };
        let keyed = match kind {
            Sm4Aead::Gcm => Keyed::Gcm(Box::new(Sm4Gcm::new(&k))),
            Sm4Aead::Ccm => Keyed::Ccm(Box::new(
                Sm4Ccm::new(&k, 12, TAG_LEN).expect("12-byte nonce and 16-byte tag are valid CCM"),
            )),
        };
        zeroize::Zeroize::zeroize(&mut k);
        keyed
    }

    fn seal(&self, nonce: &[u8; 12], aad: &[u8], buf: &mut [u8]) -> Result<[u8; TAG_LEN], Error> {
        let mut tag = [0u8; TAG_LEN];
        match self {
            Keyed::Gcm(g) => {
                let t = g
                    .encrypt_in_place_detached(nonce, aad, buf)
                    .map_err(|_| Error::EncryptError)?;
                tag.copy_from_slice(&t[..TAG_LEN]);
            }
            Keyed::Ccm(c) => {
                let t = c
                    .encrypt_in_place_detached(nonce, aad, buf)
                    .map_err(|_| Error::EncryptError)?;
                tag.copy_from_slice(&t);
            }
            Keyed::Unusable => return Err(Error::EncryptError),
        }
        Ok(tag)
    }

    fn open(&self, nonce: &[u8; 12], aad: &[u8], buf: &mut [u8], tag: &[u8]) -> Result<(), Error> {
        let r = match self {
            Keyed::Gcm(g) => g.decrypt_in_place_detached(nonce, aad, buf, tag),
            Keyed::Ccm(c) => c.decrypt_in_place_detached(nonce, aad, buf, tag),
            Keyed::Unusable => return Err(Error::DecryptError),
        };
        r.map_err(|_| Error::DecryptError)
    }
}

impl Tls13AeadAlgorithm for Sm4Aead {
    fn encrypter(&self, key: AeadKey, iv: Iv) -> Box<dyn MessageEncrypter> {
        Box::new(Encrypter {
            key: Keyed::new(self, &key),
            iv,
        })
    }

    fn decrypter(&self, key: AeadKey, iv: Iv) -> Box<dyn MessageDecrypter> {
        Box::new(Decrypter {
            key: Keyed::new(self, &key),
            iv,
        })
    }

    fn key_len(&self) -> usize {
        16
    }

    fn extract_keys(
        &self,
        _key: AeadKey,
        _iv: Iv,
    ) -> Result<ConnectionTrafficSecrets, UnsupportedOperationError> {
        // rustls' enum of exportable secrets (for kTLS) has no SM4 member.
        Err(UnsupportedOperationError)
    }
}

struct Encrypter {
    key: Keyed,
    iv: Iv,
}

impl MessageEncrypter for Encrypter {
    fn encrypt(
        &mut self,
        msg: OutboundPlainMessage<'_>,
        seq: u64,
    ) -> Result<OutboundOpaqueMessage, Error> {
        let total_len = self.encrypted_payload_len(msg.payload.len());
        let mut payload = PrefixedPayload::with_capacity(total_len);
        payload.extend_from_chunks(&msg.payload);
        payload.extend_from_slice(&msg.typ.to_array());
        let nonce = Nonce::new(&self.iv, seq).0;
        let aad = make_tls13_aad(total_len);
        let tag = self.key.seal(&nonce, &aad, payload.as_mut())?;
        payload.extend_from_slice(&tag);
        // Every TLS 1.3 record says TLS 1.2 on the outside (RFC 8446 section 5.1).
        Ok(OutboundOpaqueMessage::new(
            ContentType::ApplicationData,
            ProtocolVersion::TLSv1_2,
            payload,
        ))
    }

    fn encrypted_payload_len(&self, payload_len: usize) -> usize {
        payload_len + 1 + TAG_LEN
    }
}

struct Decrypter {
    key: Keyed,
    iv: Iv,
}

impl MessageDecrypter for Decrypter {
    fn decrypt<'a>(
        &mut self,
        mut msg: InboundOpaqueMessage<'a>,
        seq: u64,
    ) -> Result<InboundPlainMessage<'a>, Error> {
        let payload = &mut msg.payload;
        let Some(body_len) = payload.len().checked_sub(TAG_LEN) else {
            return Err(Error::DecryptError);
        };
        let nonce = Nonce::new(&self.iv, seq).0;
        let aad = make_tls13_aad(payload.len());
        let (body, tag) = payload.split_at_mut(body_len);
        self.key.open(&nonce, &aad, body, tag)?;
        payload.truncate(body_len);
        msg.into_tls13_unpadded_message()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_of_the_wrong_length_seals_and_opens_nothing() {
        let key = AeadKey::from([7u8; 32]); // 32 bytes, not 16
        for kind in [Sm4Aead::Gcm, Sm4Aead::Ccm] {
            let k = Keyed::new(&kind, &key);
            let mut buf = [1u8; 8];
            assert!(k.seal(&[0; 12], b"", &mut buf).is_err());
            assert!(k.open(&[0; 12], b"", &mut buf, &[0; 16]).is_err());
            assert_eq!(buf, [1u8; 8], "nothing was encrypted under a stand-in key");
        }
    }
}
