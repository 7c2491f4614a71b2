//! SM3: a `hashlib`-shaped object, HMAC, PBKDF2, the SM2 KDF and many-message hashing.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use shangmi::sm3;

use crate::error::OrRaise;
use crate::{Data, Shared, data, hex, run};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Sm3>()?;
    m.add_class::<HmacSm3>()?;
    m.add_function(wrap_pyfunction!(sm3_digest, m)?)?;
    m.add_function(wrap_pyfunction!(hmac_sm3, m)?)?;
    m.add_function(wrap_pyfunction!(pbkdf2_hmac_sm3, m)?)?;
    m.add_function(wrap_pyfunction!(sm2_kdf, m)?)?;
    m.add_function(wrap_pyfunction!(sm3_many, m)?)?;
    Ok(())
}

/// SM3 as a `hashlib` object: `sm3(b"abc").hexdigest()`, `update`, `copy`; also a
/// `digestmod` for `hmac.new(key, msg, shangmi.sm3)`.
#[pyclass(name = "sm3", module = "shangmi", frozen)]
pub(crate) struct Sm3 {
    inner: Shared<sm3::Sm3>,
}

#[pymethods]
impl Sm3 {
    #[new]
    #[pyo3(signature = (data=None, *, usedforsecurity=true))]
    fn new(py: Python<'_>, data: Option<Data<'_>>, usedforsecurity: bool) -> PyResult<Self> {
        let _ = usedforsecurity;
        let h = Sm3 {
            inner: Shared::new(sm3::Sm3::new()),
        };
        if let Some(d) = data {
            h.update(py, d)?;
        }
        Ok(h)
    }

    /// Feeds more data.
    fn update(&self, py: Python<'_>, data: Data<'_>) -> PyResult<()> {
        let d = data;
        let inner = &self.inner;
        run(py, d.len(), || inner.with(|h| h.update(&d)));
        Ok(())
    }

    /// The digest of everything fed so far (the object stays usable).
    fn digest<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.with(|h| h.clone().finalize()))
    }

    fn hexdigest(&self) -> String {
        hex(&self.inner.with(|h| h.clone().finalize()))
    }

    fn copy(&self) -> Self {
        Sm3 {
            inner: Shared::new(self.inner.with(|h| h.clone())),
        }
    }

    #[getter]
    fn name(&self) -> &'static str {
        "sm3"
    }

    #[getter]
    fn digest_size(&self) -> usize {
        sm3::DIGEST_SIZE
    }

    #[getter]
    fn block_size(&self) -> usize {
        sm3::BLOCK_SIZE
    }

    fn __repr__(&self) -> &'static str {
        "<sm3 HASH object>"
    }
}

/// The SM3 digest of `data` in one call.
#[pyfunction]
#[pyo3(name = "sm3_digest")]
fn sm3_digest<'py>(py: Python<'py>, data: Data<'_>) -> PyResult<Bound<'py, PyBytes>> {
    let d = data;
    let out = run(py, d.len(), || sm3::hash(&d));
    Ok(PyBytes::new(py, &out))
}

/// HMAC-SM3 as a streaming object with constant-time verification.
#[pyclass(name = "HMACSM3", module = "shangmi", frozen)]
pub(crate) struct HmacSm3 {
    inner: Shared<sm3::HmacSm3>,
}

#[pymethods]
impl HmacSm3 {
    #[new]
    fn new(key: Data<'_>) -> PyResult<Self> {
        Ok(HmacSm3 {
            inner: Shared::new(sm3::HmacSm3::new(&key)),
        })
    }

    fn update(&self, py: Python<'_>, data: Data<'_>) -> PyResult<()> {
        let d = data;
        let inner = &self.inner;
        run(py, d.len(), || inner.with(|h| h.update(&d)));
        Ok(())
    }

    /// The MAC of everything fed so far (the object stays usable).
    fn digest<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.with(|h| h.clone().finalize()))
    }

    fn hexdigest(&self) -> String {
        hex(&self.inner.with(|h| h.clone().finalize()))
    }

    /// Compares `tag` with the MAC in constant time; raises `InvalidTag` on a mismatch.
    fn verify(&self, tag: Data<'_>) -> PyResult<()> {
        let t = tag;
        self.inner
            .with(|h| h.clone())
            .verify(&t)
            .map_err(|_| crate::InvalidTag::new_err("HMAC-SM3 mismatch"))
    }

    fn copy(&self) -> Self {
        HmacSm3 {
            inner: Shared::new(self.inner.with(|h| h.clone())),
        }
    }

    #[getter]
    fn digest_size(&self) -> usize {
        sm3::DIGEST_SIZE
    }
}

/// HMAC-SM3(key, data).
#[pyfunction]
fn hmac_sm3<'py>(py: Python<'py>, key: Data<'_>, data: Data<'_>) -> PyResult<Bound<'py, PyBytes>> {
    let k = key;
    let d = data;
    let out = run(py, d.len(), || sm3::hmac(&k, &d));
    Ok(PyBytes::new(py, &out))
}

/// PBKDF2 with HMAC-SM3, `dklen` bytes (32 by default). Runs with the GIL released.
#[pyfunction]
#[pyo3(signature = (password, salt, iterations, dklen=None))]
fn pbkdf2_hmac_sm3<'py>(
    py: Python<'py>,
    password: Data<'_>,
    salt: Data<'_>,
    iterations: u32,
    dklen: Option<usize>,
) -> PyResult<Bound<'py, PyBytes>> {
    let p = password;
    let s = salt;
    // Written into the bytes object directly: a huge dklen is Python's MemoryError (or the
    // KDF's length error), never an aborting allocation here.
    let len = dklen.unwrap_or(sm3::DIGEST_SIZE);
    if len < crate::RELEASE_GIL_AT {
        // Short output, any number of iterations: always worth releasing the GIL.
        let mut out = zeroize::Zeroizing::new(vec![0u8; len]);
        let buf = &mut out[..];
        py.detach(|| sm3::pbkdf2(&p, &s, iterations, buf))
            .or_raise()?;
        return Ok(PyBytes::new(py, &out));
    }
    crate::bytes_from(py, &[], len, |buf| sm3::pbkdf2(&p, &s, iterations, buf))?.or_raise()
}

/// The SM2 key-derivation function (GB/T 32918.4 KDF over SM3): `length` bytes from `z`.
#[pyfunction]
fn sm2_kdf<'py>(
    py: Python<'py>,
    z: &Bound<'_, PyAny>,
    length: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let z = data(z, "z")?;
    crate::bytes_from(py, &[], length, |buf| sm3::kdf_into(&z, buf))?
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The SM3 digests of many messages at once, hashed several at a time in SIMD lanes, with
/// the GIL released.
#[pyfunction]
fn sm3_many<'py>(py: Python<'py>, messages: &Bound<'_, PyAny>) -> PyResult<Bound<'py, PyList>> {
    let items: Vec<Bound<'_, PyAny>> = messages.try_iter()?.collect::<PyResult<_>>()?;
    let datas = items
        .iter()
        .map(|m| data(m, "message"))
        .collect::<PyResult<Vec<_>>>()?;
    let slices: Vec<&[u8]> = datas.iter().map(|d| &d[..]).collect();
    let digests = py.detach(|| sm3::hash_many(&slices));
    PyList::new(py, digests.iter().map(|d| PyBytes::new(py, d)))
}
