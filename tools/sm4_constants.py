#!/usr/bin/env python3
"""Derives every constant shangmi's SM4 backends use from the algebraic form of the SM4 S-box,
and writes crates/shangmi/src/sm4/constants.rs.

    python3 tools/sm4_constants.py            # rewrite the file
    python3 tools/sm4_constants.py --check    # exit 1 if the file differs (the test suite runs this)

The SM4 S-box is affine-equivalent to inversion in GF(2^8) (GB/T 32907-2016's table equals
S(x) = A * inv(A * x + 0xD3) + 0xD3 in GF(2)[x]/(x^8+x^7+x^6+x^5+x^4+x^2+1), A the circulant
matrix whose first row is 0xA7). Every backend evaluates that form:
- GFNI: GF2P8AFFINEQB with A1 then GF2P8AFFINEINVQB with A2, inversion in the AES field;
- AES-NI: AESENCLAST (the AES S-box) between two affine maps done with nibble lookups;
- portable: a bitsliced inversion in the tower field GF(((2^2)^2)^2) between two linear maps.
The S-box table itself is checked by the tests against the standard's encryption examples.
"""
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "crates/shangmi/src/sm4/constants.rs"

SM4_POLY = 0x1F5  # x^8+x^7+x^6+x^5+x^4+x^2+1
AES_POLY = 0x11B  # x^8+x^4+x^3+x+1


def pmul(a, b, poly):
    r = 0
    while b:
        if b & 1:
            r ^= a
        b >>= 1
        a <<= 1
        if a & 0x100:
            a ^= poly
    return r


def pinv(a, poly):
    """a^254: the inverse for a != 0, and 0 for 0."""
    r, base, e = 1, a, 254
    while e:
        if e & 1:
            r = pmul(r, base, poly)
        base = pmul(base, base, poly)
        e >>= 1
    return r if a else 0


# 8x8 GF(2) matrices as lists of 8 row masks: bit i of M(x) = parity(row[i] & x).
def apply(m, x):
    return sum(((bin(m[i] & x).count("1") & 1) << i) for i in range(8))


def from_fn(f):
    """The matrix of a linear map given as a function on bytes."""
    cols = [f(1 << j) for j in range(8)]
    return [sum(((cols[j] >> i) & 1) << j for j in range(8)) for i in range(8)]


def compose(a, b):  # a after b
    return from_fn(lambda x: apply(a, apply(b, x)))


def inverse(m):
    table = {apply(m, x): x for x in range(256)}
    assert len(table) == 256, "singular"
    return from_fn(lambda y: table[y])


def rotl8(v, k):
    k %= 8
    return ((v << k) | (v >> (8 - k))) & 0xFF


A_SM4 = [rotl8(0xA7, i) for i in range(8)]
C_SM4 = 0xD3


def sbox(x):
    return apply(A_SM4, pinv(apply(A_SM4, x) ^ C_SM4, SM4_POLY)) ^ C_SM4


SBOX = [sbox(x) for x in range(256)]
assert SBOX[:4] == [0xD6, 0x90, 0xE9, 0xFE] and len(set(SBOX)) == 256


def isomorphism(mul, one, x_generator_poly):
    """A field isomorphism from GF(2)[x]/SM4_POLY into the field given by `mul`: x -> a root."""
    def power(b, e):
        r = one
        for _ in range(e):
            r = mul(r, b)
        return r
    for beta in range(2, 256):
        acc = 0
        for i in range(9):
            if (x_generator_poly >> i) & 1:
                acc ^= power(beta, i)
        if acc == 0:
            images = [power(beta, i) for i in range(8)]
            return from_fn(lambda v: _combine(images, v))
    raise AssertionError("no root")


def _combine(images, v):
    r = 0
    for i in range(8):
        if (v >> i) & 1:
            r ^= images[i]
    return r


# --- AES field (GFNI, AES-NI) ---------------------------------------------------------------
PHI = isomorphism(lambda a, b: pmul(a, b, AES_POLY), 1, SM4_POLY)
PHI_INV = inverse(PHI)
A1 = compose(PHI, A_SM4)           # S(x) = A2 * inv_aes(A1 * x + C1) + C2
C1 = apply(PHI, C_SM4)
A2 = compose(A_SM4, PHI_INV)
C2 = C_SM4
for x in range(256):
    assert apply(A2, pinv(apply(A1, x) ^ C1, AES_POLY)) ^ C2 == SBOX[x]

