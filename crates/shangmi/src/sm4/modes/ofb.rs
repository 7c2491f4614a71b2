//! OFB: the keystream is IV encrypted again and again; serial by nature.

use super::super::{Block, Sm4};

/// Streaming OFB keystream (encryption and decryption are the same operation).
#[derive(Clone)]
pub struct Ofb<'a> {
    cipher: &'a Sm4,
    block: Block,
    used: usize,
}

impl<'a> Ofb<'a> {
    /// Starts with `iv`.
    pub fn new(cipher: &'a Sm4, iv: &Block) -> Self {
        Ofb {
            cipher,
            block: *iv,
            used: 16,
        }
    }

    /// This stream's state (chaining value, position) over `cipher`, which must hold the same
    /// key: how a wrapper that owns its key schedule copies a stream in mid-message.
    pub fn clone_onto<'b>(&self, cipher: &'b Sm4) -> Ofb<'b> {
        Ofb {
            cipher,
            block: self.block,
            used: self.used,
        }
    }

    /// XORs the keystream into `data`.
    pub fn apply_keystream(&mut self, data: &mut [u8]) {
        for b in data {
            if self.used == 16 {
                self.cipher.encrypt_block(&mut self.block);
                self.used = 0;
            }
            *b ^= self.block[self.used];
            self.used += 1;
        }
    }
}

impl Drop for Ofb<'_> {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.block);
    }
}
