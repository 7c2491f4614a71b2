//! Streaming SM2 encryption and decryption, for messages too large to hold in memory, in the
//! raw layouts (DER puts C2's length before C2, which a stream does not know in advance).
//!
//! [`Encryptor`] writes C1 and then C2 as the message arrives; C3 goes at the end (C1C2C3)
//! or, with a seekable sink, into the 32 bytes reserved after C1 (C1C3C2). [`Decryptor`]
//! writes plaintext only into a [`Sink`], which it commits after C3 verifies and discards
//! otherwise: nothing unauthenticated escapes through it.

use std::io::{self, Seek, SeekFrom, Write};

use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::sink::Sink;
use crate::sm2::Error;
use crate::sm2::protocols::encrypt::{
    Encapsulated, Format, MAX_MESSAGE_LEN, Masker, PointEncoding, encapsulate, encode_c1, sec1_len,
};
use crate::sm2::protocols::keys::{SigningKey, VerifyingKey};

const CHUNK: usize = 16 * 1024;

fn invalid(e: Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

/// Where C3 goes once known: appended, or written over the placeholder after C1.
type PlaceC3<W> = fn(&mut W, u64, &[u8; 32]) -> io::Result<()>;

fn append_c3<W: Write>(w: &mut W, _at: u64, c3: &[u8; 32]) -> io::Result<()> {
    w.write_all(c3)
}

fn seek_c3<W: Write + Seek>(w: &mut W, at: u64, c3: &[u8; 32]) -> io::Result<()> {
    let end = w.stream_position()?;
    w.seek(SeekFrom::Start(at))?;
    w.write_all(c3)?;
    w.seek(SeekFrom::Start(end))?;
    Ok(())
}

/// Encrypts a message of any length, written to it in pieces (it is a [`Write`]), into a
/// sink. Call [`finish`](Encryptor::finish) at the end: without it the ciphertext lacks C3.
pub struct Encryptor<W: Write> {
    sink: W,
    key: VerifyingKey,
    format: Format,
    point: PointEncoding,
    c1: [u8; 64],
    masker: Masker,
    /// C2 so far, while every keystream byte has been zero (so C2 equals the message): the
    /// standard then wants a new k, so nothing is written until a nonzero byte shows up.
    held: Option<Zeroizing<Vec<u8>>>,
    /// Where the sink was at the start (C3's offset is counted from there).
    start: u64,
    place_c3: PlaceC3<W>,
    len: u64,
}

impl<W: Write> Encryptor<W> {
    /// C1 || C2 || C3 into any writer.
    pub fn c1c2c3(key: &VerifyingKey, point: PointEncoding, sink: W) -> Result<Self, Error> {
        Self::start(key, Format::C1C2C3, point, sink, 0, append_c3::<W>)
    }

    fn start(
        key: &VerifyingKey,
        format: Format,
        point: PointEncoding,
        sink: W,
        start: u64,
        place_c3: PlaceC3<W>,
    ) -> Result<Self, Error> {
        let Encapsulated { c1, shared } = encapsulate(key, None)?;
        Ok(Encryptor {
            sink,
            key: *key,
            format,
            point,
            c1,
            masker: Masker::new(shared),
            held: Some(Zeroizing::new(Vec::new())),
            start,
            place_c3,
            len: 0,
        })
    }

    /// C1, and the C3 placeholder of C1C3C2.
    fn header(&self) -> Vec<u8> {
        let mut h = Vec::with_capacity(97);
        encode_c1(&self.c1, self.point, &mut h);
        if self.format == Format::C1C3C2 {
            h.extend_from_slice(&[0; 32]);
        }
        h
    }

    fn c3_offset(&self) -> u64 {
        self.start
            + match self.point {
                PointEncoding::Uncompressed => 65,
                PointEncoding::Compressed => 33,
            }
    }

    /// Writes C3 and returns the sink.
    pub fn finish(mut self) -> io::Result<W> {
        if let Some(held) = self.held.take() {
            // Every keystream byte was zero (or the message is empty): for a nonempty message,
            // start again with a new k over the message, which is what `held` holds.
            while !held.is_empty() && !self.masker.keystream_nonzero() {
                let Encapsulated { c1, shared } = encapsulate(&self.key, None).map_err(invalid)?;
                self.c1 = c1;
                self.masker = Masker::new(shared);
                let mut c2 = Zeroizing::new(vec![0u8; held.len()]);
                self.masker.apply(&held, &mut c2, true).map_err(invalid)?;
                if self.masker.keystream_nonzero() {
                    let header = self.header();
                    self.sink.write_all(&header)?;
                    self.sink.write_all(&c2)?;
                }
            }
            if held.is_empty() {
                let header = self.header();
                self.sink.write_all(&header)?;
            }
        }
        let at = self.c3_offset();
        let (c3, _) = self.masker.finish(self.len);
        (self.place_c3)(&mut self.sink, at, &c3)?;
        self.sink.flush()?;
        Ok(self.sink)
    }
}

impl<W: Write + Seek> Encryptor<W> {
    /// C1 || C3 || C2 into a seekable writer: 32 bytes are reserved after C1 and C3 is written
    /// there at the end.
    pub fn c1c3c2(key: &VerifyingKey, point: PointEncoding, mut sink: W) -> Result<Self, Error> {
        let start = sink
            .stream_position()
            .map_err(|_| Error::InvalidCiphertext)?;
        Self::start(key, Format::C1C3C2, point, sink, start, seek_c3::<W>)
    }
}

impl<W: Write> Write for Encryptor<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let data = &data[..data.len().min(CHUNK)];
        if self.len + data.len() as u64 > MAX_MESSAGE_LEN {
            return Err(invalid(Error::MessageTooLong));
        }
        let mut c2 = Zeroizing::new(vec![0u8; data.len()]);
        self.masker.apply(data, &mut c2, true).map_err(invalid)?;
        self.len += data.len() as u64;
        match self.held.as_mut() {
            Some(held) => {
                held.extend_from_slice(&c2);
                if self.masker.keystream_nonzero() {
                    let held = self.held.take().expect("checked");
                    let header = self.header();
                    self.sink.write_all(&header)?;
                    self.sink.write_all(&held)?;
                }
            }
            None => self.sink.write_all(&c2)?,
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.sink.flush()
    }
}

