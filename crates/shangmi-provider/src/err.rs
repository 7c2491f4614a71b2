//! Errors on OpenSSL's error queue: every failure the provider returns pushes a reason that
//! `ERR_print_errors` shows as `shangmi::<reason text>`, so a program (or `openssl` itself)
//! can tell a wrong tag from a wrong key length without guessing.
//!
//! The core's error functions come from the dispatch table `OSSL_provider_init` receives. The
//! reason is pushed with no format string, so the `va_list` argument is never read; its text
//! comes from the table `provider_get_reason_strings` returns.

use core::ffi::{CStr, c_char, c_int, c_void};
use std::sync::{Mutex, OnceLock};

use crate::Dispatch;

/// Why a call failed; the numbers are the provider's reason codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Reason {
    Internal = 1,
    InvalidArgument,
    BufferTooSmall,
    NoKey,
    InvalidKey,
    InvalidKeyLength,
    InvalidIvLength,
    InvalidTagLength,
    InvalidLength,
    Unsupported,
    TagMismatch,
    BadPadding,
    DecryptionFailed,
    BadSignature,
    TagFirst,
    OneUpdate,
    State,
    Rng,
    MidMessage,
    ShortTag,
    KeyExchange,
    NoPeerKey,
    BadKeyShare,
}

/// `OSSL_ITEM`: a reason code and its text.
#[repr(C)]
pub(crate) struct Item {
    id: u32,
    text: *const c_char,
}

const REASONS: [(Reason, &CStr); 23] = [
    (Reason::Internal, c"internal error"),
    (Reason::InvalidArgument, c"invalid argument"),
    (Reason::BufferTooSmall, c"output buffer too small"),
    (Reason::NoKey, c"no key set"),
    (Reason::InvalidKey, c"invalid key"),
    (Reason::InvalidKeyLength, c"invalid key length"),
    (Reason::InvalidIvLength, c"invalid IV length"),
    (Reason::InvalidTagLength, c"invalid tag length"),
    (Reason::InvalidLength, c"invalid data length for this mode"),
    (Reason::Unsupported, c"unsupported algorithm or parameter"),
    (
        Reason::TagMismatch,
        c"authentication failed: tag mismatch, no plaintext released",
    ),
    (Reason::BadPadding, c"bad padding"),
    (Reason::DecryptionFailed, c"SM2 decryption failed"),
    (Reason::BadSignature, c"bad signature"),
    (
        Reason::TagFirst,
        c"set the tag before the ciphertext: no plaintext is released unauthenticated",
    ),
    (
        Reason::OneUpdate,
        c"this mode takes the whole message in one update",
    ),
    (
        Reason::State,
        c"operation not initialised or already finished",
    ),
    (Reason::Rng, c"random generator failed"),
    (
        Reason::MidMessage,
        c"a context in the middle of a message cannot be copied",
    ),
    (
        Reason::ShortTag,
        c"tag shorter than 12 bytes: declare its length first (taglen) to accept it",
    ),
    (Reason::KeyExchange, c"SM2 key exchange failed"),
    (
        Reason::NoPeerKey,
        c"no peer public key: set a peer key with a point before deriving",
    ),
    (
        Reason::BadKeyShare,
        c"key share is not a 65-byte uncompressed point on the SM2 curve",
    ),
];

type NewError = unsafe extern "C" fn(*const c_void);
type SetErrorDebug = unsafe extern "C" fn(*const c_void, *const c_char, c_int, *const c_char);
/// `core_vset_error`. The last argument is a `va_list`: on x86-64 an array type, so passed as
/// a pointer; on AArch64 a 32-byte structure, passed by reference; a pointer either way.
type VSetError = unsafe extern "C" fn(*const c_void, u32, *const c_char, *const c_void);

struct Core {
    new_error: NewError,
    set_debug: SetErrorDebug,
    vset_error: VSetError,
}

static CORE: OnceLock<Core> = OnceLock::new();
/// Handles of the live provider instances (one per library context that loaded us); errors
/// go to the most recent. Kept as integers: a handle is only passed back to the core.
static HANDLES: Mutex<Vec<usize>> = Mutex::new(Vec::new());

