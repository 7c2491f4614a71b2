//! Deterministic benchmark inputs (a xorshift stream: not all-zero, same on every run).

pub fn bytes(n: usize) -> Vec<u8> {
    bytes_seeded(n, 1)
}

pub fn bytes_seeded(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}
