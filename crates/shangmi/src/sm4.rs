//! SM4 block cipher (GB/T 32907-2016, ISO/IEC 18033-3:2010/Amd 1:2021) and its modes.
//!
//! ```
//! use shangmi::sm4::Sm4;
//!
//! let key = [0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10];
//! let cipher = Sm4::new(&key);
//! let mut block = key;
//! cipher.encrypt_block(&mut block);
//! assert_eq!(block[..4], [0x68, 0x1e, 0xdf, 0x34]);
//! cipher.decrypt_block(&mut block);
//! assert_eq!(block, key);
//! ```
//!
//! No backend looks anything up in a table indexed by key or data: the portable one computes
//! the S-box as a Boolean circuit, the x86 ones with AES-NI or GFNI instructions, the arm64
//! ones with the SM4 or AES instructions.

#[rustfmt::skip]
mod constants;
mod a1_domain;
#[cfg(target_arch = "aarch64")]
mod arm_aes_neon;
#[cfg(target_arch = "aarch64")]
mod arm_sm4ce;
mod error;
pub(crate) mod ghash;
pub mod modes;
mod soft_bitsliced;
mod soft_sbox;
mod soft_word;
mod stream;
mod traits;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod wasm_simd128;
#[cfg(target_arch = "x86_64")]
mod x86_aesni;
#[cfg(target_arch = "x86_64")]
mod x86_aesni_modes;
#[cfg(target_arch = "x86_64")]
mod x86_gfni;
#[cfg(target_arch = "x86_64")]
mod x86_gfni_avx2;

use zeroize::Zeroize;

// The forcing entry points that use some of these are hazmat-only.
#[cfg_attr(
    not(any(feature = "hazmat", test, shangmi_ctgrind)),
    allow(unused_imports)
)]
use crate::cpu::{Backend, Implementation, UnsupportedBackend};
pub use error::Error;
pub use stream::{Direction, Mode, Stream};

/// Block length in bytes.
pub const BLOCK_SIZE: usize = 16;
/// Key length in bytes.
pub const KEY_SIZE: usize = 16;

/// One SM4 block.
pub type Block = [u8; BLOCK_SIZE];

/// FK, the system parameter of the key schedule.
const FK: [u32; 4] = [0xa3b1_bac6, 0x56aa_3350, 0x677d_9197, 0xb270_22dc];

/// CK_i: byte j of CK_i is (4i + j) * 7 mod 256.
const CK: [u32; 32] = {
    let mut ck = [0u32; 32];
    let mut i = 0;
    while i < 32 {
        let mut w = 0u32;
        let mut j = 0;
        while j < 4 {
            w = (w << 8) | (((4 * i + j) * 7) % 256) as u32;
            j += 1;
        }
        ck[i] = w;
        i += 1;
    }
    ck
};

/// The schedule's starting words: the key's big-endian words XORed with FK.
#[inline(always)]
pub(crate) fn key_words(key: &[u8; KEY_SIZE]) -> [u32; 4] {
    core::array::from_fn(|i| {
        u32::from_be_bytes([key[4 * i], key[4 * i + 1], key[4 * i + 2], key[4 * i + 3]]) ^ FK[i]
    })
}

/// The 32 round keys, encryption order, with the bitsliced S-box (any CPU). Decryption uses
/// them reversed.
pub(crate) fn expand_key(key: &[u8; KEY_SIZE]) -> [u32; 32] {
    let mut k = key_words(key);
    let mut rk = [0u32; 32];
    for (i, r) in rk.iter_mut().enumerate() {
        let t = soft_word::tau(k[1] ^ k[2] ^ k[3] ^ CK[i]);
        *r = k[0] ^ soft_word::l_key(t);
        k = [k[1], k[2], k[3], *r];
    }
    k.zeroize();
    rk
}

/// The block function chosen for a key: picked once, in [`Sm4::new`].
#[derive(Clone, Copy, Debug)]
pub(crate) enum Engine {
    Soft,
    #[cfg(target_arch = "x86_64")]
    AesNi(crate::cpu::Avx2),
    #[cfg(target_arch = "x86_64")]
    Vaes(crate::cpu::Vaes),
    #[cfg(target_arch = "x86_64")]
    GfniAvx2(crate::cpu::Gfni),
    #[cfg(target_arch = "x86_64")]
    Gfni(crate::cpu::Avx512),
    #[cfg(target_arch = "aarch64")]
    AesNeon(crate::cpu::NeonAes),
    #[cfg(target_arch = "aarch64")]
    Sm4Ce(crate::cpu::NeonSm),
}