# AES S-box = M_AES * inv + 0x63.
M_AES = [rotl8(0xF1, i) for i in range(8)]
AES_SBOX = [apply(M_AES, pinv(x, AES_POLY)) ^ 0x63 for x in range(256)]
assert AES_SBOX[:4] == [0x63, 0x7C, 0x77, 0x7B]
POST = compose(A2, inverse(M_AES))  # S(x) = POST * (aes_sbox(A1 x + C1) + 0x63) + C2
POST_C = apply(POST, 0x63) ^ C2
for x in range(256):
    assert apply(POST, AES_SBOX[apply(A1, x) ^ C1]) ^ POST_C == SBOX[x]


def gfni_qword(m):
    """GF2P8AFFINEQB's matrix operand: byte 7-i of the qword is row i."""
    return sum(m[i] << (8 * (7 - i)) for i in range(8))


def gfni_affine(q, x, b):
    rows = [(q >> (8 * (7 - i))) & 0xFF for i in range(8)]
    return apply(rows, x) ^ b


assert all(gfni_affine(gfni_qword(A1), x, C1) == apply(A1, x) ^ C1 for x in range(256))


def nibble_tables(m, c):
    return [apply(m, n) ^ c for n in range(16)], [apply(m, n << 4) for n in range(16)]


PRE_LO, PRE_HI = nibble_tables(A1, C1)
POST_LO, POST_HI = nibble_tables(POST, POST_C)

# --- the low-latency GFNI round (one block at a time, CBC encryption) ------------------------
# State kept as Y = A1 * X per byte. Byte j of L(B) (B the S-box output word, bytes numbered
# from the least significant) is the XOR over t of N_t * B_{j-t}, with:
N = [
    from_fn(lambda b: (b ^ (b << 2)) & 0xFF),
    from_fn(lambda b: ((b >> 6) ^ (b << 2)) & 0xFF),
    from_fn(lambda b: ((b >> 6) ^ (b << 2)) & 0xFF),
    from_fn(lambda b: ((b >> 6) ^ b) & 0xFF),
]
G = [compose(A1, compose(n, A2)) for n in N]
KAPPA = 0
for n in N:
    KAPPA ^= apply(A1, apply(n, C2))
A1_INV = inverse(A1)


def l_word(b):
    r = lambda v, k: ((v << k) | (v >> (32 - k))) & 0xFFFFFFFF
    return b ^ r(b, 2) ^ r(b, 10) ^ r(b, 18) ^ r(b, 24)


def per_byte(m, w, c=0):
    return sum((apply(m, (w >> (8 * j)) & 0xFF) ^ c) << (8 * j) for j in range(4))


for y in [0, 1, 0xFFFFFFFF, 0x01234567, 0x89ABCDEF, 0xDEADBEEF]:
    inv_bytes = [pinv((y >> (8 * j)) & 0xFF, AES_POLY) for j in range(4)]
    b = sum((apply(A2, v) ^ C2) << (8 * j) for j, v in enumerate(inv_bytes))
    want = per_byte(A1, l_word(b))
    got = 0
    for t in range(4):
        g = sum((apply(G[t], v) ^ (KAPPA if t == 0 else 0)) << (8 * j) for j, v in enumerate(inv_bytes))
        got ^= ((g << (8 * t)) | (g >> (32 - 8 * t))) & 0xFFFFFFFF if t else g
    assert got == want

# --- tower field GF(((2^2)^2)^2) for the bitsliced portable S-box ----------------------------
# GF(4): bits (a1, a0) = a1 W + a0, W^2 = W + 1.  GF(16) = GF(4)[Z]/(Z^2 + Z + W), nibble
# (h, l) = h Z + l.  GF(256) = GF(16)[Y]/(Y^2 + Y + LAMBDA), byte (h, l) = h Y + l.


def g4_mul(a, b):
    a1, a0, b1, b0 = a >> 1, a & 1, b >> 1, b & 1
    t = (a1 ^ a0) & (b1 ^ b0)
    return ((t ^ (a0 & b0)) << 1) | ((a1 & b1) ^ (a0 & b0))


def g16_mul(a, b):
    ah, al, bh, bl = a >> 2, a & 3, b >> 2, b & 3
    t = g4_mul(ah ^ al, bh ^ bl)
    lo = g4_mul(al, bl)
    return ((t ^ lo) << 2) | (g4_mul(g4_mul(ah, bh), 0b10) ^ lo)


def g16_irreducible_lambda():
    for lam in range(1, 16):
        if all(g16_mul(y, y) ^ y ^ lam for y in range(16)):
            return lam
    raise AssertionError


LAMBDA = g16_irreducible_lambda()


def g256_mul(a, b):
    ah, al, bh, bl = a >> 4, a & 15, b >> 4, b & 15
    t = g16_mul(ah ^ al, bh ^ bl)
    lo = g16_mul(al, bl)
    return ((t ^ lo) << 4) | (g16_mul(g16_mul(ah, bh), LAMBDA) ^ lo)


