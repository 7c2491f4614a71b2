//! TLCP's record layer: framing, and the two protections (HMAC-SM3 + SM4-CBC with an explicit
//! IV, and SM4-GCM with an explicit nonce part), each with its own sequence number.
//!
//! CBC records are checked the way Lucky13 taught: the padding and the MAC are checked together
//! and fail with one error; the padding is read, the MAC located and compared without
//! branching on the padding length, and the MAC's hash covers every block the longest content
//! could need, the real end selected with masks (`HmacSm3::tag_of_secret_length`), so a bad
//! padding and a bad MAC take the same time and give the same alert.

use shangmi::sm3::HmacSm3;
use shangmi::sm4::Sm4;
use shangmi::sm4::modes::cbc;
use shangmi::sm4::modes::gcm::Sm4Gcm;
use subtle::{ConditionallySelectable, ConstantTimeEq, ConstantTimeLess};
use zeroize::Zeroizing;

use crate::error::Error;
use crate::suite::Protection;

pub(crate) const CHANGE_CIPHER_SPEC: u8 = 20;
pub(crate) const ALERT: u8 = 21;
pub(crate) const HANDSHAKE: u8 = 22;
pub(crate) const APPLICATION_DATA: u8 = 23;

/// TLCP's protocol version, GB/T 38636's 1.1.
pub(crate) const VERSION: u16 = 0x0101;
pub(crate) const MAX_PLAINTEXT: usize = 1 << 14;
const MAX_CIPHERTEXT: usize = MAX_PLAINTEXT + 2048;
const MAC_LEN: usize = 32;

/// One direction's protection.
pub(crate) enum Protector {
    Null,
    Cbc {
        mac: HmacSm3,
        cipher: Box<Sm4>,
        seq: u64,
    },
    Gcm {
        aead: Box<Sm4Gcm>,
        fixed: [u8; 4],
        seq: u64,
    },
}

fn header(typ: u8, len: usize) -> [u8; 5] {
    let v = VERSION.to_be_bytes();
    let l = (len as u16).to_be_bytes();
    [typ, v[0], v[1], l[0], l[1]]
}

/// The 13 bytes the MAC and the GCM AAD cover before the data.
fn pseudo_header(seq: u64, typ: u8, len: usize) -> [u8; 13] {
    let mut h = [0u8; 13];
    h[..8].copy_from_slice(&seq.to_be_bytes());
    h[8..].copy_from_slice(&header(typ, len));
    h
}

/// One direction's share of the key block, in the order GB/T 38636 cuts it.
pub(crate) struct KeyShare<'a> {
    pub(crate) mac: &'a [u8],
    pub(crate) key: &'a [u8; 16],
    pub(crate) iv: &'a [u8],
}

impl Protection {
    /// The bytes each direction takes from the key block: MAC key, cipher key, fixed IV.
    pub(crate) fn key_sizes(self) -> (usize, usize, usize) {
        match self {
            Protection::Cbc => (MAC_LEN, 16, 16),
            Protection::Gcm => (0, 16, 4),
        }
    }
}

impl Protector {
    /// The protector of `protection` keyed with one direction's share, at sequence number 0.
    pub(crate) fn new(protection: Protection, share: &KeyShare<'_>) -> Protector {
        match protection {
            Protection::Cbc => Protector::Cbc {
                mac: HmacSm3::new(share.mac),
                cipher: Box::new(Sm4::new(share.key)),
                seq: 0,
            },
            Protection::Gcm => Protector::Gcm {
                aead: Box::new(Sm4Gcm::new(share.key)),
                fixed: share.iv.try_into().expect("GCM's fixed IV is 4 bytes"),
                seq: 0,
            },
        }
    }

    pub(crate) fn is_null(&self) -> bool {
        matches!(self, Protector::Null)
    }

    fn next_seq(seq: &mut u64) -> Result<u64, Error> {
        let s = *seq;
        *seq = s
            .checked_add(1)
            .ok_or(Error::Internal("record sequence number exhausted"))?;
        Ok(s)
    }

