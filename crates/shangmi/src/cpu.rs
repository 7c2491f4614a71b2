//! CPU features, detected once and handed out as tokens, and the backend profiles built on them.
//!
//! A [`Backend`] is a profile: a ceiling on the instruction-set extensions the library may use.
//! Within it, each algorithm takes the best implementation its own features allow, so a CPU
//! gets everything it can run: VAES without AVX-512 still gets 256-bit AES rounds, AVX2 without
//! ADX (Haswell) still gets SIMD SM3, SM4 and GHASH, and only the SM2 field falls back.
//!
//! | profile | requires | SM3 | SM3 lanes | SM4 | GHASH | SM2 field |
//! |---|---|---|---|---|---|---|
//! | `portable` | nothing | portable | portable | portable | portable | portable |
//! | `avx2` | AVX2, AES-NI, PCLMULQDQ | bmi2 ¹ | avx2-x8 | aesni | pclmul | adx ² |
//! | `avx2-vaes` | `avx2` + VAES, VPCLMULQDQ | bmi2 ¹ | avx2-x8 | vaes-avx2 | vpclmul-avx2 | adx ² |
//! | `avx2-gfni` | `avx2` + GFNI | bmi2 ¹ | avx2-x8 | gfni-avx2 | vpclmul-avx2 ³ | adx ² |
//! | `avx512` | `avx2-vaes` + GFNI, AVX-512 F/BW/VL/DQ, BMI1/2, ADX | avx512 | avx512-x16 | gfni-avx512 | vpclmul-avx512 | adx-avx512 ⁴ |
//! | `neon` | aarch64 NEON, AES, PMULL | portable | neon-x4 | aes-neon | pmull | portable ⁵ |
//! | `neon-sm` | `neon` + SM3, SM4 | sm3-ce | neon-x4 | sm4-ce | pmull | portable ⁵ |
//!
//! ¹ with BMI1 and BMI2, else portable. ² with BMI2 and ADX, else portable. ³ with VPCLMULQDQ,
//! else pclmul. ⁴ `adx-avx512-ifma` with AVX512-IFMA (the presign pool's many-nonce path).
//! ⁵ the portable field's `u128` products compile to MUL/UMULH pairs on aarch64.
//!
//! Every profile this CPU supports is listed by [`Backend::available`]; testing each covers
//! every implementation the CPU can run. A `#[target_feature]` function is only reachable
//! through a token ([`Avx2`], [`Vaes`], [`Gfni`], [`Avx512`], [`Bmi2`], [`Adx`]), and a token
//! can only be obtained when the running CPU has its features, so calling a SIMD backend on a
//! CPU without them cannot be written by mistake.
//!
//! The library reads no environment variables. Valgrind emulates none of ADX, AVX-512, GFNI
//! and VAES, so under it the `avx2` profile (without the field's ADX path) is the best.

use core::fmt;
use core::sync::atomic::{AtomicU16, Ordering};

/// A profile of implementations, selected once per keyed object or per call of a keyless
/// function. See the module documentation for what each gives every algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Backend {
    /// Portable constant-time Rust, on every CPU.
    Portable,
    /// x86-64 with AVX2, AES-NI and PCLMULQDQ (Haswell and later, Zen and later).
    Avx2,
    /// `Avx2` plus VAES and VPCLMULQDQ on 256-bit registers (Zen 3 and later, Ice Lake and
    /// later client cores).
    Avx2Vaes,
    /// `Avx2` plus GFNI on 256-bit registers, without AVX-512 (Alder Lake and later client
    /// cores, Atom-core servers).
    Avx2Gfni,
    /// AVX-512 F/BW/VL/DQ with GFNI, VAES and VPCLMULQDQ (Ice Lake server and later, Zen 4
    /// and later).
    Avx512,
    /// aarch64 with NEON and the AES and PMULL instructions (the Armv8 Cryptographic
    /// Extension: Graviton, Kunpeng, Ampere, Apple and most other arm64 cores).
    Neon,
    /// `Neon` plus the SM3 and SM4 instructions (Armv8.2 FEAT_SM3 and FEAT_SM4: Yitian 710,
    /// some Kunpeng and Phytium cores).
    NeonSm,
}

