//! The Rust core timed from inside the extension, for `python -m shangmi.bench`: the same
//! operations as the Python calls beside it, set up outside the timed loop, so the table
//! shows what the binding adds.

use std::hint::black_box;
use std::time::Instant;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use shangmi::{sm2, sm3, sm4};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_core_bench, m)?)
}

/// Seconds taken by `iterations` runs of `op` in Rust (GIL released).
#[pyfunction]
fn _core_bench(py: Python<'_>, op: &str, iterations: u64) -> PyResult<f64> {
    let key = [7u8; 16];
    let buf = vec![0x5au8; 8192];
    let sk = sm2::SigningKey::random().map_err(|e| PyValueError::new_err(e.to_string()))?;
    let pk = *sk.verifying_key();
    let sig = sk
        .sign(b"benchmark message")
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let cipher = sm4::Sm4::new(&key);
    let gcm = sm4::modes::gcm::Sm4Gcm::new(&key);
    let run = |f: &mut dyn FnMut()| {
        let t = Instant::now();
        for _ in 0..iterations {
            f();
        }
        t.elapsed().as_secs_f64()
    };
    py.detach(|| {
        Ok(match op {
            "sm3-64" => run(&mut || {
                black_box(sm3::hash(black_box(&buf[..64])));
            }),
            "sm3-8k" => run(&mut || {
                black_box(sm3::hash(black_box(&buf)));
            }),
            "sm4-gcm-8k" => run(&mut || {
                black_box(gcm.encrypt(&[1; 12], b"", black_box(&buf)).expect("valid"));
            }),
            "sm4-ctr-8k" => {
                let mut out = buf.clone();
                run(&mut || {
                    sm4::modes::ctr::apply_keystream(&cipher, &[2; 16], black_box(&mut out))
                        .expect("valid");
                })
            }
            "sm4-cbc-dec-8k" => {
                let mut out = buf.clone();
                run(&mut || {
                    sm4::modes::cbc::Decryptor::new(&cipher, &[3; 16])
                        .decrypt_blocks(black_box(&mut out))
                        .expect("whole blocks");
                })
            }
            "sm2-sign" => run(&mut || {
                black_box(sk.sign(black_box(b"benchmark message")).expect("signs"));
            }),
            "sm2-verify" => run(&mut || {
                pk.verify(black_box(b"benchmark message"), &sig)
                    .expect("verifies");
            }),
            "sm2-encrypt-32" => run(&mut || {
                black_box(
                    pk.encrypt(black_box(&buf[..32]), sm2::Format::C1C3C2)
                        .expect("encrypts"),
                );
            }),
            _ => return Err(PyValueError::new_err(format!("unknown op {op:?}"))),
        })
    })
}
