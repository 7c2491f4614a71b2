//! Many messages hashed at once: 8 per pass with AVX2, 16 with AVX-512, 4 with NEON.
//!
//! A lane kernel compresses one block of each of L messages per step, with the chaining values
//! held word-major (`state[word][lane]`) so every state word is one vector. Messages of unequal
//! length are scheduled like jobs on L machines: the longest go first, a lane that finishes is
//! refilled with the next message, and each kernel call runs as many blocks as every busy lane
//! still has in one contiguous piece. When only a couple of messages are left, the single-stream
//! hasher is faster than a mostly idle vector pass, so they finish there.

// Without lane kernels (WebAssembly) the scheduler has nothing to drive.
#![cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64")),
    allow(dead_code)
)]

use super::{BLOCK_SIZE, Compressor, DIGEST_SIZE, Sm3, pad, soft, write_digest};
// The forcing entry points that use some of these are hazmat-only.
#[cfg_attr(
    not(any(feature = "hazmat", test, shangmi_ctgrind)),
    allow(unused_imports)
)]
use crate::cpu::{Backend, Implementation, UnsupportedBackend};

/// One SIMD lane kernel of width `L`.
pub(crate) trait LaneKernel<const L: usize>: Copy {
    /// Compresses `n` blocks of every lane; `data[i]` is exactly `n * 64` bytes of lane i.
    fn compress_bytes(self, state: &mut [[u32; L]; 8], data: &[&[u8]; L]);
    /// Compresses blocks already split into host-order message words, word-major:
    /// `blocks[b][word][lane]`.
    fn compress_words(self, state: &mut [[u32; L]; 8], blocks: &[[[u32; L]; 16]]);
}

/// The lane kernels a backend tier provides.
#[derive(Clone, Copy, Debug)]
pub(crate) enum LaneImpl {
    /// No SIMD: messages are hashed one after another.
    Serial(Compressor),
    #[cfg(target_arch = "x86_64")]
    X8(super::x86_avx2_lanes::Kernel, Compressor),
    #[cfg(target_arch = "x86_64")]
    X16(super::x86_avx512_lanes::Kernel, Compressor),
    #[cfg(target_arch = "aarch64")]
    X4(super::arm_neon_lanes::Kernel, Compressor),
}

impl LaneImpl {
    /// The single-stream compressor of the same tier.
    pub(crate) fn single(self) -> Compressor {
        match self {
            LaneImpl::Serial(c) => c,
            #[cfg(target_arch = "x86_64")]
            LaneImpl::X8(_, c) | LaneImpl::X16(_, c) => c,
            #[cfg(target_arch = "aarch64")]
            LaneImpl::X4(_, c) => c,
        }
    }
}

impl Implementation for LaneImpl {
    fn within(profile: Backend) -> Self {
        let single = Compressor::within(profile);
        #[cfg(target_arch = "x86_64")]
        {
            use crate::cpu::{Avx2, Avx512};
            let lanes = match profile {
                Backend::Avx512 => {
                    Avx512::get().map(|t| LaneImpl::X16(super::x86_avx512_lanes::Kernel(t), single))
                }
                Backend::Portable => None,
                _ => Avx2::get().map(|t| LaneImpl::X8(super::x86_avx2_lanes::Kernel(t), single)),
            };
            if let Some(l) = lanes {
                return l;
            }
        }
        #[cfg(target_arch = "aarch64")]
        if matches!(profile, Backend::Neon | Backend::NeonSm) {
            if let Some(t) = crate::cpu::NeonAes::get() {
                return LaneImpl::X4(super::arm_neon_lanes::Kernel(t), single);
            }
        }
        LaneImpl::Serial(single)
    }

