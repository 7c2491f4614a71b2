//! SM4: the AEADs shaped like pyca's `AESGCM`/`AESCCM`, the raw modes, XTS, CMAC, and
//! streaming objects for data that arrives in pieces.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use self_cell::self_cell;
use shangmi::sm4::modes::{self, Error as ModeError, cbc, cfb, ctr, ecb, gcm, ofb, xts};
use shangmi::sm4::{Sm4, Sm4Ccm, Sm4Gcm};
use zeroize::Zeroizing;

use crate::{InvalidTag, array, bytes_from, data, data_or_empty, run};

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

fn value_error(e: ModeError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// For the AEADs: a failed check is `InvalidTag`, anything else malformed input.
fn aead_error(e: ModeError) -> PyErr {
    match e {
        ModeError::Decrypt => InvalidTag::new_err("SM4 authentication tag mismatch"),
        e => value_error(e),
    }
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
            inner: Sm4Gcm::with_tag_len(&k, tag_length).map_err(value_error)?,
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
        nonce: &Bound<'_, PyAny>,
        data: &Bound<'_, PyAny>,
        associated_data: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let n = crate::data(nonce, "nonce")?;
        let d = crate::data(data, "data")?;
        let a = data_or_empty(associated_data, "associated_data")?;
        let (inner, t) = (&self.inner, self.inner.tag_len());
        bytes_from(py, &d, d.len() + t, |buf| {
            let (body, tag) = buf.split_at_mut(d.len());
            tag.copy_from_slice(&inner.encrypt_in_place_detached(&n, &a, body)?[..t]);
            Ok(())
        })?
        .map_err(aead_error)
    }

    #[pyo3(signature = (nonce, data, associated_data=None))]
    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        nonce: &Bound<'_, PyAny>,
        data: &Bound<'_, PyAny>,
        associated_data: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let n = crate::data(nonce, "nonce")?;
        let d = crate::data(data, "data")?;
        let a = data_or_empty(associated_data, "associated_data")?;
        let body = d
            .len()
            .checked_sub(self.inner.tag_len())
            .ok_or_else(|| InvalidTag::new_err("SM4-GCM input shorter than its tag"))?;
        let inner = &self.inner;
        bytes_from(py, &d, body, |buf| {
            inner.decrypt_in_place_detached(&n, &a, buf, &d[body..])
        })?
        .map_err(aead_error)
    }

    /// A streaming encryptor: `update(data)` returns ciphertext as it goes, `finalize()`
    /// ends the message and the tag is then in `.tag`.
    #[pyo3(signature = (nonce, associated_data=None))]
    fn encryptor(
        &self,
        nonce: &Bound<'_, PyAny>,
        associated_data: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<GcmEncryptor> {
        let n = data(nonce, "nonce")?.to_vec();
        let a = data_or_empty(associated_data, "associated_data")?.to_vec();
        let cell = GcmCell::try_new(Box::new(self.inner.clone()), |g| g.start(&n, &a).map(Some))
            .map_err(aead_error)?;
        Ok(GcmEncryptor {
            cell,
            tag: None,
            tag_len: self.inner.tag_len(),
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
        associated_data: Option<&Bound<'_, PyAny>>,
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
            aad: data_or_empty(associated_data, "associated_data")?.to_vec(),
            sealed: Vec::new(),
            tag,
            done: false,
        })
    }
}

self_cell!(
    struct GcmCell {
        owner: Box<Sm4Gcm>,
        #[not_covariant]
        dependent: GcmState,
    }
);

type GcmState<'a> = Option<gcm::GcmStream<'a>>;

/// Streaming SM4-GCM encryption (from `SM4GCM.encryptor`).
#[pyclass(module = "shangmi")]
pub(crate) struct GcmEncryptor {
    cell: GcmCell,
    tag: Option<Vec<u8>>,
    tag_len: usize,
}