PSI = isomorphism(g256_mul, 1, SM4_POLY)
PSI_INV = inverse(PSI)
T_IN = compose(PSI, A_SM4)  # S(x) = T_OUT * inv_tower(T_IN * x + T_IN_C) + C
T_IN_C = apply(PSI, C_SM4)
T_OUT = compose(A_SM4, PSI_INV)


def g256_inv(a):
    r = 1
    for _ in range(254):
        r = g256_mul(r, a)
    return r if a else 0


for x in range(256):
    assert apply(T_OUT, g256_inv(apply(T_IN, x) ^ T_IN_C)) ^ C_SM4 == SBOX[x]


# --- output ----------------------------------------------------------------------------------
def rows(m):
    return "[" + ", ".join(f"0x{r:02x}" for r in m) + "]"


def bytes16(v):
    return "[" + ", ".join(f"0x{b:02x}" for b in v) + "]"


def render():
    q = gfni_qword
    lines = [
        "//! Generated by `python3 tools/sm4_constants.py`; do not edit. The script derives every",
        "//! value from the algebraic form of the SM4 S-box and checks it on all 256 inputs.",
        "//! Matrices are 8 row masks: bit i of M(x) is the parity of `row[i] & x`.",
        "#![allow(dead_code)]",
        "",
        "/// GF2P8AFFINEQB operand of A1 (S(x) = A2 inv(A1 x + C1) + C2, inversion in the AES field).",
        f"pub(crate) const GFNI_A1: u64 = 0x{q(A1):016x};",
        f"pub(crate) const GFNI_C1: u8 = 0x{C1:02x};",
        "/// GF2P8AFFINEINVQB operand of A2.",
        f"pub(crate) const GFNI_A2: u64 = 0x{q(A2):016x};",
        f"pub(crate) const GFNI_C2: u8 = 0x{C2:02x};",
        "/// A1 inverted: leaves the A1 domain of the low-latency round.",
        f"pub(crate) const GFNI_A1_INV: u64 = 0x{q(A1_INV):016x};",
        "/// A1 N_t A2 for t = 0..4: the low-latency round's S-box, linear layer and A1 in one step.",
        "pub(crate) const GFNI_G: [u64; 4] = [" + ", ".join(f"0x{q(g):016x}" for g in G) + "];",
        "/// Constant of the t = 0 term of the low-latency round.",
        f"pub(crate) const GFNI_KAPPA: u8 = 0x{KAPPA:02x};",
        "/// A1 as rows, for transforming round keys into the A1 domain.",
        f"pub(crate) const A1_ROWS: [u8; 8] = {rows(A1)};",
        "",
        "/// AES-NI path: A1 x + C1 by nibbles (low nibble table carries C1).",
        f"pub(crate) const PRE_LO: [u8; 16] = {bytes16(PRE_LO)};",
        f"pub(crate) const PRE_HI: [u8; 16] = {bytes16(PRE_HI)};",
        "/// AES-NI path: from the AES S-box output to the SM4 S-box output, by nibbles.",
        f"pub(crate) const POST_LO: [u8; 16] = {bytes16(POST_LO)};",
        f"pub(crate) const POST_HI: [u8; 16] = {bytes16(POST_HI)};",
        "",
        "/// Portable path: into the tower field GF(((2^2)^2)^2) (with the S-box's first affine map).",
        f"pub(crate) const TOWER_IN: [u8; 8] = {rows(T_IN)};",
        f"pub(crate) const TOWER_IN_C: u8 = 0x{T_IN_C:02x};",
        "/// Portable path: out of the tower field (with the S-box's second affine map).",
        f"pub(crate) const TOWER_OUT: [u8; 8] = {rows(T_OUT)};",
        f"pub(crate) const TOWER_OUT_C: u8 = 0x{C_SM4:02x};",
        "/// GF(16) element lambda of the GF(256) = GF(16)[Y]/(Y^2 + Y + lambda) step.",
        f"pub(crate) const TOWER_LAMBDA: u8 = 0x{LAMBDA:x};",
        "",
    ]
    return "\n".join(lines)


def main():
    text = render()
    if "--check" in sys.argv:
        current = OUT.read_text() if OUT.exists() else ""
        if current != text:
            print(f"{OUT} is out of date: run python3 tools/sm4_constants.py", file=sys.stderr)
            sys.exit(1)
        return
    if "--sbox" in sys.argv:
        print("".join(f"{v:02x}" for v in SBOX))
        return
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)


if __name__ == "__main__":
    main()
