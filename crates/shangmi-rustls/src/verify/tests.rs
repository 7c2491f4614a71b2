use der::asn1::{Any, ObjectIdentifier};
use der::{Encode, Tag};
use shangmi_pki::oid::{EC_PUBLIC_KEY, SM2, SM2_WITH_SM3};
use x509_cert::spki::AlgorithmIdentifierOwned;

/// An AlgorithmIdentifier's contents as the der crate encodes it.
fn contents(oid: ObjectIdentifier, parameters: Option<Any>) -> Vec<u8> {
    let der = AlgorithmIdentifierOwned { oid, parameters }
        .to_der()
        .unwrap();
    der[2..].to_vec()
}

#[test]
fn the_compile_time_encodings_are_der() {
    assert_eq!(
        super::ids::EC_PUBLIC_KEY_SM2,
        contents(EC_PUBLIC_KEY, Some(Any::from(&SM2)))
    );
    assert_eq!(super::ids::SM2_BARE, contents(SM2, None));
    assert_eq!(super::ids::SM2_WITH_SM3_ALG, contents(SM2_WITH_SM3, None));
    let null = Any::new(Tag::Null, Vec::new()).unwrap();
    assert_eq!(
        super::ids::SM2_WITH_SM3_NULL,
        contents(SM2_WITH_SM3, Some(null))
    );
}
