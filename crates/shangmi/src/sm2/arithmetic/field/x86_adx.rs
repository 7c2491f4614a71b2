//! Montgomery multiplication mod p in one `asm!` block for the AVX2 tier: the 4 x 4-limb
//! product with MULX and two independent carry chains (ADCX on CF, ADOX on OF), then the four
//! shift-and-subtract reduction steps of `soft.rs` and the final conditional subtraction with
//! CMOV. Identical results to the portable code (the tests compare them); no branch and no
//! memory access: operands and results are registers.
#![allow(unsafe_code)]

use core::arch::asm;

use super::Arith;
use crate::cpu::{Adx as AdxToken, Avx2, Avx512};

/// The AVX2-tier backend; holding it proves the CPU has BMI2, ADX and AVX2.
/// The MULX/ADCX/ADOX field with the AVX2 table scan.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Adx(pub(crate) AdxToken, pub(crate) Avx2);

/// The AVX-512-tier backend: the same arithmetic, table reads in ZMM registers.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Adx512(pub(crate) Avx512);

impl Arith for Adx {
    #[inline(always)]
    fn mul(self, a: &[u64; 4], b: &[u64; 4]) -> [u64; 4] {
        mont_mul(self.0, a, b)
    }

    #[inline(always)]
    fn sqr(self, a: &[u64; 4]) -> [u64; 4] {
        mont_sqr(self.0, a)
    }

    #[inline(always)]
    fn add(self, a: &[u64; 4], b: &[u64; 4]) -> [u64; 4] {
        add_p(self.0, a, b)
    }

    #[inline(always)]
    fn sub(self, a: &[u64; 4], b: &[u64; 4]) -> [u64; 4] {
        sub_p(self.0, a, b)
    }

    #[inline(always)]
    fn select<const N: usize>(self, table: &[[u64; 8]; N], idx: u32) -> [u64; 8] {
        crate::sm2::arithmetic::x86_select::select_avx2(self.1, table, idx)
    }

    #[inline(always)]
    fn select_part<const N: usize>(
        self,
        table: &[[u64; 8]; N],
        idx: u32,
        first: usize,
        count: usize,
        acc: &mut [u64; 8],
    ) {
        crate::sm2::arithmetic::x86_select::select_part_avx2(self.1, table, idx, first, count, acc)
    }
}

impl Arith for Adx512 {
    #[inline(always)]
    fn ifma(self) -> Option<crate::cpu::Avx512Ifma> {
        self.0.with_ifma()
    }

    #[inline(always)]
    fn mul(self, a: &[u64; 4], b: &[u64; 4]) -> [u64; 4] {
        mont_mul(self.0.adx(), a, b)
    }

    #[inline(always)]
    fn sqr(self, a: &[u64; 4]) -> [u64; 4] {
        mont_sqr(self.0.adx(), a)
    }

    #[inline(always)]
    fn add(self, a: &[u64; 4], b: &[u64; 4]) -> [u64; 4] {
        add_p(self.0.adx(), a, b)
    }

    #[inline(always)]
    fn sub(self, a: &[u64; 4], b: &[u64; 4]) -> [u64; 4] {
        sub_p(self.0.adx(), a, b)
    }

    #[inline(always)]
    fn select<const N: usize>(self, table: &[[u64; 8]; N], idx: u32) -> [u64; 8] {
        crate::sm2::arithmetic::x86_select::select_avx512(self.0, table, idx)
    }

    #[inline(always)]
    fn select_part<const N: usize>(
        self,
        table: &[[u64; 8]; N],
        idx: u32,
        first: usize,
        count: usize,
        acc: &mut [u64; 8],
    ) {
        crate::sm2::arithmetic::x86_select::select_part_avx512(
            self.0, table, idx, first, count, acc,
        )
    }
}

