//! SM2 key pairs: the private scalar d in [1, n-2] and the public point P = d G.

use std::sync::OnceLock;

use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::cpu::Implementation as _;
use crate::sm2::Error;
use crate::sm2::arithmetic::engine::{Engine, dispatch};
use crate::sm2::arithmetic::field::Fe;
use crate::sm2::arithmetic::mul::fixed_base;
use crate::sm2::arithmetic::point::{Affine, Jacobian};
use crate::sm2::arithmetic::scalar::{N, Scalar, SecretScalar};
// The forcing entry points that use some of these are hazmat-only.
#[cfg_attr(
    not(any(feature = "hazmat", test, shangmi_ctgrind)),
    allow(unused_imports)
)]
use crate::cpu::{Backend, UnsupportedBackend};
use crate::sm3::Sm3;

/// The identity users sign with unless told otherwise (GM/T 0009-2012 section 10).
pub const DEFAULT_ID: &[u8] = b"1234567812345678";
/// IDs are at most 8191 bytes: their bit length must fit ENTL's 16 bits.
pub const MAX_ID_LEN: usize = 8191;

/// The curve coefficients a and b and the generator, big-endian, as Z hashes them.
const CURVE_BYTES: [u8; 128] = {
    let hex = b"FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF00000000FFFFFFFFFFFFFFFC\
28E9FA9E9D9F5E344D5A9E4BCF6509A7F39789F515AB8F92DDBCBD414D940E93\
32C4AE2C1F1981195F9904466A39C9948FE30BBFF2660BE1715A4589334C74C7\
BC3736A2F4F6779C59BDCEE36B692153D0A9877CC62A474002DF32E52139F0A0";
    let mut out = [0u8; 128];
    let mut i = 0;
    while i < 128 {
        out[i] = nibble(hex[2 * i]) << 4 | nibble(hex[2 * i + 1]);
        i += 1;
    }
    out
};

const fn nibble(c: u8) -> u8 {
    if c <= b'9' { c - b'0' } else { c - b'A' + 10 }
}

/// A public key: a point other than infinity, on the curve.
#[derive(Clone, Copy)]
pub struct VerifyingKey {
    /// Coordinates in Montgomery form (the same for every backend).
    pub(crate) x: [u64; 4],
    pub(crate) y: [u64; 4],
    pub(crate) engine: Engine,
}

impl core::fmt::Debug for VerifyingKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("VerifyingKey")
            .field("sec1", &crate::hex(&self.to_sec1_bytes(false)))
            .finish()
    }
}

impl PartialEq for VerifyingKey {
    fn eq(&self, o: &Self) -> bool {
        self.x == o.x && self.y == o.y
    }
}

impl Eq for VerifyingKey {}

impl VerifyingKey {
    pub(crate) fn from_affine<A: crate::sm2::arithmetic::field::Arith>(
        p: &Affine<A>,
        engine: Engine,
    ) -> Self {
        VerifyingKey {
            x: p.x.mont_limbs(),
            y: p.y.mont_limbs(),
            engine,
        }
    }

    pub(crate) fn affine<A: crate::sm2::arithmetic::field::Arith>(&self, a: A) -> Affine<A> {
        Affine {
            x: Fe::from_mont(a, self.x),
            y: Fe::from_mont(a, self.y),
        }
    }

    /// Decodes a SEC1 point: `04 || x || y` (65 bytes) or `02/03 || x` (33 bytes). Rejects any
    /// other length or prefix (including `00`, infinity, and the hybrid `06/07`), coordinates
    /// `>= p`, points off the curve and x with no square root.
    pub fn from_sec1_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let engine = Engine::best();
        dispatch!(engine, |a| {
            let p = Affine::from_sec1_vartime(a, bytes).ok_or(Error::InvalidPublicKey)?;
            Ok(Self::from_affine(&p, engine))
        })
    }

    /// SEC1 encoding: 65 bytes uncompressed or 33 compressed.
    pub fn to_sec1_bytes(&self, compressed: bool) -> Vec<u8> {
        let (x, y) = self.coordinates();
        if compressed {
            let mut out = vec![2 | (y[31] & 1)];
            out.extend_from_slice(&x);
            out
        } else {
            self.to_uncompressed().to_vec()
        }
    }

    /// `04 || x || y`.
    pub fn to_uncompressed(&self) -> [u8; 65] {
        let (x, y) = self.coordinates();
        let mut out = [0u8; 65];
        out[0] = 4;
        out[1..33].copy_from_slice(&x);
        out[33..].copy_from_slice(&y);
        out
    }

    /// The affine coordinates, big-endian.
    pub fn coordinates(&self) -> ([u8; 32], [u8; 32]) {
        let a = crate::sm2::arithmetic::field::Soft;
        let p = self.affine(a);
        (p.x.to_bytes(), p.y.to_bytes())
    }

    /// Z = SM3(ENTL || ID || a || b || xG || yG || xA || yA), the hash that binds an identity to
    /// this key (GB/T 32918.2 section 5.5).
    pub fn z(&self, id: &[u8]) -> Result<[u8; 32], Error> {
        if id.len() > MAX_ID_LEN {
            return Err(Error::IdTooLong);
        }
        let (x, y) = self.coordinates();
        // ENTL || ID || a || b || xG || yG is the same for every key under one ID: for the
        // default ID its first two blocks are hashed once per process.
        static DEFAULT_PREFIX: std::sync::LazyLock<Sm3> =
            std::sync::LazyLock::new(|| id_prefix(DEFAULT_ID));
        let mut h = if id == DEFAULT_ID {
            DEFAULT_PREFIX.clone()
        } else {
            id_prefix(id)
        };
        h.update(&x);
        h.update(&y);
        Ok(h.finalize())
    }

    #[cfg(any(feature = "hazmat", test, shangmi_ctgrind))]
    /// The same key, its operations forced onto `backend` (for tests and benchmarks).
    pub fn with_backend(mut self, backend: Backend) -> Result<Self, UnsupportedBackend> {
        self.engine = Engine::for_backend(backend)?;
        Ok(self)
    }
}

