//! The SM4 S-box as a Boolean circuit over bit planes: no table, no secret-dependent branch or
//! address.
//!
//! A plane holds one bit position of many S-box inputs (bit `i` of byte `k` of the inputs is
//! bit `k` of plane `i`, or in the word kernel, bit `8k` of plane `i`), so each AND or XOR below
//! computes that gate for all of them at once. The S-box is `T_OUT * inv(T_IN * x + c) + d`
//! with the inversion done in the tower field GF(((2^2)^2)^2), where it costs 36 ANDs; the
//! linear maps come from `tools/sm4_constants.py` (`constants.rs`).

use super::constants::{TOWER_IN, TOWER_IN_C, TOWER_LAMBDA, TOWER_OUT, TOWER_OUT_C};

/// One bit position of many bytes.
pub(crate) type Plane = u64;

/// What the circuit needs of a plane: bitwise AND, XOR and NOT, and zero. `u64` natively; a
/// 128-bit vector in WebAssembly with SIMD.
pub(crate) trait Bits:
    Copy
    + core::ops::BitAnd<Output = Self>
    + core::ops::BitXor<Output = Self>
    + core::ops::BitXorAssign
    + core::ops::Not<Output = Self>
{
    const ZERO: Self;
    /// The plane with every bit equal to `bit`, 0 or 1 (a key bit; constant time).
    fn splat_bit(bit: u64) -> Self;
}

impl Bits for u64 {
    const ZERO: u64 = 0;
    #[inline(always)]
    fn splat_bit(bit: u64) -> u64 {
        crate::ct::mask(bit)
    }
}

/// GF(4) element: [bit0, bit1] of a1 W + a0, W^2 = W + 1.
type G4<P> = [P; 2];
/// GF(16) element: [low GF(4), high GF(4)] of h Z + l, Z^2 = Z + W.
type G16<P> = [G4<P>; 2];

#[inline(always)]
fn x4<P: Bits>(a: G4<P>, b: G4<P>) -> G4<P> {
    [a[0] ^ b[0], a[1] ^ b[1]]
}

#[inline(always)]
fn mul4<P: Bits>(a: G4<P>, b: G4<P>) -> G4<P> {
    let t = (a[0] ^ a[1]) & (b[0] ^ b[1]);
    let lo = a[0] & b[0];
    [(a[1] & b[1]) ^ lo, t ^ lo]
}

/// Squaring (and, for non-zero elements, inversion) in GF(4): linear.
#[inline(always)]
fn sq4<P: Bits>(a: G4<P>) -> G4<P> {
    [a[0] ^ a[1], a[1]]
}

/// Multiplication by W.
#[inline(always)]
fn mul4_w<P: Bits>(a: G4<P>) -> G4<P> {
    [a[1], a[0] ^ a[1]]
}

#[inline(always)]
fn x16<P: Bits>(a: G16<P>, b: G16<P>) -> G16<P> {
    [x4(a[0], b[0]), x4(a[1], b[1])]
}

#[inline(always)]
fn mul16<P: Bits>(a: G16<P>, b: G16<P>) -> G16<P> {
    let t = mul4(x4(a[0], a[1]), x4(b[0], b[1]));
    let lo = mul4(a[0], b[0]);
    [x4(mul4_w(mul4(a[1], b[1])), lo), x4(t, lo)]
}

#[inline(always)]
fn sq16<P: Bits>(a: G16<P>) -> G16<P> {
    let h = sq4(a[1]);
    [x4(mul4_w(h), sq4(a[0])), h]
}

/// Multiplication by the constant lambda; the ANDs with all-zero or all-one planes fold away.
#[inline(always)]
fn mul16_lambda<P: Bits>(a: G16<P>) -> G16<P> {
    let bit = |i: u32| -> P {
        if TOWER_LAMBDA >> i & 1 == 1 {
            !P::ZERO
        } else {
            P::ZERO
        }
    };
    mul16(a, [[bit(0), bit(1)], [bit(2), bit(3)]])
}

