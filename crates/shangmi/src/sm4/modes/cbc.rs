//! CBC: C_i = E(P_i ^ C_{i-1}), C_0 = IV. Encryption is serial (one block after another, on
//! the cipher's low-latency path); decryption is parallel (whole chunks through the bulk path).
//! Also CBC with ciphertext stealing in the CS3 form (NIST SP 800-38A addendum; the Linux
//! kernel's `cts(cbc(sm4))`), for data of any length from one block.

use super::super::{Block, Sm4};
use super::ecb::{finish_unpad, unpad_in_place};
use super::{CHUNK_BLOCKS, Error, as_blocks_mut, padding, xor_in_place};

/// Streaming CBC encryption of whole blocks; the chaining value carries across calls. `C` is
/// the key schedule, borrowed (`&Sm4`) or owned (`Sm4`, as [`crate::sm4::Stream`] holds it).
#[derive(Clone)]
pub struct Encryptor<C> {
    cipher: C,
    iv: Block,
}

impl<C: AsRef<Sm4>> Encryptor<C> {
    /// Starts with `iv`.
    pub fn new(cipher: C, iv: &Block) -> Self {
        Encryptor { cipher, iv: *iv }
    }

    /// Encrypts whole blocks in place.
    pub fn encrypt_blocks(&mut self, data: &mut [u8]) -> Result<(), Error> {
        for block in as_blocks_mut(data)? {
            xor_in_place(block, &self.iv);
            self.cipher.as_ref().encrypt_block(block);
            self.iv = *block;
        }
        Ok(())
    }

    /// The chaining value (the last ciphertext block).
    pub fn iv(&self) -> Block {
        self.iv
    }
}

/// Streaming CBC decryption of whole blocks, many blocks per call to the cipher; `C` as for
/// [`Encryptor`].
#[derive(Clone)]
pub struct Decryptor<C> {
    cipher: C,
    iv: Block,
}

impl<C: AsRef<Sm4>> Decryptor<C> {
    /// Starts with `iv`.
    pub fn new(cipher: C, iv: &Block) -> Self {
        Decryptor { cipher, iv: *iv }
    }

    /// Decrypts whole blocks in place.
    pub fn decrypt_blocks(&mut self, data: &mut [u8]) -> Result<(), Error> {
        let blocks = as_blocks_mut(data)?;
        let cipher = self.cipher.as_ref();
        // Each block's mask: the ciphertext block before it (the IV for the first).
        let mut masks = [[0u8; 16]; CHUNK_BLOCKS];
        for chunk in blocks.chunks_mut(CHUNK_BLOCKS) {
            let n = chunk.len();
            masks[0] = self.iv;
            masks[1..n].copy_from_slice(&chunk[..n - 1]);
            self.iv = chunk[n - 1];
            if !cipher.decrypt_then_mask(&masks[..n], chunk) {
                cipher.decrypt_blocks(chunk);
                xor_in_place(chunk.as_flattened_mut(), masks[..n].as_flattened());
            }
        }
        Ok(())
    }
}

/// Pads with PKCS#7 and encrypts.
pub fn encrypt_padded(cipher: &Sm4, iv: &Block, plaintext: &[u8]) -> Vec<u8> {
    let mut out = padding::padded_copy(plaintext);
    // Whole blocks by construction.
    let _ = Encryptor::new(cipher, iv).encrypt_blocks(&mut out);
    out
}

/// Decrypts and removes PKCS#7 padding. Every padding failure is the same
/// [`Error::Decrypt`]; note that unauthenticated CBC remains malleable.
pub fn decrypt_padded(cipher: &Sm4, iv: &Block, ciphertext: &[u8]) -> Result<Vec<u8>, Error> {
    if ciphertext.is_empty() || !ciphertext.len().is_multiple_of(16) {
        return Err(Error::InvalidLength);
    }
    let mut out = ciphertext.to_vec();
    Decryptor::new(cipher, iv).decrypt_blocks(&mut out)?;
    finish_unpad(out)
}

