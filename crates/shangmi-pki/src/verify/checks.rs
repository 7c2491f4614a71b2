//! The rules each certificate on a path is held to: validity, key usage and basic constraints,
//! the issuer's right to sign, and revocation against the CRLs given.

use std::time::SystemTime;

use x509_cert::Certificate;
use x509_cert::crl::CertificateList;
use x509_cert::ext::pkix::{BasicConstraints, KeyUsage, KeyUsages};

use super::{Verifier, chain_err, extension};
use crate::{Cert, Error, Rule};

impl Verifier {
    /// Rules every certificate on the path keeps: validity, no unknown critical extension.
    pub(super) fn check_one(&self, c: &Certificate, at: SystemTime) -> Result<(), Error> {
        let v = c.tbs_certificate().validity();
        let (from, to) = (v.not_before.to_system_time(), v.not_after.to_system_time());
        if at < from {
            return Err(chain_err(
                c,
                Rule::Validity,
                format!("not valid before {}", v.not_before),
            ));
        }
        if at > to {
            return Err(chain_err(
                c,
                Rule::Validity,
                format!("expired at {}", v.not_after),
            ));
        }
        if let Some(exts) = c.tbs_certificate().extensions() {
            for e in exts.iter().filter(|e| e.critical) {
                if !crate::oid::extension(&e.extn_id).is_some_and(|k| k.critical.certificate) {
                    return Err(chain_err(
                        c,
                        Rule::CriticalExtension,
                        format!("critical extension {} is not understood", e.extn_id),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Rules an issuing certificate keeps: it is a CA, its path length allows the CAs below
    /// it, and its key usage (if stated) allows certificate signing.
    pub(super) fn check_issuer(&self, ca: &Certificate, cas_below: usize) -> Result<(), Error> {
        let bc = extension::<BasicConstraints>(ca)?;
        let anchor = self.is_anchor(ca);
        match bc {
            Some(bc) if bc.ca => {
                if let Some(n) = bc.path_len_constraint
                    && cas_below > usize::from(n)
                {
                    return Err(chain_err(
                        ca,
                        Rule::PathLength,
                        format!("path length {n}, but {cas_below} CA certificates follow it"),
                    ));
                }
            }
            // A version 1 anchor (no extensions at all) is a CA by being trusted, as OpenSSL
            // takes it.
            None if anchor && ca.tbs_certificate().extensions().is_none() => {}
            _ => {
                return Err(chain_err(
                    ca,
                    Rule::BasicConstraints,
                    "issues certificates but is not a CA (basic constraints)",
                ));
            }
        }
        if let Some(ku) = extension::<KeyUsage>(ca)?
            && !ku.0.contains(KeyUsages::KeyCertSign)
        {
            return Err(chain_err(ca, Rule::KeyUsage, "key usage lacks keyCertSign"));
        }
        Ok(())
    }

    /// `c` is not revoked by a CRL its issuer signed. A CRL that names the issuer but does not
    /// verify under its key is skipped only when another CRL of that name does (two CAs may
    /// share a name); when none does, that is an error, never silence.
    pub(super) fn check_revocation(
        &self,
        c: &Cert,
        issuer: &Cert,
        at: SystemTime,
    ) -> Result<(), Error> {
        let named = self
            .crls
            .iter()
            .filter(|l| l.raw_issuer() == c.raw_issuer());
        let mut bad_signature = None;
        let mut verified = 0;
        for crl in named {
            let key = issuer.public_key()?;
            if let Err(e) = crate::alg::verify(
                key,
                &self.id,
                crl.signed_part(),
                &crl.signature_algorithm,
                &crl.signature,
            ) {
                bad_signature = Some(e);
                continue;
            }
            verified += 1;
            if let Some(ku) = extension::<KeyUsage>(issuer)?
                && !ku.0.contains(KeyUsages::CRLSign)
            {
                return Err(chain_err(
                    issuer,
                    Rule::KeyUsage,
                    "signed a CRL without cRLSign",
                ));
            }
            check_crl_extensions(issuer, crl)?;
            let this = crl.tbs_cert_list.this_update;
            if at < this.to_system_time() {
                return Err(chain_err(
                    issuer,
                    Rule::Crl,
                    format!("its CRL is not valid before {this}"),
                ));
            }
            if let Some(next) = crl.tbs_cert_list.next_update
                && at > next.to_system_time()
            {
                return Err(chain_err(
                    issuer,
                    Rule::Crl,
                    format!("its CRL expired at {next}"),
                ));
            }
            let serial = c.tbs_certificate().serial_number();
            let revoked = crl
                .tbs_cert_list
                .revoked_certificates
                .iter()
                .flatten()
                .find(|r| &r.serial_number == serial);
            if let Some(r) = revoked {
                return Err(chain_err(
                    c,
                    Rule::Revoked,
                    format!("serial {serial} revoked at {}", r.revocation_date),
                ));
            }
        }
        if let (0, Some(e)) = (verified, bad_signature) {
            return Err(chain_err(issuer, Rule::Crl, format!("its CRL {e}")));
        }
        Ok(())
    }
}

/// A CRL may be used only when every extension it marks critical is one the table accepts
/// there (`oid::EXTENSIONS`): a critical delta-CRL indicator or issuing distribution point,
/// whose scope this verifier does not apply, makes it unusable, as RFC 5280 requires.
fn check_crl_extensions(issuer: &Certificate, crl: &CertificateList) -> Result<(), Error> {
    let tbs = &crl.tbs_cert_list;
    let list = tbs.crl_extensions.iter().flatten().map(|e| (e, false));
    let entries = tbs
        .revoked_certificates
        .iter()
        .flatten()
        .flat_map(|r| r.crl_entry_extensions.iter().flatten())
        .map(|e| (e, true));
    for (e, entry) in list.chain(entries).filter(|(e, _)| e.critical) {
        let known = crate::oid::extension(&e.extn_id).is_some_and(|k| {
            if entry {
                k.critical.crl_entry
            } else {
                k.critical.crl
            }
        });
        if !known {
            return Err(chain_err(
                issuer,
                Rule::Crl,
                format!(
                    "its CRL has a critical extension {} that is not understood",
                    e.extn_id
                ),
            ));
        }
    }
    Ok(())
}
