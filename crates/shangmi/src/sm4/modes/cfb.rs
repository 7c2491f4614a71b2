//! CFB-128: C_i = P_i ^ E(C_{i-1}), C_0 = IV; any length, byte by byte across calls.
//! Encryption is serial; decryption encrypts all previous ciphertext blocks of a call at once.

use super::super::{Block, Sm4};
use super::{CHUNK_BLOCKS, xor_in_place};

/// Streaming CFB-128 (one object per direction; the position carries across calls).
/// `C` is the key schedule, borrowed (`&Sm4`) or owned (`Sm4`).
#[derive(Clone, zeroize::ZeroizeOnDrop)]
pub struct Cfb<C: AsRef<Sm4>> {
    #[zeroize(skip)]
    cipher: C,
    /// The current feedback register: the last ciphertext block (IV at first).
    register: Block,
    /// E(register), and how much of it the current partial block has used.
    keystream: Block,
    #[zeroize(skip)]
    used: usize,
}

impl<C: AsRef<Sm4>> Cfb<C> {
    /// Starts with `iv`.
    pub fn new(cipher: C, iv: &Block) -> Self {
        Cfb {
            cipher,
            register: *iv,
            keystream: [0; 16],
            used: 16,
        }
    }

    /// Encrypts `data` in place.
    pub fn encrypt(&mut self, data: &mut [u8]) {
        for b in data {
            if self.used == 16 {
                self.keystream = self.register;
                self.cipher.as_ref().encrypt_block(&mut self.keystream);
                self.used = 0;
            }
            *b ^= self.keystream[self.used];
            self.register[self.used] = *b;
            self.used += 1;
        }
    }

    /// Decrypts `data` in place.
    pub fn decrypt(&mut self, mut data: &mut [u8]) {
        // Finish a partial block byte by byte.
        while self.used != 16 && !data.is_empty() {
            let c = data[0];
            data[0] ^= self.keystream[self.used];
            self.register[self.used] = c;
            self.used += 1;
            data = &mut data[1..];
        }
        // Whole blocks: the keystream of block i is E(C_{i-1}), all known up front.
        let whole = data.len() / 16 * 16;
        let (blocks, _) = data[..whole].as_chunks_mut::<16>();
        let mut ks = [[0u8; 16]; CHUNK_BLOCKS];
        let used = blocks.len().min(CHUNK_BLOCKS);
        for chunk in blocks.chunks_mut(CHUNK_BLOCKS) {
            let n = chunk.len();
            ks[0] = self.register;
            ks[1..n].copy_from_slice(&chunk[..n - 1]);
            self.register = chunk[n - 1];
            self.cipher.as_ref().encrypt_blocks(&mut ks[..n]);
            for (c, k) in chunk.iter_mut().zip(&ks) {
                xor_in_place(c, k);
            }
        }
        // A trailing partial block.
        let rest = &mut data[whole..];
        if !rest.is_empty() {
            self.keystream = self.register;
            self.cipher.as_ref().encrypt_block(&mut self.keystream);
            self.used = 0;
            for b in rest {
                let c = *b;
                *b ^= self.keystream[self.used];
                self.register[self.used] = c;
                self.used += 1;
            }
        }
        zeroize::Zeroize::zeroize(ks[..used].as_flattened_mut());
    }
}
