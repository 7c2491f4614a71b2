//! CTR: keystream E(counter), counter a 128-bit big-endian integer starting at the IV (the
//! form of NIST SP 800-38A and `openssl enc -sm4-ctr`), wrapping modulo 2^128. GCM's 32-bit
//! counter form is `Counter32`. Counter blocks are generated and encrypted a chunk at a time.

use super::super::{Block, Sm4};
use super::{CHUNK_BLOCKS, Error, xor_in_place};

/// How the counter block advances. Counters are kept as integers and each counter block is
/// written whole: updating its last bytes in memory and reading the block back would stall on
/// store forwarding for every block.
pub(crate) trait Increment: Copy {
    fn next(self, block: &mut Block);
    /// The counter after `block`, `n` steps on (for filling a batch from registers).
    fn fill(self, counter: &mut Block, out: &mut [Block]);
    /// Whether the next `n` counters from `counter` differ only in a wrapping last 32-bit
    /// word (what the fused kernels count in).
    fn counts_in_last_word(self, counter: &Block, n: usize) -> bool;
    /// Moves `counter` on by `n`.
    fn advance(self, counter: &mut Block, n: usize);
}

/// The whole block as a 128-bit big-endian counter.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Counter128;

/// Only the last 32 bits count (GCM's inc32); the rest stays fixed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Counter32;

impl Increment for Counter128 {
    #[inline]
    fn next(self, block: &mut Block) {
        *block = u128::from_be_bytes(*block).wrapping_add(1).to_be_bytes();
    }

    #[inline]
    fn fill(self, counter: &mut Block, out: &mut [Block]) {
        let mut c = u128::from_be_bytes(*counter);
        for o in out {
            *o = c.to_be_bytes();
            c = c.wrapping_add(1);
        }
        *counter = c.to_be_bytes();
    }

    #[inline]
    fn counts_in_last_word(self, counter: &Block, n: usize) -> bool {
        let last = u32::from_be_bytes(counter[12..].try_into().expect("4 bytes"));
        u64::from(last) + n as u64 <= 1 << 32
    }

    #[inline]
    fn advance(self, counter: &mut Block, n: usize) {
        *counter = u128::from_be_bytes(*counter)
            .wrapping_add(n as u128)
            .to_be_bytes();
    }
}

impl Increment for Counter32 {
    #[inline]
    fn next(self, block: &mut Block) {
        let mut one = [*block];
        self.fill(block, &mut one);
    }

    #[inline]
    fn fill(self, counter: &mut Block, out: &mut [Block]) {
        let v = u128::from_be_bytes(*counter);
        let prefix = v & !0xffff_ffff;
        let mut c = v as u32;
        for o in out {
            *o = (prefix | u128::from(c)).to_be_bytes();
            c = c.wrapping_add(1);
        }
        *counter = (prefix | u128::from(c)).to_be_bytes();
    }

    #[inline]
    fn counts_in_last_word(self, _counter: &Block, _n: usize) -> bool {
        true
    }

    #[inline]
    fn advance(self, counter: &mut Block, n: usize) {
        let last = u32::from_be_bytes(counter[12..].try_into().expect("4 bytes"));
        counter[12..].copy_from_slice(&last.wrapping_add(n as u32).to_be_bytes());
    }
}

/// XORs the keystream for `data` (starting at a block boundary) into it and advances `counter`
/// past the blocks used. Returns the keystream of a final partial block, if any, for resuming.
pub(crate) fn apply<I: Increment>(
    cipher: &Sm4,
    inc: I,
    counter: &mut Block,
    data: &mut [u8],
) -> Option<(Block, usize)> {
    let (blocks, tail) = data.as_chunks_mut::<16>();
    let n = blocks.len();
    if n > 0 && inc.counts_in_last_word(counter, n) && cipher.ctr32_xor(counter, blocks) {
        inc.advance(counter, n);
        if tail.is_empty() {
            return None;
        }
        let mut ks = *counter;
        cipher.encrypt_block(&mut ks);
        inc.next(counter);
        xor_in_place(tail, &ks[..tail.len()]);
        return Some((ks, tail.len()));
    }
    let mut ks = [[0u8; 16]; CHUNK_BLOCKS];
    let mut leftover = None;
    // Only the blocks used are wiped: the rest were never written.
    let used = data.len().div_ceil(16).min(CHUNK_BLOCKS);
    for chunk in data.chunks_mut(16 * CHUNK_BLOCKS) {
        let n = chunk.len().div_ceil(16);
        inc.fill(counter, &mut ks[..n]);
        cipher.encrypt_blocks(&mut ks[..n]);
        xor_in_place(chunk, ks[..n].as_flattened());
        let partial = chunk.len() % 16;
        if partial != 0 {
            leftover = Some((ks[n - 1], partial));
        }
    }
    crate::ct::wipe(ks[..used].as_flattened_mut());
    leftover
}

