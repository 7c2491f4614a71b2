//! SM2: keys in every format other SM libraries exchange, signatures (DER or raw r || s),
//! public-key encryption in the three ciphertext layouts, key exchange and batch
//! verification. Every operation runs with the GIL released.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};
use shangmi::sm2::{
    self, Agreement, EphemeralSecret, Exchange, Format, Role, Signature, SigningKey, VerifyingKey,
};
use zeroize::Zeroizing;

use crate::error::{Error, OrRaise};
use crate::{Data, DecryptionError, InvalidSignature, array, data, hex, run};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PrivateKey>()?;
    m.add_class::<PublicKey>()?;
    m.add_class::<EphemeralKey>()?;
    m.add_class::<KeyAgreement>()?;
    m.add_function(wrap_pyfunction!(verify_batch, m)?)?;
    m.add_function(wrap_pyfunction!(convert_ciphertext, m)?)?;
    m.add("DEFAULT_ID", PyBytes::new(m.py(), sm2::DEFAULT_ID))?;
    Ok(())
}

/// PEM arrives as str or bytes.
fn text(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(s) = obj.cast::<PyString>() {
        return s.extract::<String>();
    }
    String::from_utf8(data(obj, "PEM data")?.to_vec())
        .map_err(|_| PyValueError::new_err("PEM data is not UTF-8 text"))
}

fn format(name: &str) -> PyResult<Format> {
    match name {
        "c1c3c2" => Ok(Format::C1C3C2),
        "c1c2c3" => Ok(Format::C1C2C3),
        "asn1" | "der" => Ok(Format::Der),
        _ => Err(PyValueError::new_err(format!(
            "unknown ciphertext format {name:?}: \"c1c3c2\", \"c1c2c3\" or \"asn1\""
        ))),
    }
}

fn encode_sig<'py>(
    py: Python<'py>,
    sig: &Signature,
    encoding: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    match encoding {
        "der" => Ok(PyBytes::new(py, &sig.to_der())),
        "raw" => Ok(PyBytes::new(py, &sig.to_bytes())),
        _ => Err(PyValueError::new_err("encoding is \"der\" or \"raw\"")),
    }
}

fn decode_sig(bytes: &[u8], encoding: &str) -> PyResult<Signature> {
    let sig = match encoding {
        "der" => Signature::from_der(bytes),
        "raw" => Signature::from_bytes(bytes),
        _ => return Err(PyValueError::new_err("encoding is \"der\" or \"raw\"")),
    };
    sig.map_err(|_| InvalidSignature::new_err("malformed SM2 signature"))
}

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

