//! What each fuzz target checks, one function per target. Shared by the fuzz targets
//! (`fuzz_targets/*.rs`, run by cargo-fuzz) and by the library's test suite, which runs every
//! committed seed and every regression input through the same functions on stable Rust
//! (`crates/shangmi/tests/fuzz_corpus.rs`).
//!
//! Each function panics only when shangmi is wrong: a parser that accepts what it cannot
//! write back, a decryption that releases anything but the original message, two backends
//! that disagree. Errors on hostile input are the expected outcome.

use std::io::Write;

use shangmi::Backend;
use shangmi::seal::{self, Key, Recipients, Sealer};
use shangmi::sink::MemorySink;
use shangmi::sm2::{self, Decryptor, Format, PointEncoding, Signature, SigningKey, VerifyingKey};
use shangmi::sm3;
use shangmi::sm4::Sm4;
use shangmi::sm4::modes::{cbc, ctr, ecb, padding, xts};
use shangmi::sm4::modes::{ccm::Sm4Ccm, gcm::Sm4Gcm};

/// A target's check.
pub type Check = fn(&[u8]);

/// Every target, by name, for the corpus test.
pub const TARGETS: &[(&str, Check)] = &[
    ("key_files", key_files),
    ("signature_der", signature_der),
    ("sm2_ciphertext", sm2_ciphertext),
    ("sm2_stream", sm2_stream),
    ("sealed_file", sealed_file),
    ("sm4_aead_open", sm4_aead_open),
    ("cbc_unpad", cbc_unpad),
    ("backends_sm4", backends_sm4),
    ("backends_sm3", backends_sm3),
    ("backends_sm2", backends_sm2),
];

/// The fixed key the decryption targets use (d = 0x1111...11).
fn fixed_key() -> SigningKey {
    SigningKey::from_bytes(&[0x11; 32]).expect("valid d")
}

/// Splits `data` at a position the input itself chooses (its first byte), for targets that
/// need a message and a list of mutations.
fn split(data: &[u8]) -> (&[u8], &[u8]) {
    match data.split_first() {
        Some((&at, rest)) => rest.split_at(usize::from(at).min(rest.len())),
        None => (&[], &[]),
    }
}

/// Applies the mutations `edits` (triples: a 16-bit position, a byte to XOR there) to
/// `bytes`, leaving `keep` untouched; returns whether the bytes now differ.
fn mutate(bytes: &mut [u8], edits: &[u8], keep: core::ops::Range<usize>) -> bool {
    let before = bytes.to_vec();
    if !bytes.is_empty() {
        for e in edits.chunks_exact(3) {
            let at = usize::from(u16::from_le_bytes([e[0], e[1]])) % bytes.len();
            if !keep.contains(&at) {
                bytes[at] ^= e[2];
            }
        }
    }
    *bytes != before[..]
}

/// Key files in every form, DER and PEM: whatever parses must write back to something that
/// parses to the same key.
pub fn key_files(data: &[u8]) {
    let same_sk = |k: &SigningKey| {
        let der = k.to_pkcs8_der().expect("writes");
        let back = SigningKey::from_pkcs8_der(&der).expect("reads its own PKCS#8");
        assert_eq!(back.verifying_key(), k.verifying_key());
        assert_eq!(*back.to_bytes(), *k.to_bytes());
        let sec1 = k.to_sec1_der().expect("writes");
        assert_eq!(
            *SigningKey::from_sec1_der(&sec1).expect("reads").to_bytes(),
            *k.to_bytes()
        );
    };
    let same_pk = |k: &VerifyingKey| {
        let der = k.to_public_key_der().expect("writes");
        assert_eq!(VerifyingKey::from_public_key_der(&der).expect("reads"), *k);
    };
    if let Ok(k) = SigningKey::from_pkcs8_der(data) {
        same_sk(&k);
    }
    if let Ok(k) = SigningKey::from_sec1_der(data) {
        same_sk(&k);
    }
    if let Ok(k) = VerifyingKey::from_public_key_der(data) {
        same_pk(&k);
    }
    if let Ok(k) = VerifyingKey::from_sec1_bytes(data) {
        same_pk(&k);
        assert_eq!(VerifyingKey::from_sec1_bytes(&k.to_sec1_bytes(true)), Ok(k));
    }
    // Encrypted keys: a low iteration limit keeps the target fast; the wrong-password path
    // and every structural refusal are exercised all the same.
    if sm2::is_encrypted_pkcs8_der(data)
        && let Ok(k) = SigningKey::from_pkcs8_encrypted_der_with_limit(data, b"pw", 64)
    {
        same_sk(&k);
    }
    if let Ok(text) = std::str::from_utf8(data) {
        // Without a password: an encrypted PEM would run PBKDF2 for as many iterations as
        // it asks (the DER path above caps them low).
        if let Ok(k) = SigningKey::from_pem(text, None) {
            same_sk(&k);
        }
        if let Ok(k) = VerifyingKey::from_public_key_pem(text) {
            same_pk(&k);
        }
    }
}

