//! SM4's rounds in the A1 domain: the round-key transform every SIMD kernel shares, and the
//! tables that let the AES-NI kernels run there too.
//!
//! The SM4 S-box is `POST(AES_S(PRE(x)))` with `PRE(x) = A x + C1` (A = A1, bytewise) and
//! `POST(u) = M u + C2`. Keeping the state as `Y = A X` (bytewise, as the GFNI kernels do), the
//! S-box input `PRE(X1 ^ X2 ^ X3 ^ rk)` is just `Y1 ^ Y2 ^ Y3 ^ (A rk + C1)`, so the first
//! affine map drops out of every round; the new word is `Y0 ^ A L(POST(u))` for the AESENCLAST
//! output `u`. Since A is bytewise and commutes with byte rotations,
//!
//! `A L(M u) = Ta(u) ^ rotl8(Tb(u)) ^ rotl16(Tb(u)) ^ rotl24(Tc(u))`
//!
//! for three bytewise linear maps (below), each a pair of 16-entry VPSHUFB tables, and the
//! constant `A L(C2, C2, C2, C2)` is one byte repeated (KAPPA), folded into `Ta`. Every table
//! here is computed at compile time from the generated PRE/POST tables; the tests check the
//! identity above on random words against its definition.

// Only the x86 and arm64 AES kernels run in the A1 domain.
#![cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64")),
    allow(dead_code)
)]

use super::constants::{A1_ROWS, GFNI_C1, POST_HI, POST_LO, PRE_HI, PRE_LO};

/// Column j of A1: the output bits that input bit j flips.
const A1_COLUMNS: [u8; 8] = {
    let mut cols = [0u8; 8];
    let mut j = 0;
    while j < 8 {
        let mut i = 0;
        while i < 8 {
            cols[j] |= ((A1_ROWS[i] >> j) & 1) << i;
            i += 1;
        }
        j += 1;
    }
    cols
};

/// A round key moved into the A1 domain: `A1 k + C1` on each byte, in constant time (each key
/// bit selects its column of A1 through a mask, for the four bytes at once; no table is read
/// by key bits). Key setup runs it on every round key, so it is on the path of every TLS key.
pub(crate) fn key_to_a1_domain(k: u32) -> u32 {
    let mut out = u32::from(GFNI_C1) * 0x0101_0101;
    for (j, col) in A1_COLUMNS.iter().enumerate() {
        // Bit j of each byte, spread to the whole byte: 0x00 or 0xFF (no carries between
        // bytes, as each byte is 0 or 1 before the multiplication).
        let mask = ((k >> j) & 0x0101_0101) * 0xff;
        out ^= mask & (u32::from(*col) * 0x0101_0101);
    }
    out
}

const fn pre(x: u8) -> u8 {
    PRE_LO[(x & 15) as usize] ^ PRE_HI[(x >> 4) as usize]
}

const fn post(u: u8) -> u8 {
    POST_LO[(u & 15) as usize] ^ POST_HI[(u >> 4) as usize]
}

/// The linear parts: A x and M u.
const fn a(x: u8) -> u8 {
    pre(x) ^ pre(0)
}

const fn m(u: u8) -> u8 {
    post(u) ^ post(0)
}

/// The bytewise maps: T0(u) = A M u, T1(u) = A ((M u) << 2), T2(u) = A ((M u) >> 6).
const fn t(which: u8, u: u8) -> u8 {
    let mu = m(u);
    match which {
        0 => a(mu),
        1 => a(mu << 2),
        _ => a(mu >> 6),
    }
}

/// `A` on every byte of a word.
const fn a_word(w: u32) -> u32 {
    let b = w.to_le_bytes();
    u32::from_le_bytes([a(b[0]), a(b[1]), a(b[2]), a(b[3])])
}

/// SM4's linear transform L.
const fn l(w: u32) -> u32 {
    w ^ w.rotate_left(2) ^ w.rotate_left(10) ^ w.rotate_left(18) ^ w.rotate_left(24)
}

/// `A L(C2, C2, C2, C2)`: the same byte in every position (checked below at compile time).
const KAPPA: u8 = {
    let c2 = post(0);
    let w = a_word(l(u32::from_le_bytes([c2; 4]))).to_le_bytes();
    assert!(w[0] == w[1] && w[1] == w[2] && w[2] == w[3]);
    w[0]
};

