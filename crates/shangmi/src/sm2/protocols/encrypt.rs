//! SM2 public-key encryption (GB/T 32918.4-2016).
//!
//! C1 = k G, (x2, y2) = k P for a fresh k; C2 = M xor KDF(x2 || y2, |M|);
//! C3 = SM3(x2 || M || y2). The ciphertext is C1, C3 and C2 in one of three layouts, which the
//! caller names (a ciphertext does not say which it is): C1C3C2 (the current standard, the
//! default), C1C2C3 (the 2010 draft) or the DER SEQUENCE { x, y, C3, C2 } that OpenSSL and
//! GM/T 0009 write. C1 is a SEC1 point in the raw layouts, uncompressed unless asked.
//!
//! Decryption checks the layout's lengths first, that C1 is on the curve, recomputes C3 and
//! compares it in constant time; every failure is the same [`Error::Decryption`] and no
//! plaintext is returned. The masking and the C3 hash run in one pass over the message, the
//! KDF in SIMD lanes (Z = x2 || y2 is one SM3 block, absorbed once).

use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::cpu::Implementation as _;
use crate::sm2::Error;
use crate::sm2::arithmetic::engine::dispatch;
use crate::sm2::arithmetic::field::Arith;
use crate::sm2::arithmetic::mul::{Comb, fixed_base, fixed_base_with, variable_base};
use crate::sm2::arithmetic::point::{Affine, Jacobian, batch_to_affine};
use crate::sm2::arithmetic::scalar::{Scalar, SecretScalar};
use crate::sm2::protocols::keys::{SigningKey, VerifyingKey};
use crate::sm2::protocols::precomputed::PrecomputedVerifyingKey;
use crate::sm3::{Kdf, Sm3};

/// How C1, C3 and C2 are laid out in a ciphertext.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Format {
    /// C1 || C3 || C2 (GB/T 32918.4-2016, GM/T 0003-2012).
    #[default]
    C1C3C2,
    /// C1 || C2 || C3 (the 2010 draft's order, still written by some libraries).
    C1C2C3,
    /// DER: SEQUENCE { INTEGER x1, INTEGER y1, OCTET STRING C3, OCTET STRING C2 } (GM/T 0009,
    /// OpenSSL).
    Der,
}

/// How C1 is written in the raw layouts (DER always carries both coordinates).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PointEncoding {
    /// `04 || x || y`, 65 bytes.
    #[default]
    Uncompressed,
    /// `02/03 || x`, 33 bytes.
    Compressed,
}

/// The longest message: the KDF's 32-bit counter bounds its output.
pub const MAX_MESSAGE_LEN: u64 = (u32::MAX as u64) * 32;

/// The size of C3.
const HASH_LEN: usize = 32;

/// C1 and the shared secret x2 || y2 of one encryption.
pub(crate) struct Encapsulated {
    /// x1 || y1, public.
    pub(crate) c1: [u8; 64],
    pub(crate) shared: Zeroizing<[u8; 64]>,
}

/// A fresh k in [1, n-1] from the operating system.
pub(crate) fn random_scalar() -> Result<SecretScalar, Error> {
    loop {
        let mut b = Zeroizing::new([0u8; 32]);
        getrandom::fill(b.as_mut()).map_err(|_| Error::Rng)?;
        let k = Scalar::from_bytes(&b);
        // Values >= n or 0 (probability about 2^-32) are drawn again; that k was unusable is
        // no secret.
        if crate::ct::public_choice(k.is_some() & !k.unwrap_or(Scalar::ZERO).is_zero()) {
            return Ok(SecretScalar::new(k.unwrap_or(Scalar::ZERO)));
        }
    }
}

fn affine_bytes<A: Arith>(p: &Jacobian<A>) -> [u8; 64] {
    // Never infinity here: k is in [1, n-1] and every point involved has order n.
    let p = p.to_affine().unwrap_or(Affine::generator(p.x.a));
    let mut out = [0u8; 64];
    out[..32].copy_from_slice(&p.x.to_bytes());
    out[32..].copy_from_slice(&p.y.to_bytes());
    out
}

/// k G and k P for a fresh k.
pub(crate) fn encapsulate(key: &VerifyingKey, table: Option<&Comb>) -> Result<Encapsulated, Error> {
    let k = random_scalar()?;
    Ok(encapsulate_with(key, table, &k))
}

