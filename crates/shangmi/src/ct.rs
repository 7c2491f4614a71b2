//! Marking what is secret and what has become public, for the constant-time check.
//!
//! `scripts/ct-valgrind.sh` builds the crate with `--cfg shangmi_ctgrind` and runs
//! `examples/ctgrind/main.rs` under valgrind's memcheck with every secret input marked undefined:
//! memcheck then reports each branch and each memory address computed from a secret. A few
//! decisions are public by design though computed from secrets (a key is invalid, a nonce
//! must be retried, a tag did not match, the bytes of a signature); the code passes those
//! through [`public`] or [`public_choice`], which tell valgrind so in that build and are the
//! identity otherwise.

use subtle::Choice;

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod barrier_asm;
#[cfg(shangmi_ctgrind)]
mod valgrind_asm;

/// `x`, unchanged, hidden from the optimiser: from here on it cannot know that `x` is 0 or 1
/// (or a sign mask), so the masks computed from it stay AND/OR/XOR instead of becoming the
/// branch or the conditional jump LLVM otherwise likes to make of a select (the valgrind check
/// caught it doing so twice). Free: an empty `asm!` on x86-64 and aarch64, `black_box`
/// elsewhere.
#[inline(always)]
pub(crate) fn barrier(x: u64) -> u64 {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    return barrier_asm::hide(x);
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    return core::hint::black_box(x);
}

/// Zeroes a working buffer of secret bytes (keystream, tweaks, padded blocks) with ordinary
/// wide stores that the compiler may not remove. `zeroize` writes bytewise through volatile
/// stores, one instruction per byte: on a kilobyte of keystream that costs more than a tenth
/// of the cipher. Values that live on (keys, states) keep `zeroize`.
#[inline]
pub(crate) fn wipe(bytes: &mut [u8]) {
    bytes.fill(0);
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    barrier_asm::keep_stores(bytes.as_ptr());
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    zeroize::Zeroize::zeroize(bytes);
}

/// [`barrier`] for a signed word (a sign mask from `>> 63`).
#[inline(always)]
pub(crate) fn barrier_i64(x: i64) -> i64 {
    barrier(x as u64) as i64
}

/// All ones when `bit` is 1, zero when it is 0 (`bit` must be one or the other), through
/// [`barrier`]. The mask itself is hidden, not the bit: the compiler may still make it from a
/// carry flag in one instruction, but cannot see that it is all-or-nothing where it is used.
#[inline(always)]
pub(crate) fn mask(bit: u64) -> u64 {
    barrier(0u64.wrapping_sub(bit))
}

/// [`mask`] as 128 bits.
#[inline(always)]
pub(crate) fn mask128(bit: u64) -> u128 {
    mask(bit) as i64 as i128 as u128
}

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
