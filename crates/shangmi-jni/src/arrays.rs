//! Java arrays as Rust slices. Between [`MAX_COPIED`] and [`MAX_PINNED`] bytes an array is
//! pinned (`GetPrimitiveArrayCritical`) and used in place: no JNI call may be made, and no
//! Java object allocated, until it is released, which the types here make the end of a
//! borrow. Other ranges are copied in (`GetByteArrayRegion`) and out (`SetByteArrayRegion`):
//! a long call so never holds the garbage collector off, and a short one is cheaper copied
//! than pinned (a TLS handshake's hundreds of small HMACs, hashes and records would
//! otherwise each take the VM's GC lock, and stall behind a collection that waits on it).

use jni::JNIEnv;
use jni::objects::{JByteArray, JIntArray};
use jni::sys::{self, jint, jsize};

use crate::Thrown;

/// The most bytes a call pins at once: about a quarter of a millisecond of SM4 or a
/// millisecond of SM3, the bound ACCP keeps for critical regions.
pub(crate) const MAX_PINNED: usize = 256 * 1024;

/// The most bytes copied rather than pinned at the short end.
pub(crate) const MAX_COPIED: usize = 512;

/// `off..off + len` of an array of `array_len`, checked.
pub(crate) fn range(
    array_len: usize,
    off: jint,
    len: jint,
) -> Result<std::ops::Range<usize>, Thrown> {
    let (off, len) = (usize::try_from(off), usize::try_from(len));
    match (off, len) {
        (Ok(o), Ok(l)) if o.checked_add(l).is_some_and(|end| end <= array_len) => Ok(o..o + l),
        _ => Err(Thrown::bounds()),
    }
}

/// The length of `a`; an error for null.
pub(crate) fn len(env: &JNIEnv<'_>, a: &JByteArray<'_>) -> Result<usize, Thrown> {
    if a.as_raw().is_null() {
        return Err(Thrown::arg("a null array"));
    }
    Ok(env.get_array_length(a)? as usize)
}

/// A whole array copied into a vector (for short inputs: keys, IVs, IDs, AAD).
pub(crate) fn to_vec(env: &JNIEnv<'_>, a: &JByteArray<'_>) -> Result<Vec<u8>, Thrown> {
    if a.as_raw().is_null() {
        return Ok(Vec::new());
    }
    Ok(env.convert_byte_array(a)?)
}

/// Copies `bytes` into `a` at `off`.
pub(crate) fn write(
    env: &JNIEnv<'_>,
    a: &JByteArray<'_>,
    off: usize,
    bytes: &[u8],
) -> Result<(), Thrown> {
    range(len(env, a)?, off as jint, bytes.len() as jint)?;
    // SAFETY: u8 and i8 have the same size and alignment.
    let signed = unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<i8>(), bytes.len()) };
    env.set_byte_array_region(a, off as jsize, signed)?;
    Ok(())
}

/// Reads the 8 words of an SM3 chaining state.
pub(crate) fn state(env: &JNIEnv<'_>, a: &JIntArray<'_>) -> Result<[u32; 8], Thrown> {
    if a.as_raw().is_null() || env.get_array_length(a)? != 8 {
        return Err(Thrown::arg("an SM3 state is 8 ints"));
    }
    let mut words = [0i32; 8];
    env.get_int_array_region(a, 0, &mut words)?;
    Ok(words.map(|w| w as u32))
}

/// Writes the 8 words of an SM3 chaining state.
pub(crate) fn set_state(env: &JNIEnv<'_>, a: &JIntArray<'_>, s: &[u32; 8]) -> Result<(), Thrown> {
    env.set_int_array_region(a, 0, &s.map(|w| w as i32))?;
    Ok(())
}

/// An array's elements pinned in place.
struct Pinned {
    env: *mut sys::JNIEnv,
    array: sys::jarray,
    ptr: *mut u8,
    len: usize,
    /// 0 to copy back (if the VM copied) and free, JNI_ABORT to free only.
    mode: jint,
}

impl Pinned {
    /// # Safety
    /// `env` is the current thread's environment and `array` a live byte array of `len`
    /// elements; no JNI call is made until the result is dropped.
    unsafe fn new(
        env: *mut sys::JNIEnv,
        array: sys::jarray,
        len: usize,
        write: bool,
    ) -> Result<Pinned, Thrown> {
        // SAFETY: the caller's contract; the function table is the VM's.
        let ptr = unsafe {
            let get = (**env)
                .GetPrimitiveArrayCritical
                .ok_or_else(|| Thrown::state("JNI"))?;
            get(env, array, std::ptr::null_mut())
        };
        if ptr.is_null() {
            return Err(Thrown::state("out of memory pinning an array"));
        }
        Ok(Pinned {
            env,
            array,
            ptr: ptr.cast(),
            len,
            mode: if write { 0 } else { sys::JNI_ABORT },
        })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: the VM keeps `len` elements at `ptr` until released.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `bytes`; this is the only view of the array while it is pinned.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // SAFETY: releases what `new` pinned, once.
        unsafe {
            if let Some(release) = (**self.env).ReleasePrimitiveArrayCritical {
                release(self.env, self.array, self.ptr.cast(), self.mode);
            }
        }
    }
}

