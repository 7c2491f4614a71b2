//! Portable SM3 compression (GB/T 32905-2016, section 5.3), and the round structure every
//! single-stream backend shares.
//!
//! The speed of single-stream SM3 is set by a dependency chain: each round's E passes through an
//! addition, a rotation, another addition and P0 (three more operations) before the next round
//! can use it, about seven cycles a round however wide the CPU is. What a backend can do is keep
//! everything else out of that chain's way:
//! - the additions are ordered so the value that arrives last (SS1, SS2) is added last;
//! - the message expansion is interleaved with the rounds, four words ahead of where they are
//!   needed, so it runs in the gaps of the chain instead of before it (computing all 68 words
//!   first measured 20-30% slower, whether in scalar or in SIMD registers).
//!
//! A backend is a [`Kernel`]: how the expanded message is held and extended, and how
//! `rotl(A, 12) + E + T_j` is summed. [`compress_block`] is written once, `#[inline(always)]`,
//! and instantiated inside each backend's `#[target_feature]` function.

/// Initial value IV (section 4.1).
pub(crate) const IV: [u32; 8] = [
    0x7380_166f,
    0x4914_b2b9,
    0x1724_42d7,
    0xda8a_0600,
    0xa96f_30bc,
    0x1631_38aa,
    0xe38d_ee4d,
    0xb0fb_0e4e,
];

/// T_j <<< (j mod 32), precomputed so each round adds a constant.
pub(crate) const T: [u32; 64] = {
    let mut t = [0u32; 64];
    let mut j = 0;
    while j < 64 {
        let base: u32 = if j < 16 { 0x79cc_4519 } else { 0x7a87_9d8a };
        t[j] = base.rotate_left((j % 32) as u32);
        j += 1;
    }
    t
};

#[inline(always)]
pub(crate) fn p0(x: u32) -> u32 {
    x ^ x.rotate_left(9) ^ x.rotate_left(17)
}

#[inline(always)]
pub(crate) fn p1(x: u32) -> u32 {
    x ^ x.rotate_left(15) ^ x.rotate_left(23)
}

/// What differs between single-stream backends.
pub(crate) trait Kernel {
    /// The expanded message as the backend keeps it.
    type Schedule;
    /// W[0..16] from the block (big-endian words).
    fn load(block: &[u8; 64]) -> Self::Schedule;
    /// Computes `W[4k..4k+4]` (k = 4..=16) from the sixteen words before them.
    fn expand(s: &mut Self::Schedule, k: usize);
    /// `W[j]`.
    fn w(s: &Self::Schedule, j: usize) -> u32;
    /// `W'[j] = W[j] ^ W[j+4]`.
    fn wp(s: &Self::Schedule, j: usize) -> u32;
    /// `a12 + e + T[J]`, the input of SS1's rotation.
    fn ss1_input<const J: usize>(a12: u32, e: u32) -> u32;

    /// Round J on the state as this round names it: the new A goes into `d`, the new E into
    /// `h`, and `b` and `f` are rotated in place (see [`compress_block`]). A backend overrides
    /// it only to order the instructions itself.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)] // the eight state words, each in its own register
    fn round<const J: usize>(
        s: &Self::Schedule,
        a: u32,
        b: &mut u32,
        c: u32,
        d: &mut u32,
        e: u32,
        f: &mut u32,
        g: u32,
        h: &mut u32,
    ) {
        let (ff, gg) = if J < 16 {
            (a ^ *b ^ c, e ^ *f ^ g)
        } else {
            ((a & *b) | (c & (a | *b)), (e & *f) | (!e & g))
        };
        let a12 = a.rotate_left(12);
        let ss1 = Self::ss1_input::<J>(a12, e).rotate_left(7);
        let ss2 = ss1 ^ a12;
        // The value that depends on this round's A or E is added last.
        let tt1 = d
            .wrapping_add(Self::wp(s, J))
            .wrapping_add(ff)
            .wrapping_add(ss2);
        let tt2 = h
            .wrapping_add(Self::w(s, J))
            .wrapping_add(gg)
            .wrapping_add(ss1);
        *b = b.rotate_left(9);
        *f = f.rotate_left(19);
        *d = tt1;
        *h = p0(tt2);
    }
}

