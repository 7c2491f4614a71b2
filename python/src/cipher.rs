//! SM4: the AEADs shaped like pyca's `AESGCM`/`AESCCM`, the raw modes, XTS, CMAC, and
//! streaming objects for data that arrives in pieces.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use shangmi::sm4::Error as ModeError;
use shangmi::sm4::modes::{self, cbc, cfb, ctr, ecb, ofb};
use shangmi::sm4::{Direction, Mode, Sm4};
use zeroize::Zeroizing;

use crate::error::{Error, OrRaise};
use crate::{Data, Shared, array, bytes_from, run};

mod aead;
mod xts_cmac;
use aead::{Ccm, Gcm, GcmDecryptor, GcmEncryptor};
use xts_cmac::{Cmac, Xts, cmac_sm4};

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
