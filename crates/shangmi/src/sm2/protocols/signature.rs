//! SM2 signatures (GB/T 32918.2-2016): signing, verification, and the encodings.
//!
//! Sign: e = SM3(Z || M); k fresh; (x1, y1) = k G; r = e + x1 mod n (retry on r = 0 or
//! r + k = n); s = (1 + d)^-1 (k - r d) mod n (retry on s = 0). The key keeps (1 + d)^-1, so a
//! signature costs one fixed-base multiplication, one inversion mod p (to reach x1) and a few
//! scalar operations.
//!
//! Nonces are hedged: k = H(d, e, 16 fresh OS-random bytes), so a broken random number generator
//! alone does not reveal the key, and a fault that repeats the randomness still gives different
//! k for different messages.

use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::sm2::Error;
use crate::sm2::arithmetic::engine::dispatch;
use crate::sm2::arithmetic::field::{Arith, Fe, P, adc, lt};
use crate::sm2::arithmetic::mul::{double_base_many_vartime, double_base_vartime, fixed_base};
use crate::sm2::arithmetic::point::Jacobian;
use crate::sm2::arithmetic::scalar::{N, PublicScalar, Scalar, SecretScalar};
use crate::sm2::protocols::keys::{DEFAULT_ID, SigningKey, VerifyingKey};
use crate::sm3::Sm3;

/// A signature (r, s), both in [1, n-1].
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Signature {
    r: [u8; 32],
    s: [u8; 32],
}

impl core::fmt::Debug for Signature {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Signature")
            .field("r", &crate::hex(&self.r))
            .field("s", &crate::hex(&self.s))
            .finish()
    }
}

impl Signature {
    /// From r and s (big-endian, 32 bytes each); both must be in [1, n-1].
    pub fn from_scalars(r: &[u8; 32], s: &[u8; 32]) -> Result<Self, Error> {
        for v in [r, s] {
            let x = Option::<Scalar>::from(Scalar::from_bytes(v)).ok_or(Error::InvalidSignature)?;
            if bool::from(x.is_zero()) {
                return Err(Error::InvalidSignature);
            }
        }
        Ok(Signature { r: *r, s: *s })
    }

    /// From the 64-byte r || s form.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let b: &[u8; 64] = bytes.try_into().map_err(|_| Error::InvalidSignature)?;
        let (r, s) = b.split_at(32);
        Self::from_scalars(
            r.try_into().map_err(|_| Error::InvalidSignature)?,
            s.try_into().map_err(|_| Error::InvalidSignature)?,
        )
    }

    /// The 64-byte r || s form.
    pub fn to_bytes(&self) -> [u8; 64] {
        let mut out = [0u8; 64];
        out[..32].copy_from_slice(&self.r);
        out[32..].copy_from_slice(&self.s);
        out
    }

    /// r, big-endian.
    pub fn r(&self) -> &[u8; 32] {
        &self.r
    }

    /// s, big-endian.
    pub fn s(&self) -> &[u8; 32] {
        &self.s
    }

    /// DER: SEQUENCE { INTEGER r, INTEGER s }, minimal (as OpenSSL and GM/T 0009 write it).
    pub fn to_der(&self) -> Vec<u8> {
        let int = |v: &[u8; 32]| {
            let start = v.iter().position(|&b| b != 0).unwrap_or(31);
            let mut out = vec![0x02];
            let body = &v[start..];
            if body[0] & 0x80 != 0 {
                out.push(body.len() as u8 + 1);
                out.push(0);
            } else {
                out.push(body.len() as u8);
            }
            out.extend_from_slice(body);
            out
        };
        let (r, s) = (int(&self.r), int(&self.s));
        let mut out = vec![0x30, (r.len() + s.len()) as u8];
        out.extend_from_slice(&r);
        out.extend_from_slice(&s);
        out
    }

    /// Strict DER: definite short-form lengths, minimal positive INTEGERs, nothing after the
    /// SEQUENCE, and r, s in [1, n-1]. Everything else is [`Error::InvalidSignature`].
    pub fn from_der(der: &[u8]) -> Result<Self, Error> {
        let bad = Error::InvalidSignature;
        let (&tag, rest) = der.split_first().ok_or(bad)?;
        let (&len, body) = rest.split_first().ok_or(bad)?;
        // The longest valid body is 2 x (2 + 33) = 70 bytes, so the length is always short-form.
        if tag != 0x30 || len >= 0x80 || body.len() != usize::from(len) {
            return Err(bad);
        }
        let (r, body) = der_integer(body)?;
        let (s, body) = der_integer(body)?;
        if !body.is_empty() {
            return Err(bad);
        }
        Self::from_scalars(&r, &s)
    }
}

