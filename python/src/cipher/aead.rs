//! SM4GCM and SM4CCM for Python: one-shot seal and open, and GCM's streaming encryptor and
//! decryptor (the decryptor returns nothing before the tag verifies).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use shangmi::sm4::Error as ModeError;
use shangmi::sm4::Sm4;
use shangmi::sm4::modes::gcm;
use shangmi::sm4::modes::{ccm::Sm4Ccm, gcm::Sm4Gcm};
use zeroize::Zeroizing;

use super::{key16, random_key};
use crate::error::{Error, OrRaise};
use crate::{Data, Shared, bytes_from, data};

/// SM4-GCM: `SM4GCM(key).encrypt(nonce, data, associated_data)` returns ciphertext || tag;
/// `decrypt` raises `InvalidTag` and returns nothing when the tag does not match. Nonces of
/// 12 bytes are the norm (any non-empty length is accepted, as GCM defines); tags 12 to 16
/// bytes (`tag_length`).
#[pyclass(name = "SM4GCM", module = "shangmi")]
pub(crate) struct Gcm {
    inner: Sm4Gcm,
}

#[pymethods]
impl Gcm {
    #[new]
    #[pyo3(signature = (key, tag_length=16))]
    fn new(key: &Bound<'_, PyAny>, tag_length: usize) -> PyResult<Self> {
        let k = key16(key)?;
        Ok(Gcm {
            inner: Sm4Gcm::with_tag_len(&k, tag_length).or_raise()?,
        })
    }

    /// 16 random bytes from the operating system.
    #[staticmethod]
    fn generate_key(py: Python<'_>) -> PyResult<Bound<'_, PyBytes>> {
        random_key(py, 16)
    }

    #[pyo3(signature = (nonce, data, associated_data=None))]
    fn encrypt<'py>(
        &self,
        py: Python<'py>,
        nonce: Data<'_>,
        data: Data<'_>,
        associated_data: Option<Data<'_>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let a = associated_data.unwrap_or_default();
        seal_detached(py, &data, self.inner.tag_len(), |body| {
            self.inner.encrypt_in_place_detached(&nonce, &a, body)
        })
    }

    #[pyo3(signature = (nonce, data, associated_data=None))]
    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        nonce: Data<'_>,
        data: Data<'_>,
        associated_data: Option<Data<'_>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let a = associated_data.unwrap_or_default();
        let short = "SM4-GCM input shorter than its tag";
        open_detached(py, &data, self.inner.tag_len(), short, |body, tag| {
            self.inner.decrypt_in_place_detached(&nonce, &a, body, tag)
        })
    }

    /// A streaming encryptor: `update(data)` returns ciphertext as it goes, `finalize()`
    /// ends the message and the tag is then in `.tag`.
    #[pyo3(signature = (nonce, associated_data=None))]
    fn encryptor(
        &self,
        nonce: Data<'_>,
        associated_data: Option<Data<'_>>,
    ) -> PyResult<GcmEncryptor> {
        let n = nonce;
        let a = associated_data.unwrap_or_default();
        let stream = gcm::GcmStream::new(self.inner.clone(), &n, &a).or_raise()?;
        Ok(GcmEncryptor {
            state: Shared::new(GcmEncState {
                stream: Some(stream),
                tag: None,
            }),
        })
    }

    /// A streaming decryptor that releases nothing before the tag is checked: `update`
    /// collects the ciphertext and returns `b""`; `finalize()` verifies and returns the
    /// whole plaintext, or raises `InvalidTag`.
    #[pyo3(signature = (nonce, tag, associated_data=None))]
    fn decryptor(
        &self,
        nonce: &Bound<'_, PyAny>,
        tag: &Bound<'_, PyAny>,
        associated_data: Option<Data<'_>>,
    ) -> PyResult<GcmDecryptor> {
        let tag = data(tag, "tag")?.to_vec();
        if tag.len() != self.inner.tag_len() {
            return Err(PyValueError::new_err(format!(
                "tag must be {} bytes, not {}",
                self.inner.tag_len(),
                tag.len()
            )));
        }
        Ok(GcmDecryptor {
            gcm: self.inner.clone(),
            nonce: data(nonce, "nonce")?.to_vec(),
            aad: associated_data.unwrap_or_default().to_vec(),
            tag,
            state: Shared::new(GcmDecState {
                sealed: Zeroizing::new(Vec::new()),
                done: false,
            }),
        })
    }
}

