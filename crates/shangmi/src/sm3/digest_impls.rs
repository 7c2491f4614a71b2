//! RustCrypto `digest` traits, so [`Sm3`] and [`HmacSm3`] drop into code written against
//! `Digest` and `Mac` (including `hmac::SimpleHmac<Sm3>` and the `signature` crates).

use digest::consts::{U32, U64};
use digest::{
    FixedOutput, FixedOutputReset, HashMarker, InvalidLength, Key, KeyInit, MacMarker, Output,
    OutputSizeUser, Reset, Update, block_api::BlockSizeUser, common::KeySizeUser,
};

use super::{HmacSm3, Sm3};

impl HashMarker for Sm3 {}

impl OutputSizeUser for Sm3 {
    type OutputSize = U32;
}

impl BlockSizeUser for Sm3 {
    type BlockSize = U64;
}

impl Update for Sm3 {
    fn update(&mut self, data: &[u8]) {
        Sm3::update(self, data);
    }
}

impl FixedOutput for Sm3 {
    fn finalize_into(self, out: &mut Output<Self>) {
        out.copy_from_slice(&Sm3::finalize(self));
    }
}

impl Reset for Sm3 {
    fn reset(&mut self) {
        Sm3::reset(self);
    }
}

impl FixedOutputReset for Sm3 {
    fn finalize_into_reset(&mut self, out: &mut Output<Self>) {
        out.copy_from_slice(&Sm3::finalize_reset(self));
    }
}

impl OutputSizeUser for HmacSm3 {
    type OutputSize = U32;
}

impl KeySizeUser for HmacSm3 {
    type KeySize = U64;
}

impl KeyInit for HmacSm3 {
    fn new(key: &Key<Self>) -> Self {
        HmacSm3::new(key.as_slice())
    }

    /// HMAC takes keys of any length.
    fn new_from_slice(key: &[u8]) -> Result<Self, InvalidLength> {
        Ok(HmacSm3::new(key))
    }
}

impl MacMarker for HmacSm3 {}

impl Update for HmacSm3 {
    fn update(&mut self, data: &[u8]) {
        HmacSm3::update(self, data);
    }
}

impl FixedOutput for HmacSm3 {
    fn finalize_into(self, out: &mut Output<Self>) {
        out.copy_from_slice(&HmacSm3::finalize(self));
    }
}

impl Reset for HmacSm3 {
    fn reset(&mut self) {
        HmacSm3::reset(self);
    }
}

impl FixedOutputReset for HmacSm3 {
    fn finalize_into_reset(&mut self, out: &mut Output<Self>) {
        out.copy_from_slice(&HmacSm3::finalize_reset(self));
    }
}
