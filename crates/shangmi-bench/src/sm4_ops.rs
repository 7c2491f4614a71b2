//! SM4 ops (`sm4-ecb`, `sm4-cbc-enc`, `sm4-cbc-dec`, `sm4-ctr`, `sm4-gcm-seal`,
//! `sm4-gcm-open`, `sm4-xts`) with every in-process peer that has them, and OpenSSL's AES-128
//! in the same modes (`aes128-*`) as the international yardstick. OpenSSL 3.0 has no SM4-GCM
//! or SM4-XTS; libsm's GCM takes only 16-byte IVs and its CBC always pads, so it appears where
//! its output can be checked against the others.

use aes_gcm::aead::AeadInOut;
use cipher::{
    BlockCipherEncrypt, BlockModeDecrypt, BlockModeEncrypt, KeyInit, KeyIvInit, StreamCipher,
};
use openssl::cipher::Cipher as EvpCipher;
use openssl::symm::{Cipher, Crypter, Mode};
use shangmi::sm4::Sm4;
use shangmi::sm4::modes::gcm::Sm4Gcm;
use shangmi::sm4::modes::{cbc, ctr, xts};

use crate::harness::{Candidate, Case, Unit, other_profiles};
use crate::input;
use crate::openssl_evp::{self, Dir};

pub const KEY: [u8; 16] = [
    0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6, 0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c,
];
pub const IV: [u8; 16] = [7; 16];
const NONCE: [u8; 12] = [9; 12];
const AAD: [u8; 13] = [1; 13];

type RcSm4 = rustcrypto_sm4::Sm4;

/// The sizes of a full run (16 B to 1 MiB) and of a quick one (the targets' 8 KiB).
pub fn sizes(quick: bool) -> &'static [usize] {
    if quick {
        &[8192]
    } else {
        &[16, 32, 256, 1024, 8192, 65536, 1 << 20]
    }
}

pub fn cases(quick: bool) -> Vec<Case> {
    let mut v = Vec::new();
    for &n in sizes(quick) {
        v.push(ecb_case(n));
        v.push(cbc_enc_case(n));
        v.push(cbc_dec_case(n));
        v.push(ctr_case(n));
        v.push(gcm_case(n, true));
        v.push(gcm_case(n, false));
        v.push(xts_case(n));
        for op in [
            "aes128-ecb",
            "aes128-cbc-enc",
            "aes128-cbc-dec",
            "aes128-ctr",
        ] {
            v.push(aes_case(op, n));
        }
        v.push(aes_gcm_case(n));
    }
    if quick {
        // The peer of sm2-encrypt at 1 MiB in the published comparisons.
        v.push(cbc_enc_case(1 << 20));
    }
    // shangmi's other profiles on this CPU beside the best one (and OpenSSL), in the block
    // modes and GCM sealing (SM4 and GHASH): the portable constant-time code against
    // OpenSSL's tables.
    for c in v.iter_mut() {
        for (name, b) in other_profiles() {
            let tier = Sm4::with_backend(&KEY, b).ok();
            if let Some(t) = tier.and_then(|k| shangmi_candidate(c.op, c.out_len, name, k)) {
                c.candidates.push(t);
            }
        }
    }
    // gmcrypto-core through its public API (its mode functions key the cipher per call).
    for c in v.iter_mut() {
        if let Some(g) = gmcrypto_candidate(c.op, c.out_len) {
            c.candidates.push(g);
        }
    }
    // AES-128-GCM timed inside the SM4 cases that the targets compare with it.
    for c in v.iter_mut().filter(|c| {
        c.size == Some(8192)
            && matches!(
                c.op,
                "sm4-gcm-seal" | "sm4-gcm-open" | "sm4-xts" | "sm4-ctr"
            )
    }) {
        c.candidates.push(aes_gcm_yardstick(8192));
    }
    v
}

