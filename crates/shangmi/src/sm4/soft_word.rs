//! Portable SM4 for one or two blocks at a time (CBC encryption, CFB, OFB, MACs, the key
//! schedule): the S-box circuit runs on a 64-bit word holding the 4 S-box inputs of a round of
//! each of two blocks, bit `i` of every byte gathered into plane `i`.

use super::soft_sbox::{Plane, sbox};

const LOW_BITS: Plane = 0x0101_0101_0101_0101;

/// The S-box on each of the eight bytes of `x`.
#[inline(always)]
pub(crate) fn sbox_bytes(x: u64) -> u64 {
    let planes: [Plane; 8] = core::array::from_fn(|i| (x >> i) & LOW_BITS);
    let out = sbox(planes, LOW_BITS);
    out.iter().enumerate().fold(0, |acc, (i, p)| acc | (p << i))
}

/// SM4's linear transform L.
#[inline(always)]
pub(crate) fn l(b: u32) -> u32 {
    b ^ b.rotate_left(2) ^ b.rotate_left(10) ^ b.rotate_left(18) ^ b.rotate_left(24)
}

/// The key schedule's linear transform L'.
#[inline(always)]
pub(crate) fn l_key(b: u32) -> u32 {
    b ^ b.rotate_left(13) ^ b.rotate_left(23)
}

/// The S-box on each byte of a word.
#[inline(always)]
pub(crate) fn tau(x: u32) -> u32 {
    sbox_bytes(u64::from(x)) as u32
}

/// The 32 rounds on two blocks (their words, host order), round keys in the order given.
#[inline]
pub(crate) fn rounds2(rk: &[u32; 32], a: &mut [u32; 4], b: &mut [u32; 4]) {
    for &k in rk {
        let ta = a[1] ^ a[2] ^ a[3] ^ k;
        let tb = b[1] ^ b[2] ^ b[3] ^ k;
        let s = sbox_bytes(u64::from(ta) | u64::from(tb) << 32);
        let na = a[0] ^ l(s as u32);
        let nb = b[0] ^ l((s >> 32) as u32);
        *a = [a[1], a[2], a[3], na];
        *b = [b[1], b[2], b[3], nb];
    }
    a.reverse();
    b.reverse();
}

#[inline(always)]
pub(crate) fn load(block: &[u8; 16]) -> [u32; 4] {
    core::array::from_fn(|i| {
        u32::from_be_bytes([
            block[4 * i],
            block[4 * i + 1],
            block[4 * i + 2],
            block[4 * i + 3],
        ])
    })
}

#[inline(always)]
pub(crate) fn store(words: &[u32; 4], block: &mut [u8; 16]) {
    for (chunk, w) in block.chunks_exact_mut(4).zip(words) {
        chunk.copy_from_slice(&w.to_be_bytes());
    }
}

/// Encrypts (or, with reversed round keys, decrypts) blocks two at a time.
pub(crate) fn crypt_blocks(rk: &[u32; 32], blocks: &mut [[u8; 16]]) {
    let (pairs, rest) = blocks.as_chunks_mut::<2>();
    for [x, y] in pairs {
        let (mut a, mut b) = (load(x), load(y));
        rounds2(rk, &mut a, &mut b);
        store(&a, x);
        store(&b, y);
    }
    for x in rest {
        let mut a = load(x);
        let mut unused = [0u32; 4];
        rounds2(rk, &mut a, &mut unused);
        store(&a, x);
    }
}