impl Engine {
    /// AES-NI, if this engine's CPU features include it (every x86 SIMD engine's do).
    fn aes_ni(self) -> Option<AesNiToken> {
        match self {
            #[cfg(target_arch = "x86_64")]
            Engine::AesNi(t) => Some(t),
            #[cfg(target_arch = "x86_64")]
            Engine::Vaes(t) => Some(t.avx2()),
            #[cfg(target_arch = "x86_64")]
            Engine::GfniAvx2(t) => Some(t.avx2()),
            #[cfg(target_arch = "x86_64")]
            Engine::Gfni(t) => Some(t.avx2()),
            _ => None,
        }
    }
}

#[cfg(target_arch = "x86_64")]
type AesNiToken = crate::cpu::Avx2;
#[cfg(not(target_arch = "x86_64"))]
type AesNiToken = core::convert::Infallible;

impl Implementation for Engine {
    fn within(profile: Backend) -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            use crate::cpu::{Avx2, Avx512, Gfni, Vaes};
            let simd = match profile {
                Backend::Avx512 => Avx512::get().map(Engine::Gfni),
                Backend::Avx2Gfni => Gfni::get().map(Engine::GfniAvx2),
                Backend::Avx2Vaes => Vaes::get().map(Engine::Vaes),
                Backend::Avx2 => Avx2::get().map(Engine::AesNi),
                _ => None,
            };
            if let Some(e) = simd {
                return e;
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            use crate::cpu::{NeonAes, NeonSm};
            let simd = match profile {
                Backend::NeonSm => NeonSm::get().map(Engine::Sm4Ce),
                Backend::Neon => NeonAes::get().map(Engine::AesNeon),
                _ => None,
            };
            if let Some(e) = simd {
                return e;
            }
        }
        let _ = profile;
        Engine::Soft
    }

    fn name(self) -> &'static str {
        match self {
            Engine::Soft => "portable",
            #[cfg(target_arch = "x86_64")]
            Engine::AesNi(_) => "aesni",
            #[cfg(target_arch = "x86_64")]
            Engine::Vaes(_) => "vaes-avx2",
            #[cfg(target_arch = "x86_64")]
            Engine::GfniAvx2(_) => "gfni-avx2",
            #[cfg(target_arch = "x86_64")]
            Engine::Gfni(_) => "gfni-avx512",
            #[cfg(target_arch = "aarch64")]
            Engine::AesNeon(_) => "aes-neon",
            #[cfg(target_arch = "aarch64")]
            Engine::Sm4Ce(_) => "sm4-ce",
        }
    }
}

/// Round keys for one direction, in application order and in the layout the key's engine
/// runs in: as the standard computes them for the portable and SM4-CE engines, in the A1
/// domain (A1 rk + C1 per byte) for the AES and GFNI kernels (made there by the x86 AES-NI
/// schedule, converted by `new` for arm64's).
#[derive(Clone, zeroize::ZeroizeOnDrop)]
pub(crate) struct Schedule {
    pub(crate) rk: [u32; 32],
}

impl Schedule {
    fn new(rk: &[u32; 32], engine: Engine) -> Self {
        let rk = match engine {
            Engine::Soft => *rk,
            #[cfg(target_arch = "aarch64")]
            Engine::Sm4Ce(_) => *rk,
            #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
            _ => rk.map(a1_domain::key_to_a1_domain),
        };
        Schedule { rk }
    }
}

/// SM4 with an expanded key. Cloning copies the round keys; dropping wipes them.
#[derive(Clone, zeroize::ZeroizeOnDrop)]
pub struct Sm4 {
    enc: Schedule,
    dec: Schedule,
    #[zeroize(skip)]
    engine: Engine,
    /// The profile the key was expanded for; modes built on it (GCM's GHASH) follow it.
    #[zeroize(skip)]
    profile: Backend,
}

/// Lets the streaming modes hold their key schedule borrowed (`&Sm4`) or owned (`Sm4`).
impl AsRef<Sm4> for Sm4 {
    fn as_ref(&self) -> &Sm4 {
        self
    }
}

impl core::fmt::Debug for Sm4 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Sm4").finish_non_exhaustive()
    }
}

impl Sm4 {
    /// Expands `key` for the fastest backend this CPU has.
    pub fn new(key: &[u8; KEY_SIZE]) -> Self {
        Self::with_engine(key, Engine::best(), Backend::best())
    }

