//! Which SM2 backend an operation runs on: chosen once per key object, then every field
//! multiplication and table read of that operation is monomorphised for it.

use crate::cpu::{Backend, Implementation};

#[derive(Clone, Copy, Debug)]
pub(crate) enum Engine {
    Soft,
    #[cfg(target_arch = "x86_64")]
    Adx(crate::cpu::Adx, crate::cpu::Avx2),
    #[cfg(target_arch = "x86_64")]
    Adx512(crate::cpu::Avx512),
}

impl Implementation for Engine {
    fn within(profile: Backend) -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            use crate::cpu::{Adx, Avx2, Avx512};
            let simd = match profile {
                Backend::Avx512 => Avx512::get().map(Engine::Adx512),
                Backend::Portable => None,
                // AVX2 without ADX (Haswell) keeps the portable field.
                _ => Adx::get().zip(Avx2::get()).map(|(a, v)| Engine::Adx(a, v)),
            };
            if let Some(e) = simd {
                return e;
            }
        }
        let _ = profile;
        Engine::Soft
    }

    fn name(self) -> &'static str {
        match self {
            Engine::Soft => "portable",
            #[cfg(target_arch = "x86_64")]
            Engine::Adx(..) => "adx",
            #[cfg(target_arch = "x86_64")]
            Engine::Adx512(t) => match t.with_ifma() {
                Some(_) => "adx-avx512-ifma",
                None => "adx-avx512",
            },
        }
    }
}

/// Runs `$body` with `$a` bound to the engine's arithmetic backend (a different
/// monomorphisation per arm).
macro_rules! dispatch {
    ($engine:expr, |$a:ident| $body:expr) => {
        match $engine {
            $crate::sm2::arithmetic::engine::Engine::Soft => {
                let $a = $crate::sm2::arithmetic::field::Soft;
                $body
            }
            #[cfg(target_arch = "x86_64")]
            $crate::sm2::arithmetic::engine::Engine::Adx(t, v) => {
                let $a = $crate::sm2::arithmetic::field::x86_adx::Adx(t, v);
                $body
            }
            #[cfg(target_arch = "x86_64")]
            $crate::sm2::arithmetic::engine::Engine::Adx512(t) => {
                let $a = $crate::sm2::arithmetic::field::x86_adx::Adx512(t);
                $body
            }
        }
    };
}
pub(crate) use dispatch;
