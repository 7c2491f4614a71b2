//! ECB: each block encrypted on its own. Equal plaintext blocks give equal ciphertext blocks;
//! use it only as a building block or where a protocol requires it.

use super::super::{Block, Sm4};
use super::{Error, as_blocks_mut, padding};

/// Encrypts whole blocks in place.
pub fn encrypt(cipher: &Sm4, data: &mut [u8]) -> Result<(), Error> {
    cipher.encrypt_blocks(as_blocks_mut(data)?);
    Ok(())
}

/// Decrypts whole blocks in place.
pub fn decrypt(cipher: &Sm4, data: &mut [u8]) -> Result<(), Error> {
    cipher.decrypt_blocks(as_blocks_mut(data)?);
    Ok(())
}

/// Pads with PKCS#7 and encrypts.
pub fn encrypt_padded(cipher: &Sm4, plaintext: &[u8]) -> Vec<u8> {
    let mut out = padding::padded_copy(plaintext);
    let (blocks, _) = out.as_chunks_mut::<16>();
    cipher.encrypt_blocks(blocks);
    out
}

/// Decrypts and removes PKCS#7 padding; any failure is [`Error::Decrypt`] (or
/// [`Error::InvalidLength`] when the input is not a non-empty whole number of blocks).
pub fn decrypt_padded(cipher: &Sm4, ciphertext: &[u8]) -> Result<Vec<u8>, Error> {
    if ciphertext.is_empty() || !ciphertext.len().is_multiple_of(16) {
        return Err(Error::InvalidLength);
    }
    let mut out = ciphertext.to_vec();
    let (blocks, _) = out.as_chunks_mut::<16>();
    cipher.decrypt_blocks(blocks);
    finish_unpad(out)
}

/// Pads the first `len` bytes of `buf` with PKCS#7 and encrypts them in place; `buf` must have
/// room for [`padding::padded_len`]`(len)` bytes. Returns the ciphertext's length.
pub fn encrypt_padded_in_place(cipher: &Sm4, buf: &mut [u8], len: usize) -> Result<usize, Error> {
    let total = padding::pad_in_place(buf, len)?;
    encrypt(cipher, &mut buf[..total])?;
    Ok(total)
}

/// Decrypts `buf` (a non-empty whole number of blocks) in place and checks its padding;
/// returns the plaintext's length (the plaintext is `buf[..n]`, the padding after it wiped).
/// Any padding failure is [`Error::Decrypt`], with `buf` zeroed.
pub fn decrypt_padded_in_place(cipher: &Sm4, buf: &mut [u8]) -> Result<usize, Error> {
    if buf.is_empty() {
        return Err(Error::InvalidLength);
    }
    decrypt(cipher, buf)?;
    unpad_in_place(buf)
}

/// Checks and strips the padding of decrypted data in place, wiping what is not plaintext.
pub(crate) fn unpad_in_place(buf: &mut [u8]) -> Result<usize, Error> {
    let last: Block = buf[buf.len().saturating_sub(16)..]
        .try_into()
        .map_err(|_| Error::InvalidLength)?;
    match padding::unpad_len(&last) {
        Ok(n) => {
            let keep = buf.len() - n;
            zeroize::Zeroize::zeroize(&mut buf[keep..]);
            Ok(keep)
        }
        Err(e) => {
            zeroize::Zeroize::zeroize(buf);
            Err(e)
        }
    }
}

/// Removes the padding of decrypted data (a non-empty whole number of blocks), wiping it on
/// failure.
pub(crate) fn finish_unpad(mut out: Vec<u8>) -> Result<Vec<u8>, Error> {
    let last: Block = out[out.len() - 16..]
        .try_into()
        .map_err(|_| Error::InvalidLength)?;
    match padding::unpad_len(&last) {
        Ok(n) => {
            let keep = out.len() - n;
            zeroize::Zeroize::zeroize(&mut out[keep..]);
            out.truncate(keep);
            Ok(out)
        }
        Err(e) => {
            zeroize::Zeroize::zeroize(&mut out);
            Err(e)
        }
    }
}
