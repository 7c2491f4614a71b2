//! Which SM2 backend an operation runs on: chosen once per key object, then every field
//! multiplication and table read of that operation is monomorphised for it.

use crate::cpu::{Backend, UnsupportedBackend};

#[derive(Clone, Copy, Debug)]
pub(crate) enum Engine {
    Soft,
    #[cfg(target_arch = "x86_64")]
    Adx(crate::cpu::Avx2),
    #[cfg(target_arch = "x86_64")]
    Adx512(crate::cpu::Avx512),
}

impl Engine {
    pub(crate) fn best() -> Self {
        Self::for_backend(Backend::best()).unwrap_or(Engine::Soft)
    }

    pub(crate) fn for_backend(b: Backend) -> Result<Self, UnsupportedBackend> {
        let unsupported = Err(UnsupportedBackend(b));
        match b {
            Backend::Portable => Ok(Engine::Soft),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 => crate::cpu::Avx2::get().map_or(unsupported, |t| Ok(Engine::Adx(t))),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512 => {
                crate::cpu::Avx512::get().map_or(unsupported, |t| Ok(Engine::Adx512(t)))
            }
            #[allow(unreachable_patterns)]
            _ => unsupported,
        }
    }
}

/// Runs `$body` with `$a` bound to the engine's arithmetic backend (a different
/// monomorphisation per arm).
macro_rules! dispatch {
    ($engine:expr, |$a:ident| $body:expr) => {
        match $engine {
            $crate::sm2::engine::Engine::Soft => {
                let $a = $crate::sm2::field::Soft;
                $body
            }
            #[cfg(target_arch = "x86_64")]
            $crate::sm2::engine::Engine::Adx(t) => {
                let $a = $crate::sm2::field::x86_adx::Adx(t);
                $body
            }
            #[cfg(target_arch = "x86_64")]
            $crate::sm2::engine::Engine::Adx512(t) => {
                let $a = $crate::sm2::field::x86_adx::Adx512(t);
                $body
            }
        }
    };
}
pub(crate) use dispatch;
