//! Batch verification: each item's verdict is what verifying it alone says, whatever the
//! mix (valid, tampered, wrong key, wrong ID, malformed encodings, r + s = n, keys used many
//! times) and whatever the thread count.

mod common;
use common::random_key;
use rand::SeedableRng;
use rand::rngs::StdRng;
use shangmi::sm2::{BatchItem, DEFAULT_ID, Signature, SignatureEncoding, SigningKey, verify_batch};

#[test]
fn every_verdict_is_the_single_verification_one() {
    let mut rng = StdRng::seed_from_u64(77);
    let keys: Vec<SigningKey> = (0..5).map(|_| random_key(&mut rng)).collect();
    let n_minus_1 = hex_32("fffffffeffffffffffffffffffffffff7203df6b21c6052b53bbf40939d54122");
    let mut one = [0u8; 32];
    one[31] = 1;
    // r = 1, s = n - 1: t = r + s = n = 0, which verification must refuse.
    let zero_t = Signature::from_scalars(&one, &n_minus_1).unwrap();
    let messages: Vec<Vec<u8>> = (0..40).map(|i| vec![i as u8; i * 3]).collect();
    let mut sigs: Vec<(Vec<u8>, SignatureEncoding)> = Vec::new();
    let mut want = Vec::new();
    let mut who = Vec::new();
    let ids: [&[u8]; 2] = [DEFAULT_ID, b"alice@example"];
    for (i, m) in messages.iter().enumerate() {
        // Keys repeat (item i uses key i % 5); IDs alternate.
        let k = &keys[i % 5];
        let id = ids[i % 2];
        let sig = k.sign_with_id(id, m).unwrap();
        let (bytes, enc, ok) = match i % 8 {
            0 => (sig.to_der(), SignatureEncoding::Der, true),
            1 => (sig.to_bytes().to_vec(), SignatureEncoding::Raw, true),
            2 => {
                let mut b = sig.to_bytes();
                b[63] ^= 1;
                (b.to_vec(), SignatureEncoding::Raw, false)
            }
            3 => (sig.to_der(), SignatureEncoding::Raw, false), // DER read as raw
            4 => (sig.to_bytes().to_vec(), SignatureEncoding::Der, false), // raw read as DER
            5 => (zero_t.to_der(), SignatureEncoding::Der, false),
            6 => (vec![0x30, 0x00], SignatureEncoding::Der, false),
            _ => (sig.to_der(), SignatureEncoding::Der, true),
        };
        sigs.push((bytes, enc));
        want.push(ok);
        // Items 10..15 are checked under the wrong key, 20..25 under the wrong ID.
        let (kk, idd) = match i {
            10..15 => (&keys[(i + 1) % 5], id),
            20..25 => (k, ids[(i + 1) % 2]),
            _ => (k, id),
        };
        if (10..15).contains(&i) || (20..25).contains(&i) {
            *want.last_mut().unwrap() = false;
        }
        who.push((kk.verifying_key(), idd));
    }
    let items: Vec<BatchItem<'_>> = (0..messages.len())
        .map(|i| BatchItem {
            key: who[i].0,
            id: who[i].1,
            message: &messages[i],
            signature: &sigs[i].0,
            encoding: sigs[i].1,
        })
        .collect();
    // The single verifications agree with the expectations, and the batch with both.
    for (i, item) in items.iter().enumerate() {
        let sig = match item.encoding {
            SignatureEncoding::Der => Signature::from_der(item.signature),
            SignatureEncoding::Raw => Signature::from_bytes(item.signature),
        };
        let single = sig.is_ok_and(|s| item.key.verify_with_id(item.id, item.message, &s).is_ok());
        assert_eq!(single, want[i], "item {i}");
    }
    assert!(want.iter().any(|&w| w) && want.iter().any(|&w| !w));
    for threads in [1, 2, 3, 0, 64] {
        assert_eq!(verify_batch(&items, threads), want, "{threads} threads");
    }
    assert_eq!(verify_batch(&[], 0), Vec::<bool>::new());
    assert_eq!(verify_batch(&items[..1], 4), want[..1]);
}

fn hex_32(s: &str) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap();
    }
    out
}