    fn name(self) -> &'static str {
        match self {
            LaneImpl::Serial(_) => "portable",
            #[cfg(target_arch = "x86_64")]
            LaneImpl::X8(..) => "avx2-x8",
            #[cfg(target_arch = "x86_64")]
            LaneImpl::X16(..) => "avx512-x16",
            #[cfg(target_arch = "aarch64")]
            LaneImpl::X4(..) => "neon-x4",
        }
    }
}

/// Hashes each message; `result[i]` is the SM3 digest of `messages[i]`.
pub fn hash_many(messages: &[&[u8]]) -> Vec<[u8; DIGEST_SIZE]> {
    let mut out = vec![[0u8; DIGEST_SIZE]; messages.len()];
    hash_many_impl(LaneImpl::best(), messages, &mut out);
    out
}

/// Hashes each message into the caller's slice.
///
/// # Errors
/// [`LengthMismatch`] when `out` does not have one entry per message.
pub fn hash_many_into(
    messages: &[&[u8]],
    out: &mut [[u8; DIGEST_SIZE]],
) -> Result<(), LengthMismatch> {
    if messages.len() != out.len() {
        return Err(LengthMismatch);
    }
    hash_many_impl(LaneImpl::best(), messages, out);
    Ok(())
}

#[cfg(any(feature = "hazmat", test, shangmi_ctgrind))]
/// [`hash_many`] with a forced backend (for tests and benchmarks).
pub fn hash_many_with_backend(
    backend: Backend,
    messages: &[&[u8]],
) -> Result<Vec<[u8; DIGEST_SIZE]>, UnsupportedBackend> {
    let imp = LaneImpl::for_backend(backend)?;
    let mut out = vec![[0u8; DIGEST_SIZE]; messages.len()];
    hash_many_impl(imp, messages, &mut out);
    Ok(out)
}

/// `out` must have exactly one entry per message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LengthMismatch;

impl core::fmt::Display for LengthMismatch {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("output slice length differs from the number of messages")
    }
}

impl std::error::Error for LengthMismatch {}

fn hash_many_impl(imp: LaneImpl, messages: &[&[u8]], out: &mut [[u8; DIGEST_SIZE]]) {
    match imp {
        LaneImpl::Serial(c) => serial(c, messages, 0..messages.len(), out),
        #[cfg(target_arch = "x86_64")]
        LaneImpl::X8(k, c) => schedule::<8, _>(k, c, messages, out),
        #[cfg(target_arch = "x86_64")]
        LaneImpl::X16(k, c) => schedule::<16, _>(k, c, messages, out),
        #[cfg(target_arch = "aarch64")]
        LaneImpl::X4(k, c) => schedule::<4, _>(k, c, messages, out),
    }
}

fn serial(
    c: Compressor,
    messages: &[&[u8]],
    which: impl IntoIterator<Item = usize>,
    out: &mut [[u8; DIGEST_SIZE]],
) {
    for i in which {
        let mut h = Sm3::with_compressor(c);
        h.update(messages[i]);
        out[i] = h.finalize();
    }
}

/// Below this many busy lanes, finishing on the single-stream hasher is faster (a lane of a
/// 16-wide pass costs about as much as 2.4 single-stream blocks; of an 8-wide pass, about 2).
const SERIAL_BELOW: usize = 3;

/// A message being hashed in a lane: its remaining whole blocks, then its padded tail.
struct Job {
    msg: usize,
    body: usize,
    tail: [[u8; BLOCK_SIZE]; 2],
    tail_blocks: usize,
    tail_done: usize,
}

impl Job {
    fn new(msg: usize, data: &[u8]) -> Self {
        let full = data.len() / BLOCK_SIZE * BLOCK_SIZE;
        let mut tail = [[0u8; BLOCK_SIZE]; 2];
        let tail_blocks = pad(
            &data[full..],
            (data.len() as u64).wrapping_mul(8),
            &mut tail,
        );
        Job {
            msg,
            body: 0,
            tail,
            tail_blocks,
            tail_done: 0,
        }
    }

