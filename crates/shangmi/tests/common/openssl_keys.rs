//! SM2 keys made by OpenSSL, for the key-file tests.

use openssl::pkey::{Id, PKey, Private};
use openssl::pkey_ctx::PkeyCtx;

pub fn openssl_sm2_key() -> PKey<Private> {
    let mut ctx = PkeyCtx::new_id(Id::SM2).unwrap();
    ctx.keygen_init().unwrap();
    ctx.keygen().unwrap()
}

/// The private scalar, 32 bytes big-endian.
pub fn d_of(p: &PKey<Private>) -> [u8; 32] {
    p.ec_key()
        .unwrap()
        .private_key()
        .to_vec_padded(32)
        .unwrap()
        .try_into()
        .unwrap()
}
