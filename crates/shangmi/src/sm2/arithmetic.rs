//! SM2's arithmetic: the field modulo p = 2^256 - 2^224 - 2^96 + 2^64 - 1 and its backends,
//! scalars modulo n, points (Jacobian and affine, a = -3 formulas), the scalar
//! multiplications (constant-time fixed- and variable-base, variable-time double-base for
//! verification) with their tables, and inversion by division steps.

pub(crate) mod engine;
pub(crate) mod field;
pub(crate) mod mul;
pub(crate) mod point;
pub(super) mod safegcd;
pub(crate) mod scalar;
/// The instructions the IFMA lanes run: the CPU's, or scalar stand-ins in the unit tests and
/// in the constant-time check's build (valgrind runs no AVX-512).
#[cfg(target_arch = "x86_64")]
mod x86_ifma_arch {
    #[cfg(any(test, shangmi_ctgrind))]
    pub(super) use super::x86_ifma_emulated::*;
    #[cfg(not(any(test, shangmi_ctgrind)))]
    pub(super) use core::arch::x86_64::*;
}
#[cfg(target_arch = "x86_64")]
pub(super) mod x86_ifma_ecdh;
#[cfg(all(target_arch = "x86_64", any(test, shangmi_ctgrind)))]
mod x86_ifma_emulated;
#[cfg(target_arch = "x86_64")]
pub(super) mod x86_ifma_field;
#[cfg(target_arch = "x86_64")]
pub(super) mod x86_ifma_lanes;
#[cfg(target_arch = "x86_64")]
mod x86_ifma_point;
#[cfg(target_arch = "x86_64")]
pub(super) mod x86_ifma_verify;
#[cfg(target_arch = "x86_64")]
pub(super) mod x86_select;