/// Strict DER signatures: what parses is the canonical encoding of what it parsed to.
pub fn signature_der(data: &[u8]) {
    if let Ok(sig) = Signature::from_der(data) {
        assert_eq!(sig.to_der(), data, "a non-canonical encoding was accepted");
        assert_eq!(Signature::from_bytes(&sig.to_bytes()), Ok(sig));
    }
    if let Ok(sig) = Signature::from_bytes(data) {
        assert_eq!(sig.to_bytes(), data);
        assert_eq!(Signature::from_der(&sig.to_der()), Ok(sig));
    }
    // Verification of anything against a fixed key and message never panics.
    if let Ok(sig) = Signature::from_der(data) {
        let _ = fixed_key().verifying_key().verify(b"fuzz", &sig);
    }
}

/// SM2 ciphertexts in the three layouts: raw input never decrypts (it would take a forged
/// C3), and a real ciphertext of the input's message, mutated as the input says, decrypts
/// to the message exactly when unmodified. Conversions between layouts keep it decryptable.
pub fn sm2_ciphertext(data: &[u8]) {
    let key = fixed_key();
    for f in [Format::C1C3C2, Format::C1C2C3, Format::Der] {
        let _ = key.decrypt(data, f);
        for to in [Format::C1C3C2, Format::C1C2C3, Format::Der] {
            for point in [PointEncoding::Uncompressed, PointEncoding::Compressed] {
                if let Ok(c) = sm2::convert(data, f, to, point) {
                    let _ = key.decrypt(&c, to);
                }
            }
        }
    }
    let (msg, edits) = split(data);
    let k = [0x42; 32];
    for f in [Format::C1C3C2, Format::C1C2C3, Format::Der] {
        let Ok(mut ct) = key
            .verifying_key()
            .encrypt_with_nonce_for_known_answer_tests(msg, &k, f)
        else {
            continue;
        };
        for to in [Format::C1C3C2, Format::C1C2C3, Format::Der] {
            let moved = sm2::convert(&ct, f, to, PointEncoding::Compressed).expect("converts");
            assert_eq!(key.decrypt(&moved, to).expect("still decrypts"), msg);
        }
        let changed = mutate(&mut ct, edits, 0..0);
        match key.decrypt(&ct, f) {
            Ok(m) => assert!(!changed && m == msg, "a modified ciphertext decrypted"),
            Err(_) => assert!(changed, "the genuine ciphertext failed"),
        }
    }
}

/// The streaming decryptor, fed in pieces the input chooses, agrees with the one-shot one and
/// commits nothing that one-shot decryption would refuse.
pub fn sm2_stream(data: &[u8]) {
    let key = fixed_key();
    let (msg, rest) = split(data);
    let (edits, cuts) = rest.split_at(rest.len() / 2);
    for f in [Format::C1C3C2, Format::C1C2C3] {
        let Ok(mut ct) = key
            .verifying_key()
            .encrypt_with_nonce_for_known_answer_tests(msg, &[0x24; 32], f)
        else {
            continue;
        };
        mutate(&mut ct, edits, 0..0);
        let whole = key.decrypt(&ct, f);
        let mut dec = Decryptor::new(&key, f, MemorySink::new()).expect("raw layout");
        let mut at = 0;
        let mut pieces = cuts.iter().cycle();
        while at < ct.len() {
            let n = usize::from(*pieces.next().unwrap_or(&255))
                .max(1)
                .min(ct.len() - at);
            if dec.write_all(&ct[at..at + n]).is_err() {
                break;
            }
            at += n;
        }
        match (whole, dec.finish()) {
            (Ok(m), Ok(streamed)) => assert_eq!(*streamed, m),
            (Err(_), Err(_)) => {}
            (w, s) => panic!("one-shot {:?}, streaming {:?}", w.is_ok(), s.is_ok()),
        }
    }
}