/// shangmi in an ECB, CBC, CTR or GCM-sealing case, under `name`, with the key schedule `c`
/// (the chosen profile, or one forced).
fn shangmi_candidate(op: &str, n: usize, name: &'static str, c: Sm4) -> Option<Candidate> {
    let data = input::bytes(n);
    Some(match op {
        "sm4-ecb" => Candidate::new(name, move |out| {
            out.copy_from_slice(&data);
            let (blocks, _) = out.as_chunks_mut::<16>();
            c.encrypt_blocks(blocks);
        }),
        "sm4-cbc-enc" => Candidate::new(name, move |out| {
            out.copy_from_slice(&data);
            cbc::Encryptor::new(&c, &IV)
                .encrypt_blocks(out)
                .expect("whole blocks");
        }),
        "sm4-cbc-dec" => {
            let mut ct = data;
            cbc::Encryptor::new(&c, &IV)
                .encrypt_blocks(&mut ct)
                .expect("whole blocks");
            Candidate::new(name, move |out| {
                out.copy_from_slice(&ct);
                cbc::Decryptor::new(&c, &IV)
                    .decrypt_blocks(out)
                    .expect("whole blocks");
            })
        }
        "sm4-ctr" => Candidate::new(name, move |out| {
            out.copy_from_slice(&data);
            ctr::apply_keystream(&c, &IV, out).expect("ctr");
        }),
        "sm4-gcm-seal" => {
            let g = Sm4Gcm::with_cipher(c, 16).expect("16-byte tag");
            Candidate::new(name, move |out| {
                out.copy_from_slice(&data);
                let t = g
                    .encrypt_in_place_detached(&NONCE, &AAD, out)
                    .expect("seal");
                std::hint::black_box(t);
            })
        }
        _ => return None,
    })
}

/// gmcrypto-core in the SM4 cases it has: ECB on a keyed cipher; CBC (its one-shot pads: the
/// first n bytes are the unpadded CBC), CTR and GCM sealing through its mode functions.
fn gmcrypto_candidate(op: &str, n: usize) -> Option<Candidate> {
    use gmcrypto_core::sm4::{Sm4Cipher, mode_cbc, mode_ctr, mode_gcm};
    let data = input::bytes(n);
    Some(match op {
        "sm4-ecb" => {
            let c = Sm4Cipher::new(&KEY);
            Candidate::new("gmcrypto", move |out| {
                out.copy_from_slice(&data);
                let (blocks, _) = out.as_chunks_mut::<16>();
                c.encrypt_blocks(blocks);
            })
        }
        "sm4-cbc-enc" => Candidate::new("gmcrypto", move |out| {
            out.copy_from_slice(&mode_cbc::encrypt(&KEY, &IV, &data)[..n]);
        }),
        "sm4-ctr" => Candidate::new("gmcrypto", move |out| {
            out.copy_from_slice(&mode_ctr::encrypt(&KEY, &IV, &data));
        }),
        "sm4-gcm-seal" => Candidate::new("gmcrypto", move |out| {
            let (ct, tag) = mode_gcm::encrypt(&KEY, &NONCE, &AAD, &data).expect("gcm");
            out.copy_from_slice(&ct);
            std::hint::black_box(tag);
        }),
        _ => return None,
    })
}