/// Pads the first `len` bytes of `buf` with PKCS#7 and encrypts them in place; `buf` must have
/// room for [`padding::padded_len`]`(len)` bytes. Returns the ciphertext's length.
pub fn encrypt_padded_in_place(
    cipher: &Sm4,
    iv: &Block,
    buf: &mut [u8],
    len: usize,
) -> Result<usize, Error> {
    let total = padding::pad_in_place(buf, len)?;
    Encryptor::new(cipher, iv).encrypt_blocks(&mut buf[..total])?;
    Ok(total)
}

/// Decrypts `buf` (a non-empty whole number of blocks) in place and checks its padding, as
/// [`super::ecb::decrypt_padded_in_place`]; `buf` is zeroed on failure.
pub fn decrypt_padded_in_place(cipher: &Sm4, iv: &Block, buf: &mut [u8]) -> Result<usize, Error> {
    if buf.is_empty() {
        return Err(Error::InvalidLength);
    }
    Decryptor::new(cipher, iv).decrypt_blocks(buf)?;
    unpad_in_place(buf)
}

/// CBC-CS3 encryption in place: any length of at least one block; the last two blocks are
/// swapped and the final one shortened, so the ciphertext is as long as the plaintext.
pub fn encrypt_cts(cipher: &Sm4, iv: &Block, data: &mut [u8]) -> Result<(), Error> {
    let len = data.len();
    if len < 16 {
        return Err(Error::InvalidLength);
    }
    if len == 16 {
        return Encryptor::new(cipher, iv).encrypt_blocks(data);
    }
    // The last full-or-partial block has `tail` bytes (1..=16).
    let tail = len - (len - 1) / 16 * 16;
    let head = len - tail - 16; // blocks before the last two
    let mut enc = Encryptor::new(cipher, iv);
    enc.encrypt_blocks(&mut data[..head + 16])?;
    // C_{n-1} is the last encrypted block; encrypt the zero-padded tail chained from it.
    let c_prev: Block = enc.iv();
    let mut last = [0u8; 16];
    last[..tail].copy_from_slice(&data[head + 16..]);
    xor_in_place(&mut last, &c_prev);
    cipher.encrypt_block(&mut last);
    // Output ... C_n (full) then C_{n-1} truncated to `tail` bytes.
    data[head..head + 16].copy_from_slice(&last);
    data[head + 16..].copy_from_slice(&c_prev[..tail]);
    Ok(())
}

/// CBC-CS3 decryption in place.
pub fn decrypt_cts(cipher: &Sm4, iv: &Block, data: &mut [u8]) -> Result<(), Error> {
    let len = data.len();
    if len < 16 {
        return Err(Error::InvalidLength);
    }
    if len == 16 {
        return Decryptor::new(cipher, iv).decrypt_blocks(data);
    }
    let tail = len - (len - 1) / 16 * 16;
    let head = len - tail - 16;
    let prev_iv: Block = if head == 0 {
        *iv
    } else {
        data[head - 16..head]
            .try_into()
            .map_err(|_| Error::InvalidLength)?
    };
    Decryptor::new(cipher, iv).decrypt_blocks(&mut data[..head])?;
    // data[head..head+16] is C_n (full), data[head+16..] is C_{n-1} truncated.
    let c_n: Block = data[head..head + 16]
        .try_into()
        .map_err(|_| Error::InvalidLength)?;
    let mut d = c_n;
    cipher.decrypt_block(&mut d); // = (P_n || 0) ^ C_{n-1}
    let mut c_prev = [0u8; 16];
    c_prev[..tail].copy_from_slice(&data[head + 16..]);
    c_prev[tail..].copy_from_slice(&d[tail..]);
    let mut p_n = d;
    xor_in_place(&mut p_n, &c_prev);
    let mut p_prev = c_prev;
    cipher.decrypt_block(&mut p_prev);
    xor_in_place(&mut p_prev, &prev_iv);
    data[head..head + 16].copy_from_slice(&p_prev);
    data[head + 16..].copy_from_slice(&p_n[..tail]);
    Ok(())
}
