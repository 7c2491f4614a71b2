//! PBKDF2 (RFC 8018 section 5.2) with HMAC-SM3 as the PRF.
//!
//! Every iteration is HMAC of a 32-byte value under a fixed key, i.e. exactly two compressions
//! from the keyed ipad/opad chaining values: the loop builds the single padded block itself
//! and never goes through the streaming hasher's buffer.

use zeroize::Zeroize;

use super::{Compressor, DIGEST_SIZE, HmacSm3};
// The forcing entry points that use some of these are hazmat-only.
#[cfg_attr(
    not(any(feature = "hazmat", test, shangmi_ctgrind)),
    allow(unused_imports)
)]
use crate::cpu::{Backend, Implementation, UnsupportedBackend};

/// Why PBKDF2 refused its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Pbkdf2Error {
    /// The iteration count must be at least 1.
    ZeroIterations,
    /// The output must be 1 to (2^32 - 1) * 32 bytes long.
    BadOutputLength,
}

impl core::fmt::Display for Pbkdf2Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Pbkdf2Error::ZeroIterations => "PBKDF2 iteration count must be at least 1",
            Pbkdf2Error::BadOutputLength => "PBKDF2 output must be 1 to (2^32-1)*32 bytes",
        })
    }
}

impl std::error::Error for Pbkdf2Error {}

/// Fills `out` with PBKDF2-HMAC-SM3(password, salt, iterations).
pub fn pbkdf2(
    password: &[u8],
    salt: &[u8],
    iterations: u32,
    out: &mut [u8],
) -> Result<(), Pbkdf2Error> {
    pbkdf2_impl(Compressor::best(), password, salt, iterations, out)
}

#[cfg(any(feature = "hazmat", test, shangmi_ctgrind))]
/// [`pbkdf2()`] with a forced backend (for tests and benchmarks). The outer `Result` reports an
/// unsupported backend, the inner one the parameters.
pub fn pbkdf2_with_backend(
    backend: Backend,
    password: &[u8],
    salt: &[u8],
    iterations: u32,
    out: &mut [u8],
) -> Result<Result<(), Pbkdf2Error>, UnsupportedBackend> {
    let c = Compressor::for_backend(backend)?;
    Ok(pbkdf2_impl(c, password, salt, iterations, out))
}

fn pbkdf2_impl(
    compressor: Compressor,
    password: &[u8],
    salt: &[u8],
    iterations: u32,
    out: &mut [u8],
) -> Result<(), Pbkdf2Error> {
    if iterations == 0 {
        return Err(Pbkdf2Error::ZeroIterations);
    }
    if out.is_empty() || out.len() as u64 > u64::from(u32::MAX) * DIGEST_SIZE as u64 {
        return Err(Pbkdf2Error::BadOutputLength);
    }
    let prf = HmacSm3::with_compressor(compressor, password);
    let (mut ipad, mut opad) = prf.pad_states();
    for (i, chunk) in out.chunks_mut(DIGEST_SIZE).enumerate() {
        let mut mac = prf.clone();
        mac.update(salt);
        mac.update(&(i as u32 + 1).to_be_bytes());
        let mut u = mac.finalize();
        let mut t = u;
        for _ in 1..iterations {
            u = hmac_32(compressor, &ipad, &opad, &u);
            for (ti, ui) in t.iter_mut().zip(&u) {
                *ti ^= ui;
            }
        }
        chunk.copy_from_slice(&t[..chunk.len()]);
        t.zeroize();
        u.zeroize();
    }
    ipad.zeroize();
    opad.zeroize();
    Ok(())
}

/// HMAC of a 32-byte message from the keyed chaining values: one padded block per hash.
#[inline]
fn hmac_32(
    c: Compressor,
    ipad: &[u32; 8],
    opad: &[u32; 8],
    msg: &[u8; DIGEST_SIZE],
) -> [u8; DIGEST_SIZE] {
    // The message is 64 key-block bytes plus 32 bytes: 768 bits.
    let mut block = [[0u8; 64]];
    block[0][DIGEST_SIZE] = 0x80;
    block[0][62] = 0x03;
    block[0][..DIGEST_SIZE].copy_from_slice(msg);
    let mut state = *ipad;
    c.compress(&mut state, &block);
    let mut inner = [0u8; DIGEST_SIZE];
    super::write_digest(&state, &mut inner);
    block[0][..DIGEST_SIZE].copy_from_slice(&inner);
    inner.zeroize();
    state = *opad;
    c.compress(&mut state, &block);
    let mut out = [0u8; DIGEST_SIZE];
    super::write_digest(&state, &mut out);
    block.zeroize();
    state.zeroize();
    out
}