/// k G and k P, the recipient's table read in constant time when there is one.
fn encapsulate_with(key: &VerifyingKey, table: Option<&Comb>, k: &Scalar) -> Encapsulated {
    let (c1, shared) = dispatch!(key.engine, |a| {
        let c1 = fixed_base(a, k);
        let s = match table {
            Some(t) => fixed_base_with(a, t, k),
            None => variable_base(a, &Jacobian::from_affine(&key.affine(a)), k),
        };
        // Both to affine with one inversion.
        let mut aff = [Affine::generator(a); 2];
        batch_to_affine(&[c1, s], &mut aff);
        let bytes = |p: &Affine<_>| {
            let mut out = [0u8; 64];
            out[..32].copy_from_slice(&p.x.to_bytes());
            out[32..].copy_from_slice(&p.y.to_bytes());
            out
        };
        (
            crate::ct::public(bytes(&aff[0])),
            Zeroizing::new(bytes(&aff[1])),
        )
    });
    Encapsulated { c1, shared }
}

/// d C1 for a SEC1-encoded C1 (public): the shared secret, or `None` when C1 is not a point
/// on the curve.
pub(crate) fn decapsulate(key: &SigningKey, c1: &[u8]) -> Option<Zeroizing<[u8; 64]>> {
    dispatch!(key.engine, |a| {
        let p = Affine::from_sec1_vartime(a, c1)?;
        Some(Zeroizing::new(affine_bytes(&variable_base(
            a,
            &Jacobian::from_affine(&p),
            &key.d,
        ))))
    })
}

/// The mask and the C3 hash over one message, in pieces.
pub(crate) struct Masker {
    kdf: Kdf,
    c3: Sm3,
    /// OR of every keystream byte: the standard rejects an all-zero keystream.
    any: u8,
    shared: Zeroizing<[u8; 64]>,
}

impl Masker {
    pub(crate) fn new(shared: Zeroizing<[u8; 64]>) -> Self {
        let mut c3 = Sm3::new();
        c3.update(&shared[..32]);
        Masker {
            kdf: Kdf::new(&shared[..]),
            c3,
            any: 0,
            shared,
        }
    }

    /// `dst = src xor keystream`; hashes the plaintext side (`src` when encrypting, `dst` when
    /// decrypting). Fails only past the KDF's last counter.
    pub(crate) fn apply(
        &mut self,
        src: &[u8],
        dst: &mut [u8],
        encrypting: bool,
    ) -> Result<(), Error> {
        debug_assert_eq!(src.len(), dst.len());
        // The keystream goes straight into `dst` and is XORed there, a piece small enough
        // for the first-level cache at a time.
        const PIECE: usize = 8192;
        for (s, d) in src.chunks(PIECE).zip(dst.chunks_mut(PIECE)) {
            self.kdf.fill(d).map_err(|_| Error::MessageTooLong)?;
            let mut any = 0u8;
            for (d, s) in d.iter_mut().zip(s) {
                any |= *d;
                *d ^= s;
            }
            self.any |= any;
            self.c3.update(if encrypting { s } else { d });
        }
        Ok(())
    }

    /// Whether some keystream byte so far was nonzero.
    pub(crate) fn keystream_nonzero(&self) -> bool {
        crate::ct::public(self.any) != 0
    }

    /// C3, and whether the keystream was usable (not all zero; an empty message has none and
    /// passes).
    pub(crate) fn finish(self, message_len: u64) -> ([u8; 32], bool) {
        let Masker {
            mut c3,
            any,
            shared,
            ..
        } = self;
        c3.update(&shared[32..]);
        (
            c3.finalize(),
            message_len == 0 || crate::ct::public(any) != 0,
        )
    }
}

