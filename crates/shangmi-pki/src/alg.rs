//! The SM2 algorithm identifiers as certificates write them, and signature verification over a
//! signed structure's TBS bytes.

use der::Encode;
use der::asn1::BitString;
use shangmi::sm2::{Signature, VerifyingKey};
use spki::{AlgorithmIdentifierOwned, SubjectPublicKeyInfoOwned};

use crate::Error;

pub use crate::oid::SM2_WITH_SM3;

/// The SM2 signature algorithm identifier written by default: the OID with parameters absent
/// (GM/T 0015; OpenSSL, gmsm and BouncyCastle write it so). A NULL parameter is read too.
pub(crate) fn sm2_with_sm3() -> AlgorithmIdentifierOwned {
    AlgorithmIdentifierOwned {
        oid: SM2_WITH_SM3,
        parameters: None,
    }
}

/// Checks that `alg` is SM2-with-SM3, with parameters absent or NULL.
pub(crate) fn check_signature_algorithm(alg: &AlgorithmIdentifierOwned) -> Result<(), Error> {
    if alg.oid != SM2_WITH_SM3 {
        return Err(Error::Unsupported(format!(
            "signature algorithm {} (only SM2 with SM3, {SM2_WITH_SM3})",
            alg.oid
        )));
    }
    match &alg.parameters {
        None => Ok(()),
        Some(p) if p.is_null() => Ok(()),
        Some(_) => Err(Error::Unsupported(
            "SM2-with-SM3 with parameters other than NULL".into(),
        )),
    }
}

/// The SM2 public key of a SubjectPublicKeyInfo, in either form met in practice
/// (id-ecPublicKey with the SM2 curve, or the SM2 OID as the algorithm), the curve named or
/// given by explicit parameters.
pub fn public_key(spki: &SubjectPublicKeyInfoOwned) -> Result<VerifyingKey, Error> {
    let der = spki.to_der()?;
    VerifyingKey::from_public_key_der(&der)
        .map_err(|e| Error::Unsupported(format!("subject public key: {e}")))
}

/// Verifies `signature` (a BIT STRING holding a DER SM2 signature) over `tbs` under `key`
/// with `id`.
pub(crate) fn verify(
    key: &VerifyingKey,
    id: &[u8],
    tbs: &[u8],
    alg: &AlgorithmIdentifierOwned,
    signature: &BitString,
) -> Result<(), String> {
    let sig = signature_of(alg, signature)?;
    key.verify_with_id(id, tbs, &sig)
        .map_err(|_| does_not_verify(id))
}

/// The SM2 signature in a signed structure's BIT STRING, its algorithm checked.
pub(crate) fn signature_of(
    alg: &AlgorithmIdentifierOwned,
    signature: &BitString,
) -> Result<Signature, String> {
    check_signature_algorithm(alg).map_err(|e| e.to_string())?;
    let bytes = signature
        .as_bytes()
        .ok_or_else(|| "the signature BIT STRING has unused bits".to_string())?;
    Signature::from_der(bytes).map_err(|_| "the signature is not DER (r, s)".to_string())
}

/// What a signature that does not verify with the SM2 ID `id` is reported as.
pub(crate) fn does_not_verify(id: &[u8]) -> String {
    if id.is_empty() {
        return "does not verify with an empty SM2 ID".to_string();
    }
    let shown = String::from_utf8_lossy(id);
    format!(
        "does not verify with SM2 ID \"{shown}\" (OpenSSL 3 signs with an empty ID unless \
         given -sigopt distid:{shown}; an empty ID can be chosen for it)"
    )
}
