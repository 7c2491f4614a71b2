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
