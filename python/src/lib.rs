//! The `shangmi._native` extension module: the Rust library behind the `shangmi` Python
//! package. The Python side (`python/shangmi`) re-exports these names and adds the pure-Python
//! conveniences; everything that touches keys or data runs here.
//!
//! Conventions kept by every function: inputs are any bytes-like object (bytes, bytearray,
//! memoryview; never str or int), outputs are `bytes`; the GIL is released while the library
//! works on more than `RELEASE_GIL_AT` bytes and for every SM2 operation, so Python threads
//! run on several cores; an authentication failure raises before any output exists.

use pyo3::exceptions::{PyException, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyInt, PyString};

mod bench;
mod cipher;
mod error;
mod hash;
mod pki;
mod sm2;

pyo3::create_exception!(
    shangmi,
    InvalidTag,
    PyException,
    "An AEAD tag, a MAC or a padding check failed: the data was not authenticated, and no \
     plaintext is returned."
);
pyo3::create_exception!(
    shangmi,
    InvalidSignature,
    PyException,
    "An SM2 signature does not verify (or is not a valid encoding)."
);
pyo3::create_exception!(
    shangmi,
    DecryptionError,
    PyValueError,
    "SM2 decryption failed: malformed, wrong key or tampered with (one error for every cause)."
);

/// Inputs at least this long are processed with the GIL released.
pub(crate) const RELEASE_GIL_AT: usize = 4096;

/// A bytes-like argument: borrowed from a `bytes` object (immutable, so safe to read with the
/// GIL released), copied from anything mutable.
pub(crate) enum Data<'a> {
    Borrowed(&'a [u8]),
    Owned(Vec<u8>),
}

impl core::ops::Deref for Data<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Data::Borrowed(b) => b,
            Data::Owned(v) => v,
        }
    }
}

/// Reads a bytes-like argument. `str` and `int` are refused (bytes(5) would be five zeros).
pub(crate) fn data<'a>(obj: &'a Bound<'_, PyAny>, what: &str) -> PyResult<Data<'a>> {
    Data::read(obj.as_borrowed()).map_err(|e| {
        if e.is_instance_of::<PyTypeError>(obj.py()) {
            PyTypeError::new_err(format!("{what}: {}", e.value(obj.py())))
        } else {
            e
        }
    })
}

impl<'a> Data<'a> {
    fn read(obj: pyo3::Borrowed<'a, '_, PyAny>) -> PyResult<Self> {
        // `bytes` is immutable: borrowed, and safe to read with the GIL released.
        if let Ok(b) = <&'a [u8] as FromPyObject<'a, '_>>::extract(obj) {
            return Ok(Data::Borrowed(b));
        }
        if let Ok(b) = obj.cast::<PyByteArray>() {
            // Copied while the GIL is held: another thread cannot change it under us.
            return Ok(Data::Owned(b.to_vec()));
        }
        if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyInt>() {
            return Err(PyTypeError::new_err(format!(
                "expected a bytes-like object, not {}",
                obj.get_type().name()?
            )));
        }
        // memoryview, array.array, numpy arrays: anything with the buffer protocol.
        let view = obj
            .py()
            .import("builtins")?
            .getattr("memoryview")?
            .call1((obj,))
            .map_err(|_| PyTypeError::new_err("expected a bytes-like object"))?;
        let bytes = view.call_method0("tobytes")?;
        Ok(Data::Owned(bytes.cast::<PyBytes>()?.as_bytes().to_vec()))
    }
}

/// Every bytes-like parameter is declared as `Data`: PyO3 reads it with the rules above and
/// names the parameter on the exception (a note: "while processing 'nonce'").
impl<'a, 'py> FromPyObject<'a, 'py> for Data<'a> {
    type Error = PyErr;

    fn extract(obj: pyo3::Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Data::read(obj)
    }
}

/// A bytes-like item of a list argument, copied (list items cannot be borrowed).
pub(crate) struct Owned(pub(crate) Vec<u8>);

impl<'a, 'py> FromPyObject<'a, 'py> for Owned {
    type Error = PyErr;

    fn extract(obj: pyo3::Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Ok(Owned(Data::read(obj)?.to_vec()))
    }
}

impl Default for Data<'_> {
    fn default() -> Self {
        Data::Borrowed(&[])
    }
}

