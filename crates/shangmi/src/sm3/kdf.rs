//! The SM3 key-derivation function of GB/T 32918.4-2016 section 5.4.3:
//! K = SM3(Z || ct=1) || SM3(Z || ct=2) || ..., 32-bit big-endian counters, truncated.
//!
//! All counters share Z, so its whole blocks are compressed once; what differs per counter is
//! the last one or two blocks (Z's tail, the counter, the padding). Those are built directly as
//! message words, word-major, so a batch of 8 or 16 counters goes to a lane kernel with no
//! transpose. For the usual Z = x2 || y2 (64 bytes), each counter costs one lane of one block.

use zeroize::Zeroize;

use super::lanes::{LaneImpl, LaneKernel};
use super::{BLOCK_SIZE, Compressor, DIGEST_SIZE, pad, soft, write_digest};
use crate::cpu::{Backend, UnsupportedBackend};

/// The requested output is longer than the 32-bit counter allows ((2^32 - 1) * 32 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KdfError;

impl core::fmt::Display for KdfError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("SM3-KDF output longer than (2^32 - 1) * 32 bytes")
    }
}

impl std::error::Error for KdfError {}

const MAX_OUT: u64 = (u32::MAX as u64) * DIGEST_SIZE as u64;

/// Derives `out_len` bytes from the shared secret `z`.
pub fn kdf(z: &[u8], out_len: usize) -> Result<Vec<u8>, KdfError> {
    if out_len as u64 > MAX_OUT {
        return Err(KdfError);
    }
    let mut out = vec![0u8; out_len];
    kdf_into(z, &mut out)?;
    Ok(out)
}

/// Fills `out` with KDF output from the shared secret `z`.
pub fn kdf_into(z: &[u8], out: &mut [u8]) -> Result<(), KdfError> {
    kdf_impl(LaneImpl::best(), z, out)
}

/// [`kdf_into`] with a forced backend (for tests and benchmarks).
pub fn kdf_with_backend(
    backend: Backend,
    z: &[u8],
    out: &mut [u8],
) -> Result<(), KdfErrorOrBackend> {
    let imp = LaneImpl::for_backend(backend).map_err(KdfErrorOrBackend::Backend)?;
    kdf_impl(imp, z, out).map_err(KdfErrorOrBackend::Kdf)
}

/// Either failure of [`kdf_with_backend`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KdfErrorOrBackend {
    /// Output too long.
    Kdf(KdfError),
    /// The backend is not available on this CPU.
    Backend(UnsupportedBackend),
}

/// What every counter's computation starts from.
struct Prefix {
    state: [u32; 8],
    /// Z's tail followed by a zero counter and padding: one or two blocks.
    template: [[u8; BLOCK_SIZE]; 2],
    blocks: usize,
    /// Byte offset of the counter inside `template`.
    ct_at: usize,
}

impl Prefix {
    fn new(compressor: Compressor, z: &[u8]) -> Self {
        let (whole, tail) = z.as_chunks::<BLOCK_SIZE>();
        let mut state = soft::IV;
        compressor.compress(&mut state, whole);
        let mut msg = [0u8; BLOCK_SIZE + 4];
        msg[..tail.len()].copy_from_slice(tail);
        let bits = (z.len() as u64 + 4).wrapping_mul(8);
        let mut template = [[0u8; BLOCK_SIZE]; 2];
        let last = &msg[..tail.len() + 4];
        let blocks = if last.len() < BLOCK_SIZE {
            pad(last, bits, &mut template)
        } else {
            // Z's tail plus the counter fill a whole block: that block, then a padding block.
            template[0].copy_from_slice(&last[..BLOCK_SIZE]);
            let mut rest = [[0u8; BLOCK_SIZE]; 2];
            pad(&last[BLOCK_SIZE..], bits, &mut rest);
            template[1] = rest[0];
            2
        };
        msg.zeroize();
        Prefix {
            state,
            template,
            blocks,
            ct_at: tail.len(),
        }
    }

