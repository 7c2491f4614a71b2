//! SM2PublicKey for Python: loaded and saved, verification and encryption.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use shangmi::sm2::VerifyingKey;

use super::{decode_sig, format, id_or_default, text};
use crate::error::{Error, OrRaise};
use crate::{Data, array, hex, run};

/// An SM2 public key.
#[pyclass(name = "SM2PublicKey", module = "shangmi", frozen, eq)]
#[derive(PartialEq)]
pub(crate) struct PublicKey {
    pub(crate) inner: VerifyingKey,
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
