//! SM4 ops: `sm4-ecb`, `sm4-cbc-enc`, `sm4-cbc-dec`, `sm4-ctr`, `sm4-gcm-seal`, `sm4-gcm-open`,
//! `sm4-xts`, and OpenSSL's `aes128-gcm` as the yardstick. OpenSSL 3.0 has no SM4-GCM or
//! SM4-XTS, so those rows have no OpenSSL column.

use openssl::symm::{Cipher, Crypter, Mode};
use shangmi::sm4::modes::{cbc, ctr, xts};
use shangmi::sm4::{Sm4, Sm4Gcm};

use crate::harness::{Candidate, Case, Unit};
use crate::input;

const KEY: [u8; 16] = [
    0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6, 0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c,
];
const IV: [u8; 16] = [7; 16];

pub fn cases(quick: bool) -> Vec<Case> {
    let sizes: &[usize] = if quick {
        &[8192]
    } else {
        &[16, 256, 1024, 8192, 16384, 1 << 20]
    };
    let mut v = Vec::new();
    for &n in sizes {
        v.push(ecb_case(n));
        v.push(cbc_enc_case(n));
        v.push(cbc_dec_case(n));
        v.push(ctr_case(n));
        v.push(gcm_case(n, true));
        v.push(gcm_case(n, false));
        v.push(xts_case(n));
        v.push(aes_gcm_case(n));
    }
    if quick {
        // The peer of sm2-encrypt at 1 MiB in the published comparisons.
        v.push(cbc_enc_case(1 << 20));
    }
    v
}

fn case(op: &'static str, n: usize, candidates: Vec<Candidate>) -> Case {
    Case {
        op,
        size: Some(n),
        unit: Unit::MBps,
        work: n as f64,
        out_len: n,
        candidates,
    }
}

/// OpenSSL through one reusable context per candidate, as an application would hold it.
fn openssl(cipher: Cipher, mode: Mode, iv: Option<&'static [u8]>, data: Vec<u8>) -> Candidate {
    Candidate::new("openssl", move |out| {
        let mut c = Crypter::new(cipher, mode, &KEY, iv).expect("openssl cipher");
        c.pad(false);
        let mut tmp = vec![0u8; data.len() + 16];
        let n = c.update(&data, &mut tmp).expect("openssl update");
        out.copy_from_slice(&tmp[..n]);
    })
}

fn ecb_case(n: usize) -> Case {
    let data = input::bytes(n);
    let (d1, d3) = (data.clone(), data.clone());
    let c = Sm4::new(&KEY);
    let rc = <rustcrypto_sm4::Sm4 as cipher::KeyInit>::new(&KEY.into());
    case(
        "sm4-ecb",
        n,
        vec![
            Candidate::new("shangmi", move |out| {
                out.copy_from_slice(&d1);
                let (blocks, _) = out.as_chunks_mut::<16>();
                c.encrypt_blocks(blocks);
            }),
            openssl(Cipher::sm4_ecb(), Mode::Encrypt, None, data),
            Candidate::new("rustcrypto", move |out| {
                use cipher::BlockCipherEncrypt;
                out.copy_from_slice(&d3);
                let (blocks, _) = out.as_chunks_mut::<16>();
                for b in blocks {
                    rc.encrypt_block(b.into());
                }
            }),
        ],
    )
}

fn cbc_enc_case(n: usize) -> Case {
    let data = input::bytes(n);
    let d1 = data.clone();
    let c = Sm4::new(&KEY);
    case(
        "sm4-cbc-enc",
        n,
        vec![
            Candidate::new("shangmi", move |out| {
                out.copy_from_slice(&d1);
                cbc::Encryptor::new(&c, &IV)
                    .encrypt_blocks(out)
                    .expect("whole blocks");
            }),
            openssl(Cipher::sm4_cbc(), Mode::Encrypt, Some(&IV), data),
        ],
    )
}

fn cbc_dec_case(n: usize) -> Case {
    let pt = input::bytes(n);
    let c = Sm4::new(&KEY);
    let mut ct = pt;
    cbc::Encryptor::new(&c, &IV)
        .encrypt_blocks(&mut ct)
        .expect("whole blocks");
    let d1 = ct.clone();
    case(
        "sm4-cbc-dec",
        n,
        vec![
            Candidate::new("shangmi", move |out| {
                out.copy_from_slice(&d1);
                cbc::Decryptor::new(&c, &IV)
                    .decrypt_blocks(out)
                    .expect("whole blocks");
            }),
            openssl(Cipher::sm4_cbc(), Mode::Decrypt, Some(&IV), ct),
        ],
    )
}

fn ctr_case(n: usize) -> Case {
    let data = input::bytes(n);
    let d1 = data.clone();
    let c = Sm4::new(&KEY);
    case(
        "sm4-ctr",
        n,
        vec![
            Candidate::new("shangmi", move |out| {
                out.copy_from_slice(&d1);
                ctr::apply_keystream(&c, &IV, out).expect("ctr");
            }),
            openssl(Cipher::sm4_ctr(), Mode::Encrypt, Some(&IV), data),
        ],
    )
}

/// GCM with 13 bytes of AAD, as in a TLS record; output is ciphertext (seal) or plaintext
/// (open), the tag is checked or produced on every call.
fn gcm_case(n: usize, seal: bool) -> Case {
    let pt = input::bytes(n);
    let g = Sm4Gcm::new(&KEY);
    let nonce = [9u8; 12];
    let aad = [1u8; 13];
    let mut ct = pt.clone();
    let tag = g
        .encrypt_in_place_detached(&nonce, &aad, &mut ct)
        .expect("seal");
    if seal {
        case(
            "sm4-gcm-seal",
            n,
            vec![Candidate::new("shangmi", move |out| {
                out.copy_from_slice(&pt);
                let t = g
                    .encrypt_in_place_detached(&nonce, &aad, out)
                    .expect("seal");
                std::hint::black_box(t);
            })],
        )
    } else {
        case(
            "sm4-gcm-open",
            n,
            vec![Candidate::new("shangmi", move |out| {
                out.copy_from_slice(&ct);
                g.decrypt_in_place_detached(&nonce, &aad, out, &tag)
                    .expect("authentic");
            })],
        )
    }
}

/// XTS (GB/T 17964 tweak) over one data unit of the given size.
fn xts_case(n: usize) -> Case {
    let data = input::bytes(n.max(16));
    let mut key = [0u8; 32];
    key[..16].copy_from_slice(&KEY);
    key[16..].copy_from_slice(&IV);
    let x = xts::Xts::new(&key, xts::Variant::Gb).expect("distinct halves");
    case(
        "sm4-xts",
        n,
        vec![Candidate::new("shangmi", move |out| {
            out.copy_from_slice(&data[..out.len()]);
            x.encrypt(&IV, out).expect("xts");
        })],
    )
}

/// OpenSSL's AES-128-GCM (AES-NI, VAES and VPCLMULQDQ on this kind of CPU), seal.
fn aes_gcm_case(n: usize) -> Case {
    let pt = input::bytes(n);
    case(
        "aes128-gcm",
        n,
        vec![Candidate::new("openssl", move |out| {
            let mut tag = [0u8; 16];
            let ct = openssl::symm::encrypt_aead(
                Cipher::aes_128_gcm(),
                &KEY,
                Some(&[9u8; 12]),
                &[1u8; 13],
                &pt,
                &mut tag,
            )
            .expect("openssl aes-gcm");
            out.copy_from_slice(&ct);
        })],
    )
}