    /// One record carrying `payload` (at most 2^14 bytes), header included.
    pub(crate) fn seal(&mut self, typ: u8, payload: &[u8]) -> Result<Vec<u8>, Error> {
        debug_assert!(payload.len() <= MAX_PLAINTEXT);
        match self {
            Protector::Null => {
                let mut out = header(typ, payload.len()).to_vec();
                out.extend_from_slice(payload);
                Ok(out)
            }
            Protector::Cbc { mac, cipher, seq } => {
                let s = Self::next_seq(seq)?;
                let mut m = mac.clone();
                m.update(&pseudo_header(s, typ, payload.len()));
                m.update(payload);
                let tag = m.finalize();
                let unpadded = payload.len() + MAC_LEN + 1;
                let pad = (16 - unpadded % 16) % 16;
                let body_len = unpadded + pad;
                let mut out = header(typ, 16 + body_len).to_vec();
                let mut iv = [0u8; 16];
                getrandom::fill(&mut iv).map_err(|_| Error::Internal("random generator"))?;
                out.extend_from_slice(&iv);
                let start = out.len();
                out.extend_from_slice(payload);
                out.extend_from_slice(&tag);
                out.resize(start + body_len, pad as u8);
                cbc::Encryptor::new(&**cipher, &iv)
                    .encrypt_blocks(&mut out[start..])
                    .map_err(|_| Error::Internal("CBC length"))?;
                Ok(out)
            }
            Protector::Gcm { aead, fixed, seq } => {
                let s = Self::next_seq(seq)?;
                let explicit = s.to_be_bytes();
                let mut nonce = [0u8; 12];
                nonce[..4].copy_from_slice(fixed);
                nonce[4..].copy_from_slice(&explicit);
                let mut out = header(typ, 8 + payload.len() + 16).to_vec();
                out.extend_from_slice(&explicit);
                let start = out.len();
                out.extend_from_slice(payload);
                let tag = aead
                    .encrypt_in_place_detached(
                        &nonce,
                        &pseudo_header(s, typ, payload.len()),
                        &mut out[start..],
                    )
                    .map_err(|_| Error::Internal("GCM"))?;
                out.extend_from_slice(&tag[..16]);
                Ok(out)
            }
        }
    }

    /// Opens one record's `fragment` where it lies: the range of `fragment` that holds its
    /// plaintext afterwards, or [`Error::BadRecordMac`] (the fragment's bytes are then
    /// unspecified).
    pub(crate) fn open_in_place(
        &mut self,
        typ: u8,
        fragment: &mut [u8],
    ) -> Result<core::ops::Range<usize>, Error> {
        match self {
            Protector::Null => {
                if fragment.len() > MAX_PLAINTEXT {
                    return Err(Error::RecordOverflow);
                }
                Ok(0..fragment.len())
            }
            Protector::Cbc { mac, cipher, seq } => {
                let s = Self::next_seq(seq)?;
                open_cbc(mac, cipher, s, typ, fragment)
            }
            Protector::Gcm { aead, fixed, seq } => {
                let s = Self::next_seq(seq)?;
                if fragment.len() < 8 + 16 {
                    return Err(Error::BadRecordMac);
                }
                let end = fragment.len() - 16;
                if end - 8 > MAX_PLAINTEXT {
                    return Err(Error::RecordOverflow);
                }
                let (head, rest) = fragment.split_at_mut(8);
                let (ct, tag) = rest.split_at_mut(end - 8);
                let mut nonce = [0u8; 12];
                nonce[..4].copy_from_slice(fixed);
                nonce[4..].copy_from_slice(head);
                aead.decrypt_in_place_detached(&nonce, &pseudo_header(s, typ, ct.len()), ct, tag)
                    .map_err(|_| Error::BadRecordMac)?;
                Ok(8..end)
            }
        }
    }

    /// [`Protector::open_in_place`] on a copy: the plaintext (the timing test's entry point).
    pub(crate) fn open(&mut self, typ: u8, fragment: &[u8]) -> Result<Zeroizing<Vec<u8>>, Error> {
        let mut copy = Zeroizing::new(fragment.to_vec());
        let range = self.open_in_place(typ, &mut copy)?;
        Ok(Zeroizing::new(copy[range].to_vec()))
    }
}

/// A CBC record opened in place: the range of `fragment` holding the content.
fn open_cbc(
    mac: &HmacSm3,
    cipher: &Sm4,
    seq: u64,
    typ: u8,
    fragment: &mut [u8],
) -> Result<core::ops::Range<usize>, Error> {
    // Public checks on the record's length: an IV, then whole blocks holding at least a MAC
    // and the padding-length byte.
    let min = 16 + (MAC_LEN + 1).div_ceil(16) * 16;
    if fragment.len() < min || !fragment.len().is_multiple_of(16) {
        return Err(Error::BadRecordMac);
    }
    if fragment.len() - 16 > MAX_PLAINTEXT + 1024 {
        return Err(Error::RecordOverflow);
    }
    let (iv, data) = fragment.split_at_mut(16);
    let iv: [u8; 16] = (&*iv).try_into().expect("16 bytes");
    cbc::Decryptor::new(cipher, &iv)
        .decrypt_blocks(data)
        .map_err(|_| Error::BadRecordMac)?;
    let n = data.len();

    // The padding: pad bytes of value pad before the final byte pad; pad + 1 + MAC_LEN <= n.
    let pad = u32::from(data[n - 1]);
    let mut good = (pad + 1 + MAC_LEN as u32).ct_lt(&(n as u32 + 1));
    let scan = n.min(256);
    for i in 1..scan {
        let in_pad = (i as u32).ct_lt(&(pad + 1));
        let same = data[n - 1 - i].ct_eq(&(pad as u8));
        good &= !in_pad | same;
    }
    // With a bad padding the record is read as if it had none, so the work that follows
    // does not depend on it.
    let pad = u32::conditional_select(&0, &pad, good) as usize;
    let content_len = n - 1 - MAC_LEN - pad;

    // The MAC over the content, in time that does not depend on its length: every block the
    // longest content could need is hashed, the real end selected with masks (the padding is at
    // most 255 bytes, so the content is at least max_content - 255 long).
    let max_content = n - 1 - MAC_LEN;
    let expected = Zeroizing::new(mac.tag_of_secret_length(
        &pseudo_header(seq, typ, content_len),
        &data[..max_content],
        content_len,
        max_content.saturating_sub(255),
    ));

    // The received MAC sits at a secret offset: read every byte it could occupy into a
    // rotated copy, then rotate it back, both without branching on the offset.
    let window_start = n.saturating_sub(MAC_LEN + 256 + 1);
    let mut rotated = [0u8; MAC_LEN];
    let mac_start = content_len;
    for (i, &b) in data.iter().enumerate().take(n).skip(window_start) {
        let in_mac = (i as u32).ct_lt(&(mac_start as u32 + MAC_LEN as u32))
            & !(i as u32).ct_lt(&(mac_start as u32));
        let j = (i - window_start) % MAC_LEN;
        rotated[j] |= u8::conditional_select(&0, &b, in_mac);
    }
    let shift = ((mac_start - window_start) % MAC_LEN) as u32;
    let mut received = [0u8; MAC_LEN];
    for j in 0..MAC_LEN {
        // received[j] = rotated[(j + shift) % MAC_LEN], selected over all k.
        for (k, &r) in rotated.iter().enumerate() {
            let hit = ((j as u32 + shift) % MAC_LEN as u32).ct_eq(&(k as u32));
            received[j] |= u8::conditional_select(&0, &r, hit);
        }
    }
    good &= expected.ct_eq(&received);
    if !bool::from(good) {
        return Err(Error::BadRecordMac);
    }
    if content_len > MAX_PLAINTEXT {
        return Err(Error::RecordOverflow);
    }
    Ok(16..16 + content_len)
}