impl Backend {
    const ALL: [Backend; 7] = [
        Backend::Portable,
        Backend::Avx2,
        Backend::Avx2Vaes,
        Backend::Avx2Gfni,
        Backend::Avx512,
        Backend::Neon,
        Backend::NeonSm,
    ];

    /// Every profile this CPU can run, slowest first. Always starts with
    /// [`Backend::Portable`].
    pub fn available() -> Vec<Backend> {
        Self::ALL.into_iter().filter(|b| b.is_available()).collect()
    }

    /// The fastest profile this CPU can run; what the library uses when nothing is forced.
    pub fn best() -> Backend {
        Self::ALL
            .into_iter()
            .rev()
            .find(|b| b.is_available())
            .unwrap_or(Backend::Portable)
    }

    /// Whether this CPU can run the profile.
    pub fn is_available(self) -> bool {
        let f = features();
        match self {
            Backend::Portable => true,
            Backend::Avx2 => f & AVX2 == AVX2,
            Backend::Avx2Vaes => f & VAES == VAES,
            Backend::Avx2Gfni => f & GFNI == GFNI,
            Backend::Avx512 => f & AVX512 == AVX512,
            Backend::Neon => f & NEON == NEON,
            Backend::NeonSm => f & NEON_SM == NEON_SM,
        }
    }

    /// Lower-case name, as benchmarks and test output print it.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Portable => "portable",
            Backend::Avx2 => "avx2",
            Backend::Avx2Vaes => "avx2-vaes",
            Backend::Avx2Gfni => "avx2-gfni",
            Backend::Avx512 => "avx512",
            Backend::Neon => "neon",
            Backend::NeonSm => "neon-sm",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The profile asked for is not supported by this CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnsupportedBackend(pub Backend);

impl fmt::Display for UnsupportedBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "this CPU does not support the {} backend", self.0)
    }
}

impl std::error::Error for UnsupportedBackend {}

/// One algorithm's choice of implementation: an enum per algorithm, each variant holding the
/// token its code needs. The one pattern every algorithm selects its backend by.
pub(crate) trait Implementation: Copy {
    /// The best implementation within `profile`, which this CPU supports.
    fn within(profile: Backend) -> Self;

    /// What the implementation uses, e.g. `vaes-avx2`.
    fn name(self) -> &'static str;

    /// The best implementation for this CPU.
    #[inline]
    fn best() -> Self {
        Self::within(Backend::best())
    }

    /// The implementation within a forced profile; an error if this CPU cannot run it.
    #[cfg_attr(not(any(feature = "hazmat", test, shangmi_ctgrind)), allow(dead_code))]
    fn for_backend(profile: Backend) -> Result<Self, UnsupportedBackend> {
        if profile.is_available() {
            Ok(Self::within(profile))
        } else {
            Err(UnsupportedBackend(profile))
        }
    }
}

// The feature bits; each token's requirement is a set of them.
const AVX2_BASE: u16 = 1 << 0; // AVX2, SSSE3, SSE4.1
const AES: u16 = 1 << 1;
const PCLMUL: u16 = 1 << 2;
const BMI: u16 = 1 << 3; // BMI1 and BMI2
const ADX_BIT: u16 = 1 << 4;
const VAES_BIT: u16 = 1 << 5; // VAES and VPCLMULQDQ
const GFNI_BIT: u16 = 1 << 6;
const AVX512_BASE: u16 = 1 << 7; // AVX-512 F, BW, VL, DQ
const IFMA: u16 = 1 << 8;
/// Not a feature: the cores are AMD's (or Hygon's, the same design), a tuning hint.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const AMD_CORE: u16 = 1 << 9;
/// Not a feature either: AMD's family 19h (Zen 3 and Zen 4), whose AVX-512 (Zen 4's) runs
/// 512-bit operations as two halves on 256-bit units.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const AMD_HALF_WIDTH_512: u16 = 1 << 13;
// aarch64: Advanced SIMD; AES with PMULL (one Rust feature, `aes`); SM3 with SM4 (`sm4`).
const ASIMD: u16 = 1 << 10;
const ARM_AES: u16 = 1 << 11;
const ARM_SM: u16 = 1 << 12;
const KNOWN: u16 = 1 << 15;