    #[cfg(any(feature = "hazmat", test, shangmi_ctgrind))]
    /// Expands `key` for the given backend, if this CPU supports it.
    pub fn with_backend(
        key: &[u8; KEY_SIZE],
        backend: Backend,
    ) -> Result<Self, UnsupportedBackend> {
        Engine::for_backend(backend).map(|e| Self::with_engine(key, e, backend))
    }

    fn with_engine(key: &[u8; KEY_SIZE], engine: Engine, profile: Backend) -> Self {
        // The schedule's S-box through AESENCLAST where the engine has AES-NI (every x86 SIMD
        // engine, all in the A1 domain): a third of the bitsliced circuit's latency, on the
        // path of every TLS and TLCP key.
        let enc = match engine.aes_ni() {
            #[cfg(target_arch = "x86_64")]
            Some(t) => Schedule {
                rk: x86_aesni::expand_key_a1(t, key),
            },
            _ => {
                let mut rk = expand_key(key);
                let enc = Schedule::new(&rk, engine);
                rk.zeroize();
                enc
            }
        };
        // Decryption runs the same keys backwards: reversed, not converted again.
        let mut dec = enc.clone();
        dec.rk.reverse();
        Sm4 {
            enc,
            dec,
            engine,
            profile,
        }
    }

    /// Encrypts one block in place.
    #[inline]
    pub fn encrypt_block(&self, block: &mut Block) {
        self.crypt_block(&self.enc, block);
    }

    /// Decrypts one block in place.
    #[inline]
    pub fn decrypt_block(&self, block: &mut Block) {
        self.crypt_block(&self.dec, block);
    }

    /// Encrypts blocks in place, many in flight (ECB on whole blocks).
    #[inline]
    pub fn encrypt_blocks(&self, blocks: &mut [Block]) {
        self.crypt_blocks(&self.enc, blocks);
    }

    /// Decrypts blocks in place, many in flight.
    #[inline]
    pub fn decrypt_blocks(&self, blocks: &mut [Block]) {
        self.crypt_blocks(&self.dec, blocks);
    }

    /// The backend profile this key was expanded for.
    pub fn backend(&self) -> Backend {
        self.profile
    }

    /// The implementation the blocks run on, e.g. `vaes-avx2`.
    pub fn implementation(&self) -> &'static str {
        self.engine.name()
    }

    /// One block, on the path with the shortest latency (for chained modes).
    fn crypt_block(&self, s: &Schedule, block: &mut Block) {
        match self.engine {
            Engine::Soft => soft_word::crypt_blocks(&s.rk, core::slice::from_mut(block)),
            #[cfg(target_arch = "x86_64")]
            Engine::AesNi(t) => x86_aesni::crypt_block(t, &s.rk, block),
            #[cfg(target_arch = "x86_64")]
            Engine::Vaes(t) => x86_aesni::crypt_block(t.avx2(), &s.rk, block),
            #[cfg(target_arch = "x86_64")]
            Engine::GfniAvx2(t) => x86_aesni::crypt_block(t.avx2(), &s.rk, block),
            #[cfg(target_arch = "x86_64")]
            Engine::Gfni(t) => x86_gfni::crypt_block(t, &s.rk, block),
            #[cfg(target_arch = "aarch64")]
            Engine::AesNeon(t) => arm_aes_neon::crypt_block(t, &s.rk, block),
            #[cfg(target_arch = "aarch64")]
            Engine::Sm4Ce(t) => arm_sm4ce::crypt_block(t, &s.rk, block),
        }
    }

    fn crypt_blocks(&self, s: &Schedule, blocks: &mut [Block]) {
        match self.engine {
            Engine::Soft => soft_crypt_blocks(&s.rk, blocks),
            #[cfg(target_arch = "x86_64")]
            Engine::AesNi(t) => x86_aesni::crypt_blocks(t, &s.rk, blocks),
            #[cfg(target_arch = "x86_64")]
            Engine::Vaes(t) => x86_aesni::crypt_blocks_vaes(t, &s.rk, blocks),
            #[cfg(target_arch = "x86_64")]
            Engine::GfniAvx2(t) => x86_gfni_avx2::crypt_blocks(t, &s.rk, blocks),
            #[cfg(target_arch = "x86_64")]
            Engine::Gfni(t) => x86_gfni::crypt_blocks(t, &s.rk, blocks),
            #[cfg(target_arch = "aarch64")]
            Engine::AesNeon(t) => arm_aes_neon::crypt_blocks(t, &s.rk, blocks),
            #[cfg(target_arch = "aarch64")]
            Engine::Sm4Ce(t) => arm_sm4ce::crypt_blocks(t, &s.rk, blocks),
        }
    }
}