/// Sealed files: raw input never opens; a real file (password-sealed, fixed salt and prefix)
/// opens exactly when unmodified, to exactly its plaintext.
pub fn sealed_file(data: &[u8]) {
    // Raw input, within what keeps one run short: a file may ask for 10^7 PBKDF2 iterations
    // or 1024 SM2 decryptions before its MAC can be checked (both bounded by the reader).
    let be32 = |r: core::ops::Range<usize>| {
        data.get(r)
            .map(|b| u32::from_be_bytes(b.try_into().expect("4")))
    };
    if be32(32..36).is_none_or(|iterations| iterations <= 1000) {
        let _ = seal::open(data, Key::Password(b"pw"), MemorySink::new());
    }
    if data
        .get(16..18)
        .is_none_or(|c| u16::from_be_bytes([c[0], c[1]]) <= 8)
    {
        let _ = seal::open(data, Key::Private(&fixed_key()), MemorySink::new());
    }
    let (msg, edits) = split(data);
    let mut file = Vec::new();
    let mut s = Sealer::with_password_for_known_answer_tests(&mut file, b"pw", 2, [1; 16], [2; 7])
        .expect("sealer");
    s.write_all(msg).expect("memory");
    s.finish().expect("memory");
    // The iteration count (bytes 32..36) stays as written, to keep runs fast; the header MAC
    // covers it like every other header byte.
    let changed = mutate(&mut file, edits, 32..36);
    match seal::open(&file[..], Key::Password(b"pw"), MemorySink::new()) {
        Ok(m) => assert!(!changed && *m == msg, "a modified file opened"),
        Err(_) => assert!(changed, "the genuine file failed"),
    }
    // And to a key recipient, sealed for real.
    let k = fixed_key();
    let mut file = Vec::new();
    seal::seal(msg, &mut file, Recipients::Keys(&[*k.verifying_key()])).expect("seals");
    // The recipient count (bytes 16..18) stays as written, for speed as above.
    let changed = mutate(&mut file, edits, 16..18);
    match seal::open(&file[..], Key::Private(&k), MemorySink::new()) {
        Ok(m) => assert!(!changed && *m == msg),
        Err(_) => assert!(changed),
    }
}

/// SM4-GCM and SM4-CCM opening: a real sealing of the input's message, mutated as the input
/// says, opens exactly when unmodified; raw input never opens.
pub fn sm4_aead_open(data: &[u8]) {
    let gcm = Sm4Gcm::new(&[7; 16]);
    let ccm = Sm4Ccm::new(&[7; 16], 12, 16).expect("valid parameters");
    let nonce = [9u8; 12];
    let _ = gcm.decrypt(&nonce, b"aad", data);
    let _ = ccm.decrypt(&nonce, b"aad", data);
    let (msg, edits) = split(data);
    let sealed = [
        (0, gcm.encrypt(&nonce, b"aad", msg).expect("fits")),
        (1, ccm.encrypt(&nonce, b"aad", msg).expect("fits")),
    ];
    for (which, mut ct) in sealed {
        let changed = mutate(&mut ct, edits, 0..0);
        let opened = match which {
            0 => gcm.decrypt(&nonce, b"aad", &ct),
            _ => ccm.decrypt(&nonce, b"aad", &ct),
        };
        match opened {
            Ok(m) => assert!(!changed && m == msg, "a forgery opened"),
            Err(_) => assert!(changed, "the genuine message failed"),
        }
    }
}

