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
// The forcing entry points that use some of these are hazmat-only.
#[cfg_attr(
    not(any(feature = "hazmat", test, shangmi_ctgrind)),
    allow(unused_imports)
)]
use crate::cpu::{Backend, Implementation, UnsupportedBackend};

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
    Kdf::new(z).fill(out)
}

#[cfg(any(feature = "hazmat", test, shangmi_ctgrind))]
/// [`kdf_into`] with a forced backend (for tests and benchmarks).
pub fn kdf_with_backend(
    backend: Backend,
    z: &[u8],
    out: &mut [u8],
) -> Result<(), KdfErrorOrBackend> {
    Kdf::with_backend(backend, z)
        .map_err(KdfErrorOrBackend::Backend)?
        .fill(out)
        .map_err(KdfErrorOrBackend::Kdf)
}

/// The KDF as a stream: successive [`fill`](Kdf::fill) calls continue where the last one
/// stopped, so a large message can be masked piece by piece (SM2 encryption of a stream).
/// Z is absorbed once; each 32 bytes of output then cost one compression, in SIMD lanes.
#[derive(zeroize::ZeroizeOnDrop)]
pub struct Kdf {
    #[zeroize(skip)]
    imp: LaneImpl,
    prefix: Prefix,
    /// The counter of the next 32-byte piece (the first is 1).
    next: u64,
    /// The unread end of the last piece.
    buf: [u8; DIGEST_SIZE],
    buf_pos: usize,
}

impl Kdf {
    /// A stream keyed by the shared secret `z`.
    pub fn new(z: &[u8]) -> Self {
        Self::with_imp(LaneImpl::best(), z)
    }

    #[cfg(any(feature = "hazmat", test, shangmi_ctgrind))]
    /// [`Kdf::new`] with a forced backend.
    pub fn with_backend(backend: Backend, z: &[u8]) -> Result<Self, UnsupportedBackend> {
        Ok(Self::with_imp(LaneImpl::for_backend(backend)?, z))
    }

    fn with_imp(imp: LaneImpl, z: &[u8]) -> Self {
        Kdf {
            imp,
            prefix: Prefix::new(imp.single(), z),
            next: 1,
            buf: [0; DIGEST_SIZE],
            buf_pos: DIGEST_SIZE,
        }
    }

    /// The next `out.len()` bytes of output. Fails, writing nothing, if they would run past
    /// the last counter (2^32 - 1).
    pub fn fill(&mut self, out: &mut [u8]) -> Result<(), KdfError> {
        let buffered = DIGEST_SIZE - self.buf_pos;
        let from_buf = buffered.min(out.len());
        let fresh = (out.len() - from_buf).div_ceil(DIGEST_SIZE) as u64;
        if self.next - 1 + fresh > u64::from(u32::MAX) {
            return Err(KdfError);
        }
        let (head, rest) = out.split_at_mut(from_buf);
        head.copy_from_slice(&self.buf[self.buf_pos..self.buf_pos + from_buf]);
        self.buf_pos += from_buf;
        let (whole, tail) = rest.split_at_mut(rest.len() / DIGEST_SIZE * DIGEST_SIZE);
        let done = match self.imp {
            LaneImpl::Serial(_) => 0,
            #[cfg(target_arch = "x86_64")]
            LaneImpl::X8(k, _) => lanes::<8, _>(k, &self.prefix, self.next, whole),
            #[cfg(target_arch = "x86_64")]
            LaneImpl::X16(k, _) => lanes::<16, _>(k, &self.prefix, self.next, whole),
            #[cfg(target_arch = "aarch64")]
            LaneImpl::X4(k, _) => lanes::<4, _>(k, &self.prefix, self.next, whole),
        };
        self.next += done as u64;
        // What the lanes left (the last few pieces, or everything without SIMD).
        for chunk in whole[done * DIGEST_SIZE..].chunks_exact_mut(DIGEST_SIZE) {
            self.piece(chunk.try_into().expect("32-byte chunk"));
        }
        if !tail.is_empty() {
            let mut piece = [0u8; DIGEST_SIZE];
            self.piece(&mut piece);
            tail.copy_from_slice(&piece[..tail.len()]);
            self.buf = piece;
            self.buf_pos = tail.len();
            piece.zeroize();
        }
        Ok(())
    }