#[pymethods]
impl GcmEncryptor {
    fn update<'py>(
        &mut self,
        py: Python<'py>,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let mut buf = crate::data(data, "data")?.to_vec();
        let cell = &mut self.cell;
        run(py, buf.len(), || {
            cell.with_dependent_mut(|_, s| match s {
                Some(s) => s.encrypt(&mut buf).map_err(Some),
                None => Err(None),
            })
        })
        .map_err(|e| match e {
            Some(e) => aead_error(e),
            None => PyValueError::new_err("the encryptor is finalized"),
        })?;
        Ok(PyBytes::new(py, &buf))
    }

    /// Ends the message; the tag is then in `.tag`. Returns `b""` (the ciphertext has all
    /// been returned by `update`).
    fn finalize<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let tag = self
            .cell
            .with_dependent_mut(|_, s| s.take().map(|s| s.finish()))
            .ok_or_else(|| PyValueError::new_err("the encryptor is finalized"))?;
        self.tag = Some(tag[..self.tag_len].to_vec());
        Ok(PyBytes::new(py, b""))
    }

    #[getter]
    fn tag<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.tag
            .as_ref()
            .map(|t| PyBytes::new(py, t))
            .ok_or_else(|| PyValueError::new_err("the tag exists once finalize() has run"))
    }
}

/// Streaming SM4-GCM decryption (from `SM4GCM.decryptor`): output only after verification.
#[pyclass(module = "shangmi")]
pub(crate) struct GcmDecryptor {
    gcm: Sm4Gcm,
    nonce: Vec<u8>,
    aad: Vec<u8>,
    sealed: Vec<u8>,
    tag: Vec<u8>,
    done: bool,
}

#[pymethods]
impl GcmDecryptor {
    fn update<'py>(
        &mut self,
        py: Python<'py>,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        if self.done {
            return Err(PyValueError::new_err("the decryptor is finalized"));
        }
        self.sealed.extend_from_slice(&crate::data(data, "data")?);
        Ok(PyBytes::new(py, b""))
    }

    /// Verifies the tag and returns the whole plaintext, or raises `InvalidTag`.
    fn finalize<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        if self.done {
            return Err(PyValueError::new_err("the decryptor is finalized"));
        }
        self.done = true;
        let mut sealed = core::mem::take(&mut self.sealed);
        sealed.extend_from_slice(&self.tag);
        let (gcm, nonce, aad) = (&self.gcm, &self.nonce, &self.aad);
        let out = Zeroizing::new(
            run(py, sealed.len(), || gcm.decrypt(nonce, aad, &sealed)).map_err(aead_error)?,
        );
        Ok(PyBytes::new(py, &out))
    }
}

/// SM4-CCM, shaped like pyca's `AESCCM`: the nonce (7 to 13 bytes) sets the length field,
/// `tag_length` is 4, 6, ..., 16.
#[pyclass(name = "SM4CCM", module = "shangmi")]
pub(crate) struct Ccm {
    /// One instance per nonce length 7..=13, made on first use.
    by_nonce: [Option<Sm4Ccm>; 7],
    cipher: Sm4,
    tag_len: usize,
}

impl Ccm {
    fn for_nonce(&mut self, len: usize) -> PyResult<&Sm4Ccm> {
        if !(7..=13).contains(&len) {
            return Err(PyValueError::new_err(format!(
                "CCM nonces are 7 to 13 bytes, not {len}"
            )));
        }
        let slot = &mut self.by_nonce[len - 7];
        if slot.is_none() {
            *slot = Some(
                Sm4Ccm::with_cipher(self.cipher.clone(), len, self.tag_len).map_err(value_error)?,
            );
        }
        Ok(slot.as_ref().expect("just made"))
    }
}

