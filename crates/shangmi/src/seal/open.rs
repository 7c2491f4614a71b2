//! Opening a sealed stream: the header and its stanzas, then each chunk authenticated before a
//! byte of it reaches the sink; a truncated or reordered stream is an error.

use std::io::{self, Read, Write};

use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use super::{
    Error, Key, MAGIC, MAX_ITERATIONS, MAX_RECIPIENTS, MODE_PASSWORD, MODE_RECIPIENTS, STANZA, TAG,
    VERSION, derive, nonce,
};
use crate::sink::Sink;
use crate::sm2::Format;
use crate::sm3::{HmacSm3, pbkdf2};

/// Reads exactly `buf.len()` bytes, or fewer at the end of the input.
pub(super) fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

fn read_exact_or(r: &mut impl Read, buf: &mut [u8], what: &'static str) -> Result<(), Error> {
    if read_full(r, buf)? == buf.len() {
        Ok(())
    } else {
        Err(Error::Format(what))
    }
}

/// Opens a sealed file from `input` into `sink`, which is committed only if the header and
/// every chunk authenticate and the file ends exactly after its last chunk; otherwise the sink
/// is discarded. Returns what the committed sink yields.
pub fn open<S: Sink>(mut input: impl Read, key: Key<'_>, sink: S) -> Result<S::Output, Error> {
    let mut sink = Some(sink);
    let result = open_into(&mut input, key, sink.as_mut().expect("present"));
    let sink = sink.take().expect("present");
    match result {
        Ok(()) => Ok(sink.commit()?),
        Err(e) => {
            sink.discard();
            Err(e)
        }
    }
}

fn open_into(input: &mut impl Read, key: Key<'_>, sink: &mut impl Write) -> Result<(), Error> {
    let mut fixed = [0u8; 16];
    read_exact_or(input, &mut fixed, "shorter than a header")?;
    if &fixed[..6] != MAGIC {
        return Err(Error::Format("no SMSEAL magic"));
    }
    if fixed[6] != VERSION {
        return Err(Error::Format("unknown version"));
    }
    let mode = fixed[7];
    let chunk_log2 = fixed[8];
    if !(12..=24).contains(&chunk_log2) {
        return Err(Error::Format("chunk size out of range"));
    }
    let prefix: [u8; 7] = fixed[9..16].try_into().expect("7 bytes");
    let mut header = fixed.to_vec();
    let mut file_key = Zeroizing::new([0u8; 32]);
    match (mode, key) {
        (MODE_RECIPIENTS, Key::Private(sk)) => {
            let mut count = [0u8; 2];
            read_exact_or(input, &mut count, "header cut short")?;
            header.extend_from_slice(&count);
            let count = usize::from(u16::from_be_bytes(count));
            if count == 0 {
                return Err(Error::Format("no recipients"));
            }
            if count > MAX_RECIPIENTS {
                return Err(Error::Format("more than 1024 recipients"));
            }
            // Every stanza is tried, so the time taken does not say which one is ours; the
            // first that decrypts to a 32-byte key is used.
            let mut found = false;
            let mut stanza = [0u8; STANZA];
            for _ in 0..count {
                read_exact_or(input, &mut stanza, "header cut short")?;
                header.extend_from_slice(&stanza);
                if let Ok(k) = sk.decrypt(&stanza, Format::C1C3C2) {
                    let k = Zeroizing::new(k);
                    if let (false, Ok(key)) = (found, <[u8; 32]>::try_from(k.as_slice())) {
                        *file_key = key;
                        found = true;
                    }
                }
            }
            if !found {
                return Err(Error::NoMatchingKey);
            }
        }
        (MODE_PASSWORD, Key::Password(password)) => {
            let mut p = [0u8; 20];
            read_exact_or(input, &mut p, "header cut short")?;
            header.extend_from_slice(&p);
            let iterations = u32::from_be_bytes(p[16..].try_into().expect("4 bytes"));
            if iterations == 0 {
                return Err(Error::Format("zero PBKDF2 iterations"));
            }
            if iterations > MAX_ITERATIONS {
                return Err(Error::TooManyIterations(iterations));
            }
            pbkdf2(password, &p[..16], iterations, file_key.as_mut())
                .map_err(|_| Error::Format("PBKDF2 parameters"))?;
        }
        (MODE_RECIPIENTS | MODE_PASSWORD, _) => return Err(Error::WrongKeyKind),
        _ => return Err(Error::Format("unknown mode")),
    }
    let keys = derive(&file_key);
    let mut tag = [0u8; 32];
    read_exact_or(input, &mut tag, "header cut short")?;
    let mut mac = HmacSm3::new(&keys.mac[..]);
    mac.update(&header);
    if !crate::ct::public_choice(mac.finalize().ct_eq(&tag)) {
        return Err(match key {
            Key::Password(_) => Error::WrongPassword,
            Key::Private(_) => Error::Authentication,
        });
    }
    let chunk = 1usize << chunk_log2;
    // One chunk and its tag, plus one byte of look-ahead to tell whether it is the last.
    let mut buf = Zeroizing::new(vec![0u8; chunk + TAG + 1]);
    let mut have = read_full(input, &mut buf)?;
    let mut index = 0u32;
    loop {
        let last = have <= chunk + TAG;
        let len = have.min(chunk + TAG);
        if len < TAG {
            return Err(Error::Authentication);
        }
        let (body, rest) = buf.split_at_mut(len - TAG);
        keys.gcm
            .decrypt_in_place_detached(&nonce(&prefix, index, last), &[], body, &rest[..TAG])
            .map_err(|_| Error::Authentication)?;
        sink.write_all(body)?;
        if last {
            return Ok(());
        }
        // The look-ahead byte starts the next chunk.
        buf[0] = buf[chunk + TAG];
        have = 1 + read_full(input, &mut buf[1..])?;
        index = index.checked_add(1).ok_or(Error::Authentication)?;
    }
}