/// One minimal, positive, at most 32-byte INTEGER; returns it left-padded and the rest.
fn der_integer(input: &[u8]) -> Result<([u8; 32], &[u8]), Error> {
    let bad = Error::InvalidSignature;
    let (&tag, rest) = input.split_first().ok_or(bad)?;
    let (&len, rest) = rest.split_first().ok_or(bad)?;
    let len = usize::from(len);
    if tag != 0x02 || len == 0 || len >= 0x80 || rest.len() < len {
        return Err(bad);
    }
    let (v, rest) = rest.split_at(len);
    // Negative numbers and non-minimal encodings (a leading 00 not needed for the sign).
    if v[0] & 0x80 != 0 || (len > 1 && v[0] == 0 && v[1] & 0x80 == 0) {
        return Err(bad);
    }
    let v = if v[0] == 0 && len > 1 { &v[1..] } else { v };
    if v.len() > 32 {
        return Err(bad);
    }
    let mut out = [0u8; 32];
    out[32 - v.len()..].copy_from_slice(v);
    Ok((out, rest))
}

/// e = SM3(Z || M).
pub(crate) fn digest(z: &[u8; 32], msg: &[u8]) -> [u8; 32] {
    let mut h = Sm3::new();
    h.update(z);
    h.update(msg);
    h.finalize()
}

impl SigningKey {
    /// Signs `msg` with the default ID ("1234567812345678").
    pub fn sign(&self, msg: &[u8]) -> Result<Signature, Error> {
        self.sign_digest(&digest(self.z_default(), msg))
    }

    /// Signs `msg` under the identity `id` (at most 8191 bytes; may be empty).
    pub fn sign_with_id(&self, id: &[u8], msg: &[u8]) -> Result<Signature, Error> {
        let z = if id == DEFAULT_ID {
            *self.z_default()
        } else {
            self.public.z(id)?
        };
        self.sign_digest(&digest(&z, msg))
    }

    /// Signs a precomputed e = SM3(Z || M).
    pub fn sign_digest(&self, e: &[u8; 32]) -> Result<Signature, Error> {
        // The hedge for the nonce, then the blinding factor for k G's inversion.
        // One draw (one system call): 16 + 32 bytes.
        let mut rnd = Zeroizing::new([0u8; 48]);
        for counter in 0u32.. {
            let fresh = counter % 16 == 0;
            if fresh {
                getrandom::fill(&mut *rnd).map_err(|_| Error::Rng)?;
            }
            let (Some(hedge), Some(blind)) = (rnd.first_chunk::<16>(), rnd.last_chunk::<32>())
            else {
                return Err(Error::Rng); // 48 bytes always hold 16 and 32
            };
            // A blinding factor serves one inversion only; the rare retries go without.
            let blind = fresh.then_some(blind);
            // Wiped at the end of each attempt: k and the signature give the private key.
            let k = self.hedged_nonce(e, hedge, counter);
            if let Ok(sig) = self.sign_with_nonce_blinded(e, &k, blind) {
                return Ok(sig);
            }
        }
        Err(Error::Rng)
    }

    /// k = SM3(d || label || e || rnd || counter) interpreted mod n; values 0 and >= n are
    /// rejected by the caller's retry (probability about 2^-32). d and the 32-byte label fill
    /// the first block, hashed once per key ([`SigningKey::nonce_prefix`]); e, the 16 random
    /// bytes and the counter fit the second with its padding, so a nonce costs one compression.
    fn hedged_nonce(&self, e: &[u8; 32], rnd: &[u8; 16], counter: u32) -> SecretScalar {
        let mut h = self.nonce_prefix().clone();
        h.update(e);
        h.update(rnd);
        h.update(&counter.to_be_bytes());
        let t = Zeroizing::new(h.finalize());
        SecretScalar::new(Scalar::from_bytes(&t).unwrap_or(Scalar::ZERO))
    }