/// One Montgomery row of the product, t_i..t_{i+4} += a * b_i (t_{i+4} starts empty), for
/// rows 1 to 3: b_i from the stack slot `$b`, a_0 in {a}, a_1..a_3 from the stack (see
/// `mont_mul` for the layout).
macro_rules! row {
    ($b:literal, $t0:literal, $t1:literal, $t2:literal, $t3:literal, $t4:literal) => {
        concat!(
            "mov rdx, [rsp + ",
            $b,
            "]\n",
            "xor {lo:e}, {lo:e}\n",
            "mulx {hi}, {lo}, {a}\n",
            "adcx {",
            $t0,
            "}, {lo}\n",
            "adox {",
            $t1,
            "}, {hi}\n",
            "mulx {hi}, {lo}, [rsp + 16]\n",
            "adcx {",
            $t1,
            "}, {lo}\n",
            "adox {",
            $t2,
            "}, {hi}\n",
            "mulx {hi}, {lo}, [rsp + 8]\n",
            "adcx {",
            $t2,
            "}, {lo}\n",
            "adox {",
            $t3,
            "}, {hi}\n",
            "mulx {",
            $t4,
            "}, {lo}, [rsp]\n",
            "adcx {",
            $t3,
            "}, {lo}\n",
            "mov {lo:e}, 0\n",
            "adox {",
            $t4,
            "}, {lo}\n",
            "adcx {",
            $t4,
            "}, {lo}\n",
        )
    };
}

/// One reduction step on the window [w0, w1, w2, w3] (m = w0), leaving [w1, w2, w3, n]:
/// subtract [lo, hi, lo, hi] (the halves of m 2^32, m 2^160) from [w1, w2, w3, m], add m.
macro_rules! step {
    ($w0:literal, $w1:literal, $w2:literal, $w3:literal, $n:literal) => {
        concat!(
            "mov {lo}, {",
            $w0,
            "}\n",
            "shl {lo}, 32\n",
            "mov {hi}, {",
            $w0,
            "}\n",
            "shr {hi}, 32\n",
            "mov {",
            $n,
            "}, {",
            $w0,
            "}\n",
            "sub {",
            $w1,
            "}, {lo}\n",
            "sbb {",
            $w2,
            "}, {hi}\n",
            "sbb {",
            $w3,
            "}, {lo}\n",
            "sbb {",
            $n,
            "}, {hi}\n",
            "add {",
            $w1,
            "}, {",
            $w0,
            "}\n",
            "adc {",
            $w2,
            "}, 0\n",
            "adc {",
            $w3,
            "}, 0\n",
            "adc {",
            $n,
            "}, 0\n",
        )
    };
}

/// The four reduction steps on t0..t3 (new limbs in a, t0, t1, t2), the high half t4..t7
/// added, and the final conditional subtraction: the result is in a, t0, t1, t2.
macro_rules! reduce_tail {
    () => {
        concat!(
            // Four reduction steps on t0..t3; the new limbs land in a, t0, t1, t2.
            step!("t0", "t1", "t2", "t3", "a"),
            step!("t1", "t2", "t3", "a", "t0"),
            step!("t2", "t3", "a", "t0", "t1"),
            step!("t3", "a", "t0", "t1", "t2"),
            // Add the high half; t3 becomes the 257th bit.
            "add {a}, {t4}\n",
            "adc {t0}, {t5}\n",
            "adc {t1}, {t6}\n",
            "adc {t2}, {t7}\n",
            "mov {t3:e}, 0\n",
            "adc {t3}, 0\n",
            // r + (2^256 - p) overflows exactly when r >= p; then keep the wrapped sum.
            "mov {lo:e}, 0xffffffff\n",
            "mov {hi}, 0x100000000\n",
            "mov {t4}, {a}\n",
            "mov {t5}, {t0}\n",
            "mov {t6}, {t1}\n",
            "mov {t7}, {t2}\n",
            "add {t4}, 1\n",
            "adc {t5}, {lo}\n",
            "adc {t6}, 0\n",
            "adc {t7}, {hi}\n",
            "adc {t3}, 0\n",
            "test {t3}, {t3}\n",
            "cmovnz {a}, {t4}\n",
            "cmovnz {t0}, {t5}\n",
            "cmovnz {t1}, {t6}\n",
            "cmovnz {t2}, {t7}\n",
        )
    };
}

