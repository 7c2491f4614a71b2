//! Hazardous material, for tests and benchmarks only (the `hazmat` feature): the entry points
//! that force a backend profile or take a caller-chosen nonce, ephemeral key or salt, so
//! that published vectors can be reproduced and every backend compared with the portable
//! one. A nonce chosen twice or predictably gives the private key away: never enable the
//! feature in production.
//!
//! The free functions live here and nowhere else. The constructors that force a backend are
//! methods of their types, present only with the feature: `Sm4::with_backend`,
//! `Xts::with_backend`, `Sm3::with_backend`, `Kdf::with_backend`,
//! `SigningKey::with_backend`, `VerifyingKey::with_backend`; and the fixed-nonce ones:
//! `SigningKey::sign_digest_with_nonce_for_known_answer_tests`,
//! `VerifyingKey::encrypt_with_nonce_for_known_answer_tests`,
//! `EphemeralSecret::from_bytes_for_known_answer_tests`,
//! `seal::Sealer::with_password_for_known_answer_tests`.

use crate::cpu::{Backend, UnsupportedBackend};

#[cfg(feature = "hazmat")]
pub use crate::sm2::protocols::kx::derive_for_known_answer_tests;
pub use crate::sm3::kdf::kdf_with_backend;
pub use crate::sm3::lanes::hash_many_with_backend;
pub use crate::sm3::pbkdf2::pbkdf2_with_backend;

/// SM3 of `data` on a forced backend.
pub fn hash_with_backend(
    backend: Backend,
    data: &[u8],
) -> Result<[u8; crate::sm3::DIGEST_SIZE], UnsupportedBackend> {
    crate::sm3::hash_with_backend(backend, data)
}