/// Splits records off a byte stream by offset: each byte is examined once however the peer
/// cuts its records (a flood of 1-byte records costs the same per byte as whole ones), and the
/// buffer is compacted only once most of it has been consumed. Readers fill it in place
/// ([`Deframer::space`]) and records are opened in place in it; consumed bytes are wiped
/// when they are compacted away, and the whole buffer on drop.
#[derive(Default)]
pub(crate) struct Deframer {
    /// Storage, initialised; bytes `start..end` are received and not yet consumed.
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

/// One record as received: type, version, and where its protected fragment lies in the
/// deframer's buffer ([`Deframer::fragment`]).
pub(crate) struct Record {
    pub(crate) typ: u8,
    pub(crate) version: u16,
    range: core::ops::Range<usize>,
}

impl Deframer {
    /// Room for `n` more bytes after what has been received, for a reader to fill in place;
    /// commit what it wrote with [`Deframer::filled`].
    pub(crate) fn space(&mut self, n: usize) -> &mut [u8] {
        self.compact();
        if self.buf.len() < self.end + n {
            self.buf.resize(self.end + n, 0);
        }
        &mut self.buf[self.end..self.end + n]
    }

    /// After [`Deframer::space`]: its first `n` bytes hold data.
    pub(crate) fn filled(&mut self, n: usize) {
        self.end = (self.end + n).min(self.buf.len());
    }

    pub(crate) fn push(&mut self, data: &[u8]) {
        self.space(data.len()).copy_from_slice(data);
        self.filled(data.len());
    }

    /// Moves what is left to the front once at least half the received bytes are consumed
    /// (amortised linear), wiping what it leaves behind.
    fn compact(&mut self) {
        if self.start == 0 || self.start * 2 < self.end {
            return;
        }
        let left = self.end - self.start;
        self.buf.copy_within(self.start..self.end, 0);
        zeroize::Zeroize::zeroize(&mut self.buf[left..self.end]);
        self.start = 0;
        self.end = left;
    }

    /// The next whole record, if one has arrived; it is consumed.
    pub(crate) fn next(&mut self) -> Result<Option<Record>, Error> {
        let rest = &self.buf[self.start..self.end];
        if rest.len() < 5 {
            return Ok(None);
        }
        let typ = rest[0];
        if !(CHANGE_CIPHER_SPEC..=APPLICATION_DATA).contains(&typ) {
            return Err(Error::Decode("record type"));
        }
        let version = u16::from_be_bytes([rest[1], rest[2]]);
        let len = usize::from(u16::from_be_bytes([rest[3], rest[4]]));
        if len > MAX_CIPHERTEXT {
            return Err(Error::RecordOverflow);
        }
        if rest.len() < 5 + len {
            return Ok(None);
        }
        let at = self.start + 5;
        self.start = at + len;
        Ok(Some(Record {
            typ,
            version,
            range: at..at + len,
        }))
    }

    /// A record's fragment, to open in place.
    pub(crate) fn fragment(&mut self, rec: &Record) -> &mut [u8] {
        &mut self.buf[rec.range.clone()]
    }

    pub(crate) fn has_pending(&self) -> bool {
        self.start < self.end
    }
}

impl Drop for Deframer {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.buf);
    }
}

#[cfg(test)]
mod tests;
