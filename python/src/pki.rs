//! Certificates and CMS: chain verification, SignedData, EnvelopedData and
//! SignedAndEnvelopedData, CFCA .sm2 files, over shangmi-pki.
//! Certificates, CRLs and messages are PEM or DER bytes; failures of a check raise
//! `ChainError` (a chain rule, naming the certificate), `InvalidSignature` (a message's
//! signature) or `DecryptionError`, malformed input `ValueError`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use shangmi_pki::cms::{CmsSigner, Flavor};
use shangmi_pki::{Cert, Verifier};

use crate::error::OrRaise;
use crate::sm2::PrivateKey;
use crate::{Data, InvalidSignature, Owned};

pyo3::create_exception!(
    shangmi,
    ChainError,
    InvalidSignature,
    "A certificate chain does not verify: the message names the certificate and the rule \
     (signature, validity, basic constraints, path length, key usage, issuer, revocation)."
);

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ChainError", m.py().get_type::<ChainError>())?;
    m.add_function(wrap_pyfunction!(verify_certificate, m)?)?;
    m.add_function(wrap_pyfunction!(cms_sign, m)?)?;
    m.add_function(wrap_pyfunction!(cms_verify, m)?)?;
    m.add_function(wrap_pyfunction!(cms_encrypt, m)?)?;
    m.add_function(wrap_pyfunction!(cms_decrypt, m)?)?;
    m.add_function(wrap_pyfunction!(cms_sign_and_encrypt, m)?)?;
    m.add_function(wrap_pyfunction!(cms_decrypt_and_verify, m)?)?;
    m.add_function(wrap_pyfunction!(cfca_open_sm2_file, m)?)?;
    m.add_function(wrap_pyfunction!(cfca_sm2_file, m)?)?;
    m.add_function(wrap_pyfunction!(pkcs12_load, m)?)?;
    m.add_function(wrap_pyfunction!(pkcs12_dump, m)?)?;
    Ok(())
}

/// Every certificate in each of `files` (PEM with several, or DER).
fn certs(files: Vec<Owned>) -> PyResult<Vec<Cert>> {
    let mut out = Vec::new();
    for f in files {
        out.extend(shangmi_pki::certificates(&f.0).or_raise()?);
    }
    Ok(out)
}

fn flavor(gm: bool) -> Flavor {
    if gm { Flavor::Gm } else { Flavor::Pkcs7 }
}

/// Verifies `certificate` up to one of `anchors` through `untrusted`, every signature with
/// the SM2 ID `sm2_id`, at the Unix time `at` (default now), against `crls`. Returns the
/// length of the chain; raises `ChainError` naming the certificate and rule that failed.
#[pyfunction]
#[pyo3(signature = (certificate, anchors, untrusted=vec![], crls=vec![], sm2_id=None, at=None))]
fn verify_certificate(
    py: Python<'_>,
    certificate: Data<'_>,
    anchors: Vec<Owned>,
    untrusted: Vec<Owned>,
    crls: Vec<Owned>,
    sm2_id: Option<Data<'_>>,
    at: Option<u64>,
) -> PyResult<usize> {
    // The certificate and the intermediates keep their bytes: signatures are checked over
    // what their issuers signed.
    let leaf = shangmi_pki::certificates(&certificate)
        .or_raise()?
        .swap_remove(0);
    let mut v = Verifier::new(certs(anchors)?);
    if let Some(id) = sm2_id {
        v = v.with_id(&id);
    }
    if let Some(t) = at {
        v = v.at(std::time::UNIX_EPOCH + std::time::Duration::from_secs(t));
    }
    for l in crls {
        v = v.with_crls(shangmi_pki::crls(&l.0).or_raise()?);
    }
    let others = certs(untrusted)?;
    let path = py.detach(|| v.verify(&leaf, &others)).or_raise()?;
    Ok(path.len())
}

