//! XTS (IEEE 1619 / NIST SP 800-38E) with ciphertext stealing, in both tweak conventions.
//!
//! The two forms differ only in how the tweak is multiplied by x from one block to the next,
//! and mixing them up silently corrupts data, so the variant is a required parameter:
//! - [`Variant::Ieee`]: the tweak as a little-endian integer, shifted left, 0x87 folded in
//!   (IEEE 1619; the Linux kernel and cryptsetup);
//! - [`Variant::Gb`]: GB/T 17964-2021, the GCM bit order: the tweak as a big-endian integer,
//!   shifted right, 0xE1 folded into the top byte (OpenSSL's default `xts_standard` "GB").

use subtle::ConstantTimeEq;

use super::super::{Block, Sm4};
use super::{CHUNK_BLOCKS, Error, xor_in_place};

/// Which tweak multiplication to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// IEEE 1619.
    Ieee,
    /// GB/T 17964-2021.
    Gb,
}

/// Longest data unit: 2^20 blocks (IEEE 1619's bound).
pub const MAX_UNIT: usize = 16 << 20;

/// SM4-XTS with a 32-byte key (data key || tweak key).
#[derive(Clone)]
pub struct Xts {
    data: Sm4,
    tweak: Sm4,
    variant: Variant,
}

impl core::fmt::Debug for Xts {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Xts")
            .field("variant", &self.variant)
            .finish_non_exhaustive()
    }
}

impl Xts {
    /// Expands `key` = K1 || K2. Equal halves are refused ([`Error::InvalidKey`]): they void
    /// XTS's security argument.
    pub fn new(key: &[u8; 32], variant: Variant) -> Result<Self, Error> {
        Self::with_ciphers(key, variant, Sm4::new)
    }

    #[cfg(any(feature = "hazmat", test, shangmi_ctgrind))]
    /// [`Xts::new`] on a forced backend (for tests and benchmarks).
    pub fn with_backend(
        key: &[u8; 32],
        variant: Variant,
        backend: crate::Backend,
    ) -> Result<Result<Self, Error>, crate::UnsupportedBackend> {
        Sm4::with_backend(&[0; 16], backend)?;
        Ok(Self::with_ciphers(key, variant, |k| {
            Sm4::with_backend(k, backend).unwrap_or_else(|_| Sm4::new(k))
        }))
    }

    fn with_ciphers(
        key: &[u8; 32],
        variant: Variant,
        make: impl Fn(&[u8; 16]) -> Sm4,
    ) -> Result<Self, Error> {
        let (k1, k2) = key.split_at(16);
        if crate::ct::public_choice(k1.ct_eq(k2)) {
            return Err(Error::InvalidKey);
        }
        let k1: &[u8; 16] = k1.try_into().map_err(|_| Error::InvalidKey)?;
        let k2: &[u8; 16] = k2.try_into().map_err(|_| Error::InvalidKey)?;
        Ok(Xts {
            data: make(k1),
            tweak: make(k2),
            variant,
        })
    }

    /// Encrypts one data unit (16 bytes to 16 MiB) in place under `tweak` (e.g. the sector
    /// number as 16 little-endian bytes).
    pub fn encrypt(&self, tweak: &Block, data: &mut [u8]) -> Result<(), Error> {
        self.crypt(tweak, data, true)
    }

    /// Decrypts one data unit in place.
    pub fn decrypt(&self, tweak: &Block, data: &mut [u8]) -> Result<(), Error> {
        self.crypt(tweak, data, false)
    }

