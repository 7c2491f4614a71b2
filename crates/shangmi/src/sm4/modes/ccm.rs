//! SM4-CCM (NIST SP 800-38C / RFC 3610 with SM4; RFC 8998 for TLS 1.3).
//!
//! Nonce length (7 to 13 bytes) and tag length (4, 6, ..., 16 bytes) are fixed when the object
//! is made, never taken from the input. Decryption checks the tag before releasing plaintext and
//! zeroes the buffer on failure.

use subtle::ConstantTimeEq;
use zeroize::Zeroize;

use super::super::{Block, Sm4};
use super::{Error, xor_in_place};

/// SM4-CCM with fixed nonce and tag lengths.
#[derive(Clone)]
pub struct Sm4Ccm {
    cipher: Sm4,
    nonce_len: usize,
    tag_len: usize,
}

impl core::fmt::Debug for Sm4Ccm {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Sm4Ccm")
            .field("nonce_len", &self.nonce_len)
            .field("tag_len", &self.tag_len)
            .finish_non_exhaustive()
    }
}

impl Sm4Ccm {
    /// SM4-CCM; `nonce_len` in 7..=13, `tag_len` in {4, 6, 8, 10, 12, 14, 16}.
    pub fn new(key: &[u8; 16], nonce_len: usize, tag_len: usize) -> Result<Self, Error> {
        Self::with_cipher(Sm4::new(key), nonce_len, tag_len)
    }

    /// The same on an expanded key.
    pub fn with_cipher(cipher: Sm4, nonce_len: usize, tag_len: usize) -> Result<Self, Error> {
        if !(7..=13).contains(&nonce_len) {
            return Err(Error::InvalidNonce);
        }
        if !(4..=16).contains(&tag_len) || !tag_len.is_multiple_of(2) {
            return Err(Error::InvalidTagLength);
        }
        Ok(Sm4Ccm {
            cipher,
            nonce_len,
            tag_len,
        })
    }

    /// RFC 8998's parameters: 12-byte nonces, 16-byte tags.
    pub(crate) fn rfc8998(cipher: Sm4) -> Self {
        Sm4Ccm {
            cipher,
            nonce_len: 12,
            tag_len: 16,
        }
    }

    /// Tag length in bytes.
    pub fn tag_len(&self) -> usize {
        self.tag_len
    }

    /// Encrypts; returns ciphertext || tag.
    pub fn encrypt(&self, nonce: &[u8], aad: &[u8], plaintext: &[u8]) -> Result<Vec<u8>, Error> {
        // Checked before the copy, and sized once: neither a refusal nor a reallocation leaves
        // plaintext behind.
        self.check(nonce, plaintext.len())?;
        let mut out = Vec::with_capacity(plaintext.len() + self.tag_len);
        out.extend_from_slice(plaintext);
        let tag = self.encrypt_in_place_detached(nonce, aad, &mut out)?;
        out.extend_from_slice(&tag);
        Ok(out)
    }

    /// Decrypts ciphertext || tag.
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

    /// Encrypts `buf` in place and returns the tag.
    pub fn encrypt_in_place_detached(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &mut [u8],
    ) -> Result<Vec<u8>, Error> {
        self.check(nonce, buf.len())?;
        let mut mac = self.cbc_mac(nonce, aad, buf);
        self.ctr(nonce, buf, &mut mac);
        let tag = mac[..self.tag_len].to_vec();
        mac.zeroize();
        Ok(tag)
    }

    /// Decrypts `buf` in place if `tag` (exactly `tag_len` bytes) is right; zeroes `buf` if not.
    pub fn decrypt_in_place_detached(
        &self,
        nonce: &[u8],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8],
    ) -> Result<(), Error> {
        self.check(nonce, buf.len())?;
        // CCM authenticates the plaintext, so decrypt into the buffer, check, and wipe on failure.
        let mut s0 = [0u8; 16];
        self.ctr(nonce, buf, &mut s0);
        let mut mac = self.cbc_mac(nonce, aad, buf);
        xor_in_place(&mut mac, &s0);
        let ok =
            tag.len() == self.tag_len && crate::ct::public_choice(mac[..self.tag_len].ct_eq(tag));
        mac.zeroize();
        s0.zeroize();
        if ok {
            Ok(())
        } else {
            buf.zeroize();
            Err(Error::Decrypt)
        }
    }

    fn l(&self) -> usize {
        15 - self.nonce_len
    }

    fn check(&self, nonce: &[u8], len: usize) -> Result<(), Error> {
        if nonce.len() != self.nonce_len {
            return Err(Error::InvalidNonce);
        }
        let l = self.l();
        if l < 8 && (len as u128) >> (8 * l) != 0 {
            return Err(Error::InvalidLength);
        }
        Ok(())
    }

    /// CBC-MAC over B0, the encoded AAD and the plaintext.
    fn cbc_mac(&self, nonce: &[u8], aad: &[u8], pt: &[u8]) -> Block {
        let l = self.l();
        let mut b0 = [0u8; 16];
        b0[0] = (u8::from(!aad.is_empty()) << 6)
            | (((self.tag_len as u8 - 2) / 2) << 3)
            | (l as u8 - 1);
        b0[1..1 + self.nonce_len].copy_from_slice(nonce);
        let len = (pt.len() as u64).to_be_bytes();
        b0[16 - l..].copy_from_slice(&len[8 - l..]);
        let mut state = b0;
        self.cipher.encrypt_block(&mut state);
        let absorb = |data: &[u8], state: &mut Block| {
            for chunk in data.chunks(16) {
                xor_in_place(state, chunk);
                self.cipher.encrypt_block(state);
            }
        };
        if !aad.is_empty() {
            let n = aad.len() as u64;
            let mut head = Vec::with_capacity(10 + aad.len());
            if n < 0xff00 {
                head.extend_from_slice(&(n as u16).to_be_bytes());
            } else if n <= u64::from(u32::MAX) {
                head.extend_from_slice(&[0xff, 0xfe]);
                head.extend_from_slice(&(n as u32).to_be_bytes());
            } else {
                head.extend_from_slice(&[0xff, 0xff]);
                head.extend_from_slice(&n.to_be_bytes());
            }
            head.extend_from_slice(aad);
            absorb(&head, &mut state);
        }
        absorb(pt, &mut state);
        state
    }

    /// XORs the CTR keystream (counters from 1) into `buf` and S0 into `s0`.
    fn ctr(&self, nonce: &[u8], buf: &mut [u8], s0: &mut Block) {
        let l = self.l();
        let mut a = [0u8; 16];
        a[0] = l as u8 - 1;
        a[1..1 + self.nonce_len].copy_from_slice(nonce);
        let mut ks = a;
        self.cipher.encrypt_block(&mut ks);
        xor_in_place(s0, &ks);
        // Counters 1, 2, ... in the last L bytes; the message-length check keeps them in range.
        let mut counter = a;
        counter[15] = 1;
        super::ctr::apply(&self.cipher, super::ctr::Counter128, &mut counter, buf);
        ks.zeroize();
    }
}