/// SM3 over ENTL || ID || a || b || xG || yG, the key-independent start of Z.
fn id_prefix(id: &[u8]) -> Sm3 {
    let mut h = Sm3::new();
    h.update(&((id.len() * 8) as u16).to_be_bytes());
    h.update(id);
    h.update(&CURVE_BYTES);
    h
}

/// A private key and its public key. What only signing needs, (1 + d)^-1 mod n, Z for the
/// default ID and the hash state the nonces start from, is computed on the first signature and
/// kept: a key made for decryption or key exchange never pays for it. The secret parts are
/// `SecretScalar`s and an `Sm3` state, all wiped on drop.
#[derive(Clone)]
pub struct SigningKey {
    pub(crate) d: SecretScalar,
    d1_inv: OnceLock<SecretScalar>,
    nonce_prefix: OnceLock<Sm3>,
    pub(crate) public: VerifyingKey,
    z_default: OnceLock<[u8; 32]>,
    pub(crate) engine: Engine,
}

impl core::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SigningKey")
            .field("public", &self.public)
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// A fresh key from the operating system's random number generator.
    pub fn random() -> Result<Self, Error> {
        loop {
            // d, then the blinding factor for the inversion that makes the public key affine.
            let mut b = Zeroizing::new([[0u8; 32]; 2]);
            getrandom::fill(b.as_flattened_mut()).map_err(|_| Error::Rng)?;
            // Values outside [1, n-2] (probability about 2^-32) are drawn again.
            if let Ok(k) = Self::from_bytes_blinded(&b[0], Engine::best(), Some(&b[1])) {
                return Ok(k);
            }
        }
    }

    /// A key from 32 big-endian bytes; d must be in [1, n-2] (n-1 has no (1 + d)^-1).
    pub fn from_bytes(bytes: &[u8; 32]) -> Result<Self, Error> {
        Self::from_bytes_with(bytes, Engine::best())
    }

    pub(crate) fn from_bytes_with(bytes: &[u8; 32], engine: Engine) -> Result<Self, Error> {
        Self::from_bytes_blinded(bytes, engine, None)
    }

    /// The key from d, its public key made affine through a blinded inversion when `blind`
    /// holds 32 fresh random bytes ([`Fe::invert_blinded`]), else the constant-time one.
    pub(crate) fn from_bytes_blinded(
        bytes: &[u8; 32],
        engine: Engine,
        blind: Option<&[u8; 32]>,
    ) -> Result<Self, Error> {
        // Whether the key is valid is public (the caller learns it); nothing else about d is.
        let parsed = Scalar::from_bytes(bytes);
        let d = SecretScalar::new(parsed.unwrap_or(Scalar::ZERO));
        let mut n_minus_1 = N;
        n_minus_1[0] -= 1;
        let d_canon = Zeroizing::new(d.to_canonical());
        let bad = !parsed.is_some() | d.is_zero() | d_canon.ct_eq(&n_minus_1);
        if crate::ct::public_choice(bad) {
            return Err(Error::InvalidPrivateKey);
        }
        let public = dispatch!(engine, |a| {
            let p: Jacobian<_> = fixed_base(a, &d);
            let aff = p.to_affine_blinded(blind);
            if !crate::ct::public_choice(aff.is_some()) {
                return Err(Error::InvalidPrivateKey);
            }
            VerifyingKey::from_affine(
                &crate::ct::public(aff.unwrap_or(Affine::generator(a))),
                engine,
            )
        });
        Ok(SigningKey {
            d,
            d1_inv: OnceLock::new(),
            nonce_prefix: OnceLock::new(),
            public,
            z_default: OnceLock::new(),
            engine,
        })
    }

    /// (1 + d)^-1 mod n (d <= n - 2, so 1 + d is invertible), in constant time.
    pub(crate) fn d1_inv(&self) -> &Scalar {
        self.d1_inv
            .get_or_init(|| SecretScalar::new(self.d.add(&Scalar::ONE).invert()))
    }

    /// SM3 after the first block of every hedged nonce: d, then a label that keeps this hash
    /// of d apart from any other.
    pub(crate) fn nonce_prefix(&self) -> &Sm3 {
        const LABEL: &[u8; 32] = b"shangmi: SM2 hedged nonce, v2\0\0\0";
        self.nonce_prefix.get_or_init(|| {
            let mut h = Sm3::new();
            h.update(&*self.to_bytes());
            h.update(LABEL);
            h
        })
    }

    /// Z of the public key under the default ID.
    pub(crate) fn z_default(&self) -> &[u8; 32] {
        self.z_default.get_or_init(|| {
            self.public
                .z(DEFAULT_ID)
                .expect("the default ID is within the length limit")
        })
    }

    /// The private scalar, big-endian.
    pub fn to_bytes(&self) -> Zeroizing<[u8; 32]> {
        Zeroizing::new(self.d.to_bytes())
    }

    /// The public key.
    pub fn verifying_key(&self) -> &VerifyingKey {
        &self.public
    }

    #[cfg(any(feature = "hazmat", test, shangmi_ctgrind))]
    /// The same key, its operations forced onto `backend` (for tests and benchmarks).
    pub fn with_backend(mut self, backend: Backend) -> Result<Self, UnsupportedBackend> {
        self.engine = Engine::for_backend(backend)?;
        self.public.engine = self.engine;
        Ok(self)
    }
}
