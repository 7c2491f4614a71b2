//! Block-cipher MACs over SM4: CMAC (NIST SP 800-38B; GB/T 15852.1 MAC algorithm 5),
//! XCBC-MAC (RFC 3566's construction with SM4) and raw CBC-MAC.
//!
//! CMAC is the one to use. CBC-MAC is only secure for messages of one fixed length, and is
//! offered for protocols that define it.

use subtle::ConstantTimeEq;
use zeroize::Zeroize;

use super::super::{Block, Sm4};
use super::{Error, xor_in_place};

/// Doubling in GF(2^128) as CMAC defines it (big-endian, 0x87), in constant time.
fn dbl(b: &Block) -> Block {
    let v = u128::from_be_bytes(*b);
    ((v << 1) ^ (crate::ct::mask128((v >> 127) as u64) & 0x87)).to_be_bytes()
}

/// The shared CBC chain: all whole blocks but the last are absorbed at once; the last stays
/// buffered until finalization knows whether it is the last.
#[derive(Clone, zeroize::ZeroizeOnDrop)]
struct Chain {
    cipher: Sm4,
    state: Block,
    buf: Block,
    len: usize,
}

impl Chain {
    fn new(cipher: Sm4) -> Self {
        Chain {
            cipher,
            state: [0; 16],
            buf: [0; 16],
            len: 0,
        }
    }

    fn update(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            if self.len == 16 {
                xor_in_place(&mut self.state, &self.buf);
                self.cipher.encrypt_block(&mut self.state);
                self.len = 0;
            }
            let take = (16 - self.len).min(data.len());
            self.buf[self.len..self.len + take].copy_from_slice(&data[..take]);
            self.len += take;
            data = &data[take..];
        }
    }

    /// Finishes with `complete` XORed into a full last block or `partial` into a padded one.
    fn finish(&mut self, complete: &Block, partial: &Block) -> Block {
        let mut last = self.buf;
        if self.len == 16 {
            xor_in_place(&mut last, complete);
        } else {
            last[self.len] = 0x80;
            last[self.len + 1..].fill(0);
            xor_in_place(&mut last, partial);
        }
        xor_in_place(&mut self.state, &last);
        self.cipher.encrypt_block(&mut self.state);
        last.zeroize();
        self.state
    }
}

/// Compares the first `len` bytes of our tag with `tag`, which must be exactly `len` bytes:
/// the length is the verifier's decision, never the input's, or a forger could send a prefix.
fn verify_tag(ours: &Block, tag: &[u8], len: usize) -> Result<(), Error> {
    // Tags shorter than 8 bytes are refused: too easy to guess.
    if !(8..=16).contains(&len) {
        return Err(Error::InvalidTagLength);
    }
    if tag.len() == len && crate::ct::public_choice(ours[..len].ct_eq(tag)) {
        Ok(())
    } else {
        Err(Error::Decrypt)
    }
}

/// A MAC made of the CBC chain and two finishing keys: one XORed into a complete last
/// block, the other into a padded one. [`Cmac`] and [`XcbcMac`] differ only in how those
/// keys (and the chain's key) come from the MAC key.
#[derive(Clone, zeroize::ZeroizeOnDrop)]
pub struct ChainMac<K> {
    chain: Chain,
    complete: Block,
    padded: Block,
    #[zeroize(skip)]
    kind: core::marker::PhantomData<K>,
}

/// [`Cmac`]'s key derivation (`K1`, `K2` by doubling `E_K(0)`).
#[derive(Clone, Copy, Debug)]
pub enum CmacKeys {}

/// [`XcbcMac`]'s key derivation (`K1`, `K2`, `K3` as `E_K` of 0x01.., 0x02.., 0x03..).
#[derive(Clone, Copy, Debug)]
pub enum XcbcKeys {}

/// SM4-CMAC.
pub type Cmac = ChainMac<CmacKeys>;

/// SM4-XCBC-MAC: RFC 3566's construction (K1, K2, K3 = E(0x01..), E(0x02..), E(0x03..)).
pub type XcbcMac = ChainMac<XcbcKeys>;

impl<K> ChainMac<K> {
    fn with_keys(chain_key: Sm4, complete: Block, padded: Block) -> Self {
        ChainMac {
            chain: Chain::new(chain_key),
            complete,
            padded,
            kind: core::marker::PhantomData,
        }
    }

    /// Absorbs `data`.
    pub fn update(&mut self, data: &[u8]) {
        self.chain.update(data);
    }

    /// The 16-byte tag.
    pub fn finalize(mut self) -> Block {
        let (complete, padded) = (self.complete, self.padded);
        self.chain.finish(&complete, &padded)
    }

    /// Checks a full 16-byte tag in constant time; anything else is [`Error::Decrypt`].
    pub fn verify(self, tag: &[u8]) -> Result<(), Error> {
        self.verify_truncated(tag, 16)
    }

    /// Checks a tag truncated to `len` bytes (8 to 16, as the protocol fixes it; RFC 3566
    /// uses 12 for XCBC; anything else is [`Error::InvalidTagLength`]); `tag` must be
    /// exactly `len` bytes.
    pub fn verify_truncated(self, tag: &[u8], len: usize) -> Result<(), Error> {
        let mut ours = self.finalize();
        let r = verify_tag(&ours, tag, len);
        ours.zeroize();
        r
    }
}

impl ChainMac<CmacKeys> {
    /// A MAC keyed with `key`.
    pub fn new(key: &[u8; 16]) -> Self {
        Self::with_cipher(Sm4::new(key))
    }

    /// A MAC on an expanded key.
    pub fn with_cipher(cipher: Sm4) -> Self {
        let mut l = [0u8; 16];
        cipher.encrypt_block(&mut l);
        let k1 = dbl(&l);
        let k2 = dbl(&k1);
        l.zeroize();
        Self::with_keys(cipher, k1, k2)
    }
}

/// One-shot SM4-CMAC.
pub fn cmac(key: &[u8; 16], data: &[u8]) -> Block {
    let mut m = Cmac::new(key);
    m.update(data);
    m.finalize()
}

impl ChainMac<XcbcKeys> {
    /// A MAC keyed with `key`.
    pub fn new(key: &[u8; 16]) -> Self {
        let cipher = Sm4::new(key);
        let derive = |byte: u8| {
            let mut b = [byte; 16];
            cipher.encrypt_block(&mut b);
            b
        };
        let mut k1 = derive(1);
        let (k2, k3) = (derive(2), derive(3));
        let mac = Self::with_keys(Sm4::new(&k1), k2, k3);
        k1.zeroize();
        mac
    }
}

/// Raw CBC-MAC with a zero IV over whole blocks (the caller pads as its protocol says).
/// Secure only when every message has the same length.
pub fn cbc_mac(cipher: &Sm4, data: &[u8]) -> Result<Block, Error> {
    let (blocks, rest) = data.as_chunks::<16>();
    if !rest.is_empty() || blocks.is_empty() {
        return Err(Error::InvalidLength);
    }
    let mut state = [0u8; 16];
    for b in blocks {
        xor_in_place(&mut state, b);
        cipher.encrypt_block(&mut state);
    }
    Ok(state)
}