#[pymethods]
impl Ccm {
    #[new]
    #[pyo3(signature = (key, tag_length=16))]
    fn new(key: &Bound<'_, PyAny>, tag_length: usize) -> PyResult<Self> {
        let cipher = Sm4::new(&*key16(key)?);
        // Checked here so a bad tag length fails at construction, as in pyca.
        Sm4Ccm::with_cipher(cipher.clone(), 13, tag_length).map_err(value_error)?;
        Ok(Ccm {
            by_nonce: Default::default(),
            cipher,
            tag_len: tag_length,
        })
    }

    #[staticmethod]
    fn generate_key(py: Python<'_>) -> PyResult<Bound<'_, PyBytes>> {
        random_key(py, 16)
    }

    #[pyo3(signature = (nonce, data, associated_data=None))]
    fn encrypt<'py>(
        &mut self,
        py: Python<'py>,
        nonce: &Bound<'_, PyAny>,
        data: &Bound<'_, PyAny>,
        associated_data: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let n = crate::data(nonce, "nonce")?;
        let d = crate::data(data, "data")?;
        let a = data_or_empty(associated_data, "associated_data")?;
        let t = self.tag_len;
        let ccm = self.for_nonce(n.len())?;
        bytes_from(py, &d, d.len() + t, |buf| {
            let (body, tag) = buf.split_at_mut(d.len());
            tag.copy_from_slice(&ccm.encrypt_in_place_detached(&n, &a, body)?);
            Ok(())
        })?
        .map_err(aead_error)
    }

    #[pyo3(signature = (nonce, data, associated_data=None))]
    fn decrypt<'py>(
        &mut self,
        py: Python<'py>,
        nonce: &Bound<'_, PyAny>,
        data: &Bound<'_, PyAny>,
        associated_data: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let n = crate::data(nonce, "nonce")?;
        let d = crate::data(data, "data")?;
        let a = data_or_empty(associated_data, "associated_data")?;
        let body = d
            .len()
            .checked_sub(self.tag_len)
            .ok_or_else(|| InvalidTag::new_err("SM4-CCM input shorter than its tag"))?;
        let ccm = self.for_nonce(n.len())?;
        bytes_from(py, &d, body, |buf| {
            ccm.decrypt_in_place_detached(&n, &a, buf, &d[body..])
        })?
        .map_err(aead_error)
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
        data: &Bound<'_, PyAny>,
        padding: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let d = crate::data(data, "data")?;
        let c = &self.inner;
        let len = if padding {
            d.len() / 16 * 16 + 16
        } else {
            d.len()
        };
        bytes_from(py, &d, len, |buf| {
            if padding {
                let n = (len - d.len()) as u8;
                buf[d.len()..].fill(n);
            }
            ecb::encrypt(c, buf)
        })?
        .map_err(value_error)
    }

    #[pyo3(signature = (data, padding=false))]
    fn ecb_decrypt<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'_, PyAny>,
        padding: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let d = crate::data(data, "data")?;
        let c = &self.inner;
        if !padding {
            return bytes_from(py, &d, d.len(), |buf| ecb::decrypt(c, buf))?.map_err(value_error);
        }
        let (last, kept) = last_block(&d, |b| c.decrypt_block(b))?;
        let full = d.len() - 16;
        bytes_from(py, &d, full + kept, |buf| {
            buf[full..].copy_from_slice(&last[..kept]);
            ecb::decrypt(c, &mut buf[..full])
        })?
        .map_err(value_error)
    }

    /// CBC; PKCS#7 padding unless `padding=False` (then whole blocks only).
    #[pyo3(signature = (iv, data, padding=true))]
    fn cbc_encrypt<'py>(
        &self,
        py: Python<'py>,
        iv: &Bound<'_, PyAny>,
        data: &Bound<'_, PyAny>,
        padding: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let iv = iv16(iv)?;
        let d = crate::data(data, "data")?;
        let c = &self.inner;
        let len = if padding {
            d.len() / 16 * 16 + 16
        } else {
            d.len()
        };
        bytes_from(py, &d, len, |buf| {
            if padding {
                let n = (len - d.len()) as u8;
                buf[d.len()..].fill(n);
            }
            cbc::Encryptor::new(c, &iv).encrypt_blocks(buf)
        })?
        .map_err(value_error)
    }

    /// CBC decryption; with padding (the default) the last block is decrypted first, its
    /// padding checked in constant time, and only then is the output made, at its final size.
    #[pyo3(signature = (iv, data, padding=true))]
    fn cbc_decrypt<'py>(
        &self,
        py: Python<'py>,
        iv: &Bound<'_, PyAny>,
        data: &Bound<'_, PyAny>,
        padding: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let iv = iv16(iv)?;
        let d = crate::data(data, "data")?;
        let c = &self.inner;
        if !padding {
            return bytes_from(py, &d, d.len(), |buf| {
                cbc::Decryptor::new(c, &iv).decrypt_blocks(buf)
            })?
            .map_err(value_error);
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
        .map_err(value_error)
    }

    /// CFB-128, any length.
    fn cfb_encrypt<'py>(
        &self,
        py: Python<'py>,
        iv: &Bound<'_, PyAny>,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.keystream(py, iv, data, |c, iv, buf| cfb::Cfb::new(c, iv).encrypt(buf))
    }

    fn cfb_decrypt<'py>(
        &self,
        py: Python<'py>,
        iv: &Bound<'_, PyAny>,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.keystream(py, iv, data, |c, iv, buf| cfb::Cfb::new(c, iv).decrypt(buf))
    }

    /// OFB, any length (encryption and decryption are the same).
    fn ofb<'py>(
        &self,
        py: Python<'py>,
        iv: &Bound<'_, PyAny>,
        data: &Bound<'_, PyAny>,
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
        data: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let iv = iv16(iv)?;
        let d = crate::data(data, "data")?;
        let c = &self.inner;
        bytes_from(py, &d, d.len(), |buf| ctr::apply_keystream(c, &iv, buf))?.map_err(value_error)
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
        data: &Bound<'_, PyAny>,
        f: impl FnOnce(&Sm4, &[u8; 16], &mut [u8]) + Send,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let iv = iv16(iv)?;
        let d = crate::data(data, "data")?;
        let c = &self.inner;
        bytes_from(py, &d, d.len(), |buf| {
            f(c, &iv, buf);
            Ok::<(), ModeError>(())
        })?
        .map_err(value_error)
    }
}