/// SignedData (DER) over `data` by each `(certificate, SM2PrivateKey)` in `signers`, with
/// `extra_certificates` included; `detached` leaves the content out, `gm` writes GM/T 0010's
/// content-type OIDs instead of PKCS#7's, `gmssl` GmSSL 3's own SignedData (which only GmSSL
/// reads).
#[pyfunction]
#[pyo3(signature = (data, signers, extra_certificates=vec![], detached=false, gm=false, gmssl=false))]
fn cms_sign<'py>(
    py: Python<'py>,
    data: Data<'_>,
    signers: Vec<(Owned, Py<PrivateKey>)>,
    extra_certificates: Vec<Owned>,
    detached: bool,
    gm: bool,
    gmssl: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    if gmssl && detached {
        return Err(PyValueError::new_err(
            "GmSSL's SignedData carries its content: detached and gmssl together",
        ));
    }
    let pairs = signer_pairs(&signers)?;
    let extra = certs(extra_certificates)?;
    let out = py
        .detach(|| {
            let s: Vec<CmsSigner<'_>> = pairs
                .iter()
                .map(|(cert, key)| CmsSigner { cert, key })
                .collect();
            if gmssl {
                shangmi_pki::cms::sign_gmssl(&data, &s, &extra)
            } else {
                shangmi_pki::cms::sign(&data, &s, &extra, detached, flavor(gm))
            }
        })
        .or_raise()?;
    Ok(PyBytes::new(py, &out))
}

/// Verifies SignedData (PEM or DER) with every signer's chain to `anchors`; returns the
/// content (attached, or `content` for a detached signature). Raises `InvalidSignature` or
/// `ChainError`, and returns nothing, when any check fails. `at` (Unix time) checks the
/// chain's validity then instead of now; `gmssl` also accepts GmSSL 3's signature form.
#[pyfunction]
#[pyo3(signature = (message, anchors, content=None, at=None, gmssl=false, allow_ca_signer=false))]
fn cms_verify<'py>(
    py: Python<'py>,
    message: Data<'_>,
    anchors: Vec<Owned>,
    content: Option<Data<'_>>,
    at: Option<u64>,
    gmssl: bool,
    allow_ca_signer: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    if gmssl && content.is_some() {
        return Err(PyValueError::new_err(
            "GmSSL's SignedData carries its content: content and gmssl together",
        ));
    }
    let mut v = Verifier::new(certs(anchors)?);
    if let Some(t) = at {
        v = v.at(std::time::UNIX_EPOCH + std::time::Duration::from_secs(t));
    }
    if allow_ca_signer {
        v = v.allowing_anchor_signers();
    }
    let got = py
        .detach(|| {
            if gmssl {
                shangmi_pki::cms::verify_accepting_gmssl(&message, &v)
            } else {
                shangmi_pki::cms::verify(&message, content.as_deref(), &v)
            }
        })
        .or_raise()?;
    Ok(PyBytes::new(py, &got.content))
}

/// EnvelopedData (DER) of `data` for each certificate in `recipients` (SM4-CBC content, its
/// key SM2-encrypted to each), with GM/T 0010's OIDs when `gm`; `cipher="sm4-gcm"` for SM4-GCM
/// content (gmsm's form), `cfca` for CFCA's raw wrapped keys, `by_key_id` to name recipients by
/// subject key identifier, `gmssl` for the form GmSSL 3 reads.
#[pyfunction]
#[pyo3(signature = (data, recipients, gm=false, cipher="sm4-cbc", cfca=false, by_key_id=false, gmssl=false))]
#[allow(clippy::too_many_arguments)]
fn cms_encrypt<'py>(
    py: Python<'py>,
    data: Data<'_>,
    recipients: Vec<Owned>,
    gm: bool,
    cipher: &str,
    cfca: bool,
    by_key_id: bool,
    gmssl: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let to = certs(recipients)?;
    let how = shangmi_pki::envelope::Envelope {
        flavor: flavor(gm || cfca || gmssl),
        cipher: match cipher {
            "sm4-cbc" => shangmi_pki::envelope::ContentCipher::Sm4Cbc,
            "sm4-gcm" => shangmi_pki::envelope::ContentCipher::Sm4Gcm,
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "cipher {other:?}: sm4-cbc or sm4-gcm"
                )));
            }
        },
        wrapped_key: if cfca {
            shangmi_pki::envelope::WrappedKey::CfcaRaw
        } else if gmssl {
            shangmi_pki::envelope::WrappedKey::Gmssl
        } else {
            shangmi_pki::envelope::WrappedKey::Der
        },
        recipient_name: if by_key_id {
            shangmi_pki::envelope::RecipientName::SubjectKeyId
        } else {
            shangmi_pki::envelope::RecipientName::IssuerAndSerial
        },
    };
    let out = py
        .detach(|| shangmi_pki::envelope::encrypt_with(&data, &to, &how))
        .or_raise()?;
    Ok(PyBytes::new(py, &out))
}

