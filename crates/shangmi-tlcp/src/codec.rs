//! Reading and writing the TLS presentation language: big-endian integers and vectors with a
//! 1-, 2- or 3-byte length. A reader never panics: every short or overlong field is a
//! decode error naming what was being read.

use crate::error::Error;

/// A cursor over one message's bytes.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Reader { buf }
    }

    pub(crate) fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], Error> {
        if self.buf.len() < n {
            return Err(Error::Decode(what));
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }

    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8, Error> {
        Ok(self.take(1, what)?[0])
    }

    pub(crate) fn u16(&mut self, what: &'static str) -> Result<u16, Error> {
        let b = self.take(2, what)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    pub(crate) fn u24(&mut self, what: &'static str) -> Result<usize, Error> {
        let b = self.take(3, what)?;
        Ok(usize::from(b[0]) << 16 | usize::from(b[1]) << 8 | usize::from(b[2]))
    }

    pub(crate) fn vec8(&mut self, what: &'static str) -> Result<&'a [u8], Error> {
        let n = self.u8(what)?;
        self.take(usize::from(n), what)
    }

    pub(crate) fn vec16(&mut self, what: &'static str) -> Result<&'a [u8], Error> {
        let n = self.u16(what)?;
        self.take(usize::from(n), what)
    }

    pub(crate) fn vec24(&mut self, what: &'static str) -> Result<&'a [u8], Error> {
        let n = self.u24(what)?;
        self.take(n, what)
    }

    /// How many bytes are left.
    pub(crate) fn rest_len(&self) -> usize {
        self.buf.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The message must end here.
    pub(crate) fn end(&self, what: &'static str) -> Result<(), Error> {
        if self.buf.is_empty() {
            Ok(())
        } else {
            Err(Error::Decode(what))
        }
    }
}

pub(crate) fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_be_bytes());
}

pub(crate) fn put_u24(out: &mut Vec<u8>, v: usize) {
    out.extend_from_slice(&(v as u32).to_be_bytes()[1..]);
}

pub(crate) fn put_vec8(out: &mut Vec<u8>, v: &[u8]) {
    out.push(v.len() as u8);
    out.extend_from_slice(v);
}

pub(crate) fn put_vec16(out: &mut Vec<u8>, v: &[u8]) {
    put_u16(out, v.len() as u16);
    out.extend_from_slice(v);
}

pub(crate) fn put_vec24(out: &mut Vec<u8>, v: &[u8]) {
    put_u24(out, v.len());
    out.extend_from_slice(v);
}
