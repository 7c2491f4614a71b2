//! shangmi for JavaScript: SM3, SM4 and SM2 exported through wasm-bindgen, bytes in and out
//! (`Uint8Array`), errors as JavaScript `Error`s with a message. The algorithms are the
//! library's portable constant-time code; this crate owns none.

mod sm2;
mod sm3;
mod sm4;

use wasm_bindgen::prelude::*;

/// A JavaScript error carrying `what` and `why`.
pub(crate) fn fail(what: &str, why: impl core::fmt::Display) -> JsError {
    JsError::new(&format!("{what}: {why}"))
}

/// The library's version and what each algorithm runs on here.
#[wasm_bindgen]
pub fn version() -> String {
    let imps = shangmi::implementations(shangmi::Backend::best())
        .map(|a| {
            a.iter()
                .map(|(alg, imp)| format!("{alg} {imp}"))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    let module = if cfg!(target_feature = "simd128") {
        "simd128"
    } else {
        "scalar"
    };
    format!(
        "shangmi {} ({imps}; wasm {module})",
        env!("CARGO_PKG_VERSION")
    )
}

/// `bytes` handed to JavaScript as a new `Uint8Array`, the module's copy wiped.
pub(crate) fn secret_out(bytes: zeroize::Zeroizing<Vec<u8>>) -> js_sys::Uint8Array {
    js_sys::Uint8Array::from(&bytes[..])
}