/// PKCS#7 removal after CBC and ECB decryption against its definition, on whatever the
/// input decrypts to.
pub fn cbc_unpad(data: &[u8]) {
    let c = Sm4::new(&[3; 16]);
    let iv = [4u8; 16];
    let whole = &data[..data.len() - data.len() % 16];
    let reference = |plain: &[u8]| -> Option<Vec<u8>> {
        let n = usize::from(*plain.last()?);
        (1..=16).contains(&n).then_some(())?;
        plain[plain.len() - n..]
            .iter()
            .all(|&b| usize::from(b) == n)
            .then(|| plain[..plain.len() - n].to_vec())
    };
    let mut raw = whole.to_vec();
    if !raw.is_empty() {
        cbc::Decryptor::new(&c, &iv)
            .decrypt_blocks(&mut raw)
            .expect("whole blocks");
    }
    assert_eq!(cbc::decrypt_padded(&c, &iv, whole).ok(), reference(&raw));
    let mut raw = whole.to_vec();
    let (blocks, _) = raw.as_chunks_mut::<16>();
    c.decrypt_blocks(blocks);
    assert_eq!(ecb::decrypt_padded(&c, whole).ok(), reference(&raw));
    if let Some(last) = raw.last_chunk::<16>() {
        assert_eq!(
            padding::unpad_len(last).ok(),
            reference(last).map(|r| 16 - r.len())
        );
    }
    // Padding then unpadding is the identity.
    assert_eq!(
        cbc::decrypt_padded(&c, &iv, &cbc::encrypt_padded(&c, &iv, data)).ok(),
        Some(data.to_vec())
    );
}

/// The key and message of a differential target, from the input.
fn key_and_message(data: &[u8]) -> ([u8; 32], &[u8]) {
    let mut key = [0u8; 32];
    let n = data.len().min(32);
    key[..n].copy_from_slice(&data[..n]);
    (key, &data[n..])
}

/// Every SM4 backend this CPU has gives the portable backend's bytes: blocks, CTR, GCM, XTS,
/// on the input's key and length.
pub fn backends_sm4(data: &[u8]) {
    let (key, msg) = key_and_message(data);
    let k16: &[u8; 16] = key[..16].try_into().expect("16 bytes");
    let iv: [u8; 16] = key[16..].try_into().expect("16 bytes");
    let run = |b: Backend| {
        let c = Sm4::with_backend(k16, b).expect("available");
        let mut blocks = msg[..msg.len() - msg.len() % 16].to_vec();
        let (bl, _) = blocks.as_chunks_mut::<16>();
        c.encrypt_blocks(bl);
        let mut dec = blocks.clone();
        let (dl, _) = dec.as_chunks_mut::<16>();
        c.decrypt_blocks(dl);
        assert_eq!(dec, msg[..blocks.len()]);
        let mut stream = msg.to_vec();
        let _ = ctr::apply_keystream(&c, &iv, &mut stream);
        let gcm = Sm4Gcm::with_cipher(c.clone(), 16).expect("16-byte tag");
        let sealed = gcm.encrypt(&iv[..12], &key, msg).expect("fits");
        let mut x = msg.to_vec();
        let mut xkey = key;
        xkey[31] ^= 0x80; // XTS refuses equal halves
        let xts_out = match xts::Xts::with_backend(&xkey, xts::Variant::Gb, b) {
            Ok(Ok(t)) => t.encrypt(&iv, &mut x).map(|()| x).ok(),
            _ => None,
        };
        (blocks, stream, sealed, xts_out)
    };
    let reference = run(Backend::Portable);
    for b in Backend::available() {
        assert!(run(b) == reference, "SM4 backend {b} differs from portable");
    }
}