/// One compression: the 64 rounds with the expansion interleaved, and the feed-forward.
///
/// Each round writes the new A into D's register and the new E into H's, and rotates B and F in
/// place, so the next round names its variables (D, A, B, C, H, E, F, G): after four rounds the
/// names are back where they started and no value is ever moved. Group k of the expansion
/// (W[4k..4k+4]) is computed just before round 4k-16; round 4k-4 is the first to need it.
#[inline(always)]
pub(crate) fn compress_block<K: Kernel>(state: &mut [u32; 8], block: &[u8; 64]) {
    let mut s = K::load(block);
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;

    macro_rules! four {
        ($j:expr) => {
            if $j / 4 + 4 <= 16 {
                K::expand(&mut s, $j / 4 + 4);
            }
            K::round::<{ $j }>(&s, a, &mut b, c, &mut d, e, &mut f, g, &mut h);
            K::round::<{ $j + 1 }>(&s, d, &mut a, b, &mut c, h, &mut e, f, &mut g);
            K::round::<{ $j + 2 }>(&s, c, &mut d, a, &mut b, g, &mut h, e, &mut f);
            K::round::<{ $j + 3 }>(&s, b, &mut c, d, &mut a, f, &mut g, h, &mut e);
        };
    }

    four!(0);
    four!(4);
    four!(8);
    four!(12);
    four!(16);
    four!(20);
    four!(24);
    four!(28);
    four!(32);
    four!(36);
    four!(40);
    four!(44);
    four!(48);
    four!(52);
    four!(56);
    four!(60);

    for (s, v) in state.iter_mut().zip([a, b, c, d, e, f, g, h]) {
        *s ^= v;
    }
}

/// The expanded message in 68 scalar words.
pub(crate) struct Words(pub(crate) [u32; 68]);

impl Words {
    #[inline(always)]
    pub(crate) fn load(block: &[u8; 64]) -> Self {
        let mut w = [0u32; 68];
        for (wi, b) in w.iter_mut().zip(block.chunks_exact(4)) {
            *wi = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        }
        Words(w)
    }

    /// Section 5.3.2: `W[j] = P1(W[j-16] ^ W[j-9] ^ (W[j-3] <<< 15)) ^ (W[j-13] <<< 7) ^ W[j-6]`.
    #[inline(always)]
    pub(crate) fn expand(&mut self, k: usize) {
        let w = &mut self.0;
        for j in 4 * k..4 * k + 4 {
            w[j] = p1(w[j - 16] ^ w[j - 9] ^ w[j - 3].rotate_left(15))
                ^ w[j - 13].rotate_left(7)
                ^ w[j - 6];
        }
    }
}

/// The portable kernel: scalar expansion, plain additions.
pub(crate) struct Soft;

impl Kernel for Soft {
    type Schedule = Words;

    #[inline(always)]
    fn load(block: &[u8; 64]) -> Words {
        Words::load(block)
    }

    #[inline(always)]
    fn expand(s: &mut Words, k: usize) {
        s.expand(k);
    }

    #[inline(always)]
    fn w(s: &Words, j: usize) -> u32 {
        s.0[j]
    }

    #[inline(always)]
    fn wp(s: &Words, j: usize) -> u32 {
        s.0[j] ^ s.0[j + 4]
    }

    #[inline(always)]
    fn ss1_input<const J: usize>(a12: u32, e: u32) -> u32 {
        a12.wrapping_add(T[J]).wrapping_add(e)
    }
}

/// Compresses whole 64-byte blocks into `state`.
pub(crate) fn compress(state: &mut [u32; 8], blocks: &[[u8; 64]]) {
    for block in blocks {
        compress_block::<Soft>(state, block);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_constants() {
        assert_eq!(T[0], 0x79cc_4519);
        assert_eq!(T[1], 0xf398_8a32);
        assert_eq!(T[16], 0x7a87_9d8a_u32.rotate_left(16));
        assert_eq!(T[32], 0x7a87_9d8a);
        assert_eq!(T[63], 0x7a87_9d8a_u32.rotate_left(31));
    }
}
