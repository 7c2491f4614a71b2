//! Hex text for secrets: keys typed or stored as hex are decoded without a branch or a table
//! lookup that depends on a digit, so the time taken says nothing about the key.

use zeroize::Zeroizing;

/// The value of one hex digit, with 0xff... in the high bits of the result's mask when `c`
/// is not one, computed by arithmetic alone.
#[inline]
fn digit(c: u8) -> (u8, u8) {
    let c = i16::from(c);
    // A mask of all ones when lo <= c <= hi: the sign bits of (c - lo) and (hi - c).
    let range = |lo: i16, hi: i16| (!((c - lo) | (hi - c)) >> 8) as u8;
    let dec = range(0x30, 0x39);
    let upper = range(0x41, 0x46);
    let lower = range(0x61, 0x66);
    let value = (dec & (c - 0x30) as u8)
        | (upper & (c - 0x41 + 10) as u8)
        | (lower & (c - 0x61 + 10) as u8);
    (value, dec | upper | lower)
}

/// Decodes hex text (either case; ASCII whitespace anywhere, as in a wrapped file or a
/// trailing newline, is skipped) into a buffer that is wiped when dropped. `None` for an odd
/// number of digits, no digits, or any other character; which character was wrong is not
/// told and does not change the time taken beyond the input's length and whitespace.
pub fn decode_secret(text: &[u8]) -> Option<Zeroizing<Vec<u8>>> {
    let count = text.iter().filter(|c| !c.is_ascii_whitespace()).count();
    if count == 0 || !count.is_multiple_of(2) {
        return None;
    }
    let mut out = Zeroizing::new(vec![0u8; count / 2]);
    let mut ok = 0xffu8;
    let mut high = None;
    let mut at = 0;
    // Where the whitespace is, is formatting: public.
    for &c in text.iter().filter(|c| !c.is_ascii_whitespace()) {
        let (v, valid) = digit(c);
        ok &= valid;
        match high.take() {
            None => high = Some(v),
            Some(h) => {
                out[at] = (h << 4) | v;
                at += 1;
            }
        }
    }
    crate::ct::public(ok).eq(&0xff).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_exactly_the_hex_digits() {
        for c in 0..=255u8 {
            let text = [c, b'0'];
            let want = (c as char).to_digit(16).map(|d| vec![(d as u8) << 4]);
            let got = decode_secret(&text).map(|v| v.to_vec());
            if c.is_ascii_whitespace() {
                assert_eq!(got, None, "{c:#x}: one digit left");
            } else {
                assert_eq!(got, want, "{c:#x}");
            }
        }
        assert_eq!(
            decode_secret(b" 0aFf\r\n").unwrap().as_slice(),
            &[0x0a, 0xff]
        );
        assert_eq!(decode_secret(b"0a\n ff").unwrap().as_slice(), &[0x0a, 0xff]);
        assert!(decode_secret(b"abc").is_none());
        assert!(decode_secret(b"").is_none());
        assert!(decode_secret(b"  \n").is_none());
        assert!(decode_secret(b"0x00").is_none());
    }
}
