//! Sealed files: streaming authenticated encryption of data of any size to SM2 public keys
//! or under a password (the format is specified in `docs/FORMAT.md`, version 1).
//!
//! The data is cut into chunks (64 KiB), each sealed with SM4-GCM under a key derived from a
//! random file key; the nonce of chunk i is prefix || i || last-flag, so truncation,
//! reordering, duplication and appended data all fail authentication. The file key is wrapped
//! for each recipient with SM2 encryption, or derived from the password with
//! PBKDF2-HMAC-SM3. The header is authenticated with HMAC-SM3. Memory use is constant; opening
//! writes into a [`Sink`](crate::sink::Sink) that is committed only after the last chunk
//! verifies.

use std::fmt;
use std::io::{self, Read, Write};

use zeroize::Zeroizing;

use crate::sm2::{Format, SigningKey, VerifyingKey};
use crate::sm3::{HmacSm3, pbkdf2};
use crate::sm4::modes::gcm::Sm4Gcm;

mod open;
pub use open::*;

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