    fn crypt(&self, tweak: &Block, data: &mut [u8], encrypt: bool) -> Result<(), Error> {
        if data.len() < 16 || data.len() > MAX_UNIT {
            return Err(Error::InvalidLength);
        }
        let mut t = *tweak;
        self.tweak.encrypt_block(&mut t);
        let mut t = Tweak::new(t, self.variant);
        let tail = data.len() % 16;
        // With stealing, the last full block is handled together with the tail.
        let bulk_blocks = data.len() / 16 - usize::from(tail != 0);
        let (bulk, rest) = data.split_at_mut(16 * bulk_blocks);
        let (blocks, _) = bulk.as_chunks_mut::<16>();
        let mut tweaks = [[0u8; 16]; CHUNK_BLOCKS];
        let used = blocks.len().min(CHUNK_BLOCKS);
        for chunk in blocks.chunks_mut(CHUNK_BLOCKS) {
            let n = chunk.len();
            t.fill(&mut tweaks[..n]);
            if self.data.xex(!encrypt, &tweaks[..n], chunk) {
                continue;
            }
            xor_in_place(chunk.as_flattened_mut(), tweaks[..n].as_flattened());
            if encrypt {
                self.data.encrypt_blocks(chunk);
            } else {
                self.data.decrypt_blocks(chunk);
            }
            xor_in_place(chunk.as_flattened_mut(), tweaks[..n].as_flattened());
        }
        crate::ct::wipe(tweaks[..used].as_flattened_mut());
        if tail != 0 {
            self.steal(&mut t, rest, tail, encrypt);
        }
        Ok(())
    }

    /// The last full block and the `tail` bytes after it.
    fn steal(&self, t: &mut Tweak, rest: &mut [u8], tail: usize, encrypt: bool) {
        let one = |cipher: &Sm4, tw: &Block, b: &mut Block| {
            xor_in_place(b, tw);
            if encrypt {
                cipher.encrypt_block(b);
            } else {
                cipher.decrypt_block(b);
            }
            xor_in_place(b, tw);
        };
        let t_m1 = t.block();
        t.double();
        let t_m = t.block();
        // Encryption uses T_{m-1} then T_m; decryption must undo the second step first.
        let (first, second) = if encrypt { (t_m1, t_m) } else { (t_m, t_m1) };
        let mut cc: Block = [0; 16];
        cc.copy_from_slice(&rest[..16]);
        one(&self.data, &first, &mut cc);
        let mut pp = cc;
        pp[..tail].copy_from_slice(&rest[16..]);
        one(&self.data, &second, &mut pp);
        rest[16..].copy_from_slice(&cc[..tail]);
        rest[..16].copy_from_slice(&pp);
    }
}

/// The running tweak, multiplied by x per block in the variant's bit order; constant time.
#[derive(zeroize::ZeroizeOnDrop)]
struct Tweak {
    value: u128,
    #[zeroize(skip)]
    variant: Variant,
}

impl Tweak {
    fn new(block: Block, variant: Variant) -> Self {
        let value = match variant {
            Variant::Ieee => u128::from_le_bytes(block),
            Variant::Gb => u128::from_be_bytes(block),
        };
        Tweak { value, variant }
    }

    fn block(&self) -> Block {
        self.to_block(self.value)
    }

    /// The next `out.len()` tweaks, the running tweak moved past them.
    fn fill(&mut self, out: &mut [Block]) {
        self.value = match self.variant {
            Variant::Ieee => fill_with(self.value, out, ieee_x, u128::to_le_bytes),
            Variant::Gb => fill_with(self.value, out, gb_x, u128::to_be_bytes),
        };
    }

    fn to_block(&self, v: u128) -> Block {
        match self.variant {
            Variant::Ieee => v.to_le_bytes(),
            Variant::Gb => v.to_be_bytes(),
        }
    }

    fn times_x(&self, v: u128) -> u128 {
        match self.variant {
            Variant::Ieee => ieee_x(v),
            Variant::Gb => gb_x(v),
        }
    }

    fn double(&mut self) {
        self.value = self.times_x(self.value);
    }
}

/// Writes the tweaks `v`, `v x`, ... into `out` and returns the one after them (the variant
/// chosen once, outside the loop).
#[inline(always)]
fn fill_with(
    mut v: u128,
    out: &mut [Block],
    x: impl Fn(u128) -> u128,
    bytes: impl Fn(u128) -> Block,
) -> u128 {
    for o in out {
        *o = bytes(v);
        v = x(v);
    }
    v
}

/// Times x, IEEE 1619 order (little-endian, shifting left).
#[inline(always)]
fn ieee_x(v: u128) -> u128 {
    (v << 1) ^ (crate::ct::mask128((v >> 127) as u64) & 0x87)
}

/// Times x, GB/T 17964 order (big-endian, bit-reflected, shifting right).
#[inline(always)]
fn gb_x(v: u128) -> u128 {
    (v >> 1) ^ (crate::ct::mask128((v & 1) as u64) & (0xe1 << 120))
}