/// Decrypts EnvelopedData with `key` (the recipient `certificate` names, or each recipient
/// tried); raises `DecryptionError` and returns nothing when it does not open.
#[pyfunction]
#[pyo3(signature = (message, key, certificate=None))]
fn cms_decrypt<'py>(
    py: Python<'py>,
    message: Data<'_>,
    key: PyRef<'_, PrivateKey>,
    certificate: Option<Data<'_>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let cert = certificate
        .map(|c| shangmi_pki::certificates(&c).map(|mut v| v.remove(0)))
        .transpose()
        .or_raise()?;
    let k = key.inner.clone();
    let out = py
        .detach(|| shangmi_pki::envelope::decrypt(&message, &k, cert.as_deref()))
        .or_raise()?;
    Ok(PyBytes::new(py, &out))
}

/// The (certificate, key) pairs of Python signers, certificates parsed.
fn signer_pairs(
    signers: &[(Owned, Py<PrivateKey>)],
) -> PyResult<Vec<(Cert, shangmi::sm2::SigningKey)>> {
    let mut pairs = Vec::new();
    for (c, k) in signers {
        let cert = shangmi_pki::certificates(&c.0).or_raise()?.remove(0);
        pairs.push((cert, k.get().inner.clone()));
    }
    Ok(pairs)
}

/// SignedAndEnvelopedData (DER) of `data`: signed by each (certificate, key) of `signers`
/// over the content, SM4-CBC encrypted to each of `recipients`; GM/T 0010's OIDs when `gm`.
#[pyfunction]
#[pyo3(signature = (data, signers, recipients, gm=false))]
fn cms_sign_and_encrypt<'py>(
    py: Python<'py>,
    data: Data<'_>,
    signers: Vec<(Owned, Py<PrivateKey>)>,
    recipients: Vec<Owned>,
    gm: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let pairs = signer_pairs(&signers)?;
    let to = certs(recipients)?;
    let out = py
        .detach(|| {
            let s: Vec<CmsSigner<'_>> = pairs
                .iter()
                .map(|(cert, key)| CmsSigner { cert, key })
                .collect();
            shangmi_pki::signed_envelope::sign_and_encrypt(&data, &s, &to, flavor(gm))
        })
        .or_raise()?;
    Ok(PyBytes::new(py, &out))
}

/// Opens SignedAndEnvelopedData with `key` and verifies every signer's signature and chain to
/// `anchors` (at the Unix time `at`, default now); returns the content only when all hold.
/// With `allow_ca_signer`, an anchor may sign it with a certificate-signing-only key (as CAs
/// that deliver encryption keys do). Raises `DecryptionError`, `InvalidSignature` or
/// `ChainError` otherwise.
#[pyfunction]
#[pyo3(signature = (message, key, anchors, at=None, allow_ca_signer=false))]
fn cms_decrypt_and_verify<'py>(
    py: Python<'py>,
    message: Data<'_>,
    key: &PrivateKey,
    anchors: Vec<Owned>,
    at: Option<u64>,
    allow_ca_signer: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let mut v = Verifier::new(certs(anchors)?);
    if let Some(t) = at {
        v = v.at(std::time::UNIX_EPOCH + std::time::Duration::from_secs(t));
    }
    if allow_ca_signer {
        v = v.allowing_anchor_signers();
    }
    let k = key.inner.clone();
    let got = py
        .detach(|| shangmi_pki::signed_envelope::decrypt_and_verify(&message, &k, &v))
        .or_raise()?;
    Ok(PyBytes::new(py, &got.content))
}

