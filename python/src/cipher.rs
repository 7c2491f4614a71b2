//! SM4: the AEADs shaped like pyca's `AESGCM`/`AESCCM`, the raw modes, XTS, CMAC, and
//! streaming objects for data that arrives in pieces.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use shangmi::sm4::Error as ModeError;
use shangmi::sm4::modes::{self, cbc, cfb, ctr, ecb, gcm, ofb, xts};
use shangmi::sm4::modes::{ccm::Sm4Ccm, gcm::Sm4Gcm};
use shangmi::sm4::{Direction, Mode, Sm4};
use zeroize::Zeroizing;

use crate::error::{Error, OrRaise};
use crate::{Data, Shared, array, bytes_from, data, run};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Gcm>()?;
    m.add_class::<Ccm>()?;
    m.add_class::<Cipher>()?;
    m.add_class::<Stream>()?;
    m.add_class::<GcmEncryptor>()?;
    m.add_class::<GcmDecryptor>()?;
    m.add_class::<Xts>()?;
    m.add_class::<Cmac>()?;
    m.add_function(wrap_pyfunction!(cmac_sm4, m)?)?;
    Ok(())
}

fn key16(key: &Bound<'_, PyAny>) -> PyResult<Zeroizing<[u8; 16]>> {
    Ok(Zeroizing::new(array::<16>(key, "key")?))
}

fn random_key<'py>(py: Python<'py>, len: usize) -> PyResult<Bound<'py, PyBytes>> {
    Ok(py
        .import("os")?
        .call_method1("urandom", (len,))?
        .cast_into::<PyBytes>()?)
}

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
        let n = nonce;
        let d = data;
        let a = associated_data.unwrap_or_default();
        let (inner, t) = (&self.inner, self.inner.tag_len());
        bytes_from(py, &d, d.len() + t, |buf| {
            let (body, tag) = buf.split_at_mut(d.len());
            tag.copy_from_slice(&inner.encrypt_in_place_detached(&n, &a, body)?[..t]);
            Ok::<(), ModeError>(())
        })?
        .or_raise()
    }

    #[pyo3(signature = (nonce, data, associated_data=None))]
    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        nonce: Data<'_>,
        data: Data<'_>,
        associated_data: Option<Data<'_>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let n = nonce;
        let d = data;
        let a = associated_data.unwrap_or_default();
        let body = d
            .len()
            .checked_sub(self.inner.tag_len())
            .ok_or_else(|| PyErr::from(Error::Tag("SM4-GCM input shorter than its tag")))?;
        let inner = &self.inner;
        bytes_from(py, &d, body, |buf| {
            inner.decrypt_in_place_detached(&n, &a, buf, &d[body..])
        })?
        .or_raise()
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
        let n = nonce;
        let d = data;
        let a = associated_data.unwrap_or_default();
        let t = self.tag_len;
        let ccm = self.for_nonce(n.len())?;
        bytes_from(py, &d, d.len() + t, |buf| {
            let (body, tag) = buf.split_at_mut(d.len());
            tag.copy_from_slice(&ccm.encrypt_in_place_detached(&n, &a, body)?);
            Ok::<(), ModeError>(())
        })?
        .or_raise()
    }

    #[pyo3(signature = (nonce, data, associated_data=None))]
    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        nonce: Data<'_>,
        data: Data<'_>,
        associated_data: Option<Data<'_>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let n = nonce;
        let d = data;
        let a = associated_data.unwrap_or_default();
        let body = d
            .len()
            .checked_sub(self.tag_len)
            .ok_or_else(|| PyErr::from(Error::Tag("SM4-CCM input shorter than its tag")))?;
        let ccm = self.for_nonce(n.len())?;
        bytes_from(py, &d, body, |buf| {
            ccm.decrypt_in_place_detached(&n, &a, buf, &d[body..])
        })?
        .or_raise()
    }
}

fn iv16(iv: &Bound<'_, PyAny>) -> PyResult<[u8; 16]> {
    array::<16>(iv, "iv")
}

