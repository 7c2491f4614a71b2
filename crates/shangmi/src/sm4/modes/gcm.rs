//! SM4-GCM (NIST SP 800-38D with SM4; RFC 8998 for TLS 1.3).
//!
//! The tag length belongs to the key object, never to the input: 16 bytes by default, 12 to
//! 16 on request, and 4 or 8 only through [`Sm4Gcm::with_short_tag`], whose name says what it
//! is. Decryption authenticates everything before it decrypts anything, so no unauthenticated
//! plaintext exists even briefly; on failure the buffer is zeroed.

use subtle::ConstantTimeEq;
use zeroize::Zeroize;

use super::super::ghash::{GHash, GHashKey};
use super::super::{Block, Sm4};
use super::ctr::{Counter32, Increment, apply};
use super::{Error, xor_in_place};

/// Longest plaintext: 2^32 - 2 blocks.
pub const MAX_PLAINTEXT: u64 = (1 << 36) - 32;
/// Longest associated data (2^61 - 1 bytes).
pub const MAX_AAD: u64 = (1 << 61) - 1;

/// Keystream blocks a one-shot call makes together with E(K, J0).
const PREFETCH_MAX: usize = 3;

/// How many keystream blocks a message of `len` bytes can use from the first cipher call.
fn prefetch(len: usize) -> usize {
    len.div_ceil(16).min(PREFETCH_MAX)
}

/// SM4-GCM with a fixed tag length.
#[derive(Clone)]
pub struct Sm4Gcm {
    cipher: Sm4,
    ghash: GHashKey,
    tag_len: usize,
}

/// Lets a [`GcmStream`] hold its key borrowed (`&Sm4Gcm`) or owned (`Sm4Gcm`).
impl AsRef<Sm4Gcm> for Sm4Gcm {
    fn as_ref(&self) -> &Sm4Gcm {
        self
    }
}

impl core::fmt::Debug for Sm4Gcm {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Sm4Gcm")
            .field("tag_len", &self.tag_len)
            .finish_non_exhaustive()
    }
}

impl Sm4Gcm {
    /// SM4-GCM with 16-byte tags.
    pub fn new(key: &[u8; 16]) -> Self {
        Self::from_cipher(Sm4::new(key), 16)
    }

    /// SM4-GCM with tags of 12 to 16 bytes.
    pub fn with_tag_len(key: &[u8; 16], tag_len: usize) -> Result<Self, Error> {
        if !(12..=16).contains(&tag_len) {
            return Err(Error::InvalidTagLength);
        }
        Ok(Self::from_cipher(Sm4::new(key), tag_len))
    }

    /// SM4-GCM with the tag lengths NIST SP 800-38D allows: 12 to 16 bytes, and the short 8
    /// and 4. Short tags can be forged with far less work than 2^96 (its Appendix C limits
    /// their use); only for protocols that require them.
    pub fn with_short_tag(key: &[u8; 16], tag_len: usize) -> Result<Self, Error> {
        if !(matches!(tag_len, 4 | 8) || (12..=16).contains(&tag_len)) {
            return Err(Error::InvalidTagLength);
        }
        Ok(Self::from_cipher(Sm4::new(key), tag_len))
    }

    /// SM4-GCM on an expanded key, with tags of 12 to 16 bytes.
    pub fn with_cipher(cipher: Sm4, tag_len: usize) -> Result<Self, Error> {
        if !(12..=16).contains(&tag_len) {
            return Err(Error::InvalidTagLength);
        }
        Ok(Self::from_cipher(cipher, tag_len))
    }

    fn from_cipher(cipher: Sm4, tag_len: usize) -> Self {
        let mut h = [0u8; 16];
        cipher.encrypt_block(&mut h);
        let ghash = GHashKey::new(&h, cipher.backend());
        h.zeroize();
        Sm4Gcm {
            cipher,
            ghash,
            tag_len,
        }
    }

    /// The tag length in bytes.
    pub fn tag_len(&self) -> usize {
        self.tag_len
    }