fn aes_gcm_yardstick(n: usize) -> Candidate {
    Candidate::yardstick(
        "yardstick:aes128-gcm",
        openssl_evp::gcm_seal(
            EvpCipher::aes_128_gcm(),
            &KEY,
            &NONCE,
            &AAD,
            input::bytes(n),
        ),
    )
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

/// OpenSSL, as its own `speed -evp` measures it (see `openssl_evp`).
fn openssl(
    cipher: &'static openssl::cipher::CipherRef,
    dir: Dir,
    key: &'static [u8],
    iv: Option<&'static [u8]>,
    data: Vec<u8>,
) -> Candidate {
    Candidate::new("openssl", openssl_evp::mode(cipher, dir, key, iv, data))
}

fn libsm(mode: libsm::sm4::cipher_mode::CipherMode) -> libsm::sm4::cipher_mode::Sm4CipherMode {
    libsm::sm4::cipher_mode::Sm4CipherMode::new(&KEY, mode).expect("libsm key")
}

pub fn ecb_case(n: usize) -> Case {
    let data = input::bytes(n);
    let (d3, d4) = (data.clone(), data.clone());
    let rc = RcSm4::new(&KEY.into());
    let ls = libsm::sm4::cipher::Sm4Cipher::new(&KEY).expect("libsm key");
    case(
        "sm4-ecb",
        n,
        vec![
            shangmi_candidate("sm4-ecb", n, "shangmi", Sm4::new(&KEY)).expect("ecb"),
            openssl(EvpCipher::sm4_ecb(), Dir::Encrypt, &KEY, None, data),
            Candidate::new("rustcrypto", move |out| {
                out.copy_from_slice(&d3);
                let (blocks, _) = out.as_chunks_mut::<16>();
                for b in blocks {
                    rc.encrypt_block(b.into());
                }
            }),
            Candidate::new("libsm", move |out| {
                for (o, b) in out.chunks_exact_mut(16).zip(d4.chunks_exact(16)) {
                    o.copy_from_slice(&ls.encrypt(b).expect("block"));
                }
            }),
        ],
    )
}

pub fn cbc_enc_case(n: usize) -> Case {
    let data = input::bytes(n);
    let (d3, d4) = (data.clone(), data.clone());
    let ls = libsm(libsm::sm4::cipher_mode::CipherMode::Cbc);
    case(
        "sm4-cbc-enc",
        n,
        vec![
            shangmi_candidate("sm4-cbc-enc", n, "shangmi", Sm4::new(&KEY)).expect("cbc"),
            openssl(EvpCipher::sm4_cbc(), Dir::Encrypt, &KEY, Some(&IV), data),
            Candidate::new("rustcrypto", move |out| {
                out.copy_from_slice(&d3);
                let (blocks, _) = out.as_chunks_mut::<16>();
                let mut e = ::cbc::Encryptor::<RcSm4>::new(&KEY.into(), &IV.into());
                for b in blocks {
                    e.encrypt_block(b.into());
                }
            }),
            // libsm always pads: one block more than the others, the rest identical.
            Candidate::new("libsm", move |out| {
                let ct = ls.encrypt(&[], &d4, &IV).expect("libsm cbc");
                out.copy_from_slice(&ct[..out.len()]);
            }),
        ],
    )
}

fn cbc_dec_case(n: usize) -> Case {
    let pt = input::bytes(n);
    let c = Sm4::new(&KEY);
    let mut ct = pt.clone();
    cbc::Encryptor::new(&c, &IV)
        .encrypt_blocks(&mut ct)
        .expect("whole blocks");
    let d3 = ct.clone();
    let ls = libsm(libsm::sm4::cipher_mode::CipherMode::Cbc);
    let padded = ls.encrypt(&[], &pt, &IV).expect("libsm cbc");
    case(
        "sm4-cbc-dec",
        n,
        vec![
            shangmi_candidate("sm4-cbc-dec", n, "shangmi", c).expect("cbc"),
            openssl(EvpCipher::sm4_cbc(), Dir::Decrypt, &KEY, Some(&IV), ct),
            Candidate::new("rustcrypto", move |out| {
                out.copy_from_slice(&d3);
                let (blocks, _) = out.as_chunks_mut::<16>();
                let mut d = ::cbc::Decryptor::<RcSm4>::new(&KEY.into(), &IV.into());
                for b in blocks {
                    d.decrypt_block(b.into());
                }
            }),
            // Its own padded ciphertext (one block longer), since it insists on unpadding.
            Candidate::new("libsm", move |out| {
                out.copy_from_slice(&ls.decrypt(&[], &padded, &IV).expect("libsm cbc"));
            }),
        ],
    )
}

pub fn ctr_case(n: usize) -> Case {
    let data = input::bytes(n);
    let (d3, d4) = (data.clone(), data.clone());
    let ls = libsm(libsm::sm4::cipher_mode::CipherMode::Ctr);
    case(
        "sm4-ctr",
        n,
        vec![
            shangmi_candidate("sm4-ctr", n, "shangmi", Sm4::new(&KEY)).expect("ctr"),
            openssl(EvpCipher::sm4_ctr(), Dir::Encrypt, &KEY, Some(&IV), data),
            Candidate::new("rustcrypto", move |out| {
                out.copy_from_slice(&d3);
                ::ctr::Ctr128BE::<RcSm4>::new(&KEY.into(), &IV.into()).apply_keystream(out);
            }),
            Candidate::new("libsm", move |out| {
                out.copy_from_slice(&ls.encrypt(&[], &d4, &IV).expect("libsm ctr"));
            }),
        ],
    )
}

type RcGcm = aes_gcm::AesGcm<RcSm4, aes_gcm::aead::consts::U12>;

/// GCM with 13 bytes of AAD, as in a TLS record; the output is the ciphertext (seal) or the
/// plaintext (open); the tag is produced or checked on every call.
pub fn gcm_case(n: usize, seal: bool) -> Case {
    let pt = input::bytes(n);
    let g = Sm4Gcm::new(&KEY);
    let mut ct = pt.clone();
    let tag = g
        .encrypt_in_place_detached(&NONCE, &AAD, &mut ct)
        .expect("seal");
    let rc = RcGcm::new(&KEY.into());
    let (pt2, ct2) = (pt.clone(), ct.clone());
    if seal {
        case(
            "sm4-gcm-seal",
            n,
            vec![
                Candidate::new("shangmi", move |out| {
                    out.copy_from_slice(&pt);
                    let t = g
                        .encrypt_in_place_detached(&NONCE, &AAD, out)
                        .expect("seal");
                    std::hint::black_box(t);
                }),
                Candidate::new("rustcrypto", move |out| {
                    out.copy_from_slice(&pt2);
                    let t = rc
                        .encrypt_inout_detached(&NONCE.into(), &AAD, out.into())
                        .expect("seal");
                    std::hint::black_box(t);
                }),
            ],
        )
    } else {
        let tag2 = tag;
        case(
            "sm4-gcm-open",
            n,
            vec![
                Candidate::new("shangmi", move |out| {
                    out.copy_from_slice(&ct);
                    g.decrypt_in_place_detached(&NONCE, &AAD, out, &tag)
                        .expect("authentic");
                }),
                Candidate::new("rustcrypto", move |out| {
                    out.copy_from_slice(&ct2);
                    rc.decrypt_inout_detached(
                        &NONCE.into(),
                        &AAD,
                        out.into(),
                        (&tag2[..]).try_into().expect("16 bytes"),
                    )
                    .expect("authentic");
                }),
            ],
        )
    }
}

/// XTS (GB/T 17964 tweak) over one data unit of the given size (at least one block).
fn xts_case(n: usize) -> Case {
    let n = n.max(16);
    let data = input::bytes(n);
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

/// OpenSSL's AES-128 in the block modes (AES-NI / VAES on this kind of CPU).
fn aes_case(op: &'static str, n: usize) -> Case {
    let pt = input::bytes(n);
    let (cipher, dir, iv, data) = match op {
        "aes128-ecb" => (EvpCipher::aes_128_ecb(), Dir::Encrypt, None, pt),
        "aes128-cbc-enc" => (EvpCipher::aes_128_cbc(), Dir::Encrypt, Some(&IV[..]), pt),
        "aes128-cbc-dec" => {
            let mut c =
                Crypter::new(Cipher::aes_128_cbc(), Mode::Encrypt, &KEY, Some(&IV)).expect("aes");
            c.pad(false);
            let mut ct = vec![0u8; n + 16];
            let k = c.update(&pt, &mut ct).expect("aes");
            ct.truncate(k);
            (EvpCipher::aes_128_cbc(), Dir::Decrypt, Some(&IV[..]), ct)
        }
        _ => (EvpCipher::aes_128_ctr(), Dir::Encrypt, Some(&IV[..]), pt),
    };
    case(op, n, vec![openssl(cipher, dir, &KEY, iv, data)])
}

/// OpenSSL's AES-128-GCM (AES-NI, VAES and VPCLMULQDQ on this kind of CPU), seal.
fn aes_gcm_case(n: usize) -> Case {
    case(
        "aes128-gcm",
        n,
        vec![Candidate::new(
            "openssl",
            openssl_evp::gcm_seal(
                EvpCipher::aes_128_gcm(),
                &KEY,
                &NONCE,
                &AAD,
                input::bytes(n),
            ),
        )],
    )
}
