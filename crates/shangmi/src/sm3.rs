//! SM3 cryptographic hash (GB/T 32905-2016, ISO/IEC 10118-3:2018), and what is built on it:
//! HMAC-SM3, PBKDF2-HMAC-SM3 and the SM3 key-derivation function of GB/T 32918.
//!
//! ```
//! use shangmi::sm3;
//!
//! let digest = sm3::hash(b"abc");
//! assert_eq!(digest[..4], [0x66, 0xc7, 0xf0, 0xf4]);
//!
//! let mut h = sm3::Sm3::new();
//! h.update(b"a");
//! h.update(b"bc");
//! assert_eq!(h.finalize(), digest);
//!
//! // Many independent messages at once, 8 or 16 per SIMD pass.
//! let digests = sm3::hash_many(&[b"abc".as_slice(), b"", b"another message"]);
//! assert_eq!(digests[0], digest);
//! ```
//!
//! SM3 is a Merkle-Damgard hash: `hash(key || message)` is not a MAC (length extension);
//! use [`hmac()`].

#[cfg(target_arch = "aarch64")]
mod arm_neon_lanes;
#[cfg(target_arch = "aarch64")]
mod arm_sm3ce;
mod digest_impls;
mod hmac_sm3;
pub(crate) mod kdf;
pub(crate) mod lanes;
pub(crate) mod pbkdf2;
mod soft;
#[cfg(target_arch = "x86_64")]
mod x86_avx2;
#[cfg(target_arch = "x86_64")]
mod x86_avx2_lanes;
#[cfg(target_arch = "x86_64")]
mod x86_avx512;
#[cfg(target_arch = "x86_64")]
mod x86_avx512_lanes;

use zeroize::Zeroize;

// The forcing entry points that use some of these are hazmat-only.
#[cfg_attr(
    not(any(feature = "hazmat", test, shangmi_ctgrind)),
    allow(unused_imports)
)]
use crate::cpu::{Backend, Implementation, UnsupportedBackend};
pub use hmac_sm3::{HmacSm3, MacError, hmac};
pub use kdf::{Kdf, KdfError, KdfErrorOrBackend, kdf, kdf_into};
pub use lanes::{LengthMismatch, hash_many, hash_many_into};
pub use pbkdf2::{Pbkdf2Error, pbkdf2};

/// Digest length in bytes.
pub const DIGEST_SIZE: usize = 32;
/// Block length in bytes.
pub const BLOCK_SIZE: usize = 64;

/// The single-stream compression function chosen for a hasher. Picked once, when the hasher is
/// made; every `update` hands all its whole blocks to it in one call.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Compressor {
    Soft,
    #[cfg(target_arch = "x86_64")]
    Bmi2(crate::cpu::Bmi2),
    /// The vector message expansion, on AMD cores (see `x86_avx2.rs`).
    #[cfg(target_arch = "x86_64")]
    Avx2(crate::cpu::Avx2, crate::cpu::Bmi2),
    #[cfg(target_arch = "x86_64")]
    Avx512(crate::cpu::Avx512),
    #[cfg(target_arch = "aarch64")]
    Sm3Ce(crate::cpu::NeonSm),
}

impl Implementation for Compressor {
    fn within(profile: Backend) -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            use crate::cpu::{Avx2, Avx512, Bmi2};
            let simd = match profile {
                // On Zen 4 the AVX2 kernel, ordered for AMD's cores, beat the AVX-512 one by
                // 15-20% at 8 KiB (415-435 MB/s against 363, one run); elsewhere (Intel, Zen 5)
                // the AVX-512 kernel stays.
                Backend::Avx512 if crate::cpu::amd_half_width_512() => {
                    match (Avx2::get(), Bmi2::get()) {
                        (Some(v), Some(b)) => Some(Compressor::Avx2(v, b)),
                        _ => Avx512::get().map(Compressor::Avx512),
                    }
                }
                Backend::Avx512 => Avx512::get().map(Compressor::Avx512),
                Backend::Portable => None,
                _ => match (Avx2::get(), Bmi2::get()) {
                    (Some(v), Some(b)) if crate::cpu::amd_cores() => Some(Compressor::Avx2(v, b)),
                    (_, b) => b.map(Compressor::Bmi2),
                },
            };
            if let Some(c) = simd {
                return c;
            }
        }
        #[cfg(target_arch = "aarch64")]
        if profile == Backend::NeonSm {
            if let Some(t) = crate::cpu::NeonSm::get() {
                return Compressor::Sm3Ce(t);
            }
        }
        let _ = profile;
        Compressor::Soft
    }

    fn name(self) -> &'static str {
        match self {
            Compressor::Soft => "portable",
            #[cfg(target_arch = "x86_64")]
            Compressor::Bmi2(_) => "bmi2",
            #[cfg(target_arch = "x86_64")]
            Compressor::Avx2(..) => "avx2",
            #[cfg(target_arch = "x86_64")]
            Compressor::Avx512(_) => "avx512",
            #[cfg(target_arch = "aarch64")]
            Compressor::Sm3Ce(_) => "sm3-ce",
        }
    }
}

