//! The one place the command talks to the loader: a function in `.init_array`, which the
//! dynamic loader (or the C runtime of a static binary) calls before `main`, while the
//! standard streams are still as the parent left them.
#![allow(unsafe_code)]

// SAFETY: the loader calls the function in .init_array once, before `main` and before any
// other thread exists; it only duplicates and closes descriptors and stores two atomics.
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array")]
static RECORD_CLOSED_STREAMS: extern "C" fn() = crate::signals::record_closed_streams;