fn id_or_default(id: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<u8>> {
    match id {
        Some(i) if !i.is_none() => Ok(data(i, "id")?.to_vec()),
        _ => Ok(sm2::DEFAULT_ID.to_vec()),
    }
}

/// An SM2 public key.
#[pyclass(name = "SM2PublicKey", module = "shangmi", frozen, eq)]
#[derive(PartialEq)]
pub(crate) struct PublicKey {
    inner: VerifyingKey,
}

#[pymethods]
impl PublicKey {
    /// From SEC1 bytes (`04 || x || y`, or compressed `02/03 || x`) or the raw 64-byte
    /// `x || y` other SM libraries exchange.
    #[staticmethod]
    fn from_bytes(data: Data<'_>) -> PyResult<Self> {
        let d = data;
        let inner = if d.len() == 64 {
            let mut sec1 = [4u8; 65];
            sec1[1..].copy_from_slice(&d);
            VerifyingKey::from_sec1_bytes(&sec1)
        } else {
            VerifyingKey::from_sec1_bytes(&d)
        };
        Ok(PublicKey {
            inner: inner.or_raise()?,
        })
    }

    /// From hex: 130 digits `04...`, 66 digits `02...`/`03...`, or 128 digits `x || y`.
    #[staticmethod]
    fn from_hex(hex: &str) -> PyResult<Self> {
        let bytes = base16ct::mixed::decode_vec(hex.trim())
            .map_err(|_| PyValueError::new_err("public key: not a hex string"))?;
        Self::from_bytes(Data::Owned(bytes))
    }

    /// From PEM (`PUBLIC KEY`, SubjectPublicKeyInfo).
    #[staticmethod]
    fn from_pem(data: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(PublicKey {
            inner: VerifyingKey::from_public_key_pem(&text(data)?).or_raise()?,
        })
    }

    /// From DER (SubjectPublicKeyInfo).
    #[staticmethod]
    fn from_der(data: Data<'_>) -> PyResult<Self> {
        Ok(PublicKey {
            inner: VerifyingKey::from_public_key_der(&data).or_raise()?,
        })
    }

    fn to_pem(&self) -> PyResult<String> {
        self.inner.to_public_key_pem().or_raise()
    }

    fn to_der<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(
            py,
            &self.inner.to_public_key_der().or_raise()?,
        ))
    }

    /// SEC1: 65 bytes `04 || x || y`, or 33 with `compressed=True`.
    #[pyo3(signature = (compressed=false))]
    fn to_bytes<'py>(&self, py: Python<'py>, compressed: bool) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.to_sec1_bytes(compressed))
    }

    /// Hex of the SEC1 encoding (`04...`, 130 digits; 66 when compressed).
    #[pyo3(signature = (compressed=false))]
    fn to_hex(&self, compressed: bool) -> String {
        hex(&self.inner.to_sec1_bytes(compressed))
    }

    /// e = SM3(Z_A || data): what an SM2 signature signs, for `sign_digest`/`verify_digest`.
    #[pyo3(signature = (data, id=None))]
    fn digest<'py>(
        &self,
        py: Python<'py>,
        data: Data<'_>,
        id: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let d = data;
        let id = id_or_default(id)?;
        let z = self.inner.z(&id).or_raise()?;
        let e = run(py, d.len(), || {
            let mut h = shangmi::sm3::Sm3::new();
            h.update(&z);
            h.update(&d);
            h.finalize()
        });
        Ok(PyBytes::new(py, &e))
    }

    /// Returns None when `signature` is a valid signature of `data` under this key and `id`;
    /// raises `InvalidSignature` otherwise (a malformed signature included).
    #[pyo3(signature = (signature, data, id=None, encoding="der"))]
    fn verify(
        &self,
        py: Python<'_>,
        signature: Data<'_>,
        data: Data<'_>,
        id: Option<&Bound<'_, PyAny>>,
        encoding: &str,
    ) -> PyResult<()> {
        let sig = decode_sig(&signature, encoding)?;
        let d = data;
        let id = id_or_default(id)?;
        let k = &self.inner;
        py.detach(|| k.verify_with_id(&id, &d, &sig))
            .map_err(|e| Error::verification(e).into())
    }

    /// `verify` for a precomputed 32-byte e.
    #[pyo3(signature = (signature, digest, encoding="der"))]
    fn verify_digest(
        &self,
        py: Python<'_>,
        signature: Data<'_>,
        digest: &Bound<'_, PyAny>,
        encoding: &str,
    ) -> PyResult<()> {
        let sig = decode_sig(&signature, encoding)?;
        let e = array::<32>(digest, "digest")?;
        let k = &self.inner;
        py.detach(|| k.verify_digest(&e, &sig))
            .map_err(|e| Error::verification(e).into())
    }

    /// Encrypts to this key; `format` is "c1c3c2" (GB/T 32918.4-2016, the default),
    /// "c1c2c3" (the 2010 draft's order) or "asn1" (GM/T 0009, OpenSSL). C1 is `04 || x || y`
    /// in the raw layouts.
    #[pyo3(signature = (data, format="c1c3c2"))]
    fn encrypt<'py>(
        &self,
        py: Python<'py>,
        data: Data<'_>,
        format: &str,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let f = self::format(format)?;
        let d = data;
        let k = &self.inner;
        let out = py.detach(|| k.encrypt(&d, f)).or_raise()?;
        Ok(PyBytes::new(py, &out))
    }

    fn __repr__(&self) -> String {
        format!("<SM2PublicKey {}>", hex(&self.inner.to_uncompressed()))
    }

    /// Pickling (for multiprocessing and dask workers) goes through the SEC1 bytes.
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        Ok((
            py.get_type::<PublicKey>().getattr("from_bytes")?,
            (PyBytes::new(py, &self.inner.to_uncompressed()),),
        ))
    }

    fn __hash__(&self) -> u64 {
        let b = self.inner.to_uncompressed();
        u64::from_le_bytes(b[1..9].try_into().expect("8 bytes"))
    }
}