/// Runs `f` over `input[in_range]`: pinned when short, copied when long.
pub(crate) fn with_input<T>(
    env: &mut JNIEnv<'_>,
    input: &JByteArray<'_>,
    off: jint,
    len: jint,
    f: impl FnOnce(&[u8]) -> T,
) -> Result<T, Thrown> {
    let r = range(self::len(env, input)?, off, len)?;
    if r.len() > MAX_PINNED || r.len() <= MAX_COPIED {
        let mut small = [0i8; MAX_COPIED];
        let mut long = Vec::new();
        let copy: &mut [i8] = if r.len() <= MAX_COPIED {
            &mut small[..r.len()]
        } else {
            long.resize(r.len(), 0);
            &mut long
        };
        env.get_byte_array_region(input, r.start as jsize, copy)?;
        // SAFETY: i8 and u8 have the same layout.
        let bytes = unsafe { std::slice::from_raw_parts(copy.as_ptr().cast::<u8>(), copy.len()) };
        let out = f(bytes);
        zeroize::Zeroize::zeroize(copy);
        return Ok(out);
    }
    // SAFETY: the array is live for this call; nothing calls into the VM while pinned.
    let pinned = unsafe { Pinned::new(env.get_raw(), input.as_raw(), len_of(env, input)?, false)? };
    Ok(f(&pinned.bytes()[r]))
}

fn len_of(env: &JNIEnv<'_>, a: &JByteArray<'_>) -> Result<usize, Thrown> {
    Ok(env.get_array_length(a)? as usize)
}

/// Runs `f` over `input[in_range]` and `output[out_off..out_off + out_len]`; `f` returns how
/// many bytes it wrote and whether they are good, and bytes written by a call that failed
/// are not copied out of a long call's buffer (a pinned output is written by `f` itself,
/// which writes only what is good). The two may be one array, even overlapping: the input is
/// then copied first.
#[allow(clippy::too_many_arguments)]
pub(crate) fn with_io<T>(
    env: &mut JNIEnv<'_>,
    input: &JByteArray<'_>,
    off: jint,
    len: jint,
    output: &JByteArray<'_>,
    out_off: jint,
    out_len: jint,
    f: impl FnOnce(&[u8], &mut [u8]) -> Result<(T, usize), T>,
) -> Result<Result<T, T>, Thrown> {
    let in_len = if input.as_raw().is_null() {
        0
    } else {
        len_of(env, input)?
    };
    let ir = if input.as_raw().is_null() {
        range(0, 0, 0)?
    } else {
        range(in_len, off, len)?
    };
    let out_total = self::len(env, output)?;
    let or = range(out_total, out_off, out_len)?;
    let same = !input.as_raw().is_null() && env.is_same_object(input, output)?;
    let small = ir.len() <= MAX_COPIED && or.len() <= MAX_COPIED;
    if small || ir.len() > MAX_PINNED || or.len() > MAX_PINNED {
        let (mut in_small, mut out_small) = ([0u8; MAX_COPIED], [0u8; MAX_COPIED]);
        let (mut in_long, mut out_long) = (Vec::new(), Vec::new());
        let (inb, outb): (&mut [u8], &mut [u8]) = if small {
            (&mut in_small[..ir.len()], &mut out_small[..or.len()])
        } else {
            in_long.resize(ir.len(), 0u8);
            out_long.resize(or.len(), 0u8);
            (&mut in_long, &mut out_long)
        };
        if !ir.is_empty() {
            // SAFETY: i8 and u8 have the same layout.
            let signed =
                unsafe { std::slice::from_raw_parts_mut(inb.as_mut_ptr().cast::<i8>(), inb.len()) };
            env.get_byte_array_region(input, ir.start as jsize, signed)?;
        }
        let r = f(inb, outb);
        let written = match &r {
            Ok((_, n)) => write(env, output, or.start, &outb[..*n]),
            Err(_) => Ok(()),
        };
        zeroize::Zeroize::zeroize(inb);
        zeroize::Zeroize::zeroize(outb);
        written?;
        return Ok(r.map(|(v, _)| v));
    }
    let raw = env.get_raw();
    if same {
        // SAFETY: live arrays, nothing calls into the VM while pinned.
        let mut both = unsafe { Pinned::new(raw, output.as_raw(), out_total, true)? };
        let copy = both.bytes()[ir].to_vec();
        let r = f(&copy, &mut both.bytes_mut()[or]);
        return Ok(r.map(|(v, _)| v));
    }
    // Two different live arrays, pinned together (JNI allows nesting critical regions);
    // nothing calls into the VM until both are released.
    let pin_in = if input.as_raw().is_null() {
        None
    } else {
        // SAFETY: a live array of `in_len` elements, as above.
        Some(unsafe { Pinned::new(raw, input.as_raw(), in_len, false)? })
    };
    // SAFETY: a live array of `out_total` elements, as above.
    let mut pin_out = unsafe { Pinned::new(raw, output.as_raw(), out_total, true)? };
    let inb: &[u8] = match &pin_in {
        Some(p) => &p.bytes()[ir],
        None => &[],
    };
    let r = f(inb, &mut pin_out.bytes_mut()[or]);
    drop(pin_out);
    drop(pin_in);
    Ok(r.map(|(v, _)| v))
}