    fn block_with(&self, ct: u32) -> [[u8; BLOCK_SIZE]; 2] {
        let mut t = self.template;
        t.as_flattened_mut()[self.ct_at..self.ct_at + 4].copy_from_slice(&ct.to_be_bytes());
        t
    }
}

impl Drop for Prefix {
    fn drop(&mut self) {
        self.state.zeroize();
        self.template.zeroize();
    }
}

fn kdf_impl(imp: LaneImpl, z: &[u8], out: &mut [u8]) -> Result<(), KdfError> {
    if out.len() as u64 > MAX_OUT {
        return Err(KdfError);
    }
    let compressor = imp.single();
    let prefix = Prefix::new(compressor, z);
    let done = match imp {
        LaneImpl::Serial(_) => 0,
        #[cfg(target_arch = "x86_64")]
        LaneImpl::X8(k, _) => lanes::<8, _>(k, &prefix, out),
        #[cfg(target_arch = "x86_64")]
        LaneImpl::X16(k, _) => lanes::<16, _>(k, &prefix, out),
    };
    // What the lanes left (the last few counters, or everything without SIMD).
    for (i, chunk) in out.chunks_mut(DIGEST_SIZE).enumerate().skip(done) {
        let mut state = prefix.state;
        let mut blocks = prefix.block_with(i as u32 + 1);
        compressor.compress(&mut state, &blocks[..prefix.blocks]);
        let mut digest = [0u8; DIGEST_SIZE];
        write_digest(&state, &mut digest);
        chunk.copy_from_slice(&digest[..chunk.len()]);
        digest.zeroize();
        blocks.zeroize();
        state.zeroize();
    }
    Ok(())
}

/// Runs batches of `L` counters through the lane kernel; returns how many counters (32-byte
/// pieces of `out`) it filled.
fn lanes<const L: usize, K: LaneKernel<L>>(kernel: K, prefix: &Prefix, out: &mut [u8]) -> usize {
    let batch = L * DIGEST_SIZE;
    // A final pass with fewer than three busy lanes is slower than the single-stream path.
    let full = out.len() / batch;
    let partial = (out.len() % batch).div_ceil(DIGEST_SIZE);
    let passes = full + usize::from(partial >= 3);
    let mut words = [[[0u32; L]; 16]; 2];
    let template: [[u32; 16]; 2] = prefix.template.map(|b| {
        let mut w = [0u32; 16];
        for (wi, c) in w.iter_mut().zip(b.chunks_exact(4)) {
            *wi = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
        }
        w
    });
    for (b, block) in template.iter().enumerate() {
        for (k, &word) in block.iter().enumerate() {
            words[b][k] = [word; L];
        }
    }
    // The counter's four bytes cover one word, or straddle two when Z's tail is not a whole
    // number of words; those are the only words that differ between lanes.
    let (w0, shift) = (prefix.ct_at / 4, 8 * (prefix.ct_at % 4) as u32);
    for pass in 0..passes {
        for lane in 0..L {
            let ct = (pass * L + lane + 1) as u32;
            let (b, k) = (w0 / 16, w0 % 16);
            words[b][k][lane] = template[b][k] | (ct >> shift);
            if shift != 0 {
                let (b, k) = ((w0 + 1) / 16, (w0 + 1) % 16);
                words[b][k][lane] = template[b][k] | (ct << (32 - shift));
            }
        }
        let mut state: [[u32; L]; 8] = core::array::from_fn(|k| [prefix.state[k]; L]);
        kernel.compress_words(&mut state, &words[..prefix.blocks]);
        for lane in 0..L {
            let start = (pass * L + lane) * DIGEST_SIZE;
            if start >= out.len() {
                break;
            }
            let mut digest = [0u8; DIGEST_SIZE];
            write_digest(&core::array::from_fn(|k| state[k][lane]), &mut digest);
            let end = (start + DIGEST_SIZE).min(out.len());
            out[start..end].copy_from_slice(&digest[..end - start]);
            digest.zeroize();
        }
        state.zeroize();
    }
    words.zeroize();
    (passes * L).min(out.len().div_ceil(DIGEST_SIZE))
}
