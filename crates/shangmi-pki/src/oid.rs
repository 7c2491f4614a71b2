//! Every object identifier the crate reads or writes, in one place: the algorithms' (from
//! `shangmi::oid`, re-exported), CMS and PKCS#7 content types (PKCS#7's and GM/T 0010's),
//! PKCS#9 attributes, PKCS#12 bags, and the X.509 extensions in one table that says how each
//! is shown and where a verifier may meet it marked critical.

use der::asn1::ObjectIdentifier as Oid;

pub use shangmi::oid::*;

/// PKCS#7 data.
pub const DATA: Oid = Oid::new_unwrap("1.2.840.113549.1.7.1");
/// PKCS#7 signedData.
pub const SIGNED_DATA: Oid = Oid::new_unwrap("1.2.840.113549.1.7.2");
/// PKCS#7 envelopedData.
pub const ENVELOPED_DATA: Oid = Oid::new_unwrap("1.2.840.113549.1.7.3");
/// PKCS#7 signedAndEnvelopedData.
pub const SIGNED_AND_ENVELOPED_DATA: Oid = Oid::new_unwrap("1.2.840.113549.1.7.4");
/// PKCS#7 encryptedData (PKCS#12's password-encrypted safe contents).
pub const ENCRYPTED_DATA: Oid = Oid::new_unwrap("1.2.840.113549.1.7.6");
/// GM/T 0010 data.
pub const GM_DATA: Oid = Oid::new_unwrap("1.2.156.10197.6.1.4.2.1");
/// GM/T 0010 signedData.
pub const GM_SIGNED_DATA: Oid = Oid::new_unwrap("1.2.156.10197.6.1.4.2.2");
/// GM/T 0010 envelopedData.
pub const GM_ENVELOPED_DATA: Oid = Oid::new_unwrap("1.2.156.10197.6.1.4.2.3");
/// GM/T 0010 signedAndEnvelopedData.
pub const GM_SIGNED_AND_ENVELOPED_DATA: Oid = Oid::new_unwrap("1.2.156.10197.6.1.4.2.4");

/// PKCS#9 contentType.
pub const CONTENT_TYPE: Oid = Oid::new_unwrap("1.2.840.113549.1.9.3");
/// PKCS#9 messageDigest.
pub const MESSAGE_DIGEST: Oid = Oid::new_unwrap("1.2.840.113549.1.9.4");
/// PKCS#9 signingTime.
pub const SIGNING_TIME: Oid = Oid::new_unwrap("1.2.840.113549.1.9.5");
/// PKCS#9 friendlyName.
pub const FRIENDLY_NAME: Oid = Oid::new_unwrap("1.2.840.113549.1.9.20");
/// PKCS#9 localKeyId.
pub const LOCAL_KEY_ID: Oid = Oid::new_unwrap("1.2.840.113549.1.9.21");
/// PKCS#9 x509Certificate (a PKCS#12 certificate bag's type).
pub const X509_CERTIFICATE: Oid = Oid::new_unwrap("1.2.840.113549.1.9.22.1");

/// PKCS#12 keyBag.
pub const KEY_BAG: Oid = Oid::new_unwrap("1.2.840.113549.1.12.10.1.1");
/// PKCS#12 pkcs8ShroudedKeyBag.
pub const SHROUDED_KEY_BAG: Oid = Oid::new_unwrap("1.2.840.113549.1.12.10.1.2");
/// PKCS#12 certBag.
pub const CERT_BAG: Oid = Oid::new_unwrap("1.2.840.113549.1.12.10.1.3");

/// pbeWithSHAAnd3-KeyTripleDES-CBC (PKCS#12's legacy key encryption, read only).
pub const PBE_SHA1_3KEY_3DES: Oid = Oid::new_unwrap("1.2.840.113549.1.12.1.3");
/// pbeWithSHAAnd2-KeyTripleDES-CBC (read only).
pub const PBE_SHA1_2KEY_3DES: Oid = Oid::new_unwrap("1.2.840.113549.1.12.1.4");
/// pbeWithSHAAnd128BitRC2-CBC (read only).
pub const PBE_SHA1_RC2_128: Oid = Oid::new_unwrap("1.2.840.113549.1.12.1.5");
/// pbewithSHAAnd40BitRC2-CBC (PKCS#12's legacy certificate encryption, read only).
pub const PBE_SHA1_RC2_40: Oid = Oid::new_unwrap("1.2.840.113549.1.12.1.6");