impl Sm4 {
    /// XORs into `blocks` the keystream of the counter blocks `counter`, `counter + 1`, ...
    /// (the last 32-bit word counting, wrapping modulo 2^32), on the engines with a fused CTR
    /// kernel; returns false, touching nothing, on the others.
    // Only the portable engine where no fused kernel exists (WebAssembly): nothing to use.
    #[cfg_attr(
        not(any(target_arch = "x86_64", target_arch = "aarch64")),
        allow(unused_variables, unreachable_code)
    )]
    pub(crate) fn ctr32_xor(&self, counter: &Block, blocks: &mut [Block]) -> bool {
        match self.engine {
            #[cfg(target_arch = "x86_64")]
            Engine::AesNi(t) => x86_aesni_modes::ctr32_xor(t, &self.enc.rk, counter, blocks),
            #[cfg(target_arch = "x86_64")]
            Engine::Vaes(t) => x86_aesni_modes::ctr32_xor_vaes(t, &self.enc.rk, counter, blocks),
            #[cfg(target_arch = "aarch64")]
            Engine::Sm4Ce(t) => arm_sm4ce::ctr32_xor(t, &self.enc.rk, counter, blocks),
            #[cfg(target_arch = "aarch64")]
            Engine::AesNeon(t) => arm_aes_neon::ctr32_xor(t, &self.enc.rk, counter, blocks),
            _ => return false,
        }
        true
    }

    /// For each block, `E(block ^ mask) ^ mask` (or with D when `decrypt`), `masks[i]` for
    /// `blocks[i]`, on the engines with a fused kernel; returns false, touching nothing, on
    /// the others.
    pub(crate) fn xex(&self, decrypt: bool, masks: &[Block], blocks: &mut [Block]) -> bool {
        self.masked::<true>(decrypt, masks, blocks)
    }

    /// For each block, `D(block) ^ mask` (CBC decryption's step), as [`Sm4::xex`].
    pub(crate) fn decrypt_then_mask(&self, masks: &[Block], blocks: &mut [Block]) -> bool {
        self.masked::<false>(true, masks, blocks)
    }

    #[cfg_attr(
        not(any(target_arch = "x86_64", target_arch = "aarch64")),
        allow(unused_variables, unreachable_code)
    )]
    fn masked<const IN: bool>(&self, decrypt: bool, masks: &[Block], blocks: &mut [Block]) -> bool {
        let s = if decrypt { &self.dec } else { &self.enc };
        match self.engine {
            #[cfg(target_arch = "x86_64")]
            Engine::AesNi(t) => x86_aesni_modes::masked::<IN>(t, &s.rk, masks, blocks),
            #[cfg(target_arch = "x86_64")]
            Engine::Vaes(t) => x86_aesni_modes::masked_vaes::<IN>(t, &s.rk, masks, blocks),
            #[cfg(target_arch = "aarch64")]
            Engine::Sm4Ce(t) => arm_sm4ce::masked::<IN>(t, &s.rk, masks, blocks),
            _ => return false,
        }
        true
    }
}

/// Below this many blocks the word kernel beats a 64-lane bitsliced pass.
const BITSLICE_FROM: usize = 12;

fn soft_crypt_blocks(rk: &[u32; 32], blocks: &mut [Block]) {
    // WebAssembly with SIMD: 128 blocks a pass where there are more than 64.
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    let blocks = {
        let wide = blocks.len() / wasm_simd128::WIDE_LANES * wasm_simd128::WIDE_LANES;
        let (head, rest) = blocks.split_at_mut(wide);
        for chunk in head.chunks_mut(wasm_simd128::WIDE_LANES) {
            wasm_simd128::crypt128(rk, chunk);
        }
        if rest.len() > soft_bitsliced::LANES {
            wasm_simd128::crypt128(rk, rest);
            return;
        }
        rest
    };
    for chunk in blocks.chunks_mut(soft_bitsliced::LANES) {
        if chunk.len() >= BITSLICE_FROM {
            soft_bitsliced::crypt64(rk, chunk);
        } else {
            soft_word::crypt_blocks(rk, chunk);
        }
    }
}

#[cfg(test)]
mod tests;