/// For h Z + l: the inverse is (h D^-1) Z + (h + l) D^-1 with D = h^2 W + h l + l^2.
#[inline(always)]
fn inv16<P: Bits>(a: G16<P>) -> G16<P> {
    let [l, h] = a;
    let d = x4(x4(mul4_w(sq4(h)), mul4(h, l)), sq4(l));
    let d_inv = sq4(d);
    [mul4(x4(h, l), d_inv), mul4(h, d_inv)]
}

/// The same formula one level up, with Y^2 = Y + lambda.
#[inline(always)]
fn inv256<P: Bits>(a: [G16<P>; 2]) -> [G16<P>; 2] {
    let [l, h] = a;
    let d = x16(x16(mul16_lambda(sq16(h)), mul16(h, l)), sq16(l));
    let d_inv = inv16(d);
    [mul16(x16(h, l), d_inv), mul16(h, d_inv)]
}

/// `m * x + c` on planes; `ones` is the plane with a 1 in every used bit position.
#[inline(always)]
fn affine<P: Bits>(m: &[u8; 8], c: u8, x: &[P; 8], ones: P) -> [P; 8] {
    let mut out = [P::ZERO; 8];
    for (i, o) in out.iter_mut().enumerate() {
        let mut acc = if c >> i & 1 == 1 { ones } else { P::ZERO };
        for (j, xj) in x.iter().enumerate() {
            if m[i] >> j & 1 == 1 {
                acc ^= *xj;
            }
        }
        *o = acc;
    }
    out
}

/// The SM4 S-box on every byte the planes hold. `ones` marks the bit positions in use.
#[inline(always)]
pub(crate) fn sbox<P: Bits>(x: [P; 8], ones: P) -> [P; 8] {
    let t = affine(&TOWER_IN, TOWER_IN_C, &x, ones);
    let v = inv256([[[t[0], t[1]], [t[2], t[3]]], [[t[4], t[5]], [t[6], t[7]]]]);
    let [[[v0, v1], [v2, v3]], [[v4, v5], [v6, v7]]] = v;
    affine(
        &TOWER_OUT,
        TOWER_OUT_C,
        &[v0, v1, v2, v3, v4, v5, v6, v7],
        ones,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Evaluates the circuit on all 256 bytes at once (four planes of 64 inputs each) and
    /// compares with the algebraic definition computed independently here.
    #[test]
    fn circuit_equals_the_algebraic_sbox() {
        fn pmul(mut a: u16, mut b: u16) -> u16 {
            let mut r = 0;
            while b != 0 {
                if b & 1 == 1 {
                    r ^= a;
                }
                b >>= 1;
                a <<= 1;
                if a & 0x100 != 0 {
                    a ^= 0x1f5;
                }
            }
            r
        }
        let inv = |a: u16| (0..256).find(|&b| pmul(a, b) == 1).unwrap_or(0);
        let circ = |x: u16| {
            (0..8).fold(0, |acc, i| {
                acc | (((0xa7u16 << i | 0xa7 >> (8 - i)) & x & 0xff).count_ones() as u16 & 1) << i
            })
        };
        let want: Vec<u8> = (0..256)
            .map(|x| (circ(inv(circ(x) ^ 0xd3)) ^ 0xd3) as u8)
            .collect();
        assert_eq!(&want[..4], &[0xd6, 0x90, 0xe9, 0xfe]);
        for chunk in 0..4 {
            let planes: [Plane; 8] = core::array::from_fn(|i| {
                (0..64).fold(0, |acc, k| {
                    acc | (((chunk * 64 + k) >> i & 1) as Plane) << k
                })
            });
            let out = sbox(planes, !0);
            for k in 0..64 {
                let got = (0..8).fold(0u8, |acc, i| acc | (((out[i] >> k) & 1) as u8) << i);
                assert_eq!(got, want[chunk * 64 + k], "input {}", chunk * 64 + k);
            }
        }
    }
}
