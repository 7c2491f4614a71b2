//! SM3-family ops: `sm3`, `sm3-x16`, `sm3-kdf`, `hmac-sm3`, `pbkdf2-sm3`, and OpenSSL's
//! `sha256` as the yardstick the published studies use.

use digest::Digest;
use openssl::hash::{Hasher, MessageDigest};
use openssl::pkey::PKey;
use openssl::sign::Signer;
use shangmi::sm3;

use crate::harness::{Candidate, Case, Unit, other_profiles};
use crate::input;
use crate::openssl_ffi;

/// SM3 and SHA-256 sizes: 8 B to 1 MiB in a full run, the targets' sizes in a quick one.
pub fn sizes(quick: bool) -> &'static [usize] {
    if quick {
        &[64, 8192, 1 << 20]
    } else {
        &[8, 64, 256, 1024, 8192, 1 << 20]
    }
}

pub fn cases(quick: bool) -> Vec<Case> {
    let mut v = Vec::new();
    let sizes = sizes(quick);
    for &n in sizes {
        v.push(sm3_case(n));
    }
    for &n in if quick {
        &[8192][..]
    } else {
        &[1024, 8192][..]
    } {
        v.push(sm3_x16_case(n));
    }
    for &n in if quick {
        &[1 << 20][..]
    } else {
        &[1024, 1 << 20][..]
    } {
        v.push(kdf_case(n));
    }
    for &n in if quick {
        &[8192][..]
    } else {
        &[64, 1024, 8192][..]
    } {
        v.push(hmac_case(n));
    }
    v.push(pbkdf2_case());
    for &n in sizes {
        v.push(sha256_case(n));
    }
    // shangmi's other profiles on this CPU, single-stream and in lanes.
    for c in v.iter_mut().filter(|c| matches!(c.op, "sm3" | "sm3-x16")) {
        for (name, b) in other_profiles() {
            c.candidates
                .push(profile_candidate(c.op, c.size.unwrap_or(0), name, b));
        }
    }
    v
}

/// shangmi forced onto profile `b`, under `name`, in an `sm3` or `sm3-x16` case.
fn profile_candidate(op: &str, n: usize, name: &'static str, b: shangmi::Backend) -> Candidate {
    if op == "sm3" {
        let data = input::bytes(n);
        return Candidate::new(name, move |out| {
            out.copy_from_slice(&shangmi::hazmat::hash_with_backend(b, &data).expect("available"));
        });
    }
    let msgs: Vec<Vec<u8>> = (0..16).map(|i| input::bytes_seeded(n, i)).collect();
    Candidate::new(name, move |out| {
        let refs: Vec<&[u8]> = msgs.iter().map(Vec::as_slice).collect();
        let digests = shangmi::hazmat::hash_many_with_backend(b, &refs).expect("available");
        out.copy_from_slice(digests.as_flattened());
    })
}

pub fn sm3_case(n: usize) -> Case {
    let data = input::bytes(n);
    let (d1, d2, d3, d4) = (data.clone(), data.clone(), data.clone(), data.clone());
    let d5 = data;
    Case {
        op: "sm3",
        size: Some(n),
        unit: Unit::MBps,
        work: n as f64,
        out_len: 32,
        candidates: vec![
            Candidate::new("shangmi", move |out| out.copy_from_slice(&sm3::hash(&d1))),
            Candidate::new("openssl", move |out| {
                let mut h = Hasher::new(MessageDigest::sm3()).expect("openssl sm3");
                h.update(&d2).expect("openssl sm3");
                out.copy_from_slice(&h.finish().expect("openssl sm3"));
            }),
            Candidate::new("rustcrypto", move |out| {
                out.copy_from_slice(&rustcrypto_sm3::Sm3::digest(&d3));
            }),
            Candidate::new("libsm", move |out| {
                out.copy_from_slice(&libsm::sm3::hash::Sm3Hash::new(&d4).get_hash());
            }),
            Candidate::new("gmcrypto", move |out| {
                out.copy_from_slice(&gmcrypto_core::sm3::hash(&d5));
            }),
        ],
    }
}

