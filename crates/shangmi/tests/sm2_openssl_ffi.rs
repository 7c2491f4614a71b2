//! OpenSSL interop with the default ID: OpenSSL only hashes a non-empty ID into Z when the
//! signing context is given one (`distid`), through `EVP_PKEY_CTX_set1_id`, which the `openssl`
//! crate does not wrap.
#![allow(unsafe_code)]

use foreign_types::ForeignTypeRef;
use openssl::md_ctx::MdCtx;
use openssl::pkey::{Id, PKey, Private};
use openssl::pkey_ctx::PkeyCtx;
use shangmi::sm2::{DEFAULT_ID, Signature, SigningKey};

unsafe extern "C" {
    fn EVP_PKEY_CTX_set1_id(ctx: *mut openssl_sys::EVP_PKEY_CTX, id: *const u8, len: usize) -> i32;
}

fn set_id(ctx: &mut openssl::pkey_ctx::PkeyCtxRef<Private>, id: &[u8]) {
    // SAFETY: `ctx` is a live EVP_PKEY_CTX owned by the signer; OpenSSL copies `id`.
    let rc = unsafe { EVP_PKEY_CTX_set1_id(ctx.as_ptr(), id.as_ptr(), id.len()) };
    assert_eq!(rc, 1, "EVP_PKEY_CTX_set1_id failed");
}

fn openssl_sm2_key() -> PKey<Private> {
    let mut ctx = PkeyCtx::new_id(Id::SM2).unwrap();
    ctx.keygen_init().unwrap();
    ctx.keygen().unwrap()
}

#[test]
fn openssl_and_shangmi_agree_with_the_default_and_other_ids() {
    for id in [DEFAULT_ID, b"ALICE123@YAHOO.COM".as_slice(), &[0x41; 500]] {
        for round in 0..10 {
            let pkey = openssl_sm2_key();
            let d = pkey
                .ec_key()
                .unwrap()
                .private_key()
                .to_vec_padded(32)
                .unwrap();
            let key = SigningKey::from_bytes(&d.try_into().unwrap()).unwrap();
            let msg = vec![round as u8; round * 37];

            let mut signer = MdCtx::new().unwrap();
            set_id(
                signer
                    .digest_sign_init(Some(openssl::md::Md::sm3()), &pkey)
                    .unwrap(),
                id,
            );
            let mut der = vec![];
            signer.digest_sign_to_vec(&msg, &mut der).unwrap();
            let sig = Signature::from_der(&der).unwrap();
            key.verifying_key().verify_with_id(id, &msg, &sig).unwrap();
            if id == DEFAULT_ID {
                key.verifying_key().verify(&msg, &sig).unwrap();
            }

            let ours = if id == DEFAULT_ID {
                key.sign(&msg)
            } else {
                key.sign_with_id(id, &msg)
            }
            .unwrap();
            let mut verifier = MdCtx::new().unwrap();
            set_id(
                verifier
                    .digest_verify_init(Some(openssl::md::Md::sm3()), &pkey)
                    .unwrap(),
                id,
            );
            assert!(
                verifier.digest_verify(&msg, &ours.to_der()).unwrap(),
                "OpenSSL rejects our signature"
            );
        }
    }
}
