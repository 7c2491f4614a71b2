//! The C ABI's parsers on arbitrary bytes, through the exported `extern "C"` functions: every
//! call returns a status, never writes past the capacity it was given (a canary after it must
//! survive), reports an `out_len` within that capacity on success, and never panics (a panic
//! would surface as SHANGMI_STATUS_ERR_INTERNAL, which fails the check). Replayed on stable
//! over the committed seeds by crates/shangmi-capi/tests/fuzz_corpus.rs.

use shangmi_c::shangmi_status as S;
use shangmi_c::{sm2, sm4};

const CANARY: u8 = 0xC5;

/// Runs `f(out, cap, &out_len)` over a buffer of `cap` bytes followed by canaries.
fn bounded(cap: usize, f: impl FnOnce(*mut u8, usize, *mut usize) -> S) -> S {
    let mut buf = vec![CANARY; cap + 64];
    let mut n = usize::MAX;
    let s = f(buf.as_mut_ptr(), cap, &mut n);
    assert!(
        buf[cap..].iter().all(|&b| b == CANARY),
        "wrote past out_cap"
    );
    assert_ne!(s, S::ErrInternal, "a panic inside the C ABI");
    if s == S::Ok {
        assert!(n <= cap, "out_len beyond the capacity");
    }
    s
}

pub fn capi_parsers(data: &[u8]) {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let cap = usize::from(sel) * 3;
    // A fixed key pair for the operations that need one.
    let mut sk = core::ptr::null_mut();
    let mut pk = core::ptr::null_mut();
    // SAFETY: valid pointers to locals; the handles are freed below.
    unsafe {
        assert_eq!(
            sm2::shangmi_sm2_private_key_from_bytes([7u8; 32].as_ptr(), &mut sk),
            S::Ok
        );
        assert_eq!(sm2::shangmi_sm2_private_key_public_key(sk, &mut pk), S::Ok);
    }
    let (p, n) = (rest.as_ptr(), rest.len());
    let key = [1u8; 16];
    // SAFETY: `p` and `n` describe `rest`; the other pointers are locals or the handles made
    // above; `bounded` provides `cap` writable bytes and `out_len`.
    unsafe {
        let mut h = core::ptr::null_mut();
        if sm2::shangmi_sm2_private_key_from_der(p, n, b"pw".as_ptr(), 2, &mut h) == S::Ok {
            sm2::shangmi_sm2_private_key_free(h);
        }
        let mut h = core::ptr::null_mut();
        if sm2::shangmi_sm2_private_key_from_pem(p, n, core::ptr::null(), 0, &mut h) == S::Ok {
            sm2::shangmi_sm2_private_key_free(h);
        }
        for f in [
            sm2::shangmi_sm2_public_key_from_der
                as unsafe extern "C" fn(
                    *const u8,
                    usize,
                    *mut *mut sm2::shangmi_sm2_public_key,
                ) -> S,
            sm2::shangmi_sm2_public_key_from_pem,
            sm2::shangmi_sm2_public_key_from_bytes,
        ] {
            let mut h = core::ptr::null_mut();
            if f(p, n, &mut h) == S::Ok {
                sm2::shangmi_sm2_public_key_free(h);
            }
        }
        for fmt in [
            sm2::SHANGMI_SM2_C1C3C2,
            sm2::SHANGMI_SM2_C1C2C3,
            sm2::SHANGMI_SM2_ASN1,
        ] {
            let s = bounded(cap, |o, c, l| {
                sm2::shangmi_sm2_decrypt(sk, fmt, p, n, o, c, l)
            });
            assert!(
                matches!(s, S::Ok | S::ErrAuthentication | S::ErrBufferTooSmall),
                "{s:?}"
            );
        }
        for enc in [sm2::SHANGMI_SIG_DER, sm2::SHANGMI_SIG_RAW] {
            let s = sm2::shangmi_sm2_verify(pk, core::ptr::null(), 0, b"m".as_ptr(), 1, p, n, enc);
            assert!(matches!(s, S::Ok | S::ErrAuthentication), "{s:?}");
        }
        bounded(cap, |o, c, l| {
            sm4::shangmi_sm4_cbc(key.as_ptr(), key.as_ptr(), 0, 1, p, n, o, c, l)
        });
        bounded(cap, |o, c, l| {
            sm4::shangmi_sm4_ecb(key.as_ptr(), 0, 1, p, n, o, c, l)
        });
        let s = bounded(cap, |o, c, l| {
            sm4::shangmi_sm4_gcm_open(
                key.as_ptr(),
                16,
                key.as_ptr(),
                12,
                core::ptr::null(),
                0,
                p,
                n,
                o,
                c,
                l,
            )
        });
        assert!(
            matches!(s, S::Ok | S::ErrAuthentication | S::ErrBufferTooSmall),
            "{s:?}"
        );
        bounded(cap, |o, c, l| {
            sm4::shangmi_sm4_ccm_open(
                key.as_ptr(),
                16,
                key.as_ptr(),
                12,
                core::ptr::null(),
                0,
                p,
                n,
                o,
                c,
                l,
            )
        });
        // A decrypting CBC stream fed the input in two pieces, into small buffers.
        let mut st = core::ptr::null_mut();
        assert_eq!(
            sm4::shangmi_sm4_stream_new(
                sm4::SHANGMI_SM4_CBC,
                key.as_ptr(),
                key.as_ptr(),
                0,
                1,
                &mut st
            ),
            S::Ok
        );
        let half = n / 2;
        bounded(cap, |o, c, l| {
            sm4::shangmi_sm4_stream_update(st, p, half, o, c, l)
        });
        bounded(cap, |o, c, l| {
            sm4::shangmi_sm4_stream_update(st, p.add(half), n - half, o, c, l)
        });
        bounded(cap, |o, c, l| sm4::shangmi_sm4_stream_final(st, o, c, l));
        sm4::shangmi_sm4_stream_free(st);
        sm2::shangmi_sm2_public_key_free(pk);
        sm2::shangmi_sm2_private_key_free(sk);
    }
}