/// Sixteen independent messages of `n` bytes: aggregate throughput. Peers hash them one after
/// another, which is what they offer.
fn sm3_x16_case(n: usize) -> Case {
    let msgs: Vec<Vec<u8>> = (0..16).map(|i| input::bytes_seeded(n, i)).collect();
    let (m1, m2, m3, m4) = (msgs.clone(), msgs.clone(), msgs.clone(), msgs);
    Case {
        op: "sm3-x16",
        size: Some(n),
        unit: Unit::MBps,
        work: (16 * n) as f64,
        out_len: 16 * 32,
        candidates: vec![
            Candidate::new("shangmi", move |out| {
                let refs: [&[u8]; 16] = core::array::from_fn(|i| m1[i].as_slice());
                let mut digests = [[0u8; 32]; 16];
                sm3::hash_many_into(&refs, &mut digests).expect("16 outputs");
                out.copy_from_slice(digests.as_flattened());
            }),
            Candidate::new("openssl", move |out| {
                for (m, o) in m2.iter().zip(out.chunks_exact_mut(32)) {
                    let mut h = Hasher::new(MessageDigest::sm3()).expect("openssl sm3");
                    h.update(m).expect("openssl sm3");
                    o.copy_from_slice(&h.finish().expect("openssl sm3"));
                }
            }),
            Candidate::new("rustcrypto", move |out| {
                for (m, o) in m3.iter().zip(out.chunks_exact_mut(32)) {
                    o.copy_from_slice(&rustcrypto_sm3::Sm3::digest(m));
                }
            }),
            // The target: 16 lanes of SM3 against OpenSSL's SHA-256 (SHA-NI) on the same input.
            Candidate::yardstick("yardstick:sha256", move |out| {
                for (m, o) in m4.iter().zip(out.chunks_exact_mut(32)) {
                    o.copy_from_slice(&openssl::sha::sha256(m));
                }
            }),
        ],
    }
}

/// `n` bytes of KDF output from a 64-byte Z (x2 || y2 in SM2 encryption). Throughput counts
/// output bytes. `per-counter` is the definition run on shangmi's own single-stream hasher.
fn kdf_case(n: usize) -> Case {
    let z = input::bytes_seeded(64, 99);
    let (z1, z2, z3) = (z.clone(), z.clone(), z);
    Case {
        op: "sm3-kdf",
        size: Some(n),
        unit: Unit::MBps,
        work: n as f64,
        out_len: n,
        candidates: vec![
            Candidate::new("shangmi", move |out| {
                sm3::kdf_into(&z1, out).expect("kdf length")
            }),
            Candidate::new("openssl", move |out| openssl_ffi::x963_kdf_sm3(&z2, out)),
            Candidate::new("per-counter", move |out| {
                for (i, chunk) in out.chunks_mut(32).enumerate() {
                    let mut h = sm3::Sm3::new();
                    h.update(&z3);
                    h.update(&(i as u32 + 1).to_be_bytes());
                    chunk.copy_from_slice(&h.finalize()[..chunk.len()]);
                }
            }),
        ],
    }
}

fn hmac_case(n: usize) -> Case {
    let data = input::bytes(n);
    let key = input::bytes_seeded(32, 7);
    let (d1, d2) = (data.clone(), data);
    let k1 = key.clone();
    let pkey = PKey::hmac(&key).expect("openssl hmac key");
    Case {
        op: "hmac-sm3",
        size: Some(n),
        unit: Unit::MBps,
        work: n as f64,
        out_len: 32,
        candidates: vec![
            Candidate::new("shangmi", move |out| {
                out.copy_from_slice(&sm3::hmac(&k1, &d1))
            }),
            Candidate::new("openssl", move |out| {
                let mut s = Signer::new(MessageDigest::sm3(), &pkey).expect("openssl hmac");
                s.update(&d2).expect("openssl hmac");
                out.copy_from_slice(&s.sign_to_vec().expect("openssl hmac"));
            }),
        ],
    }
}

/// PBKDF2-HMAC-SM3, 10,000 iterations, 32-byte key: derivations per second.
fn pbkdf2_case() -> Case {
    const ITER: u32 = 10_000;
    Case {
        op: "pbkdf2-sm3",
        size: None,
        unit: Unit::OpsPerSec,
        work: 1.0,
        out_len: 32,
        candidates: vec![
            Candidate::new("shangmi", |out| {
                sm3::pbkdf2(b"correct horse", b"battery staple", ITER, out).expect("pbkdf2")
            }),
            Candidate::new("openssl", |out| {
                openssl::pkcs5::pbkdf2_hmac(
                    b"correct horse",
                    b"battery staple",
                    ITER as usize,
                    MessageDigest::sm3(),
                    out,
                )
                .expect("openssl pbkdf2")
            }),
        ],
    }
}

/// SHA-256 through OpenSSL (SHA-NI on this kind of CPU): the international yardstick.
fn sha256_case(n: usize) -> Case {
    let data = input::bytes(n);
    Case {
        op: "sha256",
        size: Some(n),
        unit: Unit::MBps,
        work: n as f64,
        out_len: 32,
        candidates: vec![Candidate::new("openssl", move |out| {
            let mut h = Hasher::new(MessageDigest::sha256()).expect("openssl sha256");
            h.update(&data).expect("openssl sha256");
            out.copy_from_slice(&h.finish().expect("openssl sha256"));
        })],
    }
}
