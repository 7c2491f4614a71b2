//! SM2 key exchange for Python (GB/T 32918.3): the ephemeral key and the agreement.

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use shangmi::sm2::{Agreement, EphemeralSecret, VerifyingKey};

use super::public::PublicKey;
use crate::Data;
use crate::error::OrRaise;

/// A single-use ephemeral key for one key exchange. Send `public_key()` to the peer; pass
/// the object to `SM2PrivateKey.exchange`, which uses it up.
#[pyclass(name = "SM2EphemeralKey", module = "shangmi", frozen)]
pub(crate) struct EphemeralKey {
    pub(crate) inner: std::sync::Mutex<Option<EphemeralSecret>>,
    pub(crate) public: VerifyingKey,
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
    pub(crate) inner: Agreement,
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