/// The SM4 block cipher and its unauthenticated modes. Prefer `SM4GCM`/`SM4CCM`: these
/// modes give no integrity, and CBC with padding checked by the receiver is a padding
/// oracle unless something else authenticates the ciphertext.
#[pyclass(name = "SM4", module = "shangmi")]
pub(crate) struct Cipher {
    inner: Sm4,
}

#[pymethods]
impl Cipher {
    #[new]
    fn new(key: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Cipher {
            inner: Sm4::new(&*key16(key)?),
        })
    }

    /// The SM4 implementation this CPU runs (e.g. "aesni-avx2").
    #[getter]
    fn implementation(&self) -> &'static str {
        self.inner.implementation()
    }

    fn encrypt_block<'py>(
        &self,
        py: Python<'py>,
        block: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let mut b = array::<16>(block, "block")?;
        self.inner.encrypt_block(&mut b);
        Ok(PyBytes::new(py, &b))
    }

    fn decrypt_block<'py>(
        &self,
        py: Python<'py>,
        block: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let mut b = Zeroizing::new(array::<16>(block, "block")?);
        self.inner.decrypt_block(&mut b);
        Ok(PyBytes::new(py, &b[..]))
    }

    /// ECB; with `padding=True` PKCS#7 is added, else the data must be whole blocks.
    #[pyo3(signature = (data, padding=false))]
    fn ecb_encrypt<'py>(
        &self,
        py: Python<'py>,
        data: Data<'_>,
        padding: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let d = data;
        let (c, n) = (&self.inner, d.len());
        if !padding {
            return bytes_from(py, &d, n, |buf| ecb::encrypt(c, buf))?.or_raise();
        }
        let len = padded_len(n)?;
        bytes_from(py, &d, len, |buf| {
            ecb::encrypt_padded_in_place(c, buf, n).map(drop)
        })?
        .or_raise()
    }

    #[pyo3(signature = (data, padding=false))]
    fn ecb_decrypt<'py>(
        &self,
        py: Python<'py>,
        data: Data<'_>,
        padding: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let d = data;
        let c = &self.inner;
        if !padding {
            return bytes_from(py, &d, d.len(), |buf| ecb::decrypt(c, buf))?.or_raise();
        }
        let (last, kept) = last_block(&d, |b| c.decrypt_block(b))?;
        let full = d.len() - 16;
        bytes_from(py, &d, full + kept, |buf| {
            buf[full..].copy_from_slice(&last[..kept]);
            ecb::decrypt(c, &mut buf[..full])
        })?
        .or_raise()
    }

    /// CBC; PKCS#7 padding unless `padding=False` (then whole blocks only).
    #[pyo3(signature = (iv, data, padding=true))]
    fn cbc_encrypt<'py>(
        &self,
        py: Python<'py>,
        iv: &Bound<'_, PyAny>,
        data: Data<'_>,
        padding: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let iv = iv16(iv)?;
        let d = data;
        let (c, n) = (&self.inner, d.len());
        if !padding {
            return bytes_from(py, &d, n, |buf| {
                cbc::Encryptor::new(c, &iv).encrypt_blocks(buf)
            })?
            .or_raise();
        }
        let len = padded_len(n)?;
        bytes_from(py, &d, len, |buf| {
            cbc::encrypt_padded_in_place(c, &iv, buf, n).map(drop)
        })?
        .or_raise()
    }

    /// CBC decryption; with padding (the default) the last block is decrypted first, its
    /// padding checked in constant time, and only then is the output made, at its final size.
    #[pyo3(signature = (iv, data, padding=true))]
    fn cbc_decrypt<'py>(
        &self,
        py: Python<'py>,
        iv: &Bound<'_, PyAny>,
        data: Data<'_>,
        padding: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let iv = iv16(iv)?;
        let d = data;
        let c = &self.inner;
        if !padding {
            return bytes_from(py, &d, d.len(), |buf| {
                cbc::Decryptor::new(c, &iv).decrypt_blocks(buf)
            })?
            .or_raise();
        }
        let (last, kept) = last_block(&d, |b| {
            let prev: [u8; 16] = if d.len() > 16 {
                d[d.len() - 32..d.len() - 16].try_into().expect("16 bytes")
            } else {
                iv
            };
            c.decrypt_block(b);
            for (x, p) in b.iter_mut().zip(prev) {
                *x ^= p;
            }
        })?;
        let full = d.len() - 16;
        bytes_from(py, &d, full + kept, |buf| {
            buf[full..].copy_from_slice(&last[..kept]);
            cbc::Decryptor::new(c, &iv).decrypt_blocks(&mut buf[..full])
        })?
        .or_raise()
    }

    /// CFB-128, any length.
    fn cfb_encrypt<'py>(
        &self,
        py: Python<'py>,
        iv: &Bound<'_, PyAny>,
        data: Data<'_>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.keystream(py, iv, data, |c, iv, buf| cfb::Cfb::new(c, iv).encrypt(buf))
    }

    fn cfb_decrypt<'py>(
        &self,
        py: Python<'py>,
        iv: &Bound<'_, PyAny>,
        data: Data<'_>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.keystream(py, iv, data, |c, iv, buf| cfb::Cfb::new(c, iv).decrypt(buf))
    }

    /// OFB, any length (encryption and decryption are the same).
    fn ofb<'py>(
        &self,
        py: Python<'py>,
        iv: &Bound<'_, PyAny>,
        data: Data<'_>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.keystream(py, iv, data, |c, iv, buf| {
            ofb::Ofb::new(c, iv).apply_keystream(buf)
        })
    }

    /// CTR with a 128-bit big-endian counter starting at `iv`, any length (encryption and
    /// decryption are the same).
    fn ctr<'py>(
        &self,
        py: Python<'py>,
        iv: &Bound<'_, PyAny>,
        data: Data<'_>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let iv = iv16(iv)?;
        let d = data;
        let c = &self.inner;
        bytes_from(py, &d, d.len(), |buf| ctr::apply_keystream(c, &iv, buf))?.or_raise()
    }

    /// A streaming encryptor for `mode` ("ecb", "cbc", "cfb", "ofb" or "ctr"):
    /// `update(data)` returns what is ready, `finalize()` the rest. `padding` (PKCS#7)
    /// applies to ECB and CBC.
    #[pyo3(signature = (mode, iv=None, padding=false))]
    fn encryptor(
        &self,
        mode: &str,
        iv: Option<&Bound<'_, PyAny>>,
        padding: bool,
    ) -> PyResult<Stream> {
        Stream::new(&self.inner, mode, iv, padding, true)
    }

    /// A streaming decryptor; with padding, the last block is held back until `finalize()`
    /// checks and removes the padding.
    #[pyo3(signature = (mode, iv=None, padding=false))]
    fn decryptor(
        &self,
        mode: &str,
        iv: Option<&Bound<'_, PyAny>>,
        padding: bool,
    ) -> PyResult<Stream> {
        Stream::new(&self.inner, mode, iv, padding, false)
    }
}