impl Compressor {
    #[inline]
    pub(crate) fn compress(self, state: &mut [u32; 8], blocks: &[[u8; 64]]) {
        match self {
            Compressor::Soft => soft::compress(state, blocks),
            #[cfg(target_arch = "x86_64")]
            Compressor::Bmi2(t) => x86_avx2::compress(t, state, blocks),
            #[cfg(target_arch = "x86_64")]
            Compressor::Avx2(v, b) => x86_avx2::compress_vector_schedule(v, b, state, blocks),
            #[cfg(target_arch = "x86_64")]
            Compressor::Avx512(t) => x86_avx512::compress(t, state, blocks),
            #[cfg(target_arch = "aarch64")]
            Compressor::Sm3Ce(t) => arm_sm3ce::compress(t, state, blocks),
        }
    }
}

/// Hashes `data` in one call.
pub fn hash(data: &[u8]) -> [u8; DIGEST_SIZE] {
    hash_with(Compressor::best(), data)
}

#[cfg(any(feature = "hazmat", test, shangmi_ctgrind))]
/// Hashes `data` with a forced backend (for tests and benchmarks; public as
/// `shangmi::hazmat::hash_with_backend`).
pub(crate) fn hash_with_backend(
    backend: Backend,
    data: &[u8],
) -> Result<[u8; DIGEST_SIZE], UnsupportedBackend> {
    Compressor::for_backend(backend).map(|c| hash_with(c, data))
}

/// One-shot hashing straight from the caller's buffer: whole blocks are compressed in place,
/// only the padded tail is copied.
fn hash_with(compressor: Compressor, data: &[u8]) -> [u8; DIGEST_SIZE] {
    let (blocks, rest) = data.as_chunks::<BLOCK_SIZE>();
    let mut state = soft::IV;
    compressor.compress(&mut state, blocks);
    let mut tail = [[0u8; BLOCK_SIZE]; 2];
    let n = pad(rest, (data.len() as u64).wrapping_mul(8), &mut tail);
    compressor.compress(&mut state, &tail[..n]);
    let mut out = [0u8; DIGEST_SIZE];
    write_digest(&state, &mut out);
    crate::ct::wipe(&mut tail.as_flattened_mut()[..n * BLOCK_SIZE]);
    state.zeroize();
    out
}

/// Streaming SM3 hasher. Cloning it forks the computation; dropping it wipes its state.
#[derive(Clone)]
pub struct Sm3 {
    state: [u32; 8],
    /// Whole blocks compressed so far; the message length counter is taken modulo 2^64 bits,
    /// as the standard's padding defines it.
    blocks: u64,
    buf: [u8; BLOCK_SIZE],
    buf_len: usize,
    compressor: Compressor,
}

// The buffer is wiped with wide stores (`ct::wipe`), not `zeroize`'s one store per byte: a
// TLS handshake drops a hasher for every transcript hash and HMAC it computes, each a block or
// two, where a hundred-odd byte stores show (8-byte one-shot hashes ran 14% faster with the
// padded tail wiped the same way).
impl Drop for Sm3 {
    fn drop(&mut self) {
        crate::ct::wipe(&mut self.buf);
        self.state.zeroize();
        self.blocks.zeroize();
        self.buf_len.zeroize();
    }
}

impl zeroize::ZeroizeOnDrop for Sm3 {}

impl Default for Sm3 {
    fn default() -> Self {
        Self::new()
    }
}