fn der_len(n: usize, out: &mut Vec<u8>) {
    if n < 0x80 {
        out.push(n as u8);
    } else {
        let bytes = n.to_be_bytes();
        let skip = bytes.iter().take_while(|&&b| b == 0).count();
        out.push(0x80 | (bytes.len() - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
}

/// A minimal positive DER INTEGER.
fn der_uint(v: &[u8], out: &mut Vec<u8>) {
    let skip = v.iter().take_while(|&&b| b == 0).count().min(v.len() - 1);
    let v = &v[skip..];
    out.push(0x02);
    let pad = usize::from(v[0] >= 0x80);
    der_len(v.len() + pad, out);
    if pad == 1 {
        out.push(0);
    }
    out.extend_from_slice(v);
}

/// C1 as SEC1 bytes.
pub(crate) fn encode_c1(c1: &[u8; 64], point: PointEncoding, out: &mut Vec<u8>) {
    match point {
        PointEncoding::Uncompressed => {
            out.push(4);
            out.extend_from_slice(c1);
        }
        PointEncoding::Compressed => {
            out.push(2 | (c1[63] & 1));
            out.extend_from_slice(&c1[..32]);
        }
    }
}

/// Assembles a ciphertext around C2, which `fill_c2` writes in place and which returns C3.
fn assemble(
    format: Format,
    point: PointEncoding,
    c1: &[u8; 64],
    c2_len: usize,
    fill_c2: impl FnOnce(&mut [u8]) -> Result<[u8; 32], Error>,
) -> Result<Vec<u8>, Error> {
    let mut out = Vec::with_capacity(c2_len + 160);
    let (c3_at, c2_at);
    match format {
        Format::C1C3C2 => {
            encode_c1(c1, point, &mut out);
            c3_at = out.len();
            c2_at = c3_at + HASH_LEN;
        }
        Format::C1C2C3 => {
            encode_c1(c1, point, &mut out);
            c2_at = out.len();
            c3_at = c2_at + c2_len;
        }
        Format::Der => {
            let mut ints = Vec::with_capacity(70);
            der_uint(&c1[..32], &mut ints);
            der_uint(&c1[32..], &mut ints);
            let mut c2_header = vec![0x04];
            der_len(c2_len, &mut c2_header);
            let content = ints.len() + 2 + HASH_LEN + c2_header.len() + c2_len;
            out.push(0x30);
            der_len(content, &mut out);
            out.extend_from_slice(&ints);
            out.extend_from_slice(&[0x04, HASH_LEN as u8]);
            c3_at = out.len();
            out.resize(c3_at + HASH_LEN, 0);
            out.extend_from_slice(&c2_header);
            c2_at = out.len();
        }
    }
    out.resize(out.len().max(c2_at + c2_len).max(c3_at + HASH_LEN), 0);
    let c3 = fill_c2(&mut out[c2_at..c2_at + c2_len])?;
    out[c3_at..c3_at + HASH_LEN].copy_from_slice(&c3);
    Ok(out)
}

/// A parsed ciphertext: C1 as SEC1 bytes, C3, C2.
pub(crate) struct Parts<'a> {
    pub(crate) c1: Vec<u8>,
    pub(crate) c3: &'a [u8; 32],
    pub(crate) c2: &'a [u8],
}

/// The SEC1 length of a point from its first byte (04: 65, 02/03: 33).
pub(crate) fn sec1_len(first: u8) -> Option<usize> {
    match first {
        4 => Some(65),
        2 | 3 => Some(33),
        _ => None,
    }
}

#[derive(der::Sequence)]
struct DerCiphertext<'a> {
    x: der::asn1::UintRef<'a>,
    y: der::asn1::UintRef<'a>,
    hash: &'a der::asn1::OctetStringRef,
    ciphertext: &'a der::asn1::OctetStringRef,
}

fn coordinate(v: &der::asn1::UintRef<'_>) -> Option<[u8; 32]> {
    let b = v.as_bytes();
    let mut out = [0u8; 32];
    out.get_mut(32usize.checked_sub(b.len())?..)?
        .copy_from_slice(b);
    Some(out)
}

/// Splits a ciphertext by its layout, checking lengths and encodings (not yet the point).
pub(crate) fn parse(ct: &[u8], format: Format) -> Option<Parts<'_>> {
    match format {
        Format::C1C3C2 | Format::C1C2C3 => {
            let n1 = sec1_len(*ct.first()?)?;
            let rest = ct.get(n1..)?;
            if rest.len() < HASH_LEN {
                return None;
            }
            let (c3, c2) = if format == Format::C1C3C2 {
                let (c3, c2) = rest.split_at(HASH_LEN);
                (c3, c2)
            } else {
                let (c2, c3) = rest.split_at(rest.len() - HASH_LEN);
                (c3, c2)
            };
            Some(Parts {
                c1: ct[..n1].to_vec(),
                c3: c3.try_into().ok()?,
                c2,
            })
        }
        Format::Der => {
            use der::Decode;
            let d = DerCiphertext::from_der(ct).ok()?;
            let mut c1 = vec![4u8];
            c1.extend_from_slice(&coordinate(&d.x)?);
            c1.extend_from_slice(&coordinate(&d.y)?);
            Some(Parts {
                c1,
                c3: d.hash.as_bytes().try_into().ok()?,
                c2: d.ciphertext.as_bytes(),
            })
        }
    }
}

