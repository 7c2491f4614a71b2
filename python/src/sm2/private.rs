//! SM2PrivateKey for Python: made, loaded and saved (PEM, DER, PKCS#8 encrypted, raw), signing,
//! decryption and key exchange.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use shangmi::sm2::{self, Exchange, Role, SigningKey};
use zeroize::Zeroizing;

use super::exchange::{EphemeralKey, KeyAgreement};
use super::public::PublicKey;
use super::{encode_sig, format, id_or_default, text};
use crate::error::OrRaise;
use crate::{Data, DecryptionError, array, data, hex};

/// An SM2 private key. Its scalar lives in Rust memory that is wiped when the key is freed.
#[pyclass(name = "SM2PrivateKey", module = "shangmi", frozen)]
pub(crate) struct PrivateKey {
    pub(crate) inner: SigningKey,
}

#[pymethods]
impl PrivateKey {
    /// A fresh key from the operating system's random generator.
    #[staticmethod]
    fn generate(py: Python<'_>) -> PyResult<Self> {
        let inner = py.detach(SigningKey::random).or_raise()?;
        Ok(PrivateKey { inner })
    }

    /// From the 32-byte big-endian scalar d (1 <= d <= n - 2).
    #[staticmethod]
    fn from_bytes(data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let d = Zeroizing::new(array::<32>(data, "private key")?);
        Ok(PrivateKey {
            inner: SigningKey::from_bytes(&d).or_raise()?,
        })
    }

    /// From 64 hex digits (as other SM libraries exchange keys).
    #[staticmethod]
    fn from_hex(hex: &str) -> PyResult<Self> {
        // Decoded without branching on the digits: they are the key.
        let d = shangmi::hex::decode_secret(hex.as_bytes())
            .filter(|d| d.len() == 32)
            .ok_or_else(|| PyValueError::new_err("private key: expected 64 hex digits"))?;
        let d: &[u8; 32] = d.as_slice().try_into().expect("32 bytes, checked");
        Ok(PrivateKey {
            inner: SigningKey::from_bytes(d).or_raise()?,
        })
    }

    /// From PEM: PKCS#8 (`PRIVATE KEY`), encrypted PKCS#8 (needs `password`), or SEC1
    /// (`EC PRIVATE KEY`), as OpenSSL, GmSSL and this library write them.
    #[staticmethod]
    #[pyo3(signature = (data, password=None))]
    fn from_pem(
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        password: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let pem = Zeroizing::new(text(data)?);
        let pw = password
            .map(|p| crate::data(p, "password").map(|d| Zeroizing::new(d.to_vec())))
            .transpose()?;
        let inner = py
            .detach(|| SigningKey::from_pem(&pem, pw.as_ref().map(|p| p.as_slice())))
            .or_raise()?;
        Ok(PrivateKey { inner })
    }

    /// From DER: PKCS#8, encrypted PKCS#8 (needs `password`), or SEC1.
    #[staticmethod]
    #[pyo3(signature = (data, password=None))]
    fn from_der(
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        password: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let der = Zeroizing::new(crate::data(data, "DER data")?.to_vec());
        let pw = password
            .map(|p| crate::data(p, "password").map(|d| Zeroizing::new(d.to_vec())))
            .transpose()?;
        let inner = py
            .detach(|| SigningKey::from_der(&der, pw.as_ref().map(|p| p.as_slice())))
            .or_raise()?;
        Ok(PrivateKey { inner })
    }

    /// PKCS#8 PEM; with `password`, encrypted (PBES2: PBKDF2-HMAC-SM3 and SM4-CBC).
    #[pyo3(signature = (password=None))]
    fn to_pem(&self, py: Python<'_>, password: Option<&Bound<'_, PyAny>>) -> PyResult<String> {
        match password {
            None => Ok(self.inner.to_pkcs8_pem().or_raise()?.to_string()),
            Some(p) => {
                let pw = Zeroizing::new(data(p, "password")?.to_vec());
                let k = &self.inner;
                py.detach(|| k.to_pkcs8_encrypted_pem(&pw, Default::default()))
                    .or_raise()
            }
        }
    }

