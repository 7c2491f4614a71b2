//! The curve as key files name it: the sm2p256v1 OID, or the curve spelled out as explicit
//! parameters (RFC 3279 `ECParameters`, what `openssl ec -param_enc explicit` and some GM
//! tools write), which are accepted only when every value equals sm2p256v1's. Nothing in a
//! file can change the curve the library computes on.

use der::Sequence;
use der::asn1::{AnyRef, BitStringRef, ObjectIdentifier, OctetStringRef, UintRef};

use crate::sm2::encodings::keyfile::{KeyFileError, SM2_CURVE};

/// prime-field (X9.62).
use crate::oid::PRIME_FIELD;

/// sm2p256v1 (GM/T 0006), big-endian.
const P: [u8; 32] = hex32("FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF00000000FFFFFFFFFFFFFFFF");
const A: [u8; 32] = hex32("FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF00000000FFFFFFFFFFFFFFFC");
const B: [u8; 32] = hex32("28E9FA9E9D9F5E344D5A9E4BCF6509A7F39789F515AB8F92DDBCBD414D940E93");
const GX: [u8; 32] = hex32("32C4AE2C1F1981195F9904466A39C9948FE30BBFF2660BE1715A4589334C74C7");
const GY: [u8; 32] = hex32("BC3736A2F4F6779C59BDCEE36B692153D0A9877CC62A474002DF32E52139F0A0");
const N: [u8; 32] = hex32("FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFF7203DF6B21C6052B53BBF40939D54123");

const fn hex32(s: &str) -> [u8; 32] {
    const fn nibble(c: u8) -> u8 {
        match c {
            b'0'..=b'9' => c - b'0',
            b'A'..=b'F' => c - b'A' + 10,
            _ => panic!("not upper-case hex"),
        }
    }
    let s = s.as_bytes();
    let mut out = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        out[i] = nibble(s[2 * i]) << 4 | nibble(s[2 * i + 1]);
        i += 1;
    }
    out
}

#[derive(Sequence)]
struct FieldId<'a> {
    field_type: ObjectIdentifier,
    prime: UintRef<'a>,
}

#[derive(Sequence)]
struct Curve<'a> {
    a: &'a OctetStringRef,
    b: &'a OctetStringRef,
    seed: Option<BitStringRef<'a>>,
}

#[derive(Sequence)]
struct SpecifiedCurve<'a> {
    version: u8,
    field_id: FieldId<'a>,
    curve: Curve<'a>,
    base: &'a OctetStringRef,
    order: UintRef<'a>,
    cofactor: Option<UintRef<'a>>,
}

/// Equal as unsigned integers: leading zero bytes do not count (field elements written as
/// OCTET STRINGs are sometimes stripped, sometimes padded).
fn same_number(x: &[u8], y: &[u8]) -> bool {
    fn strip(v: &[u8]) -> &[u8] {
        let first = v.iter().position(|&b| b != 0).unwrap_or(v.len());
        &v[first..]
    }
    strip(x) == strip(y)
}

/// Whether `base` is sm2p256v1's generator, uncompressed or compressed.
fn is_generator(base: &[u8]) -> bool {
    match base.split_first() {
        Some((4, xy)) => xy.len() == 64 && xy[..32] == GX && xy[32..] == GY,
        Some((&tag, x)) if tag == 2 || tag == 3 => {
            // Gy is even, so the compressed generator starts with 02.
            tag == 2 + (GY[31] & 1) && x == GX
        }
        _ => false,
    }
}

/// Explicit parameters, accepted when they are sm2p256v1's.
fn check_explicit(params: AnyRef<'_>) -> Result<(), KeyFileError> {
    let c: SpecifiedCurve<'_> = params
        .decode_as()
        .map_err(|_| KeyFileError::Malformed("explicit EC parameters"))?;
    let same = c.version == 1
        && c.field_id.field_type == PRIME_FIELD
        && same_number(c.field_id.prime.as_bytes(), &P)
        && same_number(c.curve.a.as_bytes(), &A)
        && same_number(c.curve.b.as_bytes(), &B)
        && is_generator(c.base.as_bytes())
        && same_number(c.order.as_bytes(), &N)
        && c.cofactor.is_none_or(|h| same_number(h.as_bytes(), &[1]));
    if same {
        Ok(())
    } else {
        Err(KeyFileError::Unsupported(
            "explicit curve parameters that are not sm2p256v1's".into(),
        ))
    }
}

/// The curve field of a key: the sm2p256v1 OID or the same curve spelled out.
pub(crate) fn check_curve(params: AnyRef<'_>) -> Result<(), KeyFileError> {
    if let Ok(curve) = params.decode_as::<ObjectIdentifier>() {
        return if curve == SM2_CURVE {
            Ok(())
        } else {
            Err(KeyFileError::Unsupported(format!(
                "curve {curve} (expected sm2p256v1 {SM2_CURVE})"
            )))
        };
    }
    if der::Tagged::tag(&params) == der::Tag::Sequence {
        return check_explicit(params);
    }
    Err(KeyFileError::Unsupported(
        "curve parameters that are neither a named curve nor explicit (implicitCA)".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use der::{Decode, Encode};

    fn explicit(base_compressed: bool, b: [u8; 32]) -> Vec<u8> {
        let mut base = vec![4u8];
        base.extend_from_slice(&GX);
        base.extend_from_slice(&GY);
        if base_compressed {
            base.truncate(33);
            base[0] = 2;
        }
        let mut p = vec![0u8];
        p.extend_from_slice(&P);
        let mut n = vec![0u8];
        n.extend_from_slice(&N);
        SpecifiedCurve {
            version: 1,
            field_id: FieldId {
                field_type: PRIME_FIELD,
                prime: UintRef::new(&P).unwrap(),
            },
            curve: Curve {
                a: OctetStringRef::new(&A).unwrap(),
                b: OctetStringRef::new(&b).unwrap(),
                seed: None,
            },
            base: OctetStringRef::new(&base).unwrap(),
            order: UintRef::new(&N).unwrap(),
            cofactor: Some(UintRef::new(&[1]).unwrap()),
        }
        .to_der()
        .unwrap()
    }

    #[test]
    fn only_sm2p256v1_passes() {
        for compressed in [false, true] {
            let der = explicit(compressed, B);
            assert_eq!(check_curve(AnyRef::from_der(&der).unwrap()), Ok(()));
        }
        let mut other_b = B;
        other_b[31] ^= 1;
        let der = explicit(false, other_b);
        assert!(matches!(
            check_curve(AnyRef::from_der(&der).unwrap()),
            Err(KeyFileError::Unsupported(_))
        ));
        let p256 = crate::oid::P256.to_der().unwrap();
        assert!(check_curve(AnyRef::from_der(&p256).unwrap()).is_err());
        let sm2 = SM2_CURVE.to_der().unwrap();
        assert_eq!(check_curve(AnyRef::from_der(&sm2).unwrap()), Ok(()));
        let null = AnyRef::NULL.to_der().unwrap();
        assert!(check_curve(AnyRef::from_der(&null).unwrap()).is_err());
    }
}
