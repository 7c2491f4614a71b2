//! The object identifiers of the algorithms this crate implements and the key and password
//! encodings it reads and writes: one table, which shangmi-pki's `oid` module extends with the
//! certificate, CMS and keystore ones. Sources: GM/T 0006 (the SM arc 1.2.156.10197), RFC 5480
//! and SEC 1 (EC keys), RFC 8018 (PBES2), NIST's CSOR arc (AES, SHA-2), RFC 8702 / PKCS#1.

use der::asn1::ObjectIdentifier as Oid;

/// sm2p256v1 (GM/T 0006): the SM2 curve, and SM2 as a key algorithm where the bare OID is used.
pub const SM2: Oid = Oid::new_unwrap("1.2.156.10197.1.301");
/// sm2sign: the SM2 signature scheme.
pub const SM2_SIGN: Oid = Oid::new_unwrap("1.2.156.10197.1.301.1");
/// sm2exchange: the SM2 key exchange protocol.
pub const SM2_EXCHANGE: Oid = Oid::new_unwrap("1.2.156.10197.1.301.2");
/// sm2encrypt: SM2 public-key encryption (GmSSL also writes `SM2_EXCHANGE` for it).
pub const SM2_ENCRYPT: Oid = Oid::new_unwrap("1.2.156.10197.1.301.3");
/// SM3.
pub const SM3: Oid = Oid::new_unwrap("1.2.156.10197.1.401");
/// HMAC-SM3 (GM/T 0091's PRF for PBKDF2; what GmSSL and shangmi write).
pub const HMAC_SM3: Oid = Oid::new_unwrap("1.2.156.10197.1.401.2");
/// HMAC-SM3 as OpenSSL and Tongsuo number it (their `hmacWithSM3`, written by
/// `openssl pkcs8 -v2prf hmacWithSM3`): read as [`HMAC_SM3`].
pub const HMAC_SM3_OPENSSL: Oid = Oid::new_unwrap("1.2.156.10197.1.401.3.1");
/// SM2 signature with SM3: certificates', requests' and CRLs' signature algorithm.
pub const SM2_WITH_SM3: Oid = Oid::new_unwrap("1.2.156.10197.1.501");
/// SM4 (some writers use the bare arc for ECB).
pub const SM4: Oid = Oid::new_unwrap("1.2.156.10197.1.104");
/// SM4-ECB.
pub const SM4_ECB: Oid = Oid::new_unwrap("1.2.156.10197.1.104.1");
/// SM4-CBC.
pub const SM4_CBC: Oid = Oid::new_unwrap("1.2.156.10197.1.104.2");
/// SM4-OFB.
pub const SM4_OFB: Oid = Oid::new_unwrap("1.2.156.10197.1.104.3");
/// SM4-CFB (128-bit feedback).
pub const SM4_CFB: Oid = Oid::new_unwrap("1.2.156.10197.1.104.4");
/// SM4-CTR.
pub const SM4_CTR: Oid = Oid::new_unwrap("1.2.156.10197.1.104.7");
/// SM4-GCM.
pub const SM4_GCM: Oid = Oid::new_unwrap("1.2.156.10197.1.104.8");
/// SM4-CCM.
pub const SM4_CCM: Oid = Oid::new_unwrap("1.2.156.10197.1.104.9");
/// SM4-XTS.
pub const SM4_XTS: Oid = Oid::new_unwrap("1.2.156.10197.1.104.10");

/// id-ecPublicKey (RFC 5480).
pub const EC_PUBLIC_KEY: Oid = Oid::new_unwrap("1.2.840.10045.2.1");
/// prime-field (X9.62), in explicit curve parameters.
pub const PRIME_FIELD: Oid = Oid::new_unwrap("1.2.840.10045.1.1");
/// prime256v1 / NIST P-256.
pub const P256: Oid = Oid::new_unwrap("1.2.840.10045.3.1.7");