/// Records the core's error functions and this instance's handle.
///
/// # Safety
/// `core` is NULL or the core's dispatch table, terminated by a zero id.
pub(crate) unsafe fn attach(handle: *const c_void, core: *const Dispatch) {
    let (mut new_error, mut set_debug, mut vset_error) = (None, None, None);
    let mut d = core;
    // SAFETY: a terminated table, read up to its terminator; each function pointer is cast to
    // the type its id prescribes in openssl/core_dispatch.h.
    unsafe {
        while !d.is_null() && (*d).id != 0 {
            let f = (*d).f;
            match (*d).id {
                5 => new_error = f.map(|f| core::mem::transmute::<_, NewError>(f)),
                6 => set_debug = f.map(|f| core::mem::transmute::<_, SetErrorDebug>(f)),
                7 => vset_error = f.map(|f| core::mem::transmute::<_, VSetError>(f)),
                _ => {}
            }
            d = d.add(1);
        }
    }
    if let (Some(new_error), Some(set_debug), Some(vset_error)) = (new_error, set_debug, vset_error)
    {
        let _ = CORE.set(Core {
            new_error,
            set_debug,
            vset_error,
        });
    }
    if let Ok(mut h) = HANDLES.lock() {
        h.push(handle as usize);
    }
}

/// Forgets an instance at teardown.
pub(crate) fn detach(handle: *const c_void) {
    if let Ok(mut h) = HANDLES.lock()
        && let Some(i) = h.iter().rposition(|&x| x == handle as usize)
    {
        h.remove(i);
    }
}

/// Pushes `r` onto the calling thread's error queue, naming the entry point `func`.
pub(crate) fn raise(r: Reason, func: &'static CStr) {
    let Some(core) = CORE.get() else { return };
    let Some(handle) = HANDLES.lock().ok().and_then(|h| h.last().copied()) else {
        return;
    };
    let handle = handle as *const c_void;
    // An unread stand-in for the va_list (the format is NULL), large enough for any ABI's.
    let unused = [0u64; 4];
    // SAFETY: functions the core gave us, called with a handle it gave us (still live: removed
    // at teardown), static NUL-terminated strings, and a NULL format, which the core checks
    // before it touches the argument list.
    unsafe {
        (core.new_error)(handle);
        (core.set_debug)(handle, c"shangmi".as_ptr(), 0, func.as_ptr());
        (core.vset_error)(handle, r as u32, core::ptr::null(), unused.as_ptr().cast());
    }
}

/// Pushes `r` and returns OpenSSL's failure value.
pub(crate) fn fail(r: Reason, func: &'static CStr) -> c_int {
    raise(r, func);
    0
}

/// OpenSSL's value for a result, its reason pushed on failure.
pub(crate) fn result(r: Result<(), Reason>, func: &'static CStr) -> c_int {
    match r {
        Ok(()) => 1,
        Err(reason) => fail(reason, func),
    }
}

/// A provider context made by `Box::into_raw(Box::new(T))`, or `State` for NULL.
///
/// # Safety
/// `ctx` is NULL or a live `T` from the module's `newctx`, used by this thread alone.
pub(crate) unsafe fn ctx_mut<'a, T>(ctx: *mut c_void) -> Result<&'a mut T, Reason> {
    // SAFETY: the contract above.
    unsafe { ctx.cast::<T>().as_mut() }.ok_or(Reason::State)
}

/// The reason table handed to the core (`provider_get_reason_strings`).
pub(crate) unsafe extern "C" fn reason_strings(_provctx: *mut c_void) -> *const Item {
    struct Table(Vec<Item>);
    // SAFETY: the items point at static strings and are never written after they are built.
    unsafe impl Sync for Table {}
    // SAFETY: as for `Sync`.
    unsafe impl Send for Table {}
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| {
        let mut v: Vec<Item> = REASONS
            .iter()
            .map(|(r, s)| Item {
                id: *r as u32,
                text: s.as_ptr(),
            })
            .collect();
        v.push(Item {
            id: 0,
            text: core::ptr::null(),
        });
        Table(v)
    })
    .0
    .as_ptr()
}