    /// One piece through the single-stream compressor.
    fn piece(&mut self, out: &mut [u8; DIGEST_SIZE]) {
        let mut state = self.prefix.state;
        let mut blocks = self.prefix.block_with(self.next as u32);
        self.imp
            .single()
            .compress(&mut state, &blocks[..self.prefix.blocks]);
        write_digest(&state, out);
        self.next += 1;
        blocks.zeroize();
        state.zeroize();
    }
}

/// Either failure of `kdf_with_backend`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KdfErrorOrBackend {
    /// Output too long.
    Kdf(KdfError),
    /// The backend is not available on this CPU.
    Backend(UnsupportedBackend),
}

/// What every counter's computation starts from.
#[derive(zeroize::ZeroizeOnDrop)]
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

/// Runs batches of `L` counters, from `first` on, through the lane kernel into `out` (whole
/// 32-byte pieces); returns how many pieces it filled.
#[cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64")),
    allow(dead_code)
)]
fn lanes<const L: usize, K: LaneKernel<L>>(
    kernel: K,
    prefix: &Prefix,
    first: u64,
    out: &mut [u8],
) -> usize {
    debug_assert_eq!(out.len() % DIGEST_SIZE, 0);
    let batch = L * DIGEST_SIZE;
    // A final pass with fewer than three busy lanes is slower than the single-stream path.
    let full = out.len() / batch;
    let partial = (out.len() % batch) / DIGEST_SIZE;
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
    let mut state = [[0u32; L]; 8];
    for pass in 0..passes {
        for lane in 0..L {
            let ct = (first + (pass * L + lane) as u64) as u32;
            let (b, k) = (w0 / 16, w0 % 16);
            words[b][k][lane] = template[b][k] | (ct >> shift);
            if shift != 0 {
                let (b, k) = ((w0 + 1) / 16, (w0 + 1) % 16);
                words[b][k][lane] = template[b][k] | (ct << (32 - shift));
            }
        }
        state = core::array::from_fn(|k| [prefix.state[k]; L]);
        kernel.compress_words(&mut state, &words[..prefix.blocks]);
        // Straight into the output, big-endian; wiped once at the end, not per pass.
        let base = pass * batch;
        let pieces = ((out.len() - base) / DIGEST_SIZE).min(L);
        for (lane, piece) in out[base..]
            .chunks_exact_mut(DIGEST_SIZE)
            .take(pieces)
            .enumerate()
        {
            for (k, word) in piece.chunks_exact_mut(4).enumerate() {
                word.copy_from_slice(&state[k][lane].to_be_bytes());
            }
        }
    }
    state.zeroize();
    words.zeroize();
    (passes * L).min(out.len().div_ceil(DIGEST_SIZE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streaming_matches_one_shot_on_every_backend() {
        let z: Vec<u8> = (0..64u8).collect();
        for backend in Backend::available() {
            let mut want = vec![0u8; 5000];
            kdf_with_backend(backend, &z, &mut want).unwrap();
            // Splits that cut pieces, batches and lanes anywhere.
            for step in [1usize, 5, 31, 32, 33, 100, 512, 513, 1700] {
                let mut kdf = Kdf::with_backend(backend, &z).unwrap();
                let mut got = vec![0u8; want.len()];
                for chunk in got.chunks_mut(step) {
                    kdf.fill(chunk).unwrap();
                }
                assert_eq!(got, want, "{backend:?} step {step}");
            }
        }
    }

    #[test]
    fn refuses_to_run_past_the_last_counter() {
        let mut kdf = Kdf::new(b"z");
        kdf.next = u64::from(u32::MAX);
        let mut out = [0u8; 40];
        assert_eq!(kdf.fill(&mut out), Err(KdfError));
        assert_eq!(out, [0u8; 40], "nothing written on failure");
        kdf.fill(&mut out[..32]).unwrap();
        assert_eq!(kdf.fill(&mut out[..1]), Err(KdfError));
        assert_eq!(kdf.fill(&mut []), Ok(()));
    }
}
