//! Sealed files: streaming authenticated encryption of data of any size to SM2 public keys
//! or under a password (the format is specified in `docs/FORMAT.md`, version 1).
//!
//! The data is cut into chunks (64 KiB), each sealed with SM4-GCM under a key derived from a
//! random file key; the nonce of chunk i is prefix || i || last-flag, so truncation,
//! reordering, duplication and appended data all fail authentication. The file key is wrapped
//! for each recipient with SM2 encryption, or derived from the password with
//! PBKDF2-HMAC-SM3. The header is authenticated with HMAC-SM3. Memory use is constant; opening
//! writes into a [`Sink`] that is committed only after the last chunk verifies.

use std::fmt;
use std::io::{self, Read, Write};

use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::sink::Sink;
use crate::sm2::{Format, SigningKey, VerifyingKey};
use crate::sm3::{HmacSm3, pbkdf2};
use crate::sm4::modes::gcm::Sm4Gcm;

/// The magic bytes that open every sealed file.
pub const MAGIC: &[u8; 6] = b"SMSEAL";
/// The format version this library writes and reads.
pub const VERSION: u8 = 1;
/// Plaintext bytes per chunk (2^16) in what this library writes.
pub const CHUNK_SIZE: usize = 1 << DEFAULT_CHUNK_LOG2;
const DEFAULT_CHUNK_LOG2: u8 = 16;
const TAG: usize = 16;
const MODE_RECIPIENTS: u8 = 1;
const MODE_PASSWORD: u8 = 2;
/// An SM2-wrapped file key: C1 (65) || C3 (32) || C2 (32).
const STANZA: usize = 65 + 32 + 32;
/// PBKDF2 iterations written by default.
pub const DEFAULT_ITERATIONS: u32 = 100_000;
/// The most PBKDF2 iterations a file being opened may ask for.
pub const MAX_ITERATIONS: u32 = 10_000_000;

/// Why sealing or opening failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// Reading the input or writing the output failed.
    Io(io::Error),
    /// Not a sealed file, a version or parameter this library does not read, or a header
    /// cut short.
    Format(&'static str),
    /// None of the file's recipients is the given key.
    NoMatchingKey,
    /// The file is sealed with a password and the key given is a private key, or vice versa.
    WrongKeyKind,
    /// Wrong password, or the header was tampered with (indistinguishable by design).
    WrongPassword,
    /// The file asks for more PBKDF2 iterations than allowed.
    TooManyIterations(u32),
    /// The data was modified, truncated, reordered or extended.
    Authentication,
    /// Bad parameters for sealing (no recipients, zero iterations...).
    Parameters(&'static str),
    /// The operating system's random number generator failed.
    Rng,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "{e}"),
            Error::Format(what) => write!(f, "not a readable sealed file: {what}"),
            Error::NoMatchingKey => f.write_str("the file is not sealed to this key"),
            Error::WrongKeyKind => {
                f.write_str("the file is sealed with the other kind of key (password or SM2 key)")
            }
            Error::WrongPassword => f.write_str("wrong password (or tampered header)"),
            Error::TooManyIterations(n) => write!(f, "the file asks for {n} PBKDF2 iterations"),
            Error::Authentication => {
                f.write_str("authentication failed: the file was modified, truncated or extended")
            }
            Error::Parameters(what) => write!(f, "bad parameters: {what}"),
            Error::Rng => f.write_str("the system random number generator failed"),
        }
    }
}

impl std::error::Error for Error {}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Self {
        Error::Io(e)
    }
}

/// The most recipients a sealed file may have: opening tries the private key on every
/// stanza before the header MAC can be checked, so the count bounds the work a hostile file
/// can demand (about 0.1 s at this limit).
pub const MAX_RECIPIENTS: usize = 1024;