/// The last block of padded ciphertext `d` decrypted by `decrypt`, and how many of its bytes
/// are data: the padding is checked (in constant time) before any output exists.
fn last_block(
    d: &[u8],
    decrypt: impl FnOnce(&mut [u8; 16]),
) -> PyResult<(Zeroizing<[u8; 16]>, usize)> {
    if d.is_empty() || !d.len().is_multiple_of(16) {
        return Err(value_error(ModeError::InvalidLength));
    }
    let mut last = Zeroizing::new([0u8; 16]);
    last.copy_from_slice(&d[d.len() - 16..]);
    decrypt(&mut last);
    let pad = modes::padding::unpad_len(&last).map_err(padding_error)?;
    Ok((last, 16 - pad))
}

fn padding_error(e: ModeError) -> PyErr {
    match e {
        ModeError::Decrypt => PyValueError::new_err("invalid PKCS#7 padding"),
        e => value_error(e),
    }
}

/// What a stream does per call, borrowing the stream's own copy of the cipher.
enum Mode<'a> {
    Ecb(&'a Sm4),
    CbcEnc(cbc::Encryptor<'a>),
    CbcDec(cbc::Decryptor<'a>),
    Cfb(cfb::Cfb<'a>),
    Ofb(ofb::Ofb<'a>),
    Ctr(ctr::Ctr<'a>),
}

self_cell!(
    struct ModeCell {
        owner: Box<Sm4>,
        #[covariant]
        dependent: Mode,
    }
);

/// Streaming raw-mode SM4 (from `SM4.encryptor` / `SM4.decryptor`).
#[pyclass(module = "shangmi")]
pub(crate) struct Stream {
    cell: ModeCell,
    encrypt: bool,
    padding: bool,
    /// Block modes: bytes not yet a whole block (and, decrypting with padding, the last
    /// whole block, held back).
    pending: Zeroizing<Vec<u8>>,
    done: bool,
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
        if padding && !matches!(mode, "ecb" | "cbc") {
            return Err(PyValueError::new_err("padding applies to ECB and CBC only"));
        }
        let cell = ModeCell::try_new(Box::new(cipher.clone()), |c| match mode {
            "ecb" => Ok(Mode::Ecb(c)),
            "cbc" if encrypt => Ok(Mode::CbcEnc(cbc::Encryptor::new(c, &iv))),
            "cbc" => Ok(Mode::CbcDec(cbc::Decryptor::new(c, &iv))),
            "cfb" => Ok(Mode::Cfb(cfb::Cfb::new(c, &iv))),
            "ofb" => Ok(Mode::Ofb(ofb::Ofb::new(c, &iv))),
            "ctr" => Ok(Mode::Ctr(ctr::Ctr::new(c, &iv))),
            _ => Err(PyValueError::new_err(format!(
                "unknown mode {mode:?}: one of ecb, cbc, cfb, ofb, ctr"
            ))),
        })?;
        Ok(Stream {
            cell,
            encrypt,
            padding,
            pending: Zeroizing::new(Vec::new()),
            done: false,
        })
    }

    /// Runs the mode over `buf` in place (whole blocks for ECB and CBC).
    fn apply(cell: &mut ModeCell, encrypt: bool, buf: &mut [u8]) -> Result<(), ModeError> {
        cell.with_dependent_mut(|_, m| match m {
            Mode::Ecb(c) if encrypt => ecb::encrypt(c, buf),
            Mode::Ecb(c) => ecb::decrypt(c, buf),
            Mode::CbcEnc(e) => e.encrypt_blocks(buf),
            Mode::CbcDec(d) => d.decrypt_blocks(buf),
            Mode::Cfb(f) if encrypt => {
                f.encrypt(buf);
                Ok(())
            }
            Mode::Cfb(f) => {
                f.decrypt(buf);
                Ok(())
            }
            Mode::Ofb(o) => {
                o.apply_keystream(buf);
                Ok(())
            }
            Mode::Ctr(c) => {
                c.apply_keystream(buf);
                Ok(())
            }
        })
    }

    fn block_mode(&mut self) -> bool {
        self.cell.with_dependent_mut(|_, m| {
            matches!(m, Mode::Ecb(_) | Mode::CbcEnc(_) | Mode::CbcDec(_))
        })
    }
}

#[pymethods]
impl Stream {
    fn update<'py>(
        &mut self,
        py: Python<'py>,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        if self.done {
            return Err(PyValueError::new_err("the stream is finalized"));
        }
        let d = crate::data(data, "data")?;
        let mut buf = if self.block_mode() {
            self.pending.extend_from_slice(&d);
            let mut take = self.pending.len() / 16 * 16;
            if !self.encrypt && self.padding && take == self.pending.len() {
                // Hold back the last block: it may be the padding.
                take = take.saturating_sub(16);
            }
            let rest = self.pending.split_off(take);
            core::mem::replace(&mut *self.pending, rest)
        } else {
            d.to_vec()
        };
        let (cell, enc) = (&mut self.cell, self.encrypt);
        run(py, buf.len(), || Stream::apply(cell, enc, &mut buf)).map_err(value_error)?;
        let out = PyBytes::new(py, &buf);
        zeroize::Zeroize::zeroize(&mut buf);
        Ok(out)
    }

    fn finalize<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        if self.done {
            return Err(PyValueError::new_err("the stream is finalized"));
        }
        self.done = true;
        if !self.block_mode() {
            return Ok(PyBytes::new(py, b""));
        }
        let mut last = core::mem::take(&mut *self.pending);
        match (self.padding, self.encrypt) {
            (false, _) => {
                if !last.is_empty() {
                    return Err(PyValueError::new_err(
                        "the data is not a whole number of 16-byte blocks",
                    ));
                }
            }
            (true, true) => modes::padding::pad(&mut last),
            (true, false) => {
                if last.len() != 16 {
                    return Err(PyValueError::new_err(
                        "the data is not a non-empty whole number of 16-byte blocks",
                    ));
                }
            }
        }
        Stream::apply(&mut self.cell, self.encrypt, &mut last).map_err(value_error)?;
        if self.padding && !self.encrypt {
            let block: &[u8; 16] = last[..].try_into().expect("one block");
            match modes::padding::unpad_len(block) {
                Ok(n) => last.truncate(16 - n),
                Err(e) => {
                    zeroize::Zeroize::zeroize(&mut last);
                    return Err(padding_error(e));
                }
            }
        }
        let out = PyBytes::new(py, &last);
        zeroize::Zeroize::zeroize(&mut last);
        Ok(out)
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
            inner: xts::Xts::new(&k, v).map_err(value_error)?,
        })
    }

    fn encrypt<'py>(
        &self,
        py: Python<'py>,
        tweak: &Bound<'_, PyAny>,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let t = array::<16>(tweak, "tweak")?;
        let d = crate::data(data, "data")?;
        let x = &self.inner;
        bytes_from(py, &d, d.len(), |buf| x.encrypt(&t, buf))?.map_err(value_error)
    }

    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        tweak: &Bound<'_, PyAny>,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let t = array::<16>(tweak, "tweak")?;
        let d = crate::data(data, "data")?;
        let x = &self.inner;
        bytes_from(py, &d, d.len(), |buf| x.decrypt(&t, buf))?.map_err(value_error)
    }
}