/// A linear bytewise map as low- and high-nibble tables (its value is `lo[x & 15] ^ hi[x >> 4]`),
/// `extra` added to every low entry.
const fn nibble_tables(f: u8, extra: u8) -> ([u8; 16], [u8; 16]) {
    let mut lo = [0u8; 16];
    let mut hi = [0u8; 16];
    let mut i = 0;
    while i < 16 {
        let (l0, h0) = match f {
            // Ta = T0 ^ T1, Tb = T1 ^ T2, Tc = T0 ^ T2.
            0 => (
                t(0, i as u8) ^ t(1, i as u8),
                t(0, (i << 4) as u8) ^ t(1, (i << 4) as u8),
            ),
            1 => (
                t(1, i as u8) ^ t(2, i as u8),
                t(1, (i << 4) as u8) ^ t(2, (i << 4) as u8),
            ),
            2 => (
                t(0, i as u8) ^ t(2, i as u8),
                t(0, (i << 4) as u8) ^ t(2, (i << 4) as u8),
            ),
            // A itself, into the domain.
            3 => (a(i as u8), a((i << 4) as u8)),
            // A^-1, out of it.
            _ => (a_inv(i as u8), a_inv((i << 4) as u8)),
        };
        lo[i] = l0 ^ extra;
        hi[i] = h0;
        i += 1;
    }
    (lo, hi)
}

/// A^-1 by search (A is invertible: the tests check every byte).
const fn a_inv(y: u8) -> u8 {
    let mut x = 0u16;
    while x < 256 {
        if a(x as u8) == y {
            return x as u8;
        }
        x += 1;
    }
    panic!("A is not invertible")
}

/// `Ta` with the constant folded in, `Tb`, `Tc`, `A` and `A^-1`, each as (low, high) tables.
pub(crate) const TA: ([u8; 16], [u8; 16]) = nibble_tables(0, KAPPA);
pub(crate) const TB: ([u8; 16], [u8; 16]) = nibble_tables(1, 0);
pub(crate) const TC: ([u8; 16], [u8; 16]) = nibble_tables(2, 0);
pub(crate) const INTO: ([u8; 16], [u8; 16]) = nibble_tables(3, 0);
pub(crate) const OUT_OF: ([u8; 16], [u8; 16]) = nibble_tables(4, 0);

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(tables: &([u8; 16], [u8; 16]), w: u32) -> u32 {
        u32::from_le_bytes(
            w.to_le_bytes()
                .map(|b| tables.0[usize::from(b & 15)] ^ tables.1[usize::from(b >> 4)]),
        )
    }

    #[test]
    fn a_is_invertible_and_matches_the_key_transform() {
        for x in 0..=255u8 {
            assert_eq!(a_inv(a(x)), x);
            // The round keys enter the domain through the GFNI kernels' transform.
            assert_eq!(key_to_a1_domain(u32::from(x)) as u8, pre(x));
            // Each byte of a word on its own, whatever its neighbours hold.
            for (pos, other) in [(1, 0x5a_u8), (2, 0xff), (3, 0x01)] {
                let w = u32::from_le_bytes(core::array::from_fn(|i| {
                    if i == pos {
                        x
                    } else {
                        other.wrapping_add(i as u8)
                    }
                }));
                let want = u32::from_le_bytes(w.to_le_bytes().map(pre));
                assert_eq!(key_to_a1_domain(w), want);
            }
        }
    }

    #[test]
    fn the_tables_compute_a_l_post() {
        let mut w = 0x1234_5678u32;
        for _ in 0..10_000 {
            w ^= w << 13;
            w ^= w >> 17;
            w ^= w << 5;
            let post_word = u32::from_le_bytes(w.to_le_bytes().map(post));
            let want = a_word(l(post_word));
            let tb = apply(&TB, w);
            let got = apply(&TA, w)
                ^ tb.rotate_left(8)
                ^ tb.rotate_left(16)
                ^ apply(&TC, w).rotate_left(24);
            assert_eq!(got, want, "{w:08x}");
            assert_eq!(apply(&OUT_OF, apply(&INTO, w)), w);
            assert_eq!(apply(&INTO, w), a_word(w));
        }
    }
}