/// Every SM3 backend, single-stream and lanes, gives the portable digests.
pub fn backends_sm3(data: &[u8]) {
    let (_, msg) = key_and_message(data);
    // Up to 17 messages of lengths the input chooses, cut from the message.
    let mut msgs: Vec<&[u8]> = Vec::new();
    let mut rest = msg;
    for &len in data.iter().take(17) {
        let n = usize::from(len).min(rest.len());
        msgs.push(&rest[..n]);
        rest = &rest[n..];
    }
    let reference = shangmi::hazmat::hash_with_backend(Backend::Portable, msg).expect("portable");
    let reference_many =
        shangmi::hazmat::hash_many_with_backend(Backend::Portable, &msgs).expect("portable");
    for b in Backend::available() {
        assert_eq!(
            shangmi::hazmat::hash_with_backend(b, msg).expect("available"),
            reference,
            "{b}"
        );
        assert_eq!(
            shangmi::hazmat::hash_many_with_backend(b, &msgs).expect("available"),
            reference_many,
            "{b}"
        );
        let mut streamed = sm3::Sm3::with_backend(b).expect("available");
        for piece in msg.chunks(usize::from(data.first().copied().unwrap_or(1)).max(1)) {
            streamed.update(piece);
        }
        assert_eq!(streamed.finalize(), reference, "{b} streaming");
    }
}

/// SM2 on every backend: the key's public point, a signature with a given nonce, and a
/// decryption agree with the portable backend.
pub fn backends_sm2(data: &[u8]) {
    let (d, msg) = key_and_message(data);
    let Ok(key) = SigningKey::from_bytes(&d) else {
        return;
    };
    let mut nonce = d;
    nonce[0] ^= 0x5a;
    let e = sm3::hash(msg);
    let run = |b: Backend| {
        let k = key.clone().with_backend(b).expect("available");
        let public = k.verifying_key().to_uncompressed();
        let sig = k
            .sign_digest_with_nonce_for_known_answer_tests(&e, &nonce)
            .ok();
        if let Some(s) = &sig {
            assert!(
                k.verifying_key().verify_digest(&e, s).is_ok(),
                "{b} verifies its own"
            );
        }
        let ct = k
            .verifying_key()
            .encrypt_with_nonce_for_known_answer_tests(msg, &nonce, Format::C1C3C2)
            .ok();
        if let Some(c) = &ct {
            assert_eq!(k.decrypt(c, Format::C1C3C2).expect("decrypts"), msg, "{b}");
        }
        (public.to_vec(), sig, ct)
    };
    let reference = run(Backend::Portable);
    for b in Backend::available() {
        assert!(run(b) == reference, "SM2 backend {b} differs from portable");
        batch_agrees_with_single(&key, msg, b);
    }
}

/// On backend `b`, nine items (one pass of eight lanes where the backend has them, and a rest)
/// under two keys: valid signatures, signatures with the input's bytes xored in, and the
/// input's own bytes as a signature. Each batch verdict is the single verification's.
fn batch_agrees_with_single(key: &SigningKey, msg: &[u8], b: Backend) {
    let keys = [
        key.clone(),
        SigningKey::from_bytes(&[0x22; 32]).expect("valid d"),
    ]
    .map(|k| k.with_backend(b).expect("available"));
    let public = [*keys[0].verifying_key(), *keys[1].verifying_key()];
    let messages: Vec<Vec<u8>> = (0..9u8).map(|i| [msg, &[i]].concat()).collect();
    let mut sigs: Vec<Vec<u8>> = messages
        .iter()
        .enumerate()
        .map(|(i, m)| keys[i % 2].sign(m).expect("signs").to_bytes().to_vec())
        .collect();
    for (i, s) in sigs.iter_mut().enumerate() {
        if i % 3 == 1 {
            for (j, x) in msg.iter().enumerate() {
                s[(j + 7 * i) % 64] ^= x;
            }
        }
    }
    if msg.len() >= 64 {
        sigs[8] = msg[..64].to_vec();
    }
    let items: Vec<sm2::BatchItem<'_>> = (0..9)
        .map(|i| sm2::BatchItem {
            key: &public[(i / 4) % 2],
            id: sm2::DEFAULT_ID,
            message: &messages[i],
            signature: &sigs[i],
            encoding: sm2::SignatureEncoding::Raw,
        })
        .collect();
    let single: Vec<bool> = items
        .iter()
        .map(|it| {
            Signature::from_bytes(it.signature).is_ok_and(|s| it.key.verify(it.message, &s).is_ok())
        })
        .collect();
    assert_eq!(sm2::verify_batch(&items, 1), single, "SM2 batch on {b}");
}
