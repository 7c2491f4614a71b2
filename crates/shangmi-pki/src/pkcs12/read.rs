//! Reading a keystore: the MAC checked first, then the bags.

use super::*;

/// Reads a PKCS#12 file (DER or BER) with `password` (UTF-8), allowing at most 10,000,000
/// MAC and PBKDF2 iterations.
pub fn read(data: &[u8], password: &[u8]) -> Result<Pkcs12, Error> {
    read_with_limit(data, password, MAX_ITERATIONS)
}

/// [`read`] allowing at most `max_iterations` MAC and PBKDF2 iterations (a file that asks for
/// more is refused before any is run).
pub fn read_with_limit(data: &[u8], password: &[u8], max_iterations: u64) -> Result<Pkcs12, Error> {
    let der = crate::ber::to_der(data)?;
    let pfx = Pfx::from_der(&der).map_err(malformed("PFX"))?;
    if pfx.version != 3 {
        return Err(Error::Unsupported(format!(
            "PKCS#12 version {} (3 is read)",
            pfx.version
        )));
    }
    if pfx.auth_safe.content_type != DATA {
        return Err(Error::Unsupported(format!(
            "authSafe of type {} (only password integrity, type data, is read)",
            pfx.auth_safe.content_type
        )));
    }
    let safe = pfx
        .auth_safe
        .content
        .decode_as::<OctetString>()
        .map_err(malformed("authSafe"))?;
    let mac = match &pfx.mac_data {
        None => "none".to_string(),
        Some(m) => {
            let (want, name) = if m.mac.algorithm.oid == PBMAC1 {
                pbmac1(&m.mac.algorithm, password, safe.as_bytes(), max_iterations)?
            } else {
                classic_mac(m, password, safe.as_bytes(), max_iterations)?
            };
            if !bool::from(want.ct_eq(m.mac.digest.as_bytes())) {
                return Err(failed());
            }
            name
        }
    };
    // The MAC covers the octets as received; what they hold may itself be BER (Java).
    let safe_der = crate::ber::to_der(safe.as_bytes())?;
    let infos: Vec<cms::content_info::ContentInfo> =
        Vec::from_der(&safe_der).map_err(malformed("AuthenticatedSafe"))?;
    let mut out = Pkcs12 {
        keys: Vec::new(),
        certs: Vec::new(),
        mac,
    };
    for ci in &infos {
        let (contents, protection) = safe_contents(ci, password, max_iterations)?;
        let contents = Zeroizing::new(crate::ber::to_der(&contents).map_err(|_| failed())?);
        let bags: Vec<SafeBag> = Vec::from_der(&contents).map_err(|_| failed())?;
        for bag in bags {
            read_bag(bag, &protection, password, max_iterations, &mut out)?;
        }
    }
    Ok(out)
}

/// One AuthenticatedSafe entry's SafeContents: as stored (type data) or decrypted
/// (EncryptedData under PBES2), with the name of its protection.
fn safe_contents(
    ci: &cms::content_info::ContentInfo,
    password: &[u8],
    max_iterations: u64,
) -> Result<(Zeroizing<Vec<u8>>, String), Error> {
    Ok(match ci.content_type {
        o if o == DATA => (
            Zeroizing::new(
                ci.content
                    .decode_as::<OctetString>()
                    .map_err(malformed("SafeContents"))?
                    .as_bytes()
                    .to_vec(),
            ),
            "none".to_string(),
        ),
        o if o == ENCRYPTED_DATA => {
            let ed: cms::encrypted_data::EncryptedData =
                ci.content.decode_as().map_err(malformed("EncryptedData"))?;
            let eci = &ed.enc_content_info;
            let alg = Any::encode_from(&eci.content_enc_alg).map_err(malformed("algorithm"))?;
            let name = pbes2_name(&alg)?;
            let ct = eci
                .encrypted_content
                .as_ref()
                .ok_or_else(|| Error::Malformed("PKCS#12 EncryptedData without content".into()))?;
            let plain =
                decrypt_any(&alg, password, ct.as_bytes(), max_iterations)?.ok_or_else(failed)?;
            (plain, name)
        }
        o => {
            return Err(Error::Unsupported(format!(
                "PKCS#12 content of type {o} (public-key privacy is not read)"
            )));
        }
    })
}

/// One bag into `out`: a key (shrouded or not) or a certificate; CRL, secret and nested bags
/// are not what SM users keep here, and are skipped.
fn read_bag(
    bag: SafeBag,
    protection: &str,
    password: &[u8],
    max_iterations: u64,
    out: &mut Pkcs12,
) -> Result<(), Error> {
    let attributes = attributes(bag.bag_attributes.as_ref());
    match bag.bag_id {
        o if o == SHROUDED_KEY_BAG => {
            let epki: EncryptedPrivateKeyInfo = bag
                .bag_value
                .decode_as()
                .map_err(malformed("shrouded key"))?;
            let protection = pbes2_name(&epki.algorithm)?;
            let plain = decrypt_any(
                &epki.algorithm,
                password,
                epki.data.as_bytes(),
                max_iterations,
            )?
            .ok_or_else(failed)?;
            // A plaintext that is not a key is a wrong password too (CBC cannot tell).
            let key = SigningKey::from_pkcs8_der(&plain).map_err(|_| failed())?;
            out.keys.push(Pkcs12Key {
                key,
                attributes,
                protection,
            });
        }
        o if o == KEY_BAG => {
            let der = Zeroizing::new(bag.bag_value.to_der().map_err(malformed("key"))?);
            let key = SigningKey::from_pkcs8_der(&der)
                .map_err(|e| Error::Unsupported(format!("a key bag: {e}")))?;
            out.keys.push(Pkcs12Key {
                key,
                attributes,
                protection: "none".into(),
            });
        }
        o if o == CERT_BAG => {
            let cb: CertBag = bag.bag_value.decode_as().map_err(malformed("CertBag"))?;
            if cb.cert_id != X509_CERT {
                return Ok(());
            }
            let der = cb.cert_value.as_bytes().to_vec();
            crate::Certificate::from_der(&der)
                .map_err(|e| Error::Malformed(format!("a certificate bag: {e}")))?;
            out.certs.push(Pkcs12Cert {
                der,
                attributes,
                protection: protection.to_string(),
            });
        }
        // CRL, secret and nested bags: not what SM users keep here; skipped.
        _ => {}
    }
    Ok(())
}