/// What a `GcmEncryptor` changes: the message in progress, then its tag.
struct GcmEncState {
    /// `None` once finished (`GcmStream::finish` consumes the stream).
    stream: Option<gcm::GcmStream<Sm4Gcm>>,
    tag: Option<Vec<u8>>,
}

/// Streaming SM4-GCM encryption (from `SM4GCM.encryptor`).
#[pyclass(module = "shangmi", frozen)]
pub(crate) struct GcmEncryptor {
    state: Shared<GcmEncState>,
}

#[pymethods]
impl GcmEncryptor {
    fn update<'py>(&self, py: Python<'py>, data: Data<'_>) -> PyResult<Bound<'py, PyBytes>> {
        let d = data;
        let state = &self.state;
        bytes_from(py, &d, d.len(), |buf| {
            state.with(|st| match &mut st.stream {
                Some(s) => s.encrypt(buf).map_err(Some),
                None => Err(None),
            })
        })?
        .map_err(|e| {
            e.map_or_else(|| Error::finalized("encryptor"), Error::from)
                .into()
        })
    }

    /// Ends the message; the tag is then in `.tag`. Returns `b""` (the ciphertext has all
    /// been returned by `update`).
    fn finalize<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.state.with(|st| {
            let s = st
                .stream
                .take()
                .ok_or_else(|| PyErr::from(Error::finalized("encryptor")))?;
            let n = s.tag_len();
            st.tag = Some(s.finish()[..n].to_vec());
            Ok(PyBytes::new(py, b""))
        })
    }

    #[getter]
    fn tag<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.state.with(|st| {
            st.tag
                .as_ref()
                .map(|t| PyBytes::new(py, t))
                .ok_or_else(|| PyValueError::new_err("the tag exists once finalize() has run"))
        })
    }
}

/// What a `GcmDecryptor` changes: the ciphertext collected so far.
struct GcmDecState {
    sealed: Zeroizing<Vec<u8>>,
    done: bool,
}

/// Streaming SM4-GCM decryption (from `SM4GCM.decryptor`): output only after verification.
#[pyclass(module = "shangmi", frozen)]
pub(crate) struct GcmDecryptor {
    gcm: Sm4Gcm,
    nonce: Vec<u8>,
    aad: Vec<u8>,
    tag: Vec<u8>,
    state: Shared<GcmDecState>,
}

#[pymethods]
impl GcmDecryptor {
    fn update<'py>(&self, py: Python<'py>, data: Data<'_>) -> PyResult<Bound<'py, PyBytes>> {
        let d = data;
        self.state.with(|st| {
            if st.done {
                return Err(Error::finalized("decryptor").into());
            }
            st.sealed.extend_from_slice(&d);
            Ok(PyBytes::new(py, b""))
        })
    }

    /// Verifies the tag and returns the whole plaintext, or raises `InvalidTag`.
    fn finalize<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let sealed = self.state.with(|st| {
            if st.done {
                return Err(PyErr::from(Error::finalized("decryptor")));
            }
            st.done = true;
            Ok(core::mem::take(&mut st.sealed))
        })?;
        let (gcm, nonce, aad, tag) = (&self.gcm, &self.nonce, &self.aad, &self.tag);
        bytes_from(py, &sealed, sealed.len(), |buf| {
            gcm.decrypt_in_place_detached(nonce, aad, buf, tag)
        })?
        .or_raise()
    }
}

