//! PKCS#7 padding, and its removal in constant time.

use subtle::{ConditionallySelectable, ConstantTimeEq, ConstantTimeLess};

use super::Error;

/// The length of `len` bytes with their padding (1 to 16 bytes more), or `None` where that
/// does not fit a `usize`.
pub fn padded_len(len: usize) -> Option<usize> {
    (len / 16 * 16).checked_add(16)
}

/// Pads the first `len` bytes of `buf` in place (the padding goes after them) and returns the
/// padded length, or [`Error::BufferTooSmall`] when `buf` is shorter than that.
pub(crate) fn pad_in_place(buf: &mut [u8], len: usize) -> Result<usize, Error> {
    let total = padded_len(len).ok_or(Error::InvalidLength)?;
    let tail = buf.get_mut(len..total).ok_or(Error::BufferTooSmall)?;
    tail.fill((total - len) as u8);
    Ok(total)
}

/// Appends 1..=16 bytes of value n.
pub fn pad(data: &mut Vec<u8>) {
    let n = 16 - data.len() % 16;
    data.resize(data.len() + n, n as u8);
}

/// `data` with its padding, in a buffer allocated once at its final size: padding a copy in
/// place could reallocate and free a copy of the plaintext unwiped.
pub(crate) fn padded_copy(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 16 - data.len() % 16);
    out.extend_from_slice(data);
    pad(&mut out);
    out
}

/// The padding length of the last decrypted block, or [`Error::Decrypt`]: every failure (pad
/// byte 0, above 16, inconsistent bytes) is one error, and the time taken does not depend on
/// which bytes are wrong or on the padding length. For callers that decrypt a stream block by
/// block and must check the padding of the last block themselves.
pub fn unpad_len(last: &[u8; 16]) -> Result<usize, Error> {
    let n = last[15];
    let mut ok = !n.ct_eq(&0) & n.ct_lt(&17);
    for (i, &b) in last.iter().enumerate() {
        // Byte i is padding iff i >= 16 - n.
        let in_pad = !(i as u8).ct_lt(&16u8.wrapping_sub(n));
        ok &= !in_pad | b.ct_eq(&n);
    }
    let len = u8::conditional_select(&0, &n, ok);
    if crate::ct::public_choice(ok) {
        // Valid padding makes its length public: the caller is handed exactly the bytes
        // before it. Until this point nothing depended on it.
        Ok(usize::from(crate::ct::public(len)))
    } else {
        Err(Error::Decrypt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_exactly_the_valid_paddings() {
        for n in 0u8..=255 {
            for fill in [0u8, 1, 0xaa] {
                let mut b = [fill; 16];
                b[15] = n;
                let valid = (1..=16).contains(&n) && (16 - usize::from(n)..16).all(|i| b[i] == n);
                assert_eq!(unpad_len(&b).is_ok(), valid, "n {n} fill {fill}");
            }
        }
        let mut b = [7u8; 16];
        b[9] = 6;
        assert_eq!(unpad_len(&b), Err(Error::Decrypt));
        assert_eq!(unpad_len(&[16; 16]), Ok(16));
    }
}
