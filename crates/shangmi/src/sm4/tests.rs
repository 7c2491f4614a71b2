use super::*;

#[test]
fn key_schedule_of_the_standard_example() {
    let key = [
        0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32,
        0x10,
    ];
    let rk = expand_key(&key);
    assert_eq!(
        &rk[..4],
        &[0xf121_86f9, 0x4166_2b61, 0x5a6a_b19a, 0x7ba9_2077]
    );
    assert_eq!(rk[31], 0x9124_a012);
    assert_eq!(CK[1], 0x1c23_2a31);
}

#[cfg(target_arch = "x86_64")]
#[test]
fn the_aes_ni_key_schedule_is_the_portable_one() {
    let Some(t) = crate::cpu::Avx2::get() else {
        return;
    };
    let mut key = [0x5au8; 16];
    for i in 0..2000u32 {
        assert_eq!(
            x86_aesni::expand_key(t, &key),
            expand_key(&key),
            "{key:02x?}"
        );
        assert_eq!(
            x86_aesni::expand_key_a1(t, &key),
            expand_key(&key).map(a1_domain::key_to_a1_domain),
            "{key:02x?}"
        );
        // An xorshift walk through keys, with the all-zero and all-one keys on the way.
        let mut w = u128::from_le_bytes(key);
        w ^= w << 13;
        w ^= w >> 7;
        w ^= w << 17;
        key = match i {
            500 => [0; 16],
            501 => [0xff; 16],
            _ => w.to_le_bytes(),
        };
    }
}