/// X.520 commonName.
pub const COMMON_NAME: Oid = Oid::new_unwrap("2.5.4.3");

/// Extended key usage: TLS server authentication.
pub const SERVER_AUTH: Oid = Oid::new_unwrap("1.3.6.1.5.5.7.3.1");
/// Extended key usage: TLS client authentication.
pub const CLIENT_AUTH: Oid = Oid::new_unwrap("1.3.6.1.5.5.7.3.2");
/// Extended key usage: code signing.
pub const CODE_SIGNING: Oid = Oid::new_unwrap("1.3.6.1.5.5.7.3.3");
/// Extended key usage: e-mail protection.
pub const EMAIL_PROTECTION: Oid = Oid::new_unwrap("1.3.6.1.5.5.7.3.4");
/// anyExtendedKeyUsage.
pub const ANY_EXTENDED_KEY_USAGE: Oid = Oid::new_unwrap("2.5.29.37.0");

/// Where an extension may appear marked critical and still be accepted: the verifier applies
/// it there, or it restricts nothing the verifier relies on (RFC 5280 lets a verifier that
/// does not process a critical extension only refuse).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Critical {
    /// In a certificate.
    pub certificate: bool,
    /// In a CRL's extensions.
    pub crl: bool,
    /// In a CRL entry's extensions.
    pub crl_entry: bool,
}

/// An X.509 extension this crate knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExtensionKind {
    /// Its OID.
    pub oid: Oid,
    /// Its name as `x509 show` (and OpenSSL's `-text`) prints it.
    pub name: &'static str,
    /// Where it is accepted when critical.
    pub critical: Critical,
}

const fn ext(
    oid: &str,
    name: &'static str,
    certificate: bool,
    crl: bool,
    crl_entry: bool,
) -> ExtensionKind {
    ExtensionKind {
        oid: Oid::new_unwrap(oid),
        name,
        critical: Critical {
            certificate,
            crl,
            crl_entry,
        },
    }
}

/// The extensions known: how each is shown, and where it may be critical. A delta-CRL
/// indicator or an issuing distribution point changes a CRL's scope, which this verifier does
/// not apply, so a CRL marking either critical is not used.
pub const EXTENSIONS: [ExtensionKind; 17] = [
    ext("2.5.29.19", "X509v3 Basic Constraints", true, false, false),
    ext("2.5.29.15", "X509v3 Key Usage", true, false, false),
    ext("2.5.29.37", "X509v3 Extended Key Usage", true, false, false),
    ext(
        "2.5.29.17",
        "X509v3 Subject Alternative Name",
        true,
        false,
        false,
    ),
    ext(
        "2.5.29.18",
        "X509v3 Issuer Alternative Name",
        true,
        true,
        false,
    ),
    ext(
        "2.5.29.14",
        "X509v3 Subject Key Identifier",
        true,
        false,
        false,
    ),
    ext(
        "2.5.29.35",
        "X509v3 Authority Key Identifier",
        true,
        true,
        false,
    ),
    ext(
        "2.5.29.32",
        "X509v3 Certificate Policies",
        true,
        false,
        false,
    ),
    ext(
        "2.5.29.31",
        "X509v3 CRL Distribution Points",
        true,
        false,
        false,
    ),
    ext(
        "1.3.6.1.5.5.7.1.1",
        "Authority Information Access",
        true,
        true,
        false,
    ),
    ext(
        "2.5.29.16",
        "X509v3 Private Key Usage Period",
        true,
        false,
        false,
    ),
    ext(
        "2.5.29.9",
        "X509v3 Subject Directory Attributes",
        true,
        false,
        false,
    ),
    ext("2.5.29.20", "X509v3 CRL Number", false, true, false),
    ext("2.5.29.46", "X509v3 Freshest CRL", false, true, false),
    ext("2.5.29.21", "X509v3 CRL Reason Code", false, false, true),
    ext("2.5.29.24", "Invalidity Date", false, false, true),
    ext("2.5.29.23", "Hold Instruction Code", false, false, true),
];

/// The known extension with this OID.
pub fn extension(oid: &Oid) -> Option<&'static ExtensionKind> {
    EXTENSIONS.iter().find(|e| e.oid == *oid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_extension_is_listed_once() {
        for (i, e) in EXTENSIONS.iter().enumerate() {
            assert!(
                EXTENSIONS[i + 1..].iter().all(|o| o.oid != e.oid),
                "{}",
                e.name
            );
            assert_eq!(extension(&e.oid), Some(e));
        }
    }
}
