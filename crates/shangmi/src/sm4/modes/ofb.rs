//! OFB: the keystream is IV encrypted again and again; serial by nature.

use super::super::{Block, Sm4};

/// Streaming OFB keystream (encryption and decryption are the same operation).
/// `C` is the key schedule, borrowed (`&Sm4`) or owned (`Sm4`).
#[derive(Clone, zeroize::ZeroizeOnDrop)]
pub struct Ofb<C: AsRef<Sm4>> {
    #[zeroize(skip)]
    cipher: C,
    block: Block,
    #[zeroize(skip)]
    used: usize,
}

impl<C: AsRef<Sm4>> Ofb<C> {
    /// Starts with `iv`.
    pub fn new(cipher: C, iv: &Block) -> Self {
        Ofb {
            cipher,
            block: *iv,
            used: 16,
        }
    }

    /// XORs the keystream into `data`.
    pub fn apply_keystream(&mut self, data: &mut [u8]) {
        for b in data {
            if self.used == 16 {
                self.cipher.as_ref().encrypt_block(&mut self.block);
                self.used = 0;
            }
            *b ^= self.block[self.used];
            self.used += 1;
        }
    }
}