    /// Encrypts `plaintext`; returns ciphertext || tag.
    pub fn encrypt(&self, nonce: &[u8], aad: &[u8], plaintext: &[u8]) -> Result<Vec<u8>, Error> {
        // The stream checks the nonce and lengths before any plaintext is copied, so a refusal
        // leaves no copy behind; the buffer is sized once, so no reallocation leaves one either.
        let mut s = self.start_with(nonce, aad, prefetch(plaintext.len()))?;
        let mut out = Vec::with_capacity(plaintext.len() + self.tag_len);
        out.extend_from_slice(plaintext);
        if let Err(e) = s.encrypt(&mut out) {
            out.zeroize();
            return Err(e);
        }
        out.extend_from_slice(&s.finish()[..self.tag_len]);
        Ok(out)
    }

    /// Decrypts ciphertext || tag; [`Error::Decrypt`] for any authentication failure.
    pub fn decrypt(&self, nonce: &[u8], aad: &[u8], sealed: &[u8]) -> Result<Vec<u8>, Error> {
        let ct_len = sealed
            .len()
            .checked_sub(self.tag_len)
            .ok_or(Error::Decrypt)?;
        let (ct, tag) = sealed.split_at(ct_len);
        let mut out = ct.to_vec();
        self.decrypt_in_place_detached(nonce, aad, &mut out, tag)?;
        Ok(out)
    }

    /// Encrypts `buf` in place; returns the full 16-byte tag block, of which the first
    /// [`Sm4Gcm::tag_len`] bytes are the tag.
    pub fn encrypt_in_place_detached(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &mut [u8],
    ) -> Result<Block, Error> {
        let mut s = self.start_with(nonce, aad, prefetch(buf.len()))?;
        s.encrypt(buf)?;
        Ok(s.finish())
    }

    /// Checks the tag over `aad` and the ciphertext in `buf`, then decrypts `buf` in place.
    /// The tag must be exactly [`Sm4Gcm::tag_len`] bytes. On failure `buf` is zeroed.
    pub fn decrypt_in_place_detached(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8],
    ) -> Result<(), Error> {
        let result = (|| {
            let mut s = self.start_with(nonce, aad, prefetch(buf.len()))?;
            s.absorb_ciphertext(buf)?;
            s.check(tag)?;
            // Authentic: the keystream continues from the counter the hash pass left alone.
            s.keystream(buf);
            Ok(())
        })();
        if result.is_err() {
            buf.zeroize();
        }
        result
    }

    /// Checks the tag over `aad` and `ciphertext`, then writes the plaintext to `out` (as long
    /// as the ciphertext). `out` is written only when the message is authentic: on failure it
    /// is left as it was, so a caller's buffer never holds anything of a forged message.
    pub fn decrypt_detached(
        &self,
        nonce: &[u8],
        aad: &[u8],
        ciphertext: &[u8],
        tag: &[u8],
        out: &mut [u8],
    ) -> Result<(), Error> {
        if out.len() != ciphertext.len() {
            return Err(Error::InvalidLength);
        }
        let mut s = self.start_with(nonce, aad, prefetch(ciphertext.len()))?;
        s.absorb_ciphertext(ciphertext)?;
        s.check(tag)?;
        out.copy_from_slice(ciphertext);
        s.keystream(out);
        Ok(())
    }

    /// Begins a message, for data that arrives in pieces, borrowing this key
    /// ([`GcmStream::new`] makes one that owns its key).
    pub fn start(&self, nonce: &[u8], aad: &[u8]) -> Result<GcmStream<&Sm4Gcm>, Error> {
        GcmStream::new(self, nonce, aad)
    }

    fn start_with(
        &self,
        nonce: &[u8],
        aad: &[u8],
        prefetch: usize,
    ) -> Result<GcmStream<&Sm4Gcm>, Error> {
        GcmStream::begin(self, nonce, aad, prefetch)
    }
}