/// PBES2 (RFC 8018).
pub const PBES2: Oid = Oid::new_unwrap("1.2.840.113549.1.5.13");
/// PBKDF2 (RFC 8018).
pub const PBKDF2: Oid = Oid::new_unwrap("1.2.840.113549.1.5.12");
/// PBMAC1 (RFC 8018, and RFC 9579 for PKCS#12).
pub const PBMAC1: Oid = Oid::new_unwrap("1.2.840.113549.1.5.14");
/// hmacWithSHA1.
pub const HMAC_SHA1: Oid = Oid::new_unwrap("1.2.840.113549.2.7");
/// hmacWithSHA224.
pub const HMAC_SHA224: Oid = Oid::new_unwrap("1.2.840.113549.2.8");
/// hmacWithSHA256.
pub const HMAC_SHA256: Oid = Oid::new_unwrap("1.2.840.113549.2.9");
/// hmacWithSHA384.
pub const HMAC_SHA384: Oid = Oid::new_unwrap("1.2.840.113549.2.10");
/// hmacWithSHA512.
pub const HMAC_SHA512: Oid = Oid::new_unwrap("1.2.840.113549.2.11");
/// AES-128-CBC.
pub const AES128_CBC: Oid = Oid::new_unwrap("2.16.840.1.101.3.4.1.2");
/// AES-192-CBC.
pub const AES192_CBC: Oid = Oid::new_unwrap("2.16.840.1.101.3.4.1.22");
/// AES-256-CBC.
pub const AES256_CBC: Oid = Oid::new_unwrap("2.16.840.1.101.3.4.1.42");
/// SHA-1.
pub const SHA1: Oid = Oid::new_unwrap("1.3.14.3.2.26");
/// SHA-256.
pub const SHA256: Oid = Oid::new_unwrap("2.16.840.1.101.3.4.2.1");

/// `oid` as a DER OBJECT IDENTIFIER into `out` at `at`: the position after it.
const fn put_oid(out: &mut [u8], at: usize, oid: &Oid) -> usize {
    let body = oid.as_bytes();
    out[at] = 0x06;
    out[at + 1] = body.len() as u8;
    let mut i = 0;
    while i < body.len() {
        out[at + 2 + i] = body[i];
        i += 1;
    }
    at + 2 + body.len()
}

/// An AlgorithmIdentifier's contents into `out` at `at`: the position after them.
const fn put_algorithm(
    out: &mut [u8],
    at: usize,
    oid: &Oid,
    param: Option<&Oid>,
    null: bool,
) -> usize {
    let mut at = put_oid(out, at, oid);
    if let Some(p) = param {
        at = put_oid(out, at, p);
    }
    if null {
        out[at] = 0x05;
        at += 2;
    }
    at
}

/// An AlgorithmIdentifier's contents in DER, without the outer SEQUENCE, made at compile time
/// for code that needs the bytes themselves (webpki's algorithm matching, OpenSSL's
/// parameters): the algorithm `oid`, then as its parameters the OID `param`, or NULL (`null`),
/// or nothing. `N` is the encoding's length; any other fails the build.
pub const fn algorithm_contents<const N: usize>(
    oid: &Oid,
    param: Option<&Oid>,
    null: bool,
) -> [u8; N] {
    let mut out = [0u8; N];
    let end = put_algorithm(&mut out, 0, oid, param, null);
    assert!(end == N, "N is the encoding's length");
    out
}

/// [`algorithm_contents`] inside its SEQUENCE: a whole AlgorithmIdentifier of `N` bytes.
pub const fn algorithm_identifier<const N: usize>(
    oid: &Oid,
    param: Option<&Oid>,
    null: bool,
) -> [u8; N] {
    let mut out = [0u8; N];
    out[0] = 0x30;
    out[1] = (N - 2) as u8;
    let end = put_algorithm(&mut out, 2, oid, param, null);
    assert!(end == N, "N is the encoding's length");
    out
}