impl Cipher {
    /// A stream mode over any length, written straight into the output.
    fn keystream<'py>(
        &self,
        py: Python<'py>,
        iv: &Bound<'_, PyAny>,
        data: Data<'_>,
        f: impl FnOnce(&Sm4, &[u8; 16], &mut [u8]) + Send,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let iv = iv16(iv)?;
        let d = data;
        let c = &self.inner;
        bytes_from(py, &d, d.len(), |buf| {
            f(c, &iv, buf);
            Ok::<(), ModeError>(())
        })?
        .or_raise()
    }
}

/// The last block of padded ciphertext `d` decrypted by `decrypt`, and how many of its bytes
/// are data: the padding is checked (in constant time) before any output exists.
fn last_block(
    d: &[u8],
    decrypt: impl FnOnce(&mut [u8; 16]),
) -> PyResult<(Zeroizing<[u8; 16]>, usize)> {
    if d.is_empty() || !d.len().is_multiple_of(16) {
        return Err(Error::from(ModeError::InvalidLength).into());
    }
    let mut last = Zeroizing::new([0u8; 16]);
    last.copy_from_slice(&d[d.len() - 16..]);
    decrypt(&mut last);
    let pad = modes::padding::unpad_len(&last).map_err(Error::padding)?;
    Ok((last, 16 - pad))
}

