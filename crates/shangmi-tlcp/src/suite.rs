//! The four TLCP suites GB/T 38636 defines over SM2, SM3 and SM4.

/// How the pre-master secret is agreed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyExchange {
    /// The client SM2-encrypts 48 random bytes to the server's encryption certificate.
    Ecc,
    /// The SM2 key exchange (GM/T 0003.3) on both sides' encryption keys and fresh ephemeral
    /// keys; the client must present certificates.
    Ecdhe,
}

/// How records are protected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Protection {
    /// HMAC-SM3, then SM4-CBC with an explicit IV per record.
    Cbc,
    /// SM4-GCM with an explicit 8-byte nonce part, as TLS 1.2's GCM.
    Gcm,
}

/// A TLCP cipher suite: a row of the table below. A suite is its number, its name and the
/// two choices the handshake and the record layer read from it; adding one is adding a row
/// (and its protection, if new). The front ends list and parse suites from [`Suite::ALL`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Suite {
    id: u16,
    name: &'static str,
    key_exchange: KeyExchange,
    protection: Protection,
}

impl Suite {
    /// ECC_SM4_CBC_SM3 (0xE013).
    pub const ECC_SM4_CBC_SM3: Suite =
        Suite::row(0xE013, "ECC_SM4_CBC_SM3", KeyExchange::Ecc, Protection::Cbc);
    /// ECC_SM4_GCM_SM3 (0xE053).
    pub const ECC_SM4_GCM_SM3: Suite =
        Suite::row(0xE053, "ECC_SM4_GCM_SM3", KeyExchange::Ecc, Protection::Gcm);
    /// ECDHE_SM4_CBC_SM3 (0xE011).
    pub const ECDHE_SM4_CBC_SM3: Suite = Suite::row(
        0xE011,
        "ECDHE_SM4_CBC_SM3",
        KeyExchange::Ecdhe,
        Protection::Cbc,
    );
    /// ECDHE_SM4_GCM_SM3 (0xE051).
    pub const ECDHE_SM4_GCM_SM3: Suite = Suite::row(
        0xE051,
        "ECDHE_SM4_GCM_SM3",
        KeyExchange::Ecdhe,
        Protection::Gcm,
    );

    /// Every suite, in the order a client offers them by default (ECC before ECDHE: ECDHE
    /// needs client certificates).
    pub const ALL: [Suite; 4] = [
        Suite::ECC_SM4_GCM_SM3,
        Suite::ECC_SM4_CBC_SM3,
        Suite::ECDHE_SM4_GCM_SM3,
        Suite::ECDHE_SM4_CBC_SM3,
    ];

    const fn row(
        id: u16,
        name: &'static str,
        key_exchange: KeyExchange,
        protection: Protection,
    ) -> Suite {
        Suite {
            id,
            name,
            key_exchange,
            protection,
        }
    }

    /// The suite's number on the wire.
    pub fn id(self) -> u16 {
        self.id
    }

    /// The suite with this number, if it is one of [`Suite::ALL`].
    pub fn from_id(id: u16) -> Option<Suite> {
        Suite::ALL.into_iter().find(|s| s.id == id)
    }

    /// The standard's name, e.g. `ECC_SM4_CBC_SM3`.
    pub fn name(self) -> &'static str {
        self.name
    }

    /// The suite with this name, in any case and with `-` for `_` (`ecc-sm4-gcm-sm3` too).
    pub fn from_name(name: &str) -> Option<Suite> {
        let same = |s: &Suite| {
            s.name.len() == name.len()
                && s.name
                    .bytes()
                    .zip(name.bytes())
                    .all(|(a, b)| a == b.to_ascii_uppercase() || (a == b'_' && b == b'-'))
        };
        Suite::ALL.into_iter().find(same)
    }

    /// The key exchange.
    pub fn key_exchange(self) -> KeyExchange {
        self.key_exchange
    }

    /// The record protection.
    pub fn protection(self) -> Protection {
        self.protection
    }
}

impl core::fmt::Display for Suite {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_is_found_by_its_number_and_its_name() {
        for s in Suite::ALL {
            assert_eq!(Suite::from_id(s.id()), Some(s));
            assert_eq!(Suite::from_name(s.name()), Some(s));
            let cli = s.name().to_ascii_lowercase().replace('_', "-");
            assert_eq!(Suite::from_name(&cli), Some(s));
        }
        assert_eq!(Suite::from_id(0xE012), None);
        assert_eq!(Suite::from_name("ECC_SM4_CBC"), None);
        assert_eq!(Suite::from_name("ECC_SM4_CBC_SM3X"), None);
        let ids: std::collections::HashSet<u16> = Suite::ALL.iter().map(|s| s.id()).collect();
        assert_eq!(ids.len(), Suite::ALL.len());
    }
}