impl<G: AsRef<Sm4Gcm>> GcmStream<G> {
    /// Begins a message under `gcm`, borrowed (`&Sm4Gcm`) or owned (`Sm4Gcm`: a stream that
    /// can be kept, cloned mid-message and dropped apart from the key object).
    pub fn new(gcm: G, nonce: &[u8], aad: &[u8]) -> Result<Self, Error> {
        // One keystream block ahead: free beside E(K, J0) on the AVX-512 backend, and used by
        // every message that is not empty.
        Self::begin(gcm, nonce, aad, 1)
    }

    /// Begins a message with the first `prefetch` (at most 3) keystream blocks made in the
    /// same cipher call as E(K, J0): on the AVX-512 backend up to four blocks cost one.
    fn begin(gcm: G, nonce: &[u8], aad: &[u8], prefetch: usize) -> Result<Self, Error> {
        let key = gcm.as_ref();
        if nonce.is_empty() {
            return Err(Error::InvalidNonce);
        }
        if aad.len() as u64 > MAX_AAD {
            return Err(Error::InvalidLength);
        }
        let mut j0 = [0u8; 16];
        if nonce.len() == 12 {
            j0[..12].copy_from_slice(nonce);
            j0[15] = 1;
        } else {
            let mut g = key.ghash.start();
            g.update_padded(&key.ghash, nonce);
            let mut lens = [0u8; 16];
            lens[8..].copy_from_slice(&(nonce.len() as u64).wrapping_mul(8).to_be_bytes());
            g.update_blocks(&key.ghash, &[lens]);
            j0 = g.value();
        }
        let prefetch = prefetch.min(PREFETCH_MAX);
        let mut blocks = [[0u8; 16]; PREFETCH_MAX + 1];
        let mut counter = j0;
        Counter32.fill(&mut counter, &mut blocks[..=prefetch]);
        key.cipher.encrypt_blocks(&mut blocks[..=prefetch]);
        let ek_j0 = blocks[0];
        let mut ks = [[0u8; 16]; PREFETCH_MAX];
        ks[..prefetch].copy_from_slice(&blocks[1..=prefetch]);
        blocks.as_flattened_mut().zeroize();
        j0.zeroize();
        let mut ghash = key.ghash.start();
        ghash.update_padded(&key.ghash, aad);
        Ok(GcmStream {
            gcm,
            ghash,
            counter,
            ek_j0,
            aad_len: aad.len() as u64,
            ct_len: 0,
            ks,
            ks_pos: 0,
            ks_len: 16 * prefetch,
            pending: [0; 16],
            pending_len: 0,
        })
    }
}

/// One message in progress. Encrypt with [`GcmStream::encrypt`] and [`GcmStream::finish`];
/// to decrypt a stream, authenticate it first ([`GcmStream::absorb_ciphertext`] then
/// [`GcmStream::verify`]) and decrypt in a second pass, or hold the output back until
/// `verify` succeeds: [`GcmStream::decrypt_unverified`] returns plaintext that is not yet
/// authenticated, as its name says.
///
/// `G` is the key, borrowed (from [`Sm4Gcm::start`]) or owned ([`GcmStream::new`]); an owned
/// stream clones mid-message, and wipes its keystream and key when dropped.
#[derive(Clone)]
pub struct GcmStream<G: AsRef<Sm4Gcm>> {
    gcm: G,
    ghash: GHash,
    counter: Block,
    ek_j0: Block,
    aad_len: u64,
    ct_len: u64,
    /// Keystream made ahead; bytes `ks_pos..ks_len` of it are unused.
    ks: [Block; PREFETCH_MAX],
    ks_pos: usize,
    ks_len: usize,
    pending: Block,
    pending_len: usize,
}

impl<G: AsRef<Sm4Gcm>> GcmStream<G> {
    /// The tag length of its key.
    pub fn tag_len(&self) -> usize {
        self.gcm.as_ref().tag_len
    }

    /// Encrypts the next piece of plaintext in place.
    pub fn encrypt(&mut self, buf: &mut [u8]) -> Result<(), Error> {
        self.count(buf.len())?;
        self.keystream(buf);
        self.hash(buf);
        Ok(())
    }