/// SM4-CMAC (NIST SP 800-38B with SM4), streaming.
#[pyclass(name = "SM4CMAC", module = "shangmi")]
#[derive(Clone)]
pub(crate) struct Cmac {
    inner: modes::mac::Cmac,
}

#[pymethods]
impl Cmac {
    #[new]
    fn new(key: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Cmac {
            inner: modes::mac::Cmac::new(&*key16(key)?),
        })
    }

    fn update(&mut self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let d = crate::data(data, "data")?;
        let inner = &mut self.inner;
        run(py, d.len(), || inner.update(&d));
        Ok(())
    }

    /// The 16-byte tag of everything fed so far (the object stays usable).
    fn digest<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.clone().finalize())
    }

    /// Checks `tag` (16 bytes, or a truncation of at least 4) in constant time; raises
    /// `InvalidTag` on a mismatch.
    fn verify(&self, tag: &Bound<'_, PyAny>) -> PyResult<()> {
        let t = data(tag, "tag")?;
        let r = if t.len() == 16 {
            self.inner.clone().verify(&t)
        } else {
            self.inner.clone().verify_truncated(&t, t.len())
        };
        r.map_err(|e| match e {
            ModeError::Decrypt => InvalidTag::new_err("SM4-CMAC mismatch"),
            e => value_error(e),
        })
    }

    fn copy(&self) -> Self {
        self.clone()
    }
}

/// SM4-CMAC(key, data): 16 bytes.
#[pyfunction]
fn cmac_sm4<'py>(
    py: Python<'py>,
    key: &Bound<'_, PyAny>,
    data: &Bound<'_, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let k = key16(key)?;
    let d = crate::data(data, "data")?;
    let out = run(py, d.len(), || modes::mac::cmac(&k, &d));
    Ok(PyBytes::new(py, &out))
}