/// Rewrites a ciphertext from one layout into another (C1 re-encoded as `point` asks; a
/// compressed C1 is decompressed when the target needs y). Checks everything but C3, which
/// only the private key can.
pub fn convert(
    ciphertext: &[u8],
    from: Format,
    to: Format,
    point: PointEncoding,
) -> Result<Vec<u8>, Error> {
    let parts = parse(ciphertext, from).ok_or(Error::InvalidCiphertext)?;
    let c1 = dispatch!(crate::sm2::arithmetic::engine::Engine::best(), |a| {
        let p = Affine::from_sec1_vartime(a, &parts.c1).ok_or(Error::InvalidCiphertext)?;
        let mut c1 = [0u8; 64];
        c1[..32].copy_from_slice(&p.x.to_bytes());
        c1[32..].copy_from_slice(&p.y.to_bytes());
        Ok::<_, Error>(c1)
    })?;
    assemble(to, point, &c1, parts.c2.len(), |c2| {
        c2.copy_from_slice(parts.c2);
        Ok(*parts.c3)
    })
}

fn encrypt_impl(
    key: &VerifyingKey,
    table: Option<&Comb>,
    msg: &[u8],
    format: Format,
    point: PointEncoding,
) -> Result<Vec<u8>, Error> {
    if msg.len() as u64 > MAX_MESSAGE_LEN {
        return Err(Error::MessageTooLong);
    }
    loop {
        // An all-zero keystream (probability 2^-(8|M|)): the standard draws a new k.
        if let Some(out) = seal(&encapsulate(key, table)?, msg, format, point)? {
            return Ok(out);
        }
    }
}

/// The ciphertext for one k, or `None` if its keystream is all zero.
fn seal(
    e: &Encapsulated,
    msg: &[u8],
    format: Format,
    point: PointEncoding,
) -> Result<Option<Vec<u8>>, Error> {
    let mut usable = true;
    let out = assemble(format, point, &e.c1, msg.len(), |c2| {
        let mut m = Masker::new(e.shared.clone());
        m.apply(msg, c2, true)?;
        let (c3, ok) = m.finish(msg.len() as u64);
        usable = ok;
        Ok(c3)
    })?;
    Ok(usable.then_some(out))
}

impl VerifyingKey {
    /// Encrypts `msg` to this key in the given layout, C1 uncompressed.
    pub fn encrypt(&self, msg: &[u8], format: Format) -> Result<Vec<u8>, Error> {
        encrypt_impl(self, None, msg, format, PointEncoding::Uncompressed)
    }

    /// Encrypts with a caller-chosen k. Only for known-answer tests: a k used twice, or
    /// predictable, reveals the messages.
    #[cfg(feature = "hazmat")]
    #[doc(hidden)]
    pub fn encrypt_with_nonce_for_known_answer_tests(
        &self,
        msg: &[u8],
        k: &[u8; 32],
        format: Format,
    ) -> Result<Vec<u8>, Error> {
        let k = SecretScalar::new(
            Option::<Scalar>::from(Scalar::from_bytes(k))
                .filter(|k| !bool::from(k.is_zero()))
                .ok_or(Error::InvalidNonce)?,
        );
        let e = encapsulate_with(self, None, &k);
        seal(&e, msg, format, PointEncoding::Uncompressed)?.ok_or(Error::InvalidNonce)
    }

    /// Encrypts `msg` with C1 encoded as asked.
    pub fn encrypt_with(
        &self,
        msg: &[u8],
        format: Format,
        point: PointEncoding,
    ) -> Result<Vec<u8>, Error> {
        encrypt_impl(self, None, msg, format, point)
    }
}

impl PrecomputedVerifyingKey {
    /// Encrypts `msg` to this key: k P comes from the key's table (read in constant time),
    /// about twice as fast as [`VerifyingKey::encrypt`] for a recipient written to often.
    pub fn encrypt(&self, msg: &[u8], format: Format) -> Result<Vec<u8>, Error> {
        encrypt_impl(
            self.key(),
            Some(&self.table),
            msg,
            format,
            PointEncoding::Uncompressed,
        )
    }
}

impl SigningKey {
    /// Decrypts a ciphertext in the given layout. Any failure (length, encoding, C1 not on the
    /// curve, C3 mismatch) is [`Error::Decryption`], and no plaintext is released.
    pub fn decrypt(&self, ciphertext: &[u8], format: Format) -> Result<Vec<u8>, Error> {
        let parts = parse(ciphertext, format).ok_or(Error::Decryption)?;
        let shared = decapsulate(self, &parts.c1).ok_or(Error::Decryption)?;
        let mut out = Zeroizing::new(vec![0u8; parts.c2.len()]);
        let mut m = Masker::new(shared);
        m.apply(parts.c2, &mut out, false)
            .map_err(|_| Error::Decryption)?;
        let (c3, usable) = m.finish(parts.c2.len() as u64);
        let ok = c3.ct_eq(parts.c3) & subtle::Choice::from(u8::from(usable));
        if crate::ct::public_choice(ok) {
            Ok(core::mem::take(&mut *out))
        } else {
            Err(Error::Decryption)
        }
    }
}