    /// Decrypts the next piece in place WITHOUT knowing yet whether it is authentic; the caller
    /// must not release it before [`GcmStream::verify`] succeeds.
    pub fn decrypt_unverified(&mut self, buf: &mut [u8]) -> Result<(), Error> {
        self.count(buf.len())?;
        self.hash(buf);
        self.keystream(buf);
        Ok(())
    }

    /// Authenticates the next piece of ciphertext without decrypting it.
    pub fn absorb_ciphertext(&mut self, buf: &[u8]) -> Result<(), Error> {
        self.count(buf.len())?;
        self.hash(buf);
        Ok(())
    }

    /// The full 16-byte tag block (the tag is its first `tag_len` bytes).
    pub fn finish(mut self) -> Block {
        self.tag()
    }

    /// Compares the tag in constant time; the tag must be exactly `tag_len` bytes.
    pub fn verify(mut self, tag: &[u8]) -> Result<(), Error> {
        self.check(tag)
    }

    /// [`GcmStream::verify`] without consuming the stream (its hash is finished).
    fn check(&mut self, tag: &[u8]) -> Result<(), Error> {
        let n = self.gcm.as_ref().tag_len;
        let mut ours = self.tag();
        let ok = tag.len() == n && crate::ct::public_choice(ours[..n].ct_eq(tag));
        ours.zeroize();
        if ok { Ok(()) } else { Err(Error::Decrypt) }
    }

    fn count(&mut self, n: usize) -> Result<(), Error> {
        let total = self
            .ct_len
            .checked_add(n as u64)
            .ok_or(Error::InvalidLength)?;
        if total > MAX_PLAINTEXT {
            return Err(Error::InvalidLength);
        }
        self.ct_len = total;
        Ok(())
    }

    fn keystream(&mut self, buf: &mut [u8]) {
        let take = (self.ks_len - self.ks_pos).min(buf.len());
        let (now, later) = buf.split_at_mut(take);
        xor_in_place(
            now,
            &self.ks.as_flattened()[self.ks_pos..self.ks_pos + take],
        );
        self.ks_pos += take;
        if later.is_empty() {
            return;
        }
        (self.ks_pos, self.ks_len) = (0, 0);
        let cipher = &self.gcm.as_ref().cipher;
        if let Some((ks, used)) = apply(cipher, Counter32, &mut self.counter, later) {
            self.ks[0] = ks;
            (self.ks_pos, self.ks_len) = (used, 16);
        }
    }

    fn hash(&mut self, mut data: &[u8]) {
        if self.pending_len > 0 {
            let take = (16 - self.pending_len).min(data.len());
            self.pending[self.pending_len..self.pending_len + take].copy_from_slice(&data[..take]);
            self.pending_len += take;
            data = &data[take..];
            if self.pending_len < 16 {
                return;
            }
            let block = self.pending;
            self.ghash.update_blocks(&self.gcm.as_ref().ghash, &[block]);
            self.pending_len = 0;
        }
        let (blocks, rest) = data.as_chunks::<16>();
        self.ghash.update_blocks(&self.gcm.as_ref().ghash, blocks);
        self.pending[..rest.len()].copy_from_slice(rest);
        self.pending_len = rest.len();
    }

    fn tag(&mut self) -> Block {
        if self.pending_len > 0 {
            let n = self.pending_len;
            let pending = self.pending;
            self.ghash
                .update_padded(&self.gcm.as_ref().ghash, &pending[..n]);
            self.pending_len = 0;
        }
        let mut lens = [0u8; 16];
        lens[..8].copy_from_slice(&self.aad_len.wrapping_mul(8).to_be_bytes());
        lens[8..].copy_from_slice(&self.ct_len.wrapping_mul(8).to_be_bytes());
        self.ghash.update_blocks(&self.gcm.as_ref().ghash, &[lens]);
        let mut t = self.ghash.value();
        xor_in_place(&mut t, &self.ek_j0);
        t
    }
}

impl<G: AsRef<Sm4Gcm>> Drop for GcmStream<G> {
    fn drop(&mut self) {
        self.ek_j0.zeroize();
        self.ks.as_flattened_mut().zeroize();
        self.pending.zeroize();
        self.counter.zeroize();
    }
}