    /// The next contiguous run of blocks this job can hand to a kernel.
    fn run<'a>(&'a self, data: &'a [u8]) -> &'a [u8] {
        let full = data.len() / BLOCK_SIZE * BLOCK_SIZE;
        if self.body < full {
            &data[self.body..full]
        } else {
            self.tail.as_flattened()[self.tail_done * BLOCK_SIZE..self.tail_blocks * BLOCK_SIZE]
                .as_ref()
        }
    }

    fn advance(&mut self, data: &[u8], blocks: usize) {
        let full = data.len() / BLOCK_SIZE * BLOCK_SIZE;
        if self.body < full {
            self.body += blocks * BLOCK_SIZE;
        } else {
            self.tail_done += blocks;
        }
    }

    fn done(&self) -> bool {
        self.tail_done == self.tail_blocks
    }
}

fn schedule<const L: usize, K: LaneKernel<L>>(
    kernel: K,
    single: Compressor,
    messages: &[&[u8]],
    out: &mut [[u8; DIGEST_SIZE]],
) {
    if messages.len() < SERIAL_BELOW {
        return serial(single, messages, 0..messages.len(), out);
    }
    // Longest first keeps the lanes evenly loaded to the end.
    let mut order: Vec<usize> = (0..messages.len()).collect();
    order.sort_by_key(|&i| core::cmp::Reverse(messages[i].len()));
    let mut queue = order.into_iter();

    let mut state = [[0u32; L]; 8];
    let mut jobs: [Option<Job>; L] = core::array::from_fn(|_| None);
    let refill = |lane: usize,
                  jobs: &mut [Option<Job>; L],
                  state: &mut [[u32; L]; 8],
                  next: Option<usize>| {
        jobs[lane] = next.map(|i| Job::new(i, messages[i]));
        for (word, iv) in state.iter_mut().zip(soft::IV) {
            word[lane] = iv;
        }
    };
    for lane in 0..L {
        refill(lane, &mut jobs, &mut state, queue.next());
    }

    loop {
        let busy = jobs.iter().filter(|j| j.is_some()).count();
        if busy < SERIAL_BELOW {
            // Finish the last messages on the single-stream hasher, from where their lanes are.
            for (lane, job) in jobs.iter_mut().enumerate() {
                let Some(job) = job else { continue };
                let mut words: [u32; 8] = core::array::from_fn(|w| state[w][lane]);
                while !job.done() {
                    let run = job.run(messages[job.msg]);
                    let (blocks, _) = run.as_chunks::<BLOCK_SIZE>();
                    single.compress(&mut words, blocks);
                    let n = blocks.len();
                    job.advance(messages[job.msg], n);
                }
                write_digest(&words, &mut out[job.msg]);
            }
            let rest: Vec<usize> = queue.collect();
            return serial(single, messages, rest, out);
        }
        let first = jobs.iter().flatten().next().map(|j| j.run(messages[j.msg]));
        let Some(first) = first else { return };
        let mut blocks = first.len() / BLOCK_SIZE;
        for job in jobs.iter().flatten() {
            blocks = blocks.min(job.run(messages[job.msg]).len() / BLOCK_SIZE);
        }
        let len = blocks * BLOCK_SIZE;
        // Idle lanes recompute the first busy lane's data; their results are never read.
        let data: [&[u8]; L] = core::array::from_fn(|lane| match &jobs[lane] {
            Some(job) => &job.run(messages[job.msg])[..len],
            None => &first[..len],
        });
        kernel.compress_bytes(&mut state, &data);

        for lane in 0..L {
            let Some(job) = &mut jobs[lane] else { continue };
            job.advance(messages[job.msg], blocks);
            if job.done() {
                let words: [u32; 8] = core::array::from_fn(|w| state[w][lane]);
                write_digest(&words, &mut out[job.msg]);
                refill(lane, &mut jobs, &mut state, queue.next());
            }
        }
    }
}