/// Streaming SM4-CTR with a 128-bit big-endian counter. `C` is the key schedule, borrowed
/// (`&Sm4`) or owned (`Sm4`).
#[derive(Clone, zeroize::ZeroizeOnDrop)]
pub struct Ctr<C: AsRef<Sm4>> {
    #[zeroize(skip)]
    cipher: C,
    counter: Block,
    /// Keystream of a partly used block, and how many of its bytes are used.
    partial: Block,
    #[zeroize(skip)]
    used: usize,
}

impl<C: AsRef<Sm4>> Ctr<C> {
    /// Starts with the counter block `iv`.
    pub fn new(cipher: C, iv: &Block) -> Self {
        Ctr {
            cipher,
            counter: *iv,
            partial: [0; 16],
            used: 16,
        }
    }

    /// XORs the keystream into `data` (encryption and decryption alike).
    pub fn apply_keystream(&mut self, mut data: &mut [u8]) {
        while self.used < 16 && !data.is_empty() {
            data[0] ^= self.partial[self.used];
            self.used += 1;
            data = &mut data[1..];
        }
        if data.is_empty() {
            return;
        }
        if let Some((ks, used)) = apply(self.cipher.as_ref(), Counter128, &mut self.counter, data) {
            self.partial = ks;
            self.used = used;
        }
    }

    /// Positions the keystream at byte `offset` from the initial counter `iv`.
    pub fn seek(&mut self, iv: &Block, offset: u128) {
        self.counter = u128::from_be_bytes(*iv)
            .wrapping_add(offset / 16)
            .to_be_bytes();
        self.used = 16;
        let skip = (offset % 16) as usize;
        if skip != 0 {
            self.partial = self.counter;
            self.cipher.as_ref().encrypt_block(&mut self.partial);
            Counter128.next(&mut self.counter);
            self.used = skip;
        }
    }
}

/// One-shot CTR over `data` in place.
pub fn apply_keystream(cipher: &Sm4, iv: &Block, data: &mut [u8]) -> Result<(), Error> {
    Ctr::new(cipher, iv).apply_keystream(data);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_wrap_in_their_own_width() {
        let mut b = [0xff; 16];
        Counter32.next(&mut b);
        assert_eq!(
            b,
            [
                0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0
            ]
        );
        let mut b = [0xff; 16];
        Counter128.next(&mut b);
        assert_eq!(b, [0; 16]);
    }

    #[test]
    fn keystream_across_the_32_bit_wrap_equals_block_by_block() {
        // Both counter widths, on every backend (the fused kernels count in the last word
        // only), starting just before, at, and well before the 32-bit wrap.
        fn check<I: Increment + core::fmt::Debug>(inc: I, cipher: &Sm4, last: u32, len: usize) {
            let mut start = [0x33u8; 16];
            start[12..].copy_from_slice(&last.to_be_bytes());
            let mut data = vec![0u8; len];
            let mut counter = start;
            apply(cipher, inc, &mut counter, &mut data);
            let mut c = start;
            for chunk in data.chunks(16) {
                let mut ks = c;
                cipher.encrypt_block(&mut ks);
                assert_eq!(
                    chunk,
                    &ks[..chunk.len()],
                    "{inc:?} from {last:#x}, {len} bytes"
                );
                inc.next(&mut c);
            }
            assert_eq!(counter, c, "{inc:?} from {last:#x}, {len} bytes");
        }
        for b in crate::Backend::available() {
            let cipher = Sm4::with_backend(&[7; 16], b).expect("available");
            for last in [0xffff_fff0, 0xffff_ffe0, 0xffff_ffff, 5] {
                for len in [16 * 16, 16 * 40 + 5, 16 * 33, 16 * 32, 7] {
                    check(Counter32, &cipher, last, len);
                    check(Counter128, &cipher, last, len);
                }
            }
        }
    }
}
