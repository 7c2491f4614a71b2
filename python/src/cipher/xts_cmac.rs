//! SM4XTS and SM4CMAC for Python, and the one-call `cmac_sm4`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use shangmi::sm4::Error as ModeError;
use shangmi::sm4::modes::{self, xts};
use zeroize::Zeroizing;

use super::key16;
use crate::error::{Error, OrRaise};
use crate::{Data, Shared, array, bytes_from, run};

/// SM4-XTS for storage: `SM4XTS(key32, variant="ieee")` (IEEE 1619) or `"gb"`
/// (GB/T 17964-2021's tweak multiplication). Each call is one data unit of 16 bytes to
/// 16 MiB under a 16-byte tweak.
#[pyclass(name = "SM4XTS", module = "shangmi")]
pub(crate) struct Xts {
    inner: xts::Xts,
}

#[pymethods]
impl Xts {
    #[new]
    #[pyo3(signature = (key, variant="ieee"))]
    fn new(key: &Bound<'_, PyAny>, variant: &str) -> PyResult<Self> {
        let v = match variant {
            "ieee" => xts::Variant::Ieee,
            "gb" => xts::Variant::Gb,
            _ => return Err(PyValueError::new_err("variant is \"ieee\" or \"gb\"")),
        };
        let k = Zeroizing::new(array::<32>(key, "key")?);
        Ok(Xts {
            inner: xts::Xts::new(&k, v).or_raise()?,
        })
    }

    fn encrypt<'py>(
        &self,
        py: Python<'py>,
        tweak: &Bound<'_, PyAny>,
        data: Data<'_>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let t = array::<16>(tweak, "tweak")?;
        let d = data;
        let x = &self.inner;
        bytes_from(py, &d, d.len(), |buf| x.encrypt(&t, buf))?.or_raise()
    }

    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        tweak: &Bound<'_, PyAny>,
        data: Data<'_>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let t = array::<16>(tweak, "tweak")?;
        let d = data;
        let x = &self.inner;
        bytes_from(py, &d, d.len(), |buf| x.decrypt(&t, buf))?.or_raise()
    }
}

/// SM4-CMAC (NIST SP 800-38B with SM4), streaming.
#[pyclass(name = "SM4CMAC", module = "shangmi", frozen)]
pub(crate) struct Cmac {
    inner: Shared<modes::mac::Cmac>,
}

#[pymethods]
impl Cmac {
    #[new]
    fn new(key: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Cmac {
            inner: Shared::new(modes::mac::Cmac::new(&*key16(key)?)),
        })
    }

    fn update(&self, py: Python<'_>, data: Data<'_>) -> PyResult<()> {
        let d = data;
        let inner = &self.inner;
        run(py, d.len(), || inner.with(|m| m.update(&d)));
        Ok(())
    }

    /// The 16-byte tag of everything fed so far (the object stays usable).
    fn digest<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.with(|m| m.clone().finalize()))
    }

    /// Checks `tag` in constant time; raises `InvalidTag` on a mismatch. The tag is the full
    /// 16 bytes unless the protocol truncates it: then pass its fixed length as
    /// `tag_length` (8 to 16). The received tag's own length never decides it, so a prefix
    /// of the right tag is refused.
    #[pyo3(signature = (tag, tag_length=16))]
    fn verify(&self, tag: Data<'_>, tag_length: usize) -> PyResult<()> {
        let t = tag;
        let r = self
            .inner
            .with(|m| m.clone())
            .verify_truncated(&t, tag_length);
        r.map_err(|e| match e {
            ModeError::Decrypt => Error::Tag("SM4-CMAC mismatch").into(),
            e => Error::from(e).into(),
        })
    }

    fn copy(&self) -> Self {
        Cmac {
            inner: Shared::new(self.inner.with(|m| m.clone())),
        }
    }
}

/// SM4-CMAC(key, data): 16 bytes.
#[pyfunction]
pub(super) fn cmac_sm4<'py>(
    py: Python<'py>,
    key: &Bound<'_, PyAny>,
    data: Data<'_>,
) -> PyResult<Bound<'py, PyBytes>> {
    let k = key16(key)?;
    let d = data;
    let out = run(py, d.len(), || modes::mac::cmac(&k, &d));
    Ok(PyBytes::new(py, &out))
}