/// A fixed-length bytes-like argument.
pub(crate) fn array<const N: usize>(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<[u8; N]> {
    let d = data(obj, what)?;
    <[u8; N]>::try_from(&d[..])
        .map_err(|_| PyValueError::new_err(format!("{what} must be {N} bytes, not {}", d.len())))
}

/// Lower-case hex, written without branching on the bytes (a private key's among them).
pub(crate) fn hex(b: &[u8]) -> String {
    base16ct::lower::encode_string(b)
}

/// The state of an object whose methods change it, shared safely between Python threads
/// (as pyca's objects are): methods take `&self` (the class is `frozen`, so PyO3's borrow
/// flag never raises "Already borrowed") and run on the state under this lock. The lock is
/// only ever taken inside the closure given to [`run`], so a thread waiting for it while
/// holding the GIL cannot block the thread that holds it: that one releases the lock
/// before it asks for the GIL back.
pub(crate) struct Shared<T>(std::sync::Mutex<T>);

impl<T> Shared<T> {
    pub(crate) fn new(value: T) -> Self {
        Shared(std::sync::Mutex::new(value))
    }

    /// Runs `f` on the state. A panic in an earlier call cannot leave the state half
    /// changed in a way that matters here (every change is one library call), so a poisoned
    /// lock is taken as it is.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let mut guard = self.0.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut guard)
    }
}

/// Runs `f` with the GIL released when `len` is large enough to be worth it.
pub(crate) fn run<T: Send>(py: Python<'_>, len: usize, f: impl FnOnce() -> T + Send) -> T {
    if len >= RELEASE_GIL_AT {
        py.detach(f)
    } else {
        f()
    }
}

/// A new `bytes` of `len` bytes that starts as `src` (cut to `len`, or padded with zeros)
/// and is then transformed in place by `f`: one copy from input to output, no intermediate
/// buffer, and, for large data, the copy and `f` both run with the GIL released (so threads
/// scale: PyO3's `PyBytes::new_with` would zero the buffer first, holding the GIL). When `f`
/// fails the buffer is zeroed before the object is dropped, so a failed decryption leaves no
/// plaintext behind, and the error is returned.
pub(crate) fn bytes_from<'py, E: Send>(
    py: Python<'py>,
    src: &[u8],
    len: usize,
    f: impl FnOnce(&mut [u8]) -> Result<(), E> + Send,
) -> PyResult<Result<Bound<'py, PyBytes>, E>> {
    let size = pyo3::ffi::Py_ssize_t::try_from(len)
        .map_err(|_| PyValueError::new_err("output too large"))?;
    // SAFETY: with a null source CPython allocates an uninitialised bytes object of `size`
    // bytes (plus its terminating NUL) and returns a new reference, or null with an error set,
    // which `from_owned_ptr_or_err` turns into `Err`.
    let obj = unsafe {
        Bound::from_owned_ptr_or_err(
            py,
            pyo3::ffi::PyBytes_FromStringAndSize(core::ptr::null(), size),
        )?
    };
    let out = obj.cast_into::<PyBytes>()?;
    // SAFETY: `out` is a bytes object we own and have not shared; its buffer is `len` bytes.
    let ptr = unsafe { pyo3::ffi::PyBytes_AsString(out.as_ptr()) }.cast::<u8>();
    let addr = ptr as usize;
    let copied = src.len().min(len);
    let result = run(py, len, move || {
        let ptr = addr as *mut u8;
        // SAFETY: the buffer is `len` writable bytes that nothing else can reach until we
        // return it; every byte is written here before a slice over it is made.
        let buf = unsafe {
            core::ptr::copy_nonoverlapping(src.as_ptr(), ptr, copied);
            core::ptr::write_bytes(ptr.add(copied), 0, len - copied);
            core::slice::from_raw_parts_mut(ptr, len)
        };
        let r = f(buf);
        if r.is_err() {
            buf.fill(0);
        }
        r
    });
    Ok(result.map(|()| out))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("InvalidTag", py.get_type::<InvalidTag>())?;
    m.add("InvalidSignature", py.get_type::<InvalidSignature>())?;
    m.add("DecryptionError", py.get_type::<DecryptionError>())?;
    m.add("RELEASE_GIL_AT", RELEASE_GIL_AT)?;
    m.add_function(wrap_pyfunction!(backends, m)?)?;
    hash::register(m)?;
    cipher::register(m)?;
    sm2::register(m)?;
    pki::register(m)?;
    bench::register(m)?;
    Ok(())
}

/// The implementation each algorithm runs on this CPU, e.g. `{"sm4": "aesni-avx2", ...}`.
#[pyfunction]
fn backends() -> Vec<(&'static str, &'static str)> {
    shangmi::implementations(shangmi::Backend::best())
        .map(|a| a.to_vec())
        .unwrap_or_default()
}
