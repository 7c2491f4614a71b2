//! One streaming SM4 type over every raw mode, padding and direction, owning its key schedule:
//! what a front end (the C library, Python, the OpenSSL provider) keeps between calls, with
//! the output size of every call known before any work is done.
//!
//! ```
//! use shangmi::sm4::{Direction, Mode, Stream};
//!
//! let (key, iv) = ([7u8; 16], [9u8; 16]);
//! let mut enc = Stream::new(&key, Mode::CbcPkcs7(iv), Direction::Encrypt);
//! let mut ct = vec![0u8; enc.update_len(5).unwrap() + enc.finish_len()];
//! let mut n = enc.update(b"hello", &mut ct).unwrap();
//! n += enc.finish(&mut ct[n..]).unwrap();
//! ct.truncate(n);
//! assert_eq!(ct.len(), 16);
//!
//! let mut dec = Stream::new(&key, Mode::CbcPkcs7(iv), Direction::Decrypt);
//! let mut pt = vec![0u8; dec.update_len(ct.len()).unwrap() + dec.finish_len()];
//! let mut m = dec.update(&ct, &mut pt).unwrap();
//! m += dec.finish(&mut pt[m..]).unwrap();
//! assert_eq!(&pt[..m], b"hello");
//! ```

use zeroize::{Zeroize, ZeroizeOnDrop};

use super::Error;
use super::modes::{cbc, cfb::Cfb, ctr::Ctr, ecb, ofb::Ofb, padding};
use super::{Block, Sm4};

/// A raw SM4 mode and its IV. The `Pkcs7` modes add PKCS#7 padding when encrypting and check
/// and strip it when decrypting; the others take whole blocks (ECB, CBC) or any length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// ECB, whole blocks.
    Ecb,
    /// ECB with PKCS#7 padding.
    EcbPkcs7,
    /// CBC under the IV, whole blocks.
    Cbc(Block),
    /// CBC with PKCS#7 padding.
    CbcPkcs7(Block),
    /// CFB-128 under the IV, any length.
    Cfb(Block),
    /// OFB under the IV, any length.
    Ofb(Block),
    /// CTR with a 128-bit big-endian counter starting at the IV, any length.
    Ctr(Block),
}

/// Which way a [`Stream`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Plaintext in, ciphertext out.
    Encrypt,
    /// Ciphertext in, plaintext out.
    Decrypt,
}

#[derive(Clone)]
enum State {
    Ecb(Sm4),
    CbcEnc(cbc::Encryptor<Sm4>),
    CbcDec(cbc::Decryptor<Sm4>),
    Cfb(Cfb<Sm4>),
    Ofb(Ofb<Sm4>),
    Ctr(Ctr<Sm4>),
}

/// A message in progress in one raw mode. `Clone` copies it mid-message (both copies go on
/// from the same point); dropping wipes the key schedule, the keystream and buffered bytes.
///
/// Block modes release whole blocks: an update keeps a partial block back, and decryption
/// with padding keeps the last whole block back until [`Stream::finish`] has checked it.
/// [`Stream::update_len`] and [`Stream::finish_len`] say how much output a call needs before
/// it is made; a call with too small an output changes nothing and can be retried.
#[derive(Clone, ZeroizeOnDrop)]
pub struct Stream {
    #[zeroize(skip)]
    state: State,
    #[zeroize(skip)]
    encrypt: bool,
    #[zeroize(skip)]
    padding: bool,
    #[zeroize(skip)]
    finished: bool,
    /// Input held back (block modes), `held` bytes of it.
    pending: Block,
    held: usize,
}

impl core::fmt::Debug for Stream {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Stream")
            .field("encrypt", &self.encrypt)
            .field("padding", &self.padding)
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

impl Stream {
    /// A stream under `key`, on the fastest backend this CPU has.
    pub fn new(key: &[u8; 16], mode: Mode, direction: Direction) -> Self {
        Self::with_cipher(Sm4::new(key), mode, direction)
    }

    /// A stream on an expanded key (which it keeps).
    pub fn with_cipher(cipher: Sm4, mode: Mode, direction: Direction) -> Self {
        let encrypt = direction == Direction::Encrypt;
        let (state, padding) = match mode {
            Mode::Ecb => (State::Ecb(cipher), false),
            Mode::EcbPkcs7 => (State::Ecb(cipher), true),
            Mode::Cbc(iv) | Mode::CbcPkcs7(iv) => (
                if encrypt {
                    State::CbcEnc(cbc::Encryptor::new(cipher, &iv))
                } else {
                    State::CbcDec(cbc::Decryptor::new(cipher, &iv))
                },
                matches!(mode, Mode::CbcPkcs7(_)),
            ),
            Mode::Cfb(iv) => (State::Cfb(Cfb::new(cipher, &iv)), false),
            Mode::Ofb(iv) => (State::Ofb(Ofb::new(cipher, &iv)), false),
            Mode::Ctr(iv) => (State::Ctr(Ctr::new(cipher, &iv)), false),
        };
        Stream {
            state,
            encrypt,
            padding,
            finished: false,
            pending: [0; 16],
            held: 0,
        }
    }

    /// Whether the mode works in whole blocks (ECB, CBC).
    pub fn is_block_mode(&self) -> bool {
        matches!(
            self.state,
            State::Ecb(_) | State::CbcEnc(_) | State::CbcDec(_)
        )
    }