impl core::fmt::Debug for Sm3 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Sm3").finish_non_exhaustive()
    }
}

impl Sm3 {
    /// A hasher using the fastest backend this CPU has.
    pub fn new() -> Self {
        Self::with_compressor(Compressor::best())
    }

    #[cfg(any(feature = "hazmat", test, shangmi_ctgrind))]
    /// A hasher using the given backend, if this CPU supports it.
    pub fn with_backend(backend: Backend) -> Result<Self, UnsupportedBackend> {
        Compressor::for_backend(backend).map(Self::with_compressor)
    }

    pub(crate) fn with_compressor(compressor: Compressor) -> Self {
        Sm3 {
            state: soft::IV,
            blocks: 0,
            buf: [0; BLOCK_SIZE],
            buf_len: 0,
            compressor,
        }
    }

    /// A hasher that has already absorbed `blocks` whole blocks and reached `state`
    /// (used by HMAC and the KDF to start from a precomputed prefix).
    pub(crate) fn from_state(compressor: Compressor, state: [u32; 8], blocks: u64) -> Self {
        Sm3 {
            state,
            blocks,
            buf: [0; BLOCK_SIZE],
            buf_len: 0,
            compressor,
        }
    }

    /// A hasher that has absorbed `blocks` whole 64-byte blocks and reached the chaining
    /// `state`, as [`Sm3::chaining_state`] gave them: for front ends that keep a hash's state
    /// themselves between calls (the JCA provider keeps it in Java arrays, so a digest is
    /// cloned and reset without native memory). On the fastest backend this CPU has.
    pub fn resume(state: [u32; 8], blocks: u64) -> Self {
        Self::from_state(Compressor::best(), state, blocks)
    }

    /// The chaining state and the count of whole blocks absorbed, when no partial block is
    /// buffered (what was absorbed is a multiple of 64 bytes); `None` otherwise. The state is
    /// as secret as what was hashed (for HMAC, the key).
    pub fn chaining_state(&self) -> Option<([u32; 8], u64)> {
        (self.buf_len == 0).then_some((self.state, self.blocks))
    }

    pub(crate) fn compressor(&self) -> Compressor {
        self.compressor
    }

    /// Absorbs `data`.
    pub fn update(&mut self, mut data: &[u8]) {
        if self.buf_len > 0 {
            let take = (BLOCK_SIZE - self.buf_len).min(data.len());
            self.buf[self.buf_len..self.buf_len + take].copy_from_slice(&data[..take]);
            self.buf_len += take;
            data = &data[take..];
            if self.buf_len < BLOCK_SIZE {
                return;
            }
            let block = self.buf;
            self.compressor
                .compress(&mut self.state, core::slice::from_ref(&block));
            self.blocks = self.blocks.wrapping_add(1);
            self.buf_len = 0;
        }
        let (blocks, rest) = data.as_chunks::<BLOCK_SIZE>();
        if !blocks.is_empty() {
            self.compressor.compress(&mut self.state, blocks);
            self.blocks = self.blocks.wrapping_add(blocks.len() as u64);
        }
        self.buf[..rest.len()].copy_from_slice(rest);
        self.buf_len = rest.len();
    }

    /// Finishes the hash.
    pub fn finalize(mut self) -> [u8; DIGEST_SIZE] {
        let mut out = [0u8; DIGEST_SIZE];
        self.finalize_into_slice(&mut out);
        out
    }

    /// Finishes the hash and resets the hasher for a new message (same backend).
    pub fn finalize_reset(&mut self) -> [u8; DIGEST_SIZE] {
        let mut out = [0u8; DIGEST_SIZE];
        self.finalize_into_slice(&mut out);
        self.reset();
        out
    }

    /// Forgets everything absorbed; the backend is kept.
    pub fn reset(&mut self) {
        self.state = soft::IV;
        self.blocks = 0;
        crate::ct::wipe(&mut self.buf);
        self.buf_len = 0;
    }

    fn finalize_into_slice(&mut self, out: &mut [u8; DIGEST_SIZE]) {
        let bit_len = self
            .blocks
            .wrapping_mul(BLOCK_SIZE as u64)
            .wrapping_add(self.buf_len as u64)
            .wrapping_mul(8);
        let mut tail = [[0u8; BLOCK_SIZE]; 2];
        let n = pad(&self.buf[..self.buf_len], bit_len, &mut tail);
        self.compressor.compress(&mut self.state, &tail[..n]);
        crate::ct::wipe(&mut tail.as_flattened_mut()[..n * BLOCK_SIZE]);
        write_digest(&self.state, out);
    }
}