/// The length of `n` bytes once padded.
fn padded_len(n: usize) -> PyResult<usize> {
    modes::padding::padded_len(n).ok_or_else(|| Error::from(ModeError::InvalidLength).into())
}

/// Streaming raw-mode SM4 (from `SM4.encryptor` / `SM4.decryptor`): the library's owning
/// stream, shared between threads under a lock.
#[pyclass(module = "shangmi", frozen)]
pub(crate) struct Stream {
    inner: Shared<shangmi::sm4::Stream>,
}

impl Stream {
    fn new(
        cipher: &Sm4,
        mode: &str,
        iv: Option<&Bound<'_, PyAny>>,
        padding: bool,
        encrypt: bool,
    ) -> PyResult<Self> {
        let iv = match (mode, iv) {
            ("ecb", None) => [0u8; 16],
            ("ecb", Some(_)) => return Err(PyValueError::new_err("ECB takes no IV")),
            (_, Some(iv)) => iv16(iv)?,
            (_, None) => return Err(PyValueError::new_err(format!("{mode} needs a 16-byte iv"))),
        };
        let mode = match (mode, padding) {
            ("ecb", false) => Mode::Ecb,
            ("ecb", true) => Mode::EcbPkcs7,
            ("cbc", false) => Mode::Cbc(iv),
            ("cbc", true) => Mode::CbcPkcs7(iv),
            ("cfb" | "ofb" | "ctr", true) => {
                return Err(PyValueError::new_err("padding applies to ECB and CBC only"));
            }
            ("cfb", false) => Mode::Cfb(iv),
            ("ofb", false) => Mode::Ofb(iv),
            ("ctr", false) => Mode::Ctr(iv),
            _ => {
                return Err(PyValueError::new_err(format!(
                    "unknown mode {mode:?}: one of ecb, cbc, cfb, ofb, ctr"
                )));
            }
        };
        let dir = if encrypt {
            Direction::Encrypt
        } else {
            Direction::Decrypt
        };
        Ok(Stream {
            inner: Shared::new(shangmi::sm4::Stream::with_cipher(cipher.clone(), mode, dir)),
        })
    }
}

#[pymethods]
impl Stream {
    fn update<'py>(&self, py: Python<'py>, data: Data<'_>) -> PyResult<Bound<'py, PyBytes>> {
        let d = data;
        let inner = &self.inner;
        // The output's size is only known under the lock: made there, into a private buffer
        // (wiped when dropped), then copied into the `bytes`.
        let out = run(py, d.len(), || {
            inner.with(|s| {
                let need = s.update_len(d.len()).ok_or(ModeError::InvalidLength)?;
                let mut out = Zeroizing::new(vec![0u8; need]);
                s.update(&d, &mut out)?;
                Ok(out)
            })
        })
        .map_err(Error::stream)?;
        Ok(PyBytes::new(py, &out))
    }

    fn finalize<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let out = self
            .inner
            .with(|s| {
                let mut out = Zeroizing::new(vec![0u8; s.finish_len()]);
                let n = s.finish(&mut out)?;
                out.truncate(n);
                Ok(out)
            })
            .map_err(Error::stream)?;
        Ok(PyBytes::new(py, &out))
    }
}

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
fn cmac_sm4<'py>(
    py: Python<'py>,
    key: &Bound<'_, PyAny>,
    data: Data<'_>,
) -> PyResult<Bound<'py, PyBytes>> {
    let k = key16(key)?;
    let d = data;
    let out = run(py, d.len(), || modes::mac::cmac(&k, &d));
    Ok(PyBytes::new(py, &out))
}
