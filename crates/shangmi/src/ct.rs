//! Marking what is secret and what has become public, for the constant-time check.
//!
//! `scripts/ct-valgrind.sh` builds the crate with `--cfg shangmi_ctgrind` and runs
//! `examples/ctgrind.rs` under valgrind's memcheck with every secret input marked undefined:
//! memcheck then reports each branch and each memory address computed from a secret. A few
//! decisions are public by design though computed from secrets (a key is invalid, a nonce
//! must be retried, a tag did not match, the bytes of a signature); the code passes those
//! through [`public`] or [`public_choice`], which tell valgrind so in that build and are the
//! identity otherwise.

use subtle::Choice;

#[cfg(shangmi_ctgrind)]
mod valgrind_asm;

#[cfg(shangmi_ctgrind)]
pub mod probes;

/// `x`, which the caller publishes anyway, declared public.
#[inline(always)]
pub(crate) fn public<T: Copy>(x: T) -> T {
    #[cfg(shangmi_ctgrind)]
    {
        let mut x = x;
        valgrind_asm::mark_defined(&mut x);
        x
    }
    #[cfg(not(shangmi_ctgrind))]
    x
}

/// Bytes the caller publishes anyway, declared public in place.
#[inline(always)]
#[cfg_attr(not(shangmi_ctgrind), allow(dead_code))]
pub(crate) fn public_slice(x: &mut [u8]) {
    #[cfg(shangmi_ctgrind)]
    valgrind_asm::mark_defined(x);
    #[cfg(not(shangmi_ctgrind))]
    let _ = x;
}

/// A decision made public: `bool::from(c)`.
#[inline(always)]
pub(crate) fn public_choice(c: Choice) -> bool {
    public(c.unwrap_u8()) != 0
}

/// Declares `x` secret: valgrind reports any branch or address that depends on it.
#[cfg(shangmi_ctgrind)]
pub(crate) fn secret<T: ?Sized>(x: &mut T) {
    valgrind_asm::mark_undefined(x);
}