/// Writes the final partial block (`rest.len() < 64`) with SM3 padding for a message of
/// `bit_len` bits into `tail`; returns how many blocks (1 or 2) it used.
#[inline]
pub(crate) fn pad(rest: &[u8], bit_len: u64, tail: &mut [[u8; BLOCK_SIZE]; 2]) -> usize {
    debug_assert!(rest.len() < BLOCK_SIZE);
    let n = if rest.len() < BLOCK_SIZE - 8 { 1 } else { 2 };
    let flat = tail.as_flattened_mut();
    flat[..rest.len()].copy_from_slice(rest);
    flat[rest.len()] = 0x80;
    flat[rest.len() + 1..n * BLOCK_SIZE - 8].fill(0);
    flat[n * BLOCK_SIZE - 8..n * BLOCK_SIZE].copy_from_slice(&bit_len.to_be_bytes());
    n
}

#[inline]
pub(crate) fn write_digest(state: &[u32; 8], out: &mut [u8; DIGEST_SIZE]) {
    for (o, s) in out.chunks_exact_mut(4).zip(state) {
        o.copy_from_slice(&s.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_counter_is_not_truncated_past_4_gib() {
        // A hasher that has absorbed 2^26 blocks (4 GiB) must pad with (2^32 + 3) * 8 bits.
        let mut h = Sm3::from_state(Compressor::Soft, soft::IV, 1 << 26);
        h.update(b"abc");
        let got = h.finalize();
        let mut tail = [[0u8; BLOCK_SIZE]; 2];
        let n = pad(b"abc", ((1u64 << 32) + 3) * 8, &mut tail);
        assert_eq!((n, &tail[0][56..]), (1, &[0, 0, 0, 8, 0, 0, 0, 24][..]));
        let mut state = soft::IV;
        soft::compress(&mut state, &tail[..n]);
        let mut want = [0u8; DIGEST_SIZE];
        write_digest(&state, &mut want);
        assert_eq!(got, want);
        assert_ne!(got, hash(b"abc"));
    }

    /// Every kernel this CPU can run against the portable one, whichever each profile picks
    /// (on Zen 4 the AVX-512 profile runs the AVX2 kernel, so the AVX-512 one is tested here).
    #[test]
    fn every_kernel_this_cpu_runs_matches_the_portable_one() {
        let mut kernels = vec![Compressor::Soft];
        #[cfg(target_arch = "x86_64")]
        {
            use crate::cpu::{Avx2, Avx512, Bmi2};
            kernels.extend(Bmi2::get().map(Compressor::Bmi2));
            if let (Some(v), Some(b)) = (Avx2::get(), Bmi2::get()) {
                kernels.push(Compressor::Avx2(v, b));
            }
            kernels.extend(Avx512::get().map(Compressor::Avx512));
        }
        #[cfg(target_arch = "aarch64")]
        kernels.extend(crate::cpu::NeonSm::get().map(Compressor::Sm3Ce));
        let mut blocks = vec![[0u8; BLOCK_SIZE]; 37];
        let mut x = 0x9e37_79b9_u32;
        for b in blocks.iter_mut().flatten() {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            *b = (x >> 24) as u8;
        }
        for n in [0, 1, 2, 3, 8, 37] {
            let mut want = soft::IV;
            soft::compress(&mut want, &blocks[..n]);
            for k in &kernels {
                let mut got = soft::IV;
                k.compress(&mut got, &blocks[..n]);
                assert_eq!(got, want, "{} over {n} blocks", k.name());
            }
        }
    }

    #[test]
    fn padding_takes_a_second_block_from_56_bytes() {
        let mut tail = [[0u8; BLOCK_SIZE]; 2];
        assert_eq!(pad(&[1; 55], 440, &mut tail), 1);
        assert_eq!(tail[0][55], 0x80);
        assert_eq!(pad(&[1; 56], 448, &mut tail), 2);
        assert_eq!((tail[0][56], tail[1][62], tail[1][63]), (0x80, 0x01, 0xc0));
    }
}