/// A single-use ephemeral key for one key exchange. Send `public_key()` to the peer; pass
/// the object to `SM2PrivateKey.exchange`, which uses it up.
#[pyclass(name = "SM2EphemeralKey", module = "shangmi", frozen)]
pub(crate) struct EphemeralKey {
    inner: std::sync::Mutex<Option<EphemeralSecret>>,
    public: VerifyingKey,
}

#[pymethods]
impl EphemeralKey {
    #[staticmethod]
    fn generate(py: Python<'_>) -> PyResult<Self> {
        let e = py.detach(EphemeralSecret::random).or_raise()?;
        Ok(EphemeralKey {
            public: *e.public_key(),
            inner: std::sync::Mutex::new(Some(e)),
        })
    }

    fn public_key(&self) -> PublicKey {
        PublicKey { inner: self.public }
    }
}

/// The result of a key exchange: `key`, this side's `confirmation` value to send, and
/// `verify_confirmation(peer_value)` (constant time; raises `ValueError` on a mismatch).
#[pyclass(name = "SM2KeyAgreement", module = "shangmi", frozen)]
pub(crate) struct KeyAgreement {
    inner: Agreement,
}

#[pymethods]
impl KeyAgreement {
    #[getter]
    fn key<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.inner.key())
    }

    #[getter]
    fn confirmation<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.confirmation())
    }

    fn verify_confirmation(&self, value: Data<'_>) -> PyResult<()> {
        self.inner.verify_confirmation(&value).or_raise()
    }
}

/// Verifies many signatures at once and returns each one's verdict (True/False) in order.
/// `items` holds tuples `(public_key, data, signature)` or `(public_key, data, signature,
/// id)`; `threads` is how many threads share the work (0: one per CPU). The GIL is released.
#[pyfunction]
#[pyo3(signature = (items, encoding="der", threads=1))]
fn verify_batch<'py>(
    py: Python<'py>,
    items: &Bound<'_, PyAny>,
    encoding: &str,
    threads: usize,
) -> PyResult<Bound<'py, PyList>> {
    let enc = match encoding {
        "der" => sm2::SignatureEncoding::Der,
        "raw" => sm2::SignatureEncoding::Raw,
        _ => return Err(PyValueError::new_err("encoding is \"der\" or \"raw\"")),
    };
    struct Owned {
        key: VerifyingKey,
        data: Vec<u8>,
        sig: Vec<u8>,
        id: Vec<u8>,
    }
    let mut owned = Vec::new();
    for item in items.try_iter()? {
        let item = item?;
        let n = item.len()?;
        if !(3..=4).contains(&n) {
            return Err(PyValueError::new_err(
                "each item is (public_key, data, signature) or (public_key, data, signature, id)",
            ));
        }
        let key = item.get_item(0)?;
        let key = key
            .cast::<PublicKey>()
            .map_err(|_| PyValueError::new_err("item[0] must be an SM2PublicKey"))?;
        owned.push(Owned {
            key: key.get().inner,
            data: data(&item.get_item(1)?, "data")?.to_vec(),
            sig: data(&item.get_item(2)?, "signature")?.to_vec(),
            id: if n == 4 {
                data(&item.get_item(3)?, "id")?.to_vec()
            } else {
                sm2::DEFAULT_ID.to_vec()
            },
        });
    }
    let verdicts = py.detach(|| {
        let batch: Vec<sm2::BatchItem<'_>> = owned
            .iter()
            .map(|o| sm2::BatchItem {
                key: &o.key,
                id: &o.id,
                message: &o.data,
                signature: &o.sig,
                encoding: enc,
            })
            .collect();
        sm2::verify_batch(&batch, threads)
    });
    PyList::new(py, verdicts)
}

/// Re-encodes an SM2 ciphertext from one layout to another without decrypting it.
#[pyfunction]
fn convert_ciphertext<'py>(
    py: Python<'py>,
    ciphertext: Data<'_>,
    from_format: &str,
    to_format: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    let c = ciphertext;
    let out = sm2::convert(
        &c,
        format(from_format)?,
        format(to_format)?,
        Default::default(),
    )
    .or_raise()?;
    Ok(PyBytes::new(py, &out))
}
