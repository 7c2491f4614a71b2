//! SM2's protocols over the arithmetic: key pairs, signatures (single, batched, precomputed
//! per key, presigned from a pool), public-key encryption (one-shot and streaming, in every
//! ciphertext layout), key exchange, and plain ECDH on the curve.

pub(super) mod batch;
pub(super) mod ecdh;
pub(crate) mod encrypt;
pub(super) mod encrypt_stream;
pub(super) mod ephemeral_pool;
pub(crate) mod keys;
pub(crate) mod kx;
pub(super) mod pool;
pub(super) mod precomputed;
pub(super) mod signature;