    /// Signs e with a caller-chosen nonce k. Only for known-answer tests: a nonce used twice,
    /// or predictable, reveals the private key.
    #[cfg(feature = "hazmat")]
    #[doc(hidden)]
    pub fn sign_digest_with_nonce_for_known_answer_tests(
        &self,
        e: &[u8; 32],
        k: &[u8; 32],
    ) -> Result<Signature, Error> {
        let k = SecretScalar::new(
            Option::<Scalar>::from(Scalar::from_bytes(k)).ok_or(Error::InvalidNonce)?,
        );
        self.sign_with_nonce(e, &k)
    }

    /// One attempt with nonce k; `Err` when k is unusable (k = 0, r = 0, r + k = n, s = 0).
    #[cfg(any(feature = "hazmat", shangmi_ctgrind))]
    pub(crate) fn sign_with_nonce(&self, e: &[u8; 32], k: &Scalar) -> Result<Signature, Error> {
        self.sign_with_nonce_blinded(e, k, None)
    }

    /// [`Self::sign_with_nonce`], k G made affine through a blinded inversion when `blind`
    /// holds 32 fresh random bytes ([`crate::sm2::arithmetic::field::Fe::invert_blinded`]).
    pub(crate) fn sign_with_nonce_blinded(
        &self,
        e: &[u8; 32],
        k: &Scalar,
        blind: Option<&[u8; 32]>,
    ) -> Result<Signature, Error> {
        if crate::ct::public_choice(k.is_zero()) {
            return Err(Error::InvalidNonce);
        }
        let x1 = dispatch!(self.engine, |a| {
            let p: Jacobian<_> = fixed_base(a, k);
            p.affine_x_blinded(blind).to_bytes()
        });
        self.finish(e, k, &x1)
    }

    /// r and s from k and the x coordinate of k G.
    pub(crate) fn finish(
        &self,
        e: &[u8; 32],
        k: &Scalar,
        x1: &[u8; 32],
    ) -> Result<Signature, Error> {
        let e = Scalar::from_bytes_reduced(e);
        let r = e.add(&Scalar::from_bytes_reduced(x1));
        // Retrying a nonce is a public event, and r and s are the published signature.
        if crate::ct::public_choice(r.is_zero() | r.add(k).is_zero()) {
            return Err(Error::InvalidNonce);
        }
        let s = self.d1_inv().mul(&k.sub(&r.mul(&self.d)));
        if crate::ct::public_choice(s.is_zero()) {
            return Err(Error::InvalidNonce);
        }
        Ok(Signature {
            r: crate::ct::public(r.to_bytes()),
            s: crate::ct::public(s.to_bytes()),
        })
    }
}

impl VerifyingKey {
    /// Verifies `sig` over `msg` with the default ID.
    pub fn verify(&self, msg: &[u8], sig: &Signature) -> Result<(), Error> {
        self.verify_digest(&digest(&self.z(DEFAULT_ID)?, msg), sig)
    }

    /// Verifies `sig` over `msg` under the identity `id`.
    pub fn verify_with_id(&self, id: &[u8], msg: &[u8], sig: &Signature) -> Result<(), Error> {
        self.verify_digest(&digest(&self.z(id)?, msg), sig)
    }

    /// Verifies `sig` over a precomputed e = SM3(Z || M).
    pub fn verify_digest(&self, e: &[u8; 32], sig: &Signature) -> Result<(), Error> {
        let (r, s, t) = check_scalars(sig)?;
        let ok = dispatch!(self.engine, |a| {
            let p = Jacobian::from_affine(&self.affine(a));
            x_matches_vartime(&double_base_vartime(a, &s, &t, &p), &r, e)
        });
        if ok { Ok(()) } else { Err(Error::Verification) }
    }
}