/// a b R^-1 mod p for a, b < p. Operands and results are registers, so that a formula's
/// products pass from one multiplication to the next without a trip through memory (a store
/// and a reload around each multiplication cost a fifth of it). Twelve registers, which every
/// build has, frame pointers or not: the inputs arrive in the registers that become t0..t2
/// (b_1..b_3) and t5..t7 (a_1..a_3), rdx (b_0) and {a} (a_0); they are pushed at once, row 0
/// runs on the registers, and rows 1 to 3 read b_i and a_1..a_3 back from the stack, long
/// after the pushes. Stack: [rsp] a_3, +8 a_2, +16 a_1, +24 b_3, +32 b_2, +40 b_1.
#[inline(always)]
fn mont_mul(_token: AdxToken, a: &[u64; 4], b: &[u64; 4]) -> [u64; 4] {
    let (r0, r1, r2, r3): (u64, u64, u64, u64);
    // SAFETY: the token proves BMI2 (MULX) and ADX (ADCX/ADOX); the asm touches its register
    // operands, the flags and 48 bytes of stack of its own, released before it ends.
    unsafe {
        asm!(
            "push {t0}",
            "push {t1}",
            "push {t2}",
            "push {t5}",
            "push {t6}",
            "push {t7}",
            // Row 0: t0..t4 = a * b0.
            "mulx {t1}, {t0}, {a}",
            "mulx {t2}, {lo}, {t5}",
            "add {t1}, {lo}",
            "mulx {t3}, {lo}, {t6}",
            "adc {t2}, {lo}",
            "mulx {t4}, {lo}, {t7}",
            "adc {t3}, {lo}",
            "adc {t4}, 0",
            row!("40", "t1", "t2", "t3", "t4", "t5"),
            row!("32", "t2", "t3", "t4", "t5", "t6"),
            row!("24", "t3", "t4", "t5", "t6", "t7"),
            "lea rsp, [rsp + 48]",
            reduce_tail!(),
            a = inout(reg) a[0] => r0,
            t0 = inout(reg) b[1] => r1,
            t1 = inout(reg) b[2] => r2,
            t2 = inout(reg) b[3] => r3,
            t3 = out(reg) _,
            t4 = out(reg) _,
            t5 = inout(reg) a[1] => _,
            t6 = inout(reg) a[2] => _,
            t7 = inout(reg) a[3] => _,
            lo = out(reg) _,
            hi = out(reg) _,
            inout("rdx") b[0] => _,
            options(pure, nomem),
        );
    }
    [r0, r1, r2, r3]
}

/// a^2 R^-1 mod p for a < p: the six cross products once, doubled, plus the four squares
/// (10 MULX instead of 16), then the same reduction. Twelve registers as in `mont_mul`: a_1..a_3
/// arrive in t5..t7, each read there until its register is first written, and are pushed for
/// the squares at the end. Stack: [rsp] a_3, +8 a_2, +16 a_1.
#[inline(always)]
fn mont_sqr(_token: AdxToken, a: &[u64; 4]) -> [u64; 4] {
    let (r0, r1, r2, r3): (u64, u64, u64, u64);
    // SAFETY: as for `mont_mul`: BMI2 and ADX proven by the token; registers, flags and 24
    // bytes of stack of its own.
    unsafe {
        asm!(
            "push {t5}",
            "push {t6}",
            "push {t7}",
            // Cross products a_i a_j, i < j, into t1..t6.
            "mov rdx, {a}",
            "mulx {t2}, {t1}, {t5}",
            "mulx {t3}, {lo}, {t6}",
            "add {t2}, {lo}",
            "mulx {t4}, {lo}, {t7}",
            "adc {t3}, {lo}",
            "adc {t4}, 0",
            "mov rdx, {t5}",
            "xor {t5:e}, {t5:e}",
            "mulx {hi}, {lo}, {t6}",
            "adcx {t3}, {lo}",
            "adox {t4}, {hi}",
            "mulx {t5}, {lo}, {t7}",
            "adcx {t4}, {lo}",
            "mov {lo:e}, 0",
            "adox {t5}, {lo}",
            "adcx {t5}, {lo}",
            "mov rdx, {t6}",
            "mulx {t6}, {lo}, {t7}",
            "add {t5}, {lo}",
            "adc {t6}, 0",
            // Double them; t7 takes the carry.
            "xor {t7:e}, {t7:e}",
            "add {t1}, {t1}",
            "adc {t2}, {t2}",
            "adc {t3}, {t3}",
            "adc {t4}, {t4}",
            "adc {t5}, {t5}",
            "adc {t6}, {t6}",
            "adc {t7}, 0",
            // Add the squares a_i^2 at limbs 2i, 2i + 1 (MULX leaves the flags alone).
            "mov rdx, {a}",
            "mulx {hi}, {t0}, rdx",
            "add {t1}, {hi}",
            "mov rdx, [rsp + 16]",
            "mulx {hi}, {lo}, rdx",
            "adc {t2}, {lo}",
            "adc {t3}, {hi}",
            "mov rdx, [rsp + 8]",
            "mulx {hi}, {lo}, rdx",
            "adc {t4}, {lo}",
            "adc {t5}, {hi}",
            "mov rdx, [rsp]",
            "mulx {hi}, {lo}, rdx",
            "adc {t6}, {lo}",
            "adc {t7}, {hi}",
            "lea rsp, [rsp + 24]",
            reduce_tail!(),
            a = inout(reg) a[0] => r0,
            t0 = out(reg) r1,
            t1 = out(reg) r2,
            t2 = out(reg) r3,
            t3 = out(reg) _,
            t4 = out(reg) _,
            t5 = inout(reg) a[1] => _,
            t6 = inout(reg) a[2] => _,
            t7 = inout(reg) a[3] => _,
            lo = out(reg) _,
            hi = out(reg) _,
            out("rdx") _,
            options(pure, nomem),
        );
    }
    [r0, r1, r2, r3]
}

