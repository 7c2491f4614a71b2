//! Valgrind client requests (memcheck's MAKE_MEM_UNDEFINED and MAKE_MEM_DEFINED), issued
//! through the x86-64 "special instruction" sequence valgrind recognises: rotations of RDI
//! that add up to 128 bits (a no-op on real hardware) followed by `xchg rbx, rbx`, with RAX
//! pointing at the request and its arguments and the result in RDX. Outside valgrind the
//! sequence does nothing.
#![allow(unsafe_code)]

use core::arch::asm;

/// Memcheck's request numbers: ('M' << 24 | 'C' << 16) + 1 and + 2.
const MAKE_MEM_UNDEFINED: u64 = 0x4d43_0001;
const MAKE_MEM_DEFINED: u64 = 0x4d43_0002;

fn request(code: u64, addr: u64, len: u64) {
    let args = [code, addr, len, 0, 0, 0];
    let mut result = 0u64;
    // SAFETY: rotating RDI by 3 + 13 + 61 + 51 = 128 bits leaves it unchanged and
    // `xchg rbx, rbx` changes nothing; under valgrind the request reads the six words at
    // `args` and only changes memcheck's bookkeeping. The asm may be assumed to read memory
    // (no `nomem`), so the compiler keeps the marked bytes in memory around it.
    unsafe {
        asm!(
            "rol rdi, 3",
            "rol rdi, 13",
            "rol rdi, 61",
            "rol rdi, 51",
            "xchg rbx, rbx",
            in("rax") args.as_ptr(),
            inout("rdx") result,
            out("rdi") _,
            options(nostack),
        );
    }
    let _ = result;
}

pub(super) fn mark_undefined<T: ?Sized>(x: &mut T) {
    request(
        MAKE_MEM_UNDEFINED,
        x as *mut T as *mut u8 as u64,
        core::mem::size_of_val(x) as u64,
    );
}

pub(super) fn mark_defined<T: ?Sized>(x: &mut T) {
    request(
        MAKE_MEM_DEFINED,
        x as *mut T as *mut u8 as u64,
        core::mem::size_of_val(x) as u64,
    );
}