const AVX2: u16 = AVX2_BASE | AES | PCLMUL;
const VAES: u16 = AVX2 | VAES_BIT;
const GFNI: u16 = AVX2 | GFNI_BIT;
const AVX512: u16 = VAES | GFNI_BIT | AVX512_BASE | BMI | ADX_BIT;
const NEON: u16 = ASIMD | ARM_AES;
const NEON_SM: u16 = NEON | ARM_SM;

static FEATURES: AtomicU16 = AtomicU16::new(0);

/// The features of this CPU, probed on first use and cached.
#[inline]
fn features() -> u16 {
    let f = FEATURES.load(Ordering::Relaxed);
    if f & KNOWN != 0 {
        return f;
    }
    let f = probe() | KNOWN;
    FEATURES.store(f, Ordering::Relaxed);
    f
}

#[cfg(target_arch = "x86_64")]
fn probe() -> u16 {
    use std::arch::is_x86_feature_detected as has;
    let bit = |yes: bool, b: u16| if yes { b } else { 0 };
    bit(has!("avx2") && has!("ssse3") && has!("sse4.1"), AVX2_BASE)
        | bit(has!("aes"), AES)
        | bit(has!("pclmulqdq"), PCLMUL)
        | bit(has!("bmi1") && has!("bmi2"), BMI)
        | bit(has!("adx"), ADX_BIT)
        | bit(has!("vaes") && has!("vpclmulqdq"), VAES_BIT)
        | bit(has!("gfni"), GFNI_BIT)
        | bit(
            has!("avx512f") && has!("avx512bw") && has!("avx512vl") && has!("avx512dq"),
            AVX512_BASE,
        )
        | bit(has!("avx512ifma"), IFMA)
        | bit(amd_vendor(), AMD_CORE)
        | bit(amd_vendor() && family() == 0x19, AMD_HALF_WIDTH_512)
}

/// The CPU's family as CPUID leaf 1 gives it (the extended family added when the base is 0xF).
#[cfg(target_arch = "x86_64")]
fn family() -> u32 {
    let eax = core::arch::x86_64::__cpuid(1).eax;
    let base = (eax >> 8) & 0xf;
    if base == 0xf {
        base + ((eax >> 20) & 0xff)
    } else {
        base
    }
}

#[cfg(target_arch = "x86_64")]
fn amd_vendor() -> bool {
    let id = core::arch::x86_64::__cpuid(0);
    let mut vendor = [0u8; 12];
    for (chunk, reg) in vendor.chunks_mut(4).zip([id.ebx, id.edx, id.ecx]) {
        chunk.copy_from_slice(&reg.to_le_bytes());
    }
    &vendor == b"AuthenticAMD" || &vendor == b"HygonGenuine"
}

/// Whether the cores are AMD's (or Hygon's): where two implementations with the same features
/// measure differently by vendor, the choice between them asks this (cached with the features).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) fn amd_cores() -> bool {
    features() & AMD_CORE != 0
}

/// Whether the cores are AMD's family 19h, where AVX-512 is split over 256-bit units (Zen 4;
/// Zen 3, the same family, has no AVX-512): where a 512-bit kernel loses to a 256-bit one
/// there, as measured, the choice asks this. Zen 5 (family 1Ah) has full-width units.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) fn amd_half_width_512() -> bool {
    features() & AMD_HALF_WIDTH_512 != 0
}