/// The limbs of p that are not all ones (and so not a sign-extended immediate).
const P1: u64 = 0xffff_ffff_0000_0000;
const P3: u64 = 0xffff_fffe_ffff_ffff;

/// a + b mod p for a, b < p: the sum, then the sum minus p, kept unless that borrowed with
/// no carry out of the sum. (LLVM turns the portable version's constant subtraction into
/// compare-and-set sequences three times as long.)
#[inline(always)]
fn add_p(_token: AdxToken, a: &[u64; 4], b: &[u64; 4]) -> [u64; 4] {
    let (mut s0, mut s1, mut s2, mut s3) = (a[0], a[1], a[2], a[3]);
    let (r0, r1, r2, r3): (u64, u64, u64, u64);
    // SAFETY: register arithmetic only, on any x86-64 (the token only selects the backend).
    // Eleven registers: b's limbs are dead after the sum, so their registers take the result.
    unsafe {
        asm!(
            "add {s0}, {r0}",
            "adc {s1}, {r1}",
            "adc {s2}, {r2}",
            "adc {s3}, {r3}",
            "sbb {c}, {c}",
            "mov {r0}, {s0}",
            "mov {r1}, {s1}",
            "mov {r2}, {s2}",
            "mov {r3}, {s3}",
            "sub {r0}, -1",
            "sbb {r1}, {p1}",
            "sbb {r2}, -1",
            "sbb {r3}, {p3}",
            // Borrow here only when the sum had no carry and was below p: keep the sum.
            "sbb {c}, 0",
            "cmovc {r0}, {s0}",
            "cmovc {r1}, {s1}",
            "cmovc {r2}, {s2}",
            "cmovc {r3}, {s3}",
            s0 = inout(reg) s0,
            s1 = inout(reg) s1,
            s2 = inout(reg) s2,
            s3 = inout(reg) s3,
            r0 = inout(reg) b[0] => r0,
            r1 = inout(reg) b[1] => r1,
            r2 = inout(reg) b[2] => r2,
            r3 = inout(reg) b[3] => r3,
            p1 = in(reg) P1,
            p3 = in(reg) P3,
            c = out(reg) _,
            options(pure, nomem, nostack),
        );
    }
    let _ = (s0, s1, s2, s3);
    [r0, r1, r2, r3]
}

/// a - b mod p for a, b < p: the difference, plus p masked by the borrow.
#[inline(always)]
fn sub_p(_token: AdxToken, a: &[u64; 4], b: &[u64; 4]) -> [u64; 4] {
    let (mut d0, mut d1, mut d2, mut d3) = (a[0], a[1], a[2], a[3]);
    let (mut m1, mut m3) = (P1, P3);
    // SAFETY: register arithmetic only.
    unsafe {
        asm!(
            "sub {d0}, {b0}",
            "sbb {d1}, {b1}",
            "sbb {d2}, {b2}",
            "sbb {d3}, {b3}",
            "sbb {m}, {m}",
            "and {m1}, {m}",
            "and {m3}, {m}",
            "add {d0}, {m}",
            "adc {d1}, {m1}",
            "adc {d2}, {m}",
            "adc {d3}, {m3}",
            d0 = inout(reg) d0,
            d1 = inout(reg) d1,
            d2 = inout(reg) d2,
            d3 = inout(reg) d3,
            b0 = in(reg) b[0],
            b1 = in(reg) b[1],
            b2 = in(reg) b[2],
            b3 = in(reg) b[3],
            m1 = inout(reg) m1,
            m3 = inout(reg) m3,
            m = out(reg) _,
            options(pure, nomem, nostack),
        );
    }
    let _ = (m1, m3);
    [d0, d1, d2, d3]
}
