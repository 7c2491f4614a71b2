//! CBC records checked in constant time (the Lucky13 lesson), tested statistically on this
//! CPU as crates/shangmi/tests/timing.rs tests the algorithms: a record with a bad MAC takes
//! the same time whatever its padding length, and a bad padding the same time as a bad MAC.
//! Ignored in an ordinary `cargo test`; run alone by scripts/ct-timing.sh.

#[path = "../../shangmi/tests/ttest/mod.rs"]
mod ttest;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shangmi::sm3::HmacSm3;
use shangmi::sm4::Sm4;
use shangmi::sm4::modes::cbc;
use ttest::{budget, check, measure};

const MAC_KEY: [u8; 32] = [7; 32];
const ENC_KEY: [u8; 16] = [9; 16];
/// The CBC body's length: 20 blocks, room for any padding up to 255 and a 32-byte MAC.
const BODY: usize = 320;

/// A record body of `BODY` bytes with `pad` bytes of padding; the MAC is right unless
/// `bad_mac`; the padding is right unless `bad_pad`.
fn record(pad: usize, bad_mac: bool, bad_pad: bool, rng: &mut StdRng) -> Vec<u8> {
    let content_len = BODY - 1 - 32 - pad;
    let mut content = vec![0u8; content_len];
    rng.fill(&mut content[..]);
    let mut h = HmacSm3::new(&MAC_KEY);
    let mut header = [0u8; 13];
    header[8..11].copy_from_slice(&[23, 1, 1]);
    header[11..].copy_from_slice(&(content_len as u16).to_be_bytes());
    h.update(&header);
    h.update(&content);
    let mut mac = h.finalize();
    if bad_mac {
        mac[rng.random_range(0..32)] ^= 1;
    }
    let mut body = content;
    body.extend_from_slice(&mac);
    body.extend(std::iter::repeat_n(pad as u8, pad + 1));
    if bad_pad {
        let n = body.len();
        body[n - 1 - rng.random_range(1..=pad)] ^= 0x40;
    }
    let iv: [u8; 16] = rng.random();
    cbc::Encryptor::new(Sm4::new(&ENC_KEY), &iv)
        .encrypt_blocks(&mut body)
        .unwrap();
    let mut f = iv.to_vec();
    f.extend_from_slice(&body);
    f
}

#[test]
#[ignore = "statistical; run alone by scripts/ct-timing.sh"]
fn cbc_records_fail_in_the_same_time() {
    // The checks are right before they are timed.
    let mut rng = StdRng::seed_from_u64(9);
    assert!(shangmi_tlcp::testing::cbc_open(
        &MAC_KEY,
        &ENC_KEY,
        &record(15, false, false, &mut rng)
    ));
    assert!(!shangmi_tlcp::testing::cbc_open(
        &MAC_KEY,
        &ENC_KEY,
        &record(15, true, false, &mut rng)
    ));
    assert!(!shangmi_tlcp::testing::cbc_open(
        &MAC_KEY,
        &ENC_KEY,
        &record(15, false, true, &mut rng)
    ));
    // A bad MAC behind a short padding and behind a long one (Lucky13's distinguisher: the
    // MAC's hash covers 240 more bytes with the short padding).
    check("tlcp cbc bad MAC, padding 0 vs 239", |rng| {
        measure(
            rng,
            budget(),
            1,
            |class, rng| record(if class { 239 } else { 0 }, true, false, rng),
            |f| {
                std::hint::black_box(shangmi_tlcp::testing::cbc_open(&MAC_KEY, &ENC_KEY, f));
            },
        )
    });
    // A bad padding against a bad MAC, same padding length.
    check("tlcp cbc bad padding vs bad MAC", |rng| {
        measure(
            rng,
            budget(),
            1,
            |class, rng| record(47, !class, class, rng),
            |f| {
                std::hint::black_box(shangmi_tlcp::testing::cbc_open(&MAC_KEY, &ENC_KEY, f));
            },
        )
    });
}
