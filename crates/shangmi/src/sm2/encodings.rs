//! How SM2 keys travel: PKCS#8, SEC1 and SubjectPublicKeyInfo key files in DER and PEM,
//! password encryption (PBES2), and the curve as files name it (OID or explicit parameters).

pub(super) mod ec_params;
pub(super) mod key_forms;
pub(super) mod keyfile;
pub(super) mod pbes2;