/// Who can open a sealed file.
#[derive(Clone, Copy)]
pub enum Recipients<'a> {
    /// The holders of these SM2 private keys (1 to [`MAX_RECIPIENTS`] of them).
    Keys(&'a [VerifyingKey]),
    /// Whoever knows this password.
    Password {
        /// The password.
        password: &'a [u8],
        /// PBKDF2-HMAC-SM3 iterations (1 to [`MAX_ITERATIONS`]).
        iterations: u32,
    },
}

/// The password stays out of logs: `Debug` shows only its length.
impl fmt::Debug for Recipients<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Recipients::Keys(keys) => f.debug_tuple("Keys").field(keys).finish(),
            Recipients::Password {
                password,
                iterations,
            } => f
                .debug_struct("Password")
                .field("password", &format_args!("<{} bytes>", password.len()))
                .field("iterations", iterations)
                .finish(),
        }
    }
}

/// What opens a sealed file.
#[derive(Clone, Copy)]
pub enum Key<'a> {
    /// One of the recipients' private keys.
    Private(&'a SigningKey),
    /// The password.
    Password(&'a [u8]),
}

/// The keys derived from the file key.
struct Keys {
    gcm: Sm4Gcm,
    mac: Zeroizing<[u8; 32]>,
}

fn derive(file_key: &[u8; 32]) -> Keys {
    let payload = Zeroizing::new(crate::sm3::hmac(file_key, b"shangmi-seal v1 payload"));
    let mac = Zeroizing::new(crate::sm3::hmac(file_key, b"shangmi-seal v1 header"));
    Keys {
        gcm: Sm4Gcm::new(payload[..16].try_into().expect("16 bytes")),
        mac,
    }
}

fn nonce(prefix: &[u8; 7], index: u32, last: bool) -> [u8; 12] {
    let mut n = [0u8; 12];
    n[..7].copy_from_slice(prefix);
    n[7..11].copy_from_slice(&index.to_be_bytes());
    n[11] = u8::from(last);
    n
}

/// Encrypts a stream into a sealed file as it is written (it is a [`Write`]). Call
/// [`finish`](Sealer::finish): it seals the last chunk; without it the file is truncated and
/// will not open.
pub struct Sealer<W: Write> {
    out: W,
    keys: Keys,
    prefix: [u8; 7],
    index: u32,
    buf: Zeroizing<Vec<u8>>,
    chunk: usize,
}

impl<W: Write> Sealer<W> {
    /// Writes the header for `to` and returns the sealer.
    pub fn new(out: W, to: Recipients<'_>) -> Result<Self, Error> {
        let mut prefix = [0u8; 7];
        getrandom::fill(&mut prefix).map_err(|_| Error::Rng)?;
        match to {
            Recipients::Keys(keys) => {
                if keys.is_empty() || keys.len() > MAX_RECIPIENTS {
                    return Err(Error::Parameters("1 to 1024 recipients"));
                }
                let mut file_key = Zeroizing::new([0u8; 32]);
                getrandom::fill(file_key.as_mut()).map_err(|_| Error::Rng)?;
                let mut params = Vec::with_capacity(2 + keys.len() * STANZA);
                params.extend_from_slice(&(keys.len() as u16).to_be_bytes());
                for k in keys {
                    let wrapped = k
                        .encrypt(&file_key[..], Format::C1C3C2)
                        .map_err(|_| Error::Rng)?;
                    debug_assert_eq!(wrapped.len(), STANZA);
                    params.extend_from_slice(&wrapped);
                }
                Self::start(out, MODE_RECIPIENTS, &params, &file_key, prefix)
            }
            Recipients::Password {
                password,
                iterations,
            } => {
                let mut salt = [0u8; 16];
                getrandom::fill(&mut salt).map_err(|_| Error::Rng)?;
                Self::with_password(out, password, iterations, salt, prefix)
            }
        }
    }

    fn with_password(
        out: W,
        password: &[u8],
        iterations: u32,
        salt: [u8; 16],
        prefix: [u8; 7],
    ) -> Result<Self, Error> {
        if iterations == 0 || iterations > MAX_ITERATIONS {
            return Err(Error::Parameters("PBKDF2 iterations from 1 to 10,000,000"));
        }
        let mut file_key = Zeroizing::new([0u8; 32]);
        pbkdf2(password, &salt, iterations, file_key.as_mut())
            .map_err(|_| Error::Parameters("PBKDF2"))?;
        let mut params = salt.to_vec();
        params.extend_from_slice(&iterations.to_be_bytes());
        Self::start(out, MODE_PASSWORD, &params, &file_key, prefix)
    }

    /// A password-sealed file with a caller-chosen salt and nonce prefix: for the format's
    /// test vector only (a repeated salt and prefix under one password reuses GCM nonces).
    #[cfg(feature = "hazmat")]
    #[doc(hidden)]
    pub fn with_password_for_known_answer_tests(
        out: W,
        password: &[u8],
        iterations: u32,
        salt: [u8; 16],
        prefix: [u8; 7],
    ) -> Result<Self, Error> {
        Self::with_password(out, password, iterations, salt, prefix)
    }

    /// Writes magic, version, mode, chunk size, prefix, the mode's parameters and the header
    /// MAC.
    fn start(
        mut out: W,
        mode: u8,
        params: &[u8],
        file_key: &[u8; 32],
        prefix: [u8; 7],
    ) -> Result<Self, Error> {
        let mut header = Vec::with_capacity(48 + params.len());
        header.extend_from_slice(MAGIC);
        header.push(VERSION);
        header.push(mode);
        header.push(DEFAULT_CHUNK_LOG2);
        header.extend_from_slice(&prefix);
        header.extend_from_slice(params);
        let keys = derive(file_key);
        let mut mac = HmacSm3::new(&keys.mac[..]);
        mac.update(&header);
        header.extend_from_slice(&mac.finalize());
        out.write_all(&header)?;
        Ok(Sealer {
            out,
            keys,
            prefix,
            index: 0,
            buf: Zeroizing::new(Vec::with_capacity(CHUNK_SIZE + TAG)),
            chunk: CHUNK_SIZE,
        })
    }

    /// Seals the chunk in `buf` (full, or the last) and writes it.
    fn seal_chunk(&mut self, last: bool) -> io::Result<()> {
        let n = nonce(&self.prefix, self.index, last);
        let tag = self
            .keys
            .gcm
            .encrypt_in_place_detached(&n, &[], &mut self.buf)
            .map_err(io::Error::other)?;
        self.out.write_all(&self.buf)?;
        self.out.write_all(&tag)?;
        self.buf.clear();
        self.index = self
            .index
            .checked_add(1)
            .ok_or_else(|| io::Error::other("more than 2^32 chunks"))?;
        Ok(())
    }

    /// Seals the last chunk, flushes and returns the output.
    pub fn finish(mut self) -> io::Result<W> {
        self.seal_chunk(true)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

impl<W: Write> Write for Sealer<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        // A full chunk is sealed only once more data shows it is not the last.
        if self.buf.len() == self.chunk && !data.is_empty() {
            self.seal_chunk(false)?;
        }
        let n = data.len().min(self.chunk - self.buf.len());
        self.buf.extend_from_slice(&data[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Reads exactly `buf.len()` bytes, or fewer at the end of the input.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
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

/// Seals everything `input` holds into `output`; returns the plaintext length.
pub fn seal(mut input: impl Read, output: impl Write, to: Recipients<'_>) -> Result<u64, Error> {
    let mut s = Sealer::new(output, to)?;
    let mut buf = Zeroizing::new(vec![0u8; CHUNK_SIZE]);
    let mut total = 0u64;
    loop {
        let n = read_full(&mut input, &mut buf)?;
        if n == 0 {
            break;
        }
        s.write_all(&buf[..n])?;
        total += n as u64;
    }
    s.finish()?;
    Ok(total)
}