#[cfg(target_arch = "aarch64")]
fn probe() -> u16 {
    use std::arch::is_aarch64_feature_detected as has;
    let bit = |yes: bool, b: u16| if yes { b } else { 0 };
    bit(has!("neon"), ASIMD) | bit(has!("aes"), ARM_AES) | bit(has!("sm4"), ARM_SM)
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn probe() -> u16 {
    0
}

/// Declares a zero-sized witness that the CPU has the features in `$need`; only `get` makes
/// one.
macro_rules! token {
    ($(#[$doc:meta])* $name:ident = $need:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub struct $name(());

        impl $name {
            /// The token, if this CPU has the features.
            #[inline]
            pub fn get() -> Option<Self> {
                (features() & ($need) == ($need)).then_some($name(()))
            }
        }
    };
}

token!(
    /// Witness of AVX2, SSSE3, SSE4.1, AES-NI and PCLMULQDQ (the `avx2` profile).
    Avx2 = AVX2
);
token!(
    /// Witness of BMI1 and BMI2 (SM3's rotations without a flag dependency).
    Bmi2 = BMI
);
token!(
    /// Witness of BMI2 and ADX (the SM2 field's MULX/ADCX/ADOX multiplication).
    Adx = BMI | ADX_BIT
);
token!(
    /// Witness of the `avx2` features plus VAES and VPCLMULQDQ on 256-bit registers.
    Vaes = VAES
);
token!(
    /// Witness of the `avx2` features plus GFNI.
    Gfni = GFNI
);
token!(
    /// Witness of the `avx512` profile (which includes every other token's features).
    Avx512 = AVX512
);
token!(
    /// Witness of the `avx512` profile and AVX512-IFMA (52-bit multiply-add, which the SM2
    /// many-nonce path uses).
    Avx512Ifma = AVX512 | IFMA
);

/// The lesser tokens a richer one implies.
macro_rules! implies {
    ($from:ident => $($method:ident: $to:ident),*) => {
        impl $from {
            $(
                #[doc = concat!("The [`", stringify!($to), "`] token these features include.")]
                #[inline]
                pub fn $method(self) -> $to {
                    $to(())
                }
            )*
        }
    };
}

token!(
    /// Witness of aarch64 NEON with the AES and PMULL instructions (the `neon` profile).
    NeonAes = NEON
);
token!(
    /// Witness of the `neon` features plus the SM3 and SM4 instructions.
    NeonSm = NEON_SM
);

implies!(NeonSm => neon_aes: NeonAes);
implies!(Vaes => avx2: Avx2);
implies!(Gfni => avx2: Avx2);
implies!(Avx512 => avx2: Avx2, bmi2: Bmi2, adx: Adx, vaes: Vaes, gfni: Gfni);
implies!(Avx512Ifma => avx512: Avx512);

#[cfg(all(any(test, shangmi_ctgrind), target_arch = "x86_64"))]
impl Avx512Ifma {
    /// A token on any CPU, for the unit tests and the constant-time check: there the IFMA
    /// lanes run on scalar stand-ins (`sm2::arithmetic::x86_ifma_emulated`).
    pub(crate) fn emulated() -> Self {
        Avx512Ifma(())
    }
}

impl Avx512 {
    /// The IFMA extension token, if this CPU also has AVX512-IFMA.
    #[inline]
    pub fn with_ifma(self) -> Option<Avx512Ifma> {
        Avx512Ifma::get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_are_ordered_and_portable_is_always_there() {
        let all = Backend::available();
        assert_eq!(all[0], Backend::Portable);
        assert_eq!(*all.last().unwrap(), Backend::best());
        assert!(all.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(Avx2::get().is_some(), Backend::Avx2.is_available());
        assert_eq!(Vaes::get().is_some(), Backend::Avx2Vaes.is_available());
        assert_eq!(Gfni::get().is_some(), Backend::Avx2Gfni.is_available());
        assert_eq!(Avx512::get().is_some(), Backend::Avx512.is_available());
        // A richer profile needs everything a lesser one does.
        for b in &all[1..] {
            let base = if *b >= Backend::Neon {
                Backend::Neon
            } else {
                Backend::Avx2
            };
            assert!(base.is_available(), "{b} without {base}");
        }
        if Backend::Avx512.is_available() {
            assert!(Backend::Avx2Vaes.is_available() && Backend::Avx2Gfni.is_available());
        }
        assert_eq!(NeonAes::get().is_some(), Backend::Neon.is_available());
        assert_eq!(NeonSm::get().is_some(), Backend::NeonSm.is_available());
    }
}
