//! sm2sig_sm3 (0x0708) signing for CertificateVerify, and the key provider that reads SM2
//! private keys.
//!
//! RFC 8998 section 3.2.1: every SM2 signature in the handshake is made with the ID
//! `TLSv1.3+GM+Cipher+Suite`, not GM/T 0009's default `1234567812345678` that certificates
//! are signed with. Z (the hash of the ID, the curve and the public key) depends only on the
//! key, so it is computed once when the key is loaded.

use std::sync::{Arc, Mutex};

use pki_types::{PrivateKeyDer, SubjectPublicKeyInfoDer};
use rustls::crypto::KeyProvider;
use rustls::sign::{Signer, SigningKey};
use rustls::{Error, SignatureAlgorithm, SignatureScheme};
use shangmi::sm2;
use shangmi::sm3::Sm3;

/// sm2sig_sm3's code point.
pub const SM2SIG_SM3: SignatureScheme = SignatureScheme::Unknown(0x0708);

/// The SM2 ID of every handshake signature (RFC 8998 section 3.2.1).
pub const TLS13_SM2_ID: &[u8] = b"TLSv1.3+GM+Cipher+Suite";

/// The signature byte of sm2sig_sm3; rustls uses the value only to match TLS 1.2 suites,
/// none of which an SM2 key can serve.
const SM2_SIGNATURE_ALGORITHM: SignatureAlgorithm = SignatureAlgorithm::Unknown(0x08);

/// An SM2 private key that signs TLS 1.3 handshakes.
pub struct Sm2SigningKey {
    key: Arc<sm2::SigningKey>,
    /// Z for [`TLS13_SM2_ID`].
    z: [u8; 32],
    spki: Vec<u8>,
    /// Nonces prepared in batches ([`Sm2SigningKey::with_presign_pool`]), shared by every
    /// signer of this key.
    pool: Option<Arc<Mutex<sm2::PresignPool>>>,
}

impl core::fmt::Debug for Sm2SigningKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Sm2SigningKey").finish_non_exhaustive()
    }
}

impl Sm2SigningKey {
    /// Wraps a key of the library.
    pub fn new(key: sm2::SigningKey) -> Self {
        let z = key
            .verifying_key()
            .z(TLS13_SM2_ID)
            .expect("the TLS ID is shorter than the SM2 ID limit");
        let spki = crate::files::spki_der(key.verifying_key());
        Self {
            key: Arc::new(key),
            z,
            spki,
            pool: None,
        }
    }

    /// Signs with nonces prepared `batch` at a time and one shared inversion per batch: about
    /// a fifth of the cost of a signature, for servers that make many handshakes. The nonces
    /// then come from the operating system's generator alone, not hedged with the key and the
    /// message (see [`shangmi::sm2::PresignPool`]): use it only in a process that is never
    /// duplicated while running. A VM snapshot or a checkpoint (CRIU) restored twice runs two
    /// copies holding the same prepared nonces, and two signatures with one nonce reveal the
    /// key; only `fork` is detected. Without a pool every nonce is hedged.
    pub fn with_presign_pool(mut self, batch: usize) -> Self {
        self.pool = Some(Arc::new(Mutex::new(sm2::PresignPool::new(batch))));
        self
    }

    /// Reads a private key file of any form the library reads: PKCS#8 or SEC1, PEM or DER
    /// (OpenSSL's `genpkey`/`ecparam` output, shangmi's `keygen`), or an encrypted PKCS#8 key
    /// with `password`.
    pub fn from_key_file(data: &[u8], password: Option<&[u8]>) -> Result<Self, Error> {
        sm2::SigningKey::from_key_file(data, password)
            .map(Self::new)
            .map_err(|e| Error::General(format!("not an SM2 private key: {e}")))
    }

    /// The public half.
    pub fn verifying_key(&self) -> &sm2::VerifyingKey {
        self.key.verifying_key()
    }
}

impl SigningKey for Sm2SigningKey {
    fn choose_scheme(&self, offered: &[SignatureScheme]) -> Option<Box<dyn Signer>> {
        offered.contains(&SM2SIG_SM3).then(|| {
            Box::new(Sm2Signer {
                key: Arc::clone(&self.key),
                z: self.z,
                pool: self.pool.clone(),
            }) as Box<dyn Signer>
        })
    }

    fn public_key(&self) -> Option<SubjectPublicKeyInfoDer<'_>> {
        Some(SubjectPublicKeyInfoDer::from(self.spki.as_slice()))
    }

    fn algorithm(&self) -> SignatureAlgorithm {
        SM2_SIGNATURE_ALGORITHM
    }
}

struct Sm2Signer {
    key: Arc<sm2::SigningKey>,
    z: [u8; 32],
    pool: Option<Arc<Mutex<sm2::PresignPool>>>,
}

impl core::fmt::Debug for Sm2Signer {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Sm2Signer").finish_non_exhaustive()
    }
}

impl Signer for Sm2Signer {
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, Error> {
        let mut h = Sm3::new();
        h.update(&self.z);
        h.update(message);
        let e = h.finalize();
        let sig = match &self.pool {
            Some(pool) => {
                // A poisoned lock only means another signer panicked; the pool's slots are
                // wiped as they are handed out, so what remains is still unused.
                let mut pool = pool.lock().unwrap_or_else(|p| p.into_inner());
                self.key.sign_digest_with_pool(&mut pool, &e)
            }
            None => self.key.sign_digest(&e),
        }
        .map_err(|e| Error::General(format!("SM2 signing failed: {e}")))?;
        // DER, as ECDSA's schemes and every RFC 8998 peer encode it.
        Ok(sig.to_der())
    }

    fn scheme(&self) -> SignatureScheme {
        SM2SIG_SM3
    }
}

/// Reads SM2 private keys for rustls; keys of other algorithms go to `fallback`, the key
/// provider of the suites beside ours (see [`crate::beside`]).
#[derive(Debug)]
pub struct Sm2KeyProvider {
    pub(crate) fallback: Option<&'static dyn KeyProvider>,
}

/// The provider of [`crate::provider`]: SM2 keys only.
pub static SM2_KEYS: Sm2KeyProvider = Sm2KeyProvider { fallback: None };

impl KeyProvider for Sm2KeyProvider {
    fn load_private_key(
        &self,
        key_der: PrivateKeyDer<'static>,
    ) -> Result<Arc<dyn SigningKey>, Error> {
        match sm2::SigningKey::from_der(key_der.secret_der(), None) {
            Ok(key) => Ok(Arc::new(Sm2SigningKey::new(key))),
            Err(e) => match self.fallback {
                Some(other) => other.load_private_key(key_der),
                None => Err(Error::General(format!("not an SM2 private key: {e}"))),
            },
        }
    }
}