enum State {
    /// Collecting C1 (its first byte says how long it is).
    C1(Vec<u8>),
    /// Collecting C3 (C1C3C2).
    C3(Masker, Vec<u8>),
    /// Unmasking C2; C3 known (C1C3C2) or held back as the last 32 bytes seen (C1C2C3).
    Body(Masker, Option<[u8; 32]>, Vec<u8>),
    /// C1 was invalid: everything else is ignored and `finish` fails.
    Failed,
}

/// Decrypts a raw-layout ciphertext written to it in pieces (it is a [`Write`]), putting the
/// plaintext into a [`Sink`] that [`finish`](Decryptor::finish) commits only if C3 verifies.
/// Dropped unfinished, the sink is discarded.
pub struct Decryptor<S: Sink> {
    key: SigningKey,
    format: Format,
    sink: Option<S>,
    state: State,
    len: u64,
}

impl<S: Sink> Decryptor<S> {
    /// A decryptor for `format` (C1C3C2 or C1C2C3; DER is not streamed).
    pub fn new(key: &SigningKey, format: Format, sink: S) -> Result<Self, Error> {
        if format == Format::Der {
            return Err(Error::InvalidCiphertext);
        }
        Ok(Decryptor {
            key: key.clone(),
            format,
            sink: Some(sink),
            state: State::C1(Vec::with_capacity(65)),
            len: 0,
        })
    }

    /// Verifies C3; commits the sink and returns what it yields, or discards it and fails
    /// with [`Error::Decryption`] (inside an `InvalidData` I/O error).
    pub fn finish(mut self) -> io::Result<S::Output> {
        let sink = self.sink.take().expect("present until finish");
        let state = std::mem::replace(&mut self.state, State::Failed);
        let ok = match state {
            State::Body(masker, c3, tail) => {
                let c3 = match c3 {
                    Some(c3) => Some(c3),
                    None => <[u8; 32]>::try_from(tail.as_slice()).ok(),
                };
                match c3 {
                    Some(c3) => {
                        let (ours, usable) = masker.finish(self.len);
                        crate::ct::public_choice(
                            ours.ct_eq(&c3) & subtle::Choice::from(u8::from(usable)),
                        )
                    }
                    None => false,
                }
            }
            _ => false,
        };
        if ok {
            sink.commit()
        } else {
            sink.discard();
            Err(invalid(Error::Decryption))
        }
    }

    fn unmask(&mut self, masker: &mut Masker, c2: &[u8]) -> io::Result<()> {
        let mut pt = Zeroizing::new(vec![0u8; c2.len()]);
        masker.apply(c2, &mut pt, false).map_err(invalid)?;
        self.len += c2.len() as u64;
        self.sink
            .as_mut()
            .expect("present until finish")
            .write_all(&pt)
    }
}

impl<S: Sink> Write for Decryptor<S> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let data = &data[..data.len().min(CHUNK)];
        let mut rest = data;
        while !rest.is_empty() {
            match std::mem::replace(&mut self.state, State::Failed) {
                State::C1(mut buf) => {
                    let Some(need) = sec1_len(buf.first().copied().unwrap_or(rest[0])) else {
                        return Ok(data.len());
                    };
                    let take = (need - buf.len()).min(rest.len());
                    buf.extend_from_slice(&rest[..take]);
                    rest = &rest[take..];
                    self.state = if buf.len() < need {
                        State::C1(buf)
                    } else {
                        match crate::sm2::protocols::encrypt::decapsulate(&self.key, &buf) {
                            None => State::Failed,
                            Some(shared) => {
                                let m = Masker::new(shared);
                                if self.format == Format::C1C3C2 {
                                    State::C3(m, Vec::with_capacity(32))
                                } else {
                                    State::Body(m, None, Vec::with_capacity(32))
                                }
                            }
                        }
                    };
                }
                State::C3(m, mut buf) => {
                    let take = (32 - buf.len()).min(rest.len());
                    buf.extend_from_slice(&rest[..take]);
                    rest = &rest[take..];
                    self.state = match <[u8; 32]>::try_from(buf.as_slice()) {
                        Ok(c3) => State::Body(m, Some(c3), Vec::new()),
                        Err(_) => State::C3(m, buf),
                    };
                }
                State::Body(mut m, Some(c3), tail) => {
                    let r = self.unmask(&mut m, rest);
                    self.state = State::Body(m, Some(c3), tail);
                    r?;
                    rest = &[];
                }
                State::Body(mut m, None, mut tail) => {
                    // Everything but the last 32 bytes seen is C2.
                    tail.extend_from_slice(rest);
                    rest = &[];
                    let c2_len = tail.len().saturating_sub(32);
                    let r = self.unmask(&mut m, &tail[..c2_len]);
                    tail.drain(..c2_len);
                    self.state = State::Body(m, None, tail);
                    r?;
                }
                State::Failed => {
                    rest = &[];
                }
            }
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<S: Sink> Drop for Decryptor<S> {
    fn drop(&mut self) {
        if let Some(sink) = self.sink.take() {
            sink.discard();
        }
    }
}
