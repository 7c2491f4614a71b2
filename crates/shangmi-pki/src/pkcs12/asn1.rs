//! The ASN.1 of RFC 7292: the PFX, its MAC, safe bags, certificate bags, shrouded keys.

use super::*;

/// The most iterations a file being read may ask for (MAC and PBKDF2).
pub(super) const MAX_ITERATIONS: u64 = 10_000_000;

#[derive(Sequence)]
pub(super) struct Pfx {
    pub(super) version: u8,
    pub(super) auth_safe: cms::content_info::ContentInfo,
    pub(super) mac_data: Option<MacData>,
}

#[derive(Sequence)]
pub(super) struct MacData {
    pub(super) mac: DigestInfo,
    pub(super) mac_salt: OctetString,
    #[asn1(default = "one")]
    pub(super) iterations: u64,
}

pub(super) fn one() -> u64 {
    1
}

#[derive(Sequence)]
pub(super) struct DigestInfo {
    pub(super) algorithm: AlgorithmIdentifierOwned,
    pub(super) digest: OctetString,
}

#[derive(Sequence)]
pub(super) struct SafeBag {
    pub(super) bag_id: ObjectIdentifier,
    #[asn1(context_specific = "0", tag_mode = "EXPLICIT")]
    pub(super) bag_value: Any,
    pub(super) bag_attributes: Option<SetOfVec<Attribute>>,
}

#[derive(Sequence)]
pub(super) struct CertBag {
    pub(super) cert_id: ObjectIdentifier,
    #[asn1(context_specific = "0", tag_mode = "EXPLICIT")]
    pub(super) cert_value: OctetString,
}

#[derive(Sequence)]
pub(super) struct EncryptedPrivateKeyInfo {
    pub(super) algorithm: Any,
    pub(super) data: OctetString,
}
