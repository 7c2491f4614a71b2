//! CPU features, detected once and handed out as tokens.
//!
//! The library groups x86-64 features into two tiers, because every algorithm has at most one
//! implementation per tier and testing a tier tests everything in it:
//!
//! | tier | requires | used by |
//! |---|---|---|
//! | [`Backend::Portable`] | nothing | everything; always built, always tested |
//! | [`Backend::Avx2`] | AVX2, BMI1, BMI2, ADX, AES-NI, PCLMULQDQ | SM3 (BMI2 rounds), SM3 x8 lanes, SM4 (AES-NI S-box), GHASH (PCLMULQDQ), SM2 field (MULX/ADCX/ADOX) |
//! | [`Backend::Avx512`] | the AVX2 tier plus AVX-512 F/BW/VL/DQ, GFNI, VAES, VPCLMULQDQ | SM3 (AVX-512VL expansion), SM3 x16 lanes, SM4 (GFNI S-box), GHASH (VPCLMULQDQ) |
//!
//! The tiers are fixed sets so that one test run per tier covers every backend. Haswell (no ADX)
//! falls to the portable tier and Skylake-X (no GFNI/VAES) to the AVX2 tier; that costs them
//! speed, never correctness. Valgrind emulates neither ADX nor AVX-512, so the constant-time
//! checks under valgrind run the portable tier.
//!
//! A `#[target_feature]` function is only reachable through a token ([`Avx2`], [`Avx512`]),
//! and a token can only be obtained when the running CPU has the features, so calling a SIMD
//! backend on a CPU without them cannot be written by mistake.
//!
//! The library reads no environment variables. Tests and benchmarks list the tiers this CPU has
//! with [`Backend::available`] and force one through the `*_with_backend` entry points.

use core::fmt;
use core::sync::atomic::{AtomicU8, Ordering};

/// A tier of implementations, selected once per keyed object or per call of a keyless function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Backend {
    /// Portable constant-time Rust, on every CPU.
    Portable,
    /// x86-64 with AVX2, BMI2, ADX, AES-NI and PCLMULQDQ (Broadwell and later, Zen and later).
    Avx2,
    /// x86-64 with AVX-512 F/BW/VL/DQ, GFNI, VAES and VPCLMULQDQ (Ice Lake and later, Zen 4
    /// and later).
    Avx512,
}

impl Backend {
    const ALL: [Backend; 3] = [Backend::Portable, Backend::Avx2, Backend::Avx512];

    /// Every tier this CPU can run, slowest first. Always starts with [`Backend::Portable`].
    pub fn available() -> Vec<Backend> {
        Self::ALL.into_iter().filter(|b| b.is_available()).collect()
    }

    /// The fastest tier this CPU can run; what the library uses when nothing is forced.
    pub fn best() -> Backend {
        match detected() {
            2 => Backend::Avx512,
            1 => Backend::Avx2,
            _ => Backend::Portable,
        }
    }

    /// Whether this CPU can run the tier.
    pub fn is_available(self) -> bool {
        self <= Self::best()
    }

    /// Lower-case name, as benchmarks and test output print it.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Portable => "portable",
            Backend::Avx2 => "avx2",
            Backend::Avx512 => "avx512",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The tier asked for is not supported by this CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnsupportedBackend(pub Backend);

impl fmt::Display for UnsupportedBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "this CPU does not support the {} backend", self.0)
    }
}

impl std::error::Error for UnsupportedBackend {}

/// Witness that the CPU has the AVX2 tier. Zero-sized; only [`Avx2::get`] makes one.
#[derive(Clone, Copy, Debug)]
pub struct Avx2(());

/// Witness that the CPU has the AVX-512 tier (and therefore the AVX2 tier).
#[derive(Clone, Copy, Debug)]
pub struct Avx512(());

impl Avx2 {
    /// The token, if this CPU has the tier.
    #[inline]
    pub fn get() -> Option<Self> {
        (detected() >= 1).then_some(Avx2(()))
    }
}

impl Avx512 {
    /// The token, if this CPU has the tier.
    #[inline]
    pub fn get() -> Option<Self> {
        (detected() >= 2).then_some(Avx512(()))
    }

    /// Every AVX-512 CPU has the AVX2 tier.
    #[inline]
    pub fn avx2(self) -> Avx2 {
        Avx2(())
    }

    /// The IFMA extension token, if this CPU also has AVX512-IFMA (52-bit multiply-add, which
    /// the SM2 many-nonce path uses; not part of the tier, so its absence changes no backend).
    #[inline]
    pub fn with_ifma(self) -> Option<Avx512Ifma> {
        ifma().then_some(Avx512Ifma(()))
    }
}

/// Proof that the CPU has the AVX-512 tier and AVX512-IFMA.
#[derive(Clone, Copy, Debug)]
pub struct Avx512Ifma(());

impl Avx512Ifma {
    /// The tier token this extends.
    #[inline]
    pub fn avx512(self) -> Avx512 {
        Avx512(())
    }
}

static IFMA: AtomicU8 = AtomicU8::new(UNKNOWN);

fn ifma() -> bool {
    let t = IFMA.load(Ordering::Relaxed);
    if t != UNKNOWN {
        return t == 1;
    }
    #[cfg(target_arch = "x86_64")]
    let has = detected() >= 2 && std::arch::is_x86_feature_detected!("avx512ifma");
    #[cfg(not(target_arch = "x86_64"))]
    let has = false;
    IFMA.store(u8::from(has), Ordering::Relaxed);
    has
}

const UNKNOWN: u8 = u8::MAX;
static TIER: AtomicU8 = AtomicU8::new(UNKNOWN);

/// 0 portable, 1 AVX2 tier, 2 AVX-512 tier; probed on first use and cached.
#[inline]
fn detected() -> u8 {
    let t = TIER.load(Ordering::Relaxed);
    if t != UNKNOWN {
        return t;
    }
    let t = probe();
    TIER.store(t, Ordering::Relaxed);
    t
}

#[cfg(target_arch = "x86_64")]
fn probe() -> u8 {
    use std::arch::is_x86_feature_detected as has;
    let avx2 = has!("avx2")
        && has!("bmi1")
        && has!("bmi2")
        && has!("adx")
        && has!("aes")
        && has!("pclmulqdq")
        && has!("ssse3")
        && has!("sse4.1");
    let avx512 = avx2
        && has!("avx512f")
        && has!("avx512bw")
        && has!("avx512vl")
        && has!("avx512dq")
        && has!("gfni")
        && has!("vaes")
        && has!("vpclmulqdq");
    match (avx2, avx512) {
        (true, true) => 2,
        (true, false) => 1,
        _ => 0,
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn probe() -> u8 {
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_are_ordered_and_portable_is_always_there() {
        let all = Backend::available();
        assert_eq!(all[0], Backend::Portable);
        assert_eq!(*all.last().unwrap(), Backend::best());
        assert!(all.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(Avx2::get().is_some(), Backend::Avx2.is_available());
        assert_eq!(Avx512::get().is_some(), Backend::Avx512.is_available());
    }
}
