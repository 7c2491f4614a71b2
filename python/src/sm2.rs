//! SM2: keys in every format other SM libraries exchange, signatures (DER or raw r || s),
//! public-key encryption in the three ciphertext layouts, key exchange and batch
//! verification. Every operation runs with the GIL released.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};
use shangmi::sm2::{self, Format, Signature, VerifyingKey};

use crate::error::OrRaise;
use crate::{Data, InvalidSignature, data};

mod exchange;
mod private;
mod public;
pub(crate) use exchange::*;
pub(crate) use private::*;
pub(crate) use public::*;

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

fn id_or_default(id: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<u8>> {
    match id {
        Some(i) if !i.is_none() => Ok(data(i, "id")?.to_vec()),
        _ => Ok(sm2::DEFAULT_ID.to_vec()),
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
