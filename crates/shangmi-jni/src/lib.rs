//! The native half of shangmi's JCA provider (`java/`): the static natives of
//! `rs.shangmi.jca.Native`, each a thin call into the library.
//!
//! The rules the JVM's fastest native providers keep (ACCP, Conscrypt): natives are static and
//! take only primitives and arrays, write their results into arrays the caller supplies (or
//! return a fresh one), and never call back into Java. Short arrays (up to 512 bytes) are
//! copied, longer ones up to 256 KiB read and written in place, pinned as critical regions (no
//! JNI call is made while one is held), and longer still copied again (the Java side streams
//! big inputs in pieces of that size where the algorithm allows): `arrays.rs`. A result is written only once it is known good: a failed
//! decryption leaves the caller's output as it was.
//!
//! Keys and stateful ciphers live behind handles (`handles.rs`): a `long` that is a pointer to
//! a boxed `Handle`, freed by `free` (the Java side frees each exactly once, from a
//! cleaner or `destroy()`). Every entry point catches panics and turns them, and bad
//! arguments, into Java exceptions; errors a caller expects (a bad tag, bad padding, a
//! signature that does not verify) are return values the Java side turns into the JCA's
//! exceptions.

// An FFI boundary: every `unsafe` block here says why it holds.
#![allow(unsafe_code)]

mod arrays;
mod handles;
mod sm2;
mod sm3;
mod sm4;

use jni::JNIEnv;
use jni::objects::JClass;
use jni::sys::{jlong, jstring};

/// A failure to report to Java as an exception.
pub(crate) struct Thrown {
    class: &'static str,
    message: String,
}

impl Thrown {
    pub(crate) fn arg(message: impl Into<String>) -> Thrown {
        Thrown {
            class: "java/lang/IllegalArgumentException",
            message: message.into(),
        }
    }

    pub(crate) fn state(message: impl Into<String>) -> Thrown {
        Thrown {
            class: "java/lang/IllegalStateException",
            message: message.into(),
        }
    }

    pub(crate) fn bounds() -> Thrown {
        Thrown {
            class: "java/lang/ArrayIndexOutOfBoundsException",
            message: "offset or length outside the array".into(),
        }
    }
}

impl From<jni::errors::Error> for Thrown {
    fn from(e: jni::errors::Error) -> Thrown {
        Thrown::state(format!("JNI: {e}"))
    }
}

/// Runs a native's body: its value, or `default` with the exception it raised (a panic is
/// an `IllegalStateException`, never an unwind into the JVM).
pub(crate) fn guard<T>(
    env: &mut JNIEnv<'_>,
    default: T,
    body: impl FnOnce(&mut JNIEnv<'_>) -> Result<T, Thrown>,
) -> T {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(env)));
    let thrown = match r {
        Ok(Ok(v)) => return v,
        Ok(Err(t)) => t,
        Err(_) => Thrown::state("shangmi: internal error"),
    };
    // An exception already pending (from a JNI call) is the one the caller sees.
    if !env.exception_check().unwrap_or(true) {
        let _ = env.throw_new(thrown.class, thrown.message);
    }
    default
}

/// `shangmi VERSION (the implementations chosen on this CPU)`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_version<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
) -> jstring {
    guard(&mut env, std::ptr::null_mut(), |env| {
        let names: Vec<String> = shangmi::implementations(shangmi::Backend::best())
            .map_err(|e| Thrown::state(e.to_string()))?
            .iter()
            .map(|(alg, name)| format!("{alg} {name}"))
            .collect();
        let text = format!(
            "shangmi {} ({})",
            env!("CARGO_PKG_VERSION"),
            names.join(", ")
        );
        Ok(env.new_string(text)?.into_raw())
    })
}

/// Frees a handle (0 is ignored).
#[unsafe(no_mangle)]
pub extern "system" fn Java_rs_shangmi_jca_Native_free<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    handle: jlong,
) {
    guard(&mut env, (), |_| {
        // SAFETY: the Java side frees each handle it made once, after its last use.
        unsafe { handles::free(handle) };
        Ok(())
    })
}
