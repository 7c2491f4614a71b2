//! WebAssembly SIMD: the bitsliced kernel of `soft_bitsliced.rs` on 128-bit planes, 128 blocks
//! a pass instead of 64, for engines with SIMD128 (the npm package ships a module built with it
//! beside a scalar one and picks at load). The blocks are loaded and transposed as two 64-block
//! halves, the halves' planes paired into vectors, and the same circuit runs on them: AND, XOR
//! and NOT only, nothing that depends on data or keys.

use core::arch::wasm32::{
    u64x2, u64x2_extract_lane, u64x2_splat, v128, v128_and, v128_not, v128_xor,
};

use super::soft_bitsliced::{LANES, Word, planes, rounds, unplanes};
use super::soft_sbox::Bits;

/// Blocks per pass.
pub(crate) const WIDE_LANES: usize = 2 * LANES;

/// A plane of 128 lanes.
#[derive(Clone, Copy)]
pub(crate) struct V(v128);

impl core::ops::BitAnd for V {
    type Output = V;
    #[inline(always)]
    fn bitand(self, o: V) -> V {
        V(v128_and(self.0, o.0))
    }
}

impl core::ops::BitXor for V {
    type Output = V;
    #[inline(always)]
    fn bitxor(self, o: V) -> V {
        V(v128_xor(self.0, o.0))
    }
}

impl core::ops::BitXorAssign for V {
    #[inline(always)]
    fn bitxor_assign(&mut self, o: V) {
        self.0 = v128_xor(self.0, o.0);
    }
}

impl core::ops::Not for V {
    type Output = V;
    #[inline(always)]
    fn not(self) -> V {
        V(v128_not(self.0))
    }
}

impl Bits for V {
    const ZERO: V = V(u64x2(0, 0));
    #[inline(always)]
    fn splat_bit(bit: u64) -> V {
        V(u64x2_splat(crate::ct::mask(bit)))
    }
}

/// Encrypts (or, with reversed round keys, decrypts) up to 128 blocks.
pub(crate) fn crypt128(rk: &[u32; 32], blocks: &mut [[u8; 16]]) {
    debug_assert!(blocks.len() <= WIDE_LANES);
    let (lo_blocks, hi_blocks) = blocks.split_at_mut(blocks.len().min(LANES));
    let (mut lo, mut hi) = (planes(lo_blocks), planes(hi_blocks));
    let mut x: [Word<V>; 4] =
        core::array::from_fn(|w| core::array::from_fn(|b| V(u64x2(lo[w][b], hi[w][b]))));
    rounds(rk, &mut x);
    for w in 0..4 {
        for b in 0..32 {
            lo[w][b] = u64x2_extract_lane::<0>(x[w][b].0);
            hi[w][b] = u64x2_extract_lane::<1>(x[w][b].0);
            x[w][b] = V::ZERO;
        }
    }
    unplanes(&lo, lo_blocks);
    unplanes(&hi, hi_blocks);
    for w in 0..4 {
        zeroize::Zeroize::zeroize(&mut lo[w]);
        zeroize::Zeroize::zeroize(&mut hi[w]);
    }
}