/// SM4-CCM, shaped like pyca's `AESCCM`: the nonce (7 to 13 bytes) sets the length field,
/// `tag_length` is 4, 6, ..., 16. Immutable, so threads share it freely.
#[pyclass(name = "SM4CCM", module = "shangmi", frozen)]
pub(crate) struct Ccm {
    /// One instance per nonce length 7..=13.
    by_nonce: Vec<Sm4Ccm>,
    tag_len: usize,
}

impl Ccm {
    fn for_nonce(&self, len: usize) -> PyResult<&Sm4Ccm> {
        len.checked_sub(7)
            .and_then(|i| self.by_nonce.get(i))
            .ok_or_else(|| {
                PyValueError::new_err(format!("CCM nonces are 7 to 13 bytes, not {len}"))
            })
    }
}

#[pymethods]
impl Ccm {
    #[new]
    #[pyo3(signature = (key, tag_length=16))]
    fn new(key: &Bound<'_, PyAny>, tag_length: usize) -> PyResult<Self> {
        let cipher = Sm4::new(&*key16(key)?);
        // A bad tag length fails here, at construction, as in pyca.
        let by_nonce = (7..=13)
            .map(|n| Sm4Ccm::with_cipher(cipher.clone(), n, tag_length))
            .collect::<Result<Vec<_>, _>>()
            .or_raise()?;
        Ok(Ccm {
            by_nonce,
            tag_len: tag_length,
        })
    }

    #[staticmethod]
    fn generate_key(py: Python<'_>) -> PyResult<Bound<'_, PyBytes>> {
        random_key(py, 16)
    }

    #[pyo3(signature = (nonce, data, associated_data=None))]
    fn encrypt<'py>(
        &self,
        py: Python<'py>,
        nonce: Data<'_>,
        data: Data<'_>,
        associated_data: Option<Data<'_>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let a = associated_data.unwrap_or_default();
        let ccm = self.for_nonce(nonce.len())?;
        seal_detached(py, &data, self.tag_len, |body| {
            ccm.encrypt_in_place_detached(&nonce, &a, body)
        })
    }

    #[pyo3(signature = (nonce, data, associated_data=None))]
    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        nonce: Data<'_>,
        data: Data<'_>,
        associated_data: Option<Data<'_>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let a = associated_data.unwrap_or_default();
        let short = "SM4-CCM input shorter than its tag";
        let ccm = self.for_nonce(nonce.len())?;
        open_detached(py, &data, self.tag_len, short, |body, tag| {
            ccm.decrypt_in_place_detached(&nonce, &a, body, tag)
        })
    }
}

/// `data || tag` for a one-shot AEAD: the body sealed in the output buffer, the tag (cut to
/// `tag_len`) after it.
fn seal_detached<'py, T: AsRef<[u8]>>(
    py: Python<'py>,
    data: &[u8],
    tag_len: usize,
    seal: impl FnOnce(&mut [u8]) -> Result<T, ModeError> + Send,
) -> PyResult<Bound<'py, PyBytes>> {
    bytes_from(py, data, data.len() + tag_len, |buf| {
        let (body, tag) = buf.split_at_mut(data.len());
        tag.copy_from_slice(&seal(body)?.as_ref()[..tag_len]);
        Ok::<(), ModeError>(())
    })?
    .or_raise()
}

/// The plaintext of a one-shot AEAD's `data || tag`, or `InvalidTag` and nothing; an input
/// shorter than the tag is `InvalidTag` with `short` as its message.
fn open_detached<'py>(
    py: Python<'py>,
    data: &[u8],
    tag_len: usize,
    short: &'static str,
    open: impl FnOnce(&mut [u8], &[u8]) -> Result<(), ModeError> + Send,
) -> PyResult<Bound<'py, PyBytes>> {
    let body = data
        .len()
        .checked_sub(tag_len)
        .ok_or_else(|| PyErr::from(Error::Tag(short)))?;
    bytes_from(py, data, body, |buf| open(buf, &data[body..]))?.or_raise()
}