/// The key and certificate (DER) in a CFCA `.sm2` file (DER, PEM or Base64) under `password`.
/// Raises `DecryptionError` for a wrong password.
#[pyfunction]
fn cfca_open_sm2_file<'py>(
    py: Python<'py>,
    data: Data<'_>,
    password: Data<'_>,
) -> PyResult<(PrivateKey, Bound<'py, PyBytes>)> {
    let (key, cert) = shangmi_pki::cfca::open_sm2_file(&data, &password).or_raise()?;
    let der = der::Encode::to_der(&cert).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((PrivateKey { inner: key }, PyBytes::new(py, &der)))
}

/// `key` and `certificate` as a CFCA `.sm2` file (DER) under `password`.
#[pyfunction]
fn cfca_sm2_file<'py>(
    py: Python<'py>,
    key: &PrivateKey,
    certificate: Data<'_>,
    password: Data<'_>,
) -> PyResult<Bound<'py, PyBytes>> {
    let cert = shangmi_pki::certificates(&certificate)
        .or_raise()?
        .remove(0);
    let out = shangmi_pki::cfca::sm2_file(&key.inner, &cert, &password).or_raise()?;
    Ok(PyBytes::new(py, &out))
}

/// The keys and certificates of a PKCS#12 keystore (DER or BER) under `password`: a list of
/// `(key, friendly_name)` and a list of `(certificate_der, friendly_name)`. Raises
/// `DecryptionError` for a wrong password or a failed MAC, `ValueError` for what is not read.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn pkcs12_load<'py>(
    py: Python<'py>,
    data: Data<'_>,
    password: Data<'_>,
) -> PyResult<(
    Vec<(PrivateKey, Option<String>)>,
    Vec<(Bound<'py, PyBytes>, Option<String>)>,
)> {
    let (data, password) = (data.to_vec(), zeroize::Zeroizing::new(password.to_vec()));
    let p = py
        .detach(|| shangmi_pki::pkcs12::read(&data, &password))
        .or_raise()?;
    let keys = p
        .keys
        .into_iter()
        .map(|k| (PrivateKey { inner: k.key }, k.attributes.friendly_name))
        .collect();
    let certs = p
        .certs
        .into_iter()
        .map(|c| (PyBytes::new(py, &c.der), c.attributes.friendly_name))
        .collect();
    Ok((keys, certs))
}

/// `key` with `certificate` (and `chain`'s certificates) as a PKCS#12 keystore (DER) under
/// `password`, aliased `name`. `compat=True` writes OpenSSL 3's parameters (AES-256-CBC, a
/// SHA-256 MAC) for readers without SM (BouncyCastle, the JDK); the default is SM4-CBC with an
/// SM3 MAC, as OpenSSL 4.0 and Tongsuo write with their SM options.
#[pyfunction]
#[pyo3(signature = (key, certificate, password, *, chain = Vec::new(), name = None, compat = false))]
fn pkcs12_dump<'py>(
    py: Python<'py>,
    key: &PrivateKey,
    certificate: Data<'_>,
    password: Data<'_>,
    chain: Vec<Owned>,
    name: Option<String>,
    compat: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let leaf = shangmi_pki::certificate_ders(&certificate)
        .or_raise()?
        .into_iter()
        .next()
        .ok_or_else(|| PyValueError::new_err("no certificate"))?;
    let mut extra = Vec::new();
    for c in chain {
        extra.extend(shangmi_pki::certificate_ders(&c.0).or_raise()?);
    }
    let params = if compat {
        shangmi_pki::pkcs12::Pkcs12Params::international()
    } else {
        shangmi_pki::pkcs12::Pkcs12Params::sm()
    };
    let password = zeroize::Zeroizing::new(password.to_vec());
    let out = py
        .detach(|| {
            shangmi_pki::pkcs12::write(
                &[shangmi_pki::pkcs12::Pkcs12Entry {
                    key: &key.inner,
                    cert: &leaf,
                    name: name.as_deref(),
                }],
                &extra,
                &password,
                params,
            )
        })
        .or_raise()?;
    Ok(PyBytes::new(py, &out))
}
