//! GHASH, the universal hash of GCM (NIST SP 800-38D section 6.4).
//!
//! Blocks are handled as big-endian 128-bit integers. With `hkey = H x^-1` (the key shifted
//! left one bit, reduced), the carry-less product of a block and `hkey` reduces with two
//! carry-less multiplications by 0xC2000000_00000000; products of many blocks with powers of H
//! are summed before a single reduction. The portable backend computes carry-less products with
//! ordinary multiplications on bits spread four apart (constant time, no tables); the x86
//! backends use PCLMULQDQ (8 blocks per reduction) and VPCLMULQDQ (16 blocks per reduction),
//! the arm64 one PMULL (8 blocks per reduction).

#[cfg(target_arch = "aarch64")]
mod arm_pmull;
mod soft;
#[cfg(target_arch = "x86_64")]
mod x86_clmul;
#[cfg(target_arch = "x86_64")]
mod x86_vpclmul;

use zeroize::Zeroize;

use super::Block;
use crate::cpu::{Backend, Implementation};

/// `H x^-1 mod g` in the big-endian-integer representation: H shifted left one bit, with
/// x^-1 = 0xC2000000_00000000_00000000_00000001 folded in when a bit falls off.
pub(crate) fn hkey(h: u128) -> u128 {
    (h << 1) ^ (crate::ct::mask128((h >> 127) as u64) & 0xc200_0000_0000_0000_0000_0000_0000_0001)
}

/// `hkey` forms of H^1 ..= H^N, each power one portable multiplication from the one before
/// (key setup only: N - 1 products, where recomputing each power from H took N(N-1)/2). The
/// x86 backends make theirs with PCLMULQDQ (`x86_clmul::powers`); the tests check both agree.
#[cfg(any(target_arch = "aarch64", all(test, target_arch = "x86_64")))]
pub(crate) fn hkey_powers<const N: usize>(h: u128) -> [u128; N] {
    let k = hkey(h);
    let mut acc = h;
    let mut out = [0u128; N];
    for (i, o) in out.iter_mut().enumerate() {
        if i > 0 {
            acc = soft::mul(acc, k);
        }
        *o = hkey(acc);
    }
    acc.zeroize();
    out
}

/// `hkey` forms of H^1 ..= H^8 (index i holds H^(i+1)): the key of the 128-bit carry-less
/// backends (PCLMULQDQ, PMULL).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[derive(Clone, zeroize::ZeroizeOnDrop)]
pub(crate) struct Powers8 {
    pub(crate) powers: [u128; 8],
}

#[cfg(target_arch = "aarch64")]
impl Powers8 {
    pub(crate) fn new(h: u128) -> Self {
        Powers8 {
            powers: hkey_powers(h),
        }
    }
}

