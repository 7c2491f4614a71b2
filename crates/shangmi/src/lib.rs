//! # shangmi
//!
//! China's commercial cryptography (商用密码), fast and constant-time: SM3 (hash, HMAC,
//! PBKDF2, KDF), SM4 (block cipher and its modes, GCM and CCM) and SM2 (keys and signatures).
//!
//! Every algorithm has a portable implementation that runs anywhere, and x86-64 and arm64
//! SIMD backends chosen once at run time (see [`Backend`]); all backends give bit-identical
//! output.
//!
//! ```
//! // SM3, one call or streaming.
//! let d = shangmi::sm3::hash(b"abc");
//! assert_eq!(
//!     d,
//!     hex_literal(b"66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0")
//! );
//!
//! // HMAC-SM3 and the SM2 key-derivation function.
//! let tag = shangmi::sm3::hmac(b"key", b"message");
//! let key = shangmi::sm3::kdf(&[7u8; 64], 48).unwrap();
//! assert_eq!((tag.len(), key.len()), (32, 48));
//! # fn hex_literal(h: &[u8]) -> [u8; 32] {
//! #     let mut out = [0u8; 32];
//! #     for (i, o) in out.iter_mut().enumerate() {
//! #         let n = |c: u8| (c as char).to_digit(16).unwrap() as u8;
//! #         *o = n(h[2 * i]) << 4 | n(h[2 * i + 1]);
//! #     }
//! #     out
//! # }
//! ```
//!
//! Constant time: nothing here branches on or indexes memory by secret data; secrets are wiped
//! on drop; MACs are compared with `subtle`. See `SIDE-CHANNELS.md` in the repository.

#![deny(unsafe_code)]
#![warn(missing_docs)]

// The README's examples are doctests: a quick start that stops compiling fails the tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
// The root README's example too.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct RootReadmeDoctests;

pub mod cpu;
pub(crate) mod ct;
// The constant-time probes live beside the driver that runs them under valgrind; they reach
// into the arithmetic, so they are compiled into the library, for that check only.
#[cfg(shangmi_ctgrind)]
#[doc(hidden)]
#[path = "../examples/ctgrind/probes.rs"]
pub mod ct_probes;
#[cfg(any(feature = "hazmat", test, shangmi_ctgrind))]
pub mod hazmat;
pub mod hex;
pub mod oid;
pub mod pem;
pub mod seal;
pub mod sink;
pub mod sm2;
pub mod sm3;
pub mod sm4;

pub use cpu::{Backend, UnsupportedBackend};

/// What each algorithm runs on within `profile`, as `(algorithm, implementation)` pairs: SM3,
/// SM3 lanes, SM4, GHASH and the SM2 field. With [`Backend::best`] it is what this CPU gets,
/// the line to paste into a bug report (`shangmi --version` prints it).
pub fn implementations(
    profile: Backend,
) -> Result<[(&'static str, &'static str); 5], UnsupportedBackend> {
    use cpu::Implementation;
    if !profile.is_available() {
        return Err(UnsupportedBackend(profile));
    }
    Ok([
        ("sm3", sm3::Compressor::within(profile).name()),
        ("sm3-lanes", sm3::lanes::LaneImpl::within(profile).name()),
        ("sm4", sm4::Engine::within(profile).name()),
        ("ghash", sm4::ghash::GHashImpl::within(profile).name()),
        (
            "sm2",
            sm2::arithmetic::engine::Engine::within(profile).name(),
        ),
    ])
}

/// Lower-case hex, for `Debug` output.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
