//! The RFC 8998 suites and groups as one table of rows: code point, standard name, and the
//! rustls object, read by the command line, the gateway's logs and headers, and the docs (as
//! TLCP's suites are rows of `shangmi_tlcp::Suite`).

use rustls::crypto::SupportedKxGroup;
use rustls::{CipherSuite, NamedGroup, SupportedCipherSuite};

/// A TLS 1.3 suite of RFC 8998: its code point, its name, the suite.
pub struct SuiteRow {
    /// The code point.
    pub code: u16,
    /// The standard name (`TLS_SM4_GCM_SM3`).
    pub name: &'static str,
    /// The suite.
    pub suite: SupportedCipherSuite,
}

/// A key exchange group of RFC 8998 (and the hybrid with ML-KEM-768).
pub struct GroupRow {
    /// The code point.
    pub code: u16,
    /// The standard name (`curveSM2`).
    pub name: &'static str,
    /// The group.
    pub group: &'static dyn SupportedKxGroup,
}

/// The suites, in the provider's order of preference.
pub static SUITES: [SuiteRow; 2] = [
    SuiteRow {
        code: 0x00C6,
        name: "TLS_SM4_GCM_SM3",
        suite: crate::TLS13_SM4_GCM_SM3,
    },
    SuiteRow {
        code: 0x00C7,
        name: "TLS_SM4_CCM_SM3",
        suite: crate::TLS13_SM4_CCM_SM3,
    },
];

/// The groups.
pub static GROUPS: [GroupRow; 2] = [
    GroupRow {
        code: 0x0029,
        name: "curveSM2",
        group: crate::CURVE_SM2_GROUP,
    },
    GroupRow {
        code: 0x11EE,
        name: "curveSM2MLKEM768",
        group: crate::CURVE_SM2_MLKEM768_GROUP,
    },
];

/// A suite's standard name: ours from the table, the others as their RFCs name them
/// (`TLS_AES_128_GCM_SHA256`, `TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256`).
pub fn suite_name(s: CipherSuite) -> String {
    let code = u16::from(s);
    if let Some(row) = SUITES.iter().find(|r| r.code == code) {
        return row.name.into();
    }
    let n = s.as_str().map_or_else(|| format!("{s:?}"), str::to_string);
    match n.strip_prefix("TLS13_") {
        Some(rest) => format!("TLS_{rest}"),
        None => n,
    }
}

/// A group's standard name: ours from the table, the others as rustls names them.
pub fn group_name(g: NamedGroup) -> String {
    let code = u16::from(g);
    match GROUPS.iter().find(|r| r.code == code) {
        Some(row) => row.name.into(),
        None => g.as_str().map_or_else(|| format!("{g:?}"), str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rows_name_their_own_objects() {
        for r in &SUITES {
            assert_eq!(u16::from(r.suite.suite()), r.code);
            assert_eq!(suite_name(r.suite.suite()), r.name);
        }
        for r in &GROUPS {
            assert_eq!(u16::from(r.group.name()), r.code);
            assert_eq!(group_name(r.group.name()), r.name);
        }
        assert_eq!(
            suite_name(CipherSuite::TLS13_AES_128_GCM_SHA256),
            "TLS_AES_128_GCM_SHA256"
        );
        assert_eq!(group_name(NamedGroup::X25519), "X25519");
    }
}