// The precomputed powers live inline: one GHASH per key object, and no allocation per message.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, zeroize::ZeroizeOnDrop)]
enum Engine {
    Soft(u128),
    #[cfg(target_arch = "x86_64")]
    Clmul(#[zeroize(skip)] crate::cpu::Avx2, x86_clmul::Key),
    #[cfg(target_arch = "x86_64")]
    VpclmulAvx2(#[zeroize(skip)] crate::cpu::Vaes, x86_vpclmul::Key),
    #[cfg(target_arch = "x86_64")]
    Vpclmul(#[zeroize(skip)] crate::cpu::Avx512, x86_vpclmul::Key),
    #[cfg(target_arch = "aarch64")]
    Pmull(#[zeroize(skip)] crate::cpu::NeonAes, Powers8),
}

/// A GHASH key: H and its precomputed powers, held once per key object.
#[derive(Clone)]
pub(crate) struct GHashKey {
    engine: Engine,
}

/// A running GHASH: the accumulator alone, its key passed to each update (so a stream that
/// owns its key can hold one).
#[derive(Clone, zeroize::ZeroizeOnDrop)]
pub(crate) struct GHash {
    acc: u128,
}

/// Which GHASH implementation a profile gets (the key's powers are made for it).
#[derive(Clone, Copy, Debug)]
pub(crate) enum GHashImpl {
    Soft,
    #[cfg(target_arch = "x86_64")]
    Clmul(crate::cpu::Avx2),
    #[cfg(target_arch = "x86_64")]
    VpclmulAvx2(crate::cpu::Vaes),
    #[cfg(target_arch = "x86_64")]
    Vpclmul(crate::cpu::Avx512),
    #[cfg(target_arch = "aarch64")]
    Pmull(crate::cpu::NeonAes),
}

impl Implementation for GHashImpl {
    fn within(profile: Backend) -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            use crate::cpu::{Avx2, Avx512, Vaes};
            let simd = match profile {
                Backend::Avx512 => Avx512::get().map(GHashImpl::Vpclmul),
                Backend::Avx2Vaes | Backend::Avx2Gfni => Vaes::get()
                    .map(GHashImpl::VpclmulAvx2)
                    .or_else(|| Avx2::get().map(GHashImpl::Clmul)),
                Backend::Avx2 => Avx2::get().map(GHashImpl::Clmul),
                _ => None,
            };
            if let Some(g) = simd {
                return g;
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            use crate::cpu::NeonAes;
            if matches!(profile, Backend::Neon | Backend::NeonSm) {
                if let Some(t) = NeonAes::get() {
                    return GHashImpl::Pmull(t);
                }
            }
        }
        let _ = profile;
        GHashImpl::Soft
    }

    fn name(self) -> &'static str {
        match self {
            GHashImpl::Soft => "portable",
            #[cfg(target_arch = "x86_64")]
            GHashImpl::Clmul(_) => "pclmul",
            #[cfg(target_arch = "x86_64")]
            GHashImpl::VpclmulAvx2(_) => "vpclmul-avx2",
            #[cfg(target_arch = "x86_64")]
            GHashImpl::Vpclmul(_) => "vpclmul-avx512",
            #[cfg(target_arch = "aarch64")]
            GHashImpl::Pmull(_) => "pmull",
        }
    }
}

impl GHashKey {
    /// GHASH keyed with `h` for `profile`, which this CPU supports (the cipher's).
    pub(crate) fn new(h: &Block, profile: Backend) -> Self {
        let h = u128::from_be_bytes(*h);
        let engine = match GHashImpl::within(profile) {
            GHashImpl::Soft => Engine::Soft(hkey(h)),
            #[cfg(target_arch = "x86_64")]
            GHashImpl::Clmul(t) => Engine::Clmul(
                t,
                Powers8 {
                    powers: x86_clmul::powers(t, h),
                },
            ),
            #[cfg(target_arch = "x86_64")]
            GHashImpl::VpclmulAvx2(t) => Engine::VpclmulAvx2(t, x86_vpclmul::Key::new(t.avx2(), h)),
            #[cfg(target_arch = "x86_64")]
            GHashImpl::Vpclmul(t) => Engine::Vpclmul(t, x86_vpclmul::Key::new(t.avx2(), h)),
            #[cfg(target_arch = "aarch64")]
            GHashImpl::Pmull(t) => Engine::Pmull(t, Powers8::new(h)),
        };
        GHashKey { engine }
    }

    /// A hash starting from zero.
    pub(crate) fn start(&self) -> GHash {
        GHash { acc: 0 }
    }
}

impl GHash {
    /// Absorbs whole blocks under `key`, the one every update of this hash uses.
    pub(crate) fn update_blocks(&mut self, key: &GHashKey, blocks: &[Block]) {
        if blocks.is_empty() {
            return;
        }
        match &key.engine {
            Engine::Soft(k) => {
                for b in blocks {
                    self.acc = soft::mul(self.acc ^ u128::from_be_bytes(*b), *k);
                }
            }
            #[cfg(target_arch = "x86_64")]
            Engine::Clmul(t, key) => self.acc = x86_clmul::update(*t, key, self.acc, blocks),
            #[cfg(target_arch = "x86_64")]
            Engine::VpclmulAvx2(t, key) => {
                self.acc = x86_vpclmul::update_avx2(*t, key, self.acc, blocks)
            }
            #[cfg(target_arch = "x86_64")]
            Engine::Vpclmul(t, key) => {
                self.acc = x86_vpclmul::update_avx512(*t, key, self.acc, blocks)
            }
            #[cfg(target_arch = "aarch64")]
            Engine::Pmull(t, key) => self.acc = arm_pmull::update(*t, key, self.acc, blocks),
        }
    }

    /// Absorbs `data`, zero-padded to a whole number of blocks.
    pub(crate) fn update_padded(&mut self, key: &GHashKey, data: &[u8]) {
        let (blocks, rest) = data.as_chunks::<16>();
        self.update_blocks(key, blocks);
        if !rest.is_empty() {
            let mut last = [0u8; 16];
            last[..rest.len()].copy_from_slice(rest);
            self.update_blocks(key, &[last]);
            last.zeroize();
        }
    }

    /// The hash so far, as a block.
    pub(crate) fn value(&self) -> Block {
        self.acc.to_be_bytes()
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    #[test]
    fn clmul_key_powers_match_the_portable_ones() {
        let Some(t) = crate::cpu::Avx2::get() else {
            return;
        };
        let mut h = 0x66e9_4bd4_ef8a_2c3b_884c_fa59_ca34_2b2e_u128;
        for _ in 0..64 {
            assert_eq!(x86_clmul::powers::<16>(t, h), hkey_powers::<16>(h));
            // An LCG walk through keys, top bits included (hkey's reduction).
            h = h.wrapping_mul(0x2545_f491_4f6c_dd1d_9e37_79b9_7f4a_7c15) ^ (h >> 61);
        }
        assert_eq!(x86_clmul::powers::<4>(t, 0), [0; 4]);
        assert_eq!(
            x86_clmul::powers::<4>(t, u128::MAX),
            hkey_powers::<4>(u128::MAX)
        );
    }
}
