//! The four TLCP suites GB/T 38636 defines over SM2, SM3 and SM4.

/// How the pre-master secret is agreed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyExchange {
    /// The client SM2-encrypts 48 random bytes to the server's encryption certificate.
    Ecc,
    /// The SM2 key exchange (GM/T 0003.3) on both sides' encryption keys and fresh ephemeral
    /// keys; the client must present certificates.
    Ecdhe,
}

/// How records are protected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protection {
    /// HMAC-SM3, then SM4-CBC with an explicit IV per record.
    Cbc,
    /// SM4-GCM with an explicit 8-byte nonce part, as TLS 1.2's GCM.
    Gcm,
}

/// A TLCP cipher suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Suite {
    /// ECC_SM4_CBC_SM3 (0xE013)
    EccSm4CbcSm3,
    /// ECC_SM4_GCM_SM3 (0xE053)
    EccSm4GcmSm3,
    /// ECDHE_SM4_CBC_SM3 (0xE011)
    EcdheSm4CbcSm3,
    /// ECDHE_SM4_GCM_SM3 (0xE051)
    EcdheSm4GcmSm3,
}

impl Suite {
    /// Every suite, in the order a client offers them by default (ECC before ECDHE: ECDHE
    /// needs client certificates).
    pub const ALL: [Suite; 4] = [
        Suite::EccSm4GcmSm3,
        Suite::EccSm4CbcSm3,
        Suite::EcdheSm4GcmSm3,
        Suite::EcdheSm4CbcSm3,
    ];

    /// The suite's number on the wire.
    pub fn id(self) -> u16 {
        match self {
            Suite::EccSm4CbcSm3 => 0xE013,
            Suite::EccSm4GcmSm3 => 0xE053,
            Suite::EcdheSm4CbcSm3 => 0xE011,
            Suite::EcdheSm4GcmSm3 => 0xE051,
        }
    }

    /// The suite with this number, if it is one of the four.
    pub fn from_id(id: u16) -> Option<Suite> {
        Suite::ALL.into_iter().find(|s| s.id() == id)
    }

    /// The standard's name, e.g. `ECC_SM4_CBC_SM3`.
    pub fn name(self) -> &'static str {
        match self {
            Suite::EccSm4CbcSm3 => "ECC_SM4_CBC_SM3",
            Suite::EccSm4GcmSm3 => "ECC_SM4_GCM_SM3",
            Suite::EcdheSm4CbcSm3 => "ECDHE_SM4_CBC_SM3",
            Suite::EcdheSm4GcmSm3 => "ECDHE_SM4_GCM_SM3",
        }
    }

    /// The key exchange.
    pub fn key_exchange(self) -> KeyExchange {
        match self {
            Suite::EccSm4CbcSm3 | Suite::EccSm4GcmSm3 => KeyExchange::Ecc,
            Suite::EcdheSm4CbcSm3 | Suite::EcdheSm4GcmSm3 => KeyExchange::Ecdhe,
        }
    }

    /// The record protection.
    pub fn protection(self) -> Protection {
        match self {
            Suite::EccSm4CbcSm3 | Suite::EcdheSm4CbcSm3 => Protection::Cbc,
            Suite::EccSm4GcmSm3 | Suite::EcdheSm4GcmSm3 => Protection::Gcm,
        }
    }
}

impl core::fmt::Display for Suite {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}