/// What [`VerifyingKey::verify_digest`] says of each (key, e, signature), decided together:
/// the items whose keys run on one backend share one inversion for their tables
/// ([`double_base_many_vartime`]).
pub(crate) fn verify_digests(items: &[(&VerifyingKey, [u8; 32], Signature)]) -> Vec<bool> {
    use crate::cpu::Implementation as _;
    let mut verdicts = vec![false; items.len()];
    let mut pending: Vec<usize> = (0..items.len()).collect();
    while let Some(&first) = pending.first() {
        let engine = items[first].0.engine;
        let (group, rest): (Vec<usize>, Vec<usize>) = pending
            .iter()
            .partition(|&&i| items[i].0.engine.name() == engine.name());
        pending = rest;
        // Signatures whose scalars are out of range are refused here, as `verify_digest` does.
        let checked: Vec<(usize, Scalar, PublicScalar, PublicScalar)> = group
            .iter()
            .filter_map(|&i| {
                let (r, s, t) = check_scalars(&items[i].2).ok()?;
                Some((i, r, s, t))
            })
            .collect();
        dispatch!(engine, |a| {
            let jobs: Vec<_> = checked
                .iter()
                .map(|(i, _, s, t)| (*s, *t, items[*i].0.affine(a)))
                .collect();
            let points = double_base_many_vartime(a, &jobs);
            for ((i, r, _, _), q) in checked.iter().zip(&points) {
                verdicts[*i] = x_matches_vartime(q, r, &items[*i].1);
            }
        });
    }
    verdicts
}

/// r, s in [1, n-1] (guaranteed by construction, checked again) and t = r + s != 0 mod n.
pub(crate) fn check_scalars(
    sig: &Signature,
) -> Result<(Scalar, PublicScalar, PublicScalar), Error> {
    let r = Option::<Scalar>::from(Scalar::from_bytes(&sig.r)).ok_or(Error::Verification)?;
    let s = Option::<Scalar>::from(Scalar::from_bytes(&sig.s)).ok_or(Error::Verification)?;
    let t = r.add(&s);
    if bool::from(r.is_zero() | s.is_zero() | t.is_zero()) {
        return Err(Error::Verification);
    }
    Ok((r, PublicScalar::declassify(s), PublicScalar::declassify(t)))
}

/// Whether R = (e + x1) mod n equals r, x1 the affine x of the point (not at infinity),
/// without the inversion that leaving Jacobian coordinates costs: x1 = X / Z^2 must be one
/// of the values in [0, p) congruent to r - e mod n, t or t + n (p > n), so compare
/// X with t Z^2 and (t + n) Z^2. Everything here is public.
pub(crate) fn x_matches_vartime<A: Arith>(q: &Jacobian<A>, r: &Scalar, e: &[u8; 32]) -> bool {
    if bool::from(q.is_identity()) {
        return false;
    }
    let a = q.x.a;
    let z2 = q.z.square();
    let t = r.sub(&Scalar::from_bytes_reduced(e)).to_canonical();
    if bool::from((Fe::from_canonical(a, t) * z2).ct_eq(&q.x)) {
        return true;
    }
    let mut t2 = [0u64; 4];
    let mut c = 0;
    for i in 0..4 {
        (t2[i], c) = adc(t[i], N[i], c);
    }
    c == 0 && bool::from(lt(&t2, &P)) && bool::from((Fe::from_canonical(a, t2) * z2).ct_eq(&q.x))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The nonce is SM3 over d, the label, e, the hedge and the counter in one go (the cached
    /// first block changes only the cost), and each input changes it.
    #[test]
    fn hedged_nonce_is_the_one_hash_of_its_inputs() {
        let key = SigningKey::from_bytes(&[0x5a; 32]).unwrap();
        let other = SigningKey::from_bytes(&[0x5b; 32]).unwrap();
        let (e, rnd) = ([3u8; 32], [9u8; 16]);
        let k = |key: &SigningKey, e: &[u8; 32], rnd: &[u8; 16], c: u32| {
            key.hedged_nonce(e, rnd, c).to_bytes()
        };
        let mut h = Sm3::new();
        h.update(&*key.to_bytes());
        h.update(b"shangmi: SM2 hedged nonce, v2\0\0\0");
        h.update(&e);
        h.update(&rnd);
        h.update(&7u32.to_be_bytes());
        let want = Scalar::from_bytes(&h.finalize()).unwrap().to_bytes();
        assert_eq!(k(&key, &e, &rnd, 7), want);
        // The second call reads the cached first block.
        assert_eq!(k(&key, &e, &rnd, 7), want);
        for changed in [
            k(&other, &e, &rnd, 7),
            k(&key, &[4; 32], &rnd, 7),
            k(&key, &e, &[8; 16], 7),
            k(&key, &e, &rnd, 8),
        ] {
            assert_ne!(changed, want);
        }
    }
}
