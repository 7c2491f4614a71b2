//! SM2 as the signer `x509-cert`'s builders take: the key, the SM2 ID it signs with, the
//! algorithm identifier it writes.

use der::asn1::BitString;
use shangmi::sm2::{SigningKey, VerifyingKey};
use spki::{
    AlgorithmIdentifierOwned, DynSignatureAlgorithmIdentifier, EncodePublicKey,
    SignatureBitStringEncoding,
};

/// A public key as the builders want it (SubjectPublicKeyInfo DER).
#[derive(Clone)]
pub(crate) struct PublicKey(pub(crate) VerifyingKey);

impl EncodePublicKey for PublicKey {
    fn to_public_key_der(&self) -> spki::Result<der::Document> {
        let der = self
            .0
            .to_public_key_der()
            .map_err(|_| spki::Error::KeyMalformed)?;
        Ok(der::Document::try_from(der)?)
    }
}

/// A DER SM2 signature, as a BIT STRING.
pub(crate) struct DerSignature(Vec<u8>);

impl SignatureBitStringEncoding for DerSignature {
    fn to_bitstring(&self) -> der::Result<BitString> {
        BitString::from_bytes(&self.0)
    }
}

/// A key signing with a given SM2 ID.
pub(crate) struct Signer<'a> {
    pub(crate) key: &'a SigningKey,
    pub(crate) id: &'a [u8],
}

impl signature::Keypair for Signer<'_> {
    type VerifyingKey = PublicKey;

    fn verifying_key(&self) -> PublicKey {
        PublicKey(*self.key.verifying_key())
    }
}

impl DynSignatureAlgorithmIdentifier for Signer<'_> {
    fn signature_algorithm_identifier(&self) -> spki::Result<AlgorithmIdentifierOwned> {
        Ok(crate::alg::sm2_with_sm3())
    }
}

impl signature::Signer<DerSignature> for Signer<'_> {
    fn try_sign(&self, msg: &[u8]) -> Result<DerSignature, signature::Error> {
        let sig = self
            .key
            .sign_with_id(self.id, msg)
            .map_err(|_| signature::Error::new())?;
        Ok(DerSignature(sig.to_der()))
    }
}