    /// PKCS#8 DER; with `password`, encrypted.
    #[pyo3(signature = (password=None))]
    fn to_der<'py>(
        &self,
        py: Python<'py>,
        password: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        match password {
            None => Ok(PyBytes::new(py, &self.inner.to_pkcs8_der().or_raise()?)),
            Some(p) => {
                let pw = Zeroizing::new(data(p, "password")?.to_vec());
                let k = &self.inner;
                let der = py
                    .detach(|| k.to_pkcs8_encrypted_der(&pw, Default::default()))
                    .or_raise()?;
                Ok(PyBytes::new(py, &der))
            }
        }
    }

    /// The 32-byte scalar.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.to_bytes()[..])
    }

    fn to_hex(&self) -> String {
        hex(&self.inner.to_bytes()[..])
    }

    fn public_key(&self) -> PublicKey {
        PublicKey {
            inner: *self.inner.verifying_key(),
        }
    }

    /// Signs `data` as SM2 prescribes (e = SM3(Z_A || data), Z_A from `id`): DER by default,
    /// `encoding="raw"` for the 64-byte r || s.
    #[pyo3(signature = (data, id=None, encoding="der"))]
    fn sign<'py>(
        &self,
        py: Python<'py>,
        data: Data<'_>,
        id: Option<&Bound<'_, PyAny>>,
        encoding: &str,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let d = data;
        let id = id_or_default(id)?;
        let k = &self.inner;
        let sig = py.detach(|| k.sign_with_id(&id, &d)).or_raise()?;
        encode_sig(py, &sig, encoding)
    }

    /// Signs a precomputed 32-byte e (see `SM2PublicKey.digest`).
    #[pyo3(signature = (digest, encoding="der"))]
    fn sign_digest<'py>(
        &self,
        py: Python<'py>,
        digest: &Bound<'_, PyAny>,
        encoding: &str,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let e = array::<32>(digest, "digest")?;
        let k = &self.inner;
        let sig = py.detach(|| k.sign_digest(&e)).or_raise()?;
        encode_sig(py, &sig, encoding)
    }

    /// Signs many messages in one call (GIL released), with nonces prepared in a batch that
    /// shares one inversion (and, on AVX-512 IFMA CPUs, eight fixed-base multiplications per
    /// pass): several times the rate of `sign` in a loop. The trade-off: pooled nonces come
    /// straight from the OS generator and are not hedged with the key and message.
    #[pyo3(signature = (messages, id=None, encoding="der"))]
    fn sign_many<'py>(
        &self,
        py: Python<'py>,
        messages: &Bound<'_, PyAny>,
        id: Option<&Bound<'_, PyAny>>,
        encoding: &str,
    ) -> PyResult<Bound<'py, PyList>> {
        let items: Vec<Bound<'_, PyAny>> = messages.try_iter()?.collect::<PyResult<_>>()?;
        let datas = items
            .iter()
            .map(|m| data(m, "message"))
            .collect::<PyResult<Vec<_>>>()?;
        let id = id_or_default(id)?;
        let k = &self.inner;
        let z = k.verifying_key().z(&id).or_raise()?;
        let sigs = py
            .detach(|| {
                let mut pool = sm2::PresignPool::new(datas.len().max(1));
                datas
                    .iter()
                    .map(|d| {
                        let mut h = shangmi::sm3::Sm3::new();
                        h.update(&z);
                        h.update(d);
                        k.sign_digest_with_pool(&mut pool, &h.finalize())
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
            .or_raise()?;
        let out = sigs
            .iter()
            .map(|s| encode_sig(py, s, encoding))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, out)
    }

    /// Decrypts an SM2 ciphertext in `format` ("c1c3c2", "c1c2c3" or "asn1"). Raises
    /// `DecryptionError` (one error for every cause) and returns nothing when C3 does not
    /// match.
    #[pyo3(signature = (ciphertext, format="c1c3c2"))]
    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        ciphertext: Data<'_>,
        format: &str,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let f = self::format(format)?;
        let c = ciphertext;
        let k = &self.inner;
        let out = Zeroizing::new(
            py.detach(|| k.decrypt(&c, f))
                .map_err(|_| DecryptionError::new_err("SM2 decryption failed"))?,
        );
        Ok(PyBytes::new(py, &out))
    }

    /// One side of an SM2 key exchange (GB/T 32918.3). `role` is "initiator" or
    /// "responder"; `ephemeral` is this side's `SM2EphemeralKey` (used up by the call);
    /// the peer sends its static public key, its ephemeral public key and its ID.
    #[pyo3(signature = (role, ephemeral, peer_public_key, peer_ephemeral_public_key, key_length, id=None, peer_id=None))]
    #[allow(clippy::too_many_arguments)]
    fn exchange(
        &self,
        py: Python<'_>,
        role: &str,
        ephemeral: &EphemeralKey,
        peer_public_key: &PublicKey,
        peer_ephemeral_public_key: &PublicKey,
        key_length: usize,
        id: Option<&Bound<'_, PyAny>>,
        peer_id: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<KeyAgreement> {
        let role = match role {
            "initiator" => Role::Initiator,
            "responder" => Role::Responder,
            _ => {
                return Err(PyValueError::new_err(
                    "role is \"initiator\" or \"responder\"",
                ));
            }
        };
        let id = id_or_default(id)?;
        let peer_id = id_or_default(peer_id)?;
        let eph = ephemeral
            .inner
            .lock()
            .map_err(|_| PyValueError::new_err("ephemeral key unusable"))?
            .take()
            .ok_or_else(|| {
                PyValueError::new_err(
                    "this ephemeral key was already used: make a new one per exchange",
                )
            })?;
        let ex = Exchange {
            role,
            own_id: &id,
            peer: &peer_public_key.inner,
            peer_id: &peer_id,
            peer_ephemeral: &peer_ephemeral_public_key.inner,
            key_len: key_length,
        };
        let k = &self.inner;
        let agreement = py.detach(|| k.key_exchange(eph, &ex)).or_raise()?;
        Ok(KeyAgreement { inner: agreement })
    }

    fn __repr__(&self) -> String {
        format!(
            "<SM2PrivateKey public={}>",
            hex(&self.inner.verifying_key().to_uncompressed())
        )
    }
}
