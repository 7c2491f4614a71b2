//! RustCrypto `cipher` and `aead` traits, so SM4 drops into code written for them (the `ctr`,
//! `cbc`, `xts-mode` crates; anything generic over `Aead`).
//!
//! The trait forms of the AEADs use RFC 8998's parameters, 12-byte nonces and 16-byte tags;
//! an object configured otherwise refuses trait calls with an error. Other lengths are
//! available through the inherent methods.

use aead::inout::{InOut, InOutBuf};
use aead::{AeadCore, AeadInOut, Nonce, Tag, TagPosition};
use cipher::consts::{U12, U16};
use cipher::{
    Block as CBlock, BlockCipherDecBackend, BlockCipherDecClosure, BlockCipherDecrypt,
    BlockCipherEncBackend, BlockCipherEncClosure, BlockCipherEncrypt, BlockSizeUser, Key, KeyInit,
    KeySizeUser, ParBlocks, ParBlocksSizeUser,
};

use super::Sm4;
use super::modes::{ccm::Sm4Ccm, gcm::Sm4Gcm};

impl KeySizeUser for Sm4 {
    type KeySize = U16;
}

impl BlockSizeUser for Sm4 {
    type BlockSize = U16;
}

impl KeyInit for Sm4 {
    fn new(key: &Key<Self>) -> Self {
        Sm4::new(&key.0)
    }
}

/// The cipher seen as a RustCrypto backend, sixteen blocks per parallel call.
struct Backend<'a>(&'a Sm4, bool);

impl BlockSizeUser for Backend<'_> {
    type BlockSize = U16;
}

impl ParBlocksSizeUser for Backend<'_> {
    type ParBlocksSize = U16;
}

impl Backend<'_> {
    fn one(&self, mut block: InOut<'_, '_, CBlock<Sm4>>) {
        let mut b: [u8; 16] = block.clone_in().0;
        if self.1 {
            self.0.encrypt_block(&mut b)
        } else {
            self.0.decrypt_block(&mut b)
        }
        block.get_out().0 = b;
    }

    fn many(&self, mut blocks: InOut<'_, '_, ParBlocks<Self>>) {
        let input = blocks.clone_in();
        let mut b: [[u8; 16]; 16] = core::array::from_fn(|i| input[i].0);
        if self.1 {
            self.0.encrypt_blocks(&mut b)
        } else {
            self.0.decrypt_blocks(&mut b)
        }
        for (o, x) in blocks.get_out().iter_mut().zip(b) {
            o.0 = x;
        }
    }
}

impl BlockCipherEncBackend for Backend<'_> {
    fn encrypt_block(&self, block: InOut<'_, '_, CBlock<Self>>) {
        self.one(block);
    }

    fn encrypt_par_blocks(&self, blocks: InOut<'_, '_, ParBlocks<Self>>) {
        self.many(blocks);
    }
}

impl BlockCipherDecBackend for Backend<'_> {
    fn decrypt_block(&self, block: InOut<'_, '_, CBlock<Self>>) {
        self.one(block);
    }

    fn decrypt_par_blocks(&self, blocks: InOut<'_, '_, ParBlocks<Self>>) {
        self.many(blocks);
    }
}

impl BlockCipherEncrypt for Sm4 {
    fn encrypt_with_backend(&self, f: impl BlockCipherEncClosure<BlockSize = U16>) {
        f.call(&Backend(self, true));
    }
}

impl BlockCipherDecrypt for Sm4 {
    fn decrypt_with_backend(&self, f: impl BlockCipherDecClosure<BlockSize = U16>) {
        f.call(&Backend(self, false));
    }
}

impl KeySizeUser for Sm4Gcm {
    type KeySize = U16;
}

impl KeyInit for Sm4Gcm {
    fn new(key: &Key<Self>) -> Self {
        Sm4Gcm::new(&key.0)
    }
}

impl AeadCore for Sm4Gcm {
    type NonceSize = U12;
    type TagSize = U16;
    const TAG_POSITION: TagPosition = TagPosition::Postfix;
}

impl AeadInOut for Sm4Gcm {
    fn encrypt_inout_detached(
        &self,
        nonce: &Nonce<Self>,
        aad: &[u8],
        buffer: InOutBuf<'_, '_, u8>,
    ) -> aead::Result<Tag<Self>> {
        if self.tag_len() != 16 {
            return Err(aead::Error);
        }
        let buf = buffer.into_out_with_copied_in();
        let tag = self
            .encrypt_in_place_detached(&nonce.0, aad, buf)
            .map_err(|_| aead::Error)?;
        Ok(tag.into())
    }

    fn decrypt_inout_detached(
        &self,
        nonce: &Nonce<Self>,
        aad: &[u8],
        buffer: InOutBuf<'_, '_, u8>,
        tag: &Tag<Self>,
    ) -> aead::Result<()> {
        if self.tag_len() != 16 {
            return Err(aead::Error);
        }
        let buf = buffer.into_out_with_copied_in();
        self.decrypt_in_place_detached(&nonce.0, aad, buf, &tag.0)
            .map_err(|_| aead::Error)
    }
}

impl KeySizeUser for Sm4Ccm {
    type KeySize = U16;
}

impl KeyInit for Sm4Ccm {
    /// RFC 8998's SM4-CCM: 12-byte nonces, 16-byte tags.
    fn new(key: &Key<Self>) -> Self {
        Sm4Ccm::rfc8998(Sm4::new(&key.0))
    }
}

impl AeadCore for Sm4Ccm {
    type NonceSize = U12;
    type TagSize = U16;
    const TAG_POSITION: TagPosition = TagPosition::Postfix;
}

impl AeadInOut for Sm4Ccm {
    fn encrypt_inout_detached(
        &self,
        nonce: &Nonce<Self>,
        aad: &[u8],
        buffer: InOutBuf<'_, '_, u8>,
    ) -> aead::Result<Tag<Self>> {
        if self.tag_len() != 16 {
            return Err(aead::Error);
        }
        let buf = buffer.into_out_with_copied_in();
        let tag = self
            .encrypt_in_place_detached(&nonce.0, aad, buf)
            .map_err(|_| aead::Error)?;
        let tag: [u8; 16] = tag.try_into().map_err(|_| aead::Error)?;
        Ok(tag.into())
    }

    fn decrypt_inout_detached(
        &self,
        nonce: &Nonce<Self>,
        aad: &[u8],
        buffer: InOutBuf<'_, '_, u8>,
        tag: &Tag<Self>,
    ) -> aead::Result<()> {
        if self.tag_len() != 16 {
            return Err(aead::Error);
        }
        let buf = buffer.into_out_with_copied_in();
        self.decrypt_in_place_detached(&nonce.0, aad, buf, &tag.0)
            .map_err(|_| aead::Error)
    }
}
