//! The optimisation barrier behind `ct::barrier`: an empty `asm!` that takes a value and
//! gives it back in the same register. The compiler must assume it could be anything, so a
//! mask computed from it stays arithmetic; the CPU executes nothing.
#![allow(unsafe_code)]

/// `x`, unchanged, opaque to the optimiser.
#[inline(always)]
pub(crate) fn hide(mut x: u64) -> u64 {
    // SAFETY: the assembly is empty: it reads and writes only the one register it is given,
    // and touches no memory, stack or flags.
    unsafe {
        core::arch::asm!(
            "/* {0} */",
            inout(reg) x,
            options(pure, nomem, nostack, preserves_flags)
        );
    }
    x
}

/// Tells the optimiser that the memory at `p` may be read here: stores before this call cannot
/// be dropped as dead.
#[inline(always)]
pub(crate) fn keep_stores(p: *const u8) {
    // SAFETY: the assembly is empty; it only receives an address, and `readonly` lets the
    // compiler assume it reads memory (it reads none).
    unsafe {
        core::arch::asm!(
            "/* {0} */",
            in(reg) p,
            options(nostack, preserves_flags, readonly)
        );
    }
}