    /// Whether [`Stream::finish`] has ended this stream.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Exactly how many bytes [`Stream::update`] releases for `len` more input bytes; `None`
    /// when that cannot be represented.
    pub fn update_len(&self, len: usize) -> Option<usize> {
        if !self.is_block_mode() {
            return Some(len);
        }
        let total = self.held.checked_add(len)?;
        let mut take = total / 16 * 16;
        if !self.encrypt && self.padding && take == total {
            // The last whole block may be the padding: kept until finish.
            take = take.saturating_sub(16);
        }
        Some(take)
    }

    /// How many bytes [`Stream::finish`] may release: exact when encrypting, an upper bound
    /// when decrypting with padding (the padding's length is known only after the check).
    pub fn finish_len(&self) -> usize {
        match (self.padding, self.encrypt) {
            (false, _) => 0,
            (true, true) => 16,
            (true, false) => 15,
        }
    }

    /// Processes `input` into `output`, which must hold [`Stream::update_len`] bytes; returns
    /// how many it wrote. `input` and `output` are distinct buffers (Rust's borrows make sure).
    pub fn update(&mut self, input: &[u8], output: &mut [u8]) -> Result<usize, Error> {
        if self.finished {
            return Err(Error::Finished);
        }
        let need = self.update_len(input.len()).ok_or(Error::InvalidLength)?;
        if output.len() < need {
            return Err(Error::BufferTooSmall);
        }
        let out = &mut output[..need];
        if !self.is_block_mode() {
            out.copy_from_slice(input);
            self.apply(out)?;
            return Ok(need);
        }
        if need == 0 {
            self.pending[self.held..self.held + input.len()].copy_from_slice(input);
            self.held += input.len();
            return Ok(0);
        }
        // need >= held: the held bytes lead the output, then the input up to `need`; the
        // input's rest (at most a block) is held back.
        let (p, from_input) = (self.held, need - self.held);
        out[..p].copy_from_slice(&self.pending[..p]);
        out[p..].copy_from_slice(&input[..from_input]);
        let rest = &input[from_input..];
        self.pending[..rest.len()].copy_from_slice(rest);
        self.held = rest.len();
        if let Err(e) = self.apply(out) {
            out.zeroize();
            return Err(e);
        }
        Ok(need)
    }

    /// [`Stream::update`] in place: the input is `buf[..len]`, and the output (its length is
    /// returned) replaces it from `buf[0]`; `buf` must hold `len` and
    /// [`Stream::update_len`]`(len)` bytes, whichever is more.
    pub fn update_in_place(&mut self, buf: &mut [u8], len: usize) -> Result<usize, Error> {
        if self.finished {
            return Err(Error::Finished);
        }
        let need = self.update_len(len).ok_or(Error::InvalidLength)?;
        if buf.len() < need.max(len) {
            return Err(Error::BufferTooSmall);
        }
        if !self.is_block_mode() {
            self.apply(&mut buf[..len])?;
            return Ok(len);
        }
        if need == 0 {
            self.pending[self.held..self.held + len].copy_from_slice(&buf[..len]);
            self.held += len;
            return Ok(0);
        }
        // As `update`: the held bytes lead, the input follows them up to `need`, and its rest
        // is held back; the input moves right by the held length to make room.
        let (p, from_input) = (self.held, need - self.held);
        let mut earlier = self.pending;
        let rest = len - from_input;
        self.pending[..rest].copy_from_slice(&buf[from_input..len]);
        self.held = rest;
        buf.copy_within(..from_input, p);
        buf[..p].copy_from_slice(&earlier[..p]);
        earlier.zeroize();
        let out = &mut buf[..need];
        if let Err(e) = self.apply(out) {
            out.zeroize();
            return Err(e);
        }
        Ok(need)
    }

    /// Ends the message into `output` (at least [`Stream::finish_len`] bytes): pads and
    /// encrypts the last block, or decrypts it and checks and strips the padding; returns how
    /// many bytes it wrote. A block mode without padding must have no partial block left
    /// ([`Error::InvalidLength`]); bad padding is [`Error::Decrypt`] with nothing written.
    pub fn finish(&mut self, output: &mut [u8]) -> Result<usize, Error> {
        if self.finished {
            return Err(Error::Finished);
        }
        if output.len() < self.finish_len() {
            return Err(Error::BufferTooSmall);
        }
        self.finished = true;
        if !self.padding {
            return if self.held == 0 {
                Ok(0)
            } else {
                Err(Error::InvalidLength)
            };
        }
        let mut last = self.pending;
        let held = core::mem::take(&mut self.held);
        self.pending.zeroize();
        let result = if self.encrypt {
            let n = (16 - held) as u8;
            last[held..].fill(n);
            self.apply(&mut last).map(|()| {
                output[..16].copy_from_slice(&last);
                16
            })
        } else if held != 16 {
            Err(Error::InvalidLength)
        } else {
            self.apply(&mut last)
                .and_then(|()| padding::unpad_len(&last))
                .map(|pad| {
                    output[..16 - pad].copy_from_slice(&last[..16 - pad]);
                    16 - pad
                })
        };
        last.zeroize();
        result
    }

    fn apply(&mut self, buf: &mut [u8]) -> Result<(), Error> {
        let encrypt = self.encrypt;
        match &mut self.state {
            State::Ecb(c) if encrypt => ecb::encrypt(c, buf),
            State::Ecb(c) => ecb::decrypt(c, buf),
            State::CbcEnc(e) => e.encrypt_blocks(buf),
            State::CbcDec(d) => d.decrypt_blocks(buf),
            State::Cfb(f) => {
                if encrypt {
                    f.encrypt(buf)
                } else {
                    f.decrypt(buf)
                }
                Ok(())
            }
            State::Ofb(o) => {
                o.apply_keystream(buf);
                Ok(())
            }
            State::Ctr(c) => {
                c.apply_keystream(buf);
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests;
