//! What an end-entity certificate may sign, wherever one signs: a TLS or TLCP handshake, or a
//! CMS message. GM/T 0015 issues separate signing and encryption certificates, and the
//! encryption keys are escrowed by the key management centre: a certificate whose key usage
//! is stated and leaves out signing must not authenticate anyone, or the escrow holders could.

use const_oid::db::rfc5280::{ANY_EXTENDED_KEY_USAGE, ID_KP_CLIENT_AUTH, ID_KP_SERVER_AUTH};
use x509_cert::Certificate;
use x509_cert::ext::pkix::{ExtendedKeyUsage, KeyUsage, KeyUsages};

use crate::{Error, Rule};

/// What a certificate's signature is being used for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Purpose {
    /// A TLS or TLCP server's handshake signature.
    ServerAuth,
    /// A TLS or TLCP client's handshake signature.
    ClientAuth,
    /// A signature on a document or message (CMS SignedData, SignedAndEnvelopedData).
    Document,
}

/// Checks that `cert` may sign for `purpose`: its key usage, when present, has
/// digitalSignature (or, for documents, nonRepudiation), and for a handshake its extended key
/// usage, when present, has that side's purpose or anyExtendedKeyUsage.
pub fn check_signing(cert: &Certificate, purpose: Purpose) -> Result<(), Error> {
    let fail = |rule, detail: &str| Error::Chain {
        subject: cert.tbs_certificate().subject().to_string(),
        rule,
        detail: detail.into(),
    };
    let tbs = cert.tbs_certificate();
    let ku = tbs
        .get_extension::<KeyUsage>()
        .map_err(|e| fail(Rule::KeyUsage, &format!("does not parse: {e}")))?;
    if let Some((_, ku)) = ku {
        let ok = ku.0.contains(KeyUsages::DigitalSignature)
            || (purpose == Purpose::Document && ku.0.contains(KeyUsages::NonRepudiation));
        if !ok {
            return Err(fail(
                Rule::KeyUsage,
                match purpose {
                    Purpose::Document => {
                        "may not sign: key usage has neither digitalSignature nor nonRepudiation"
                    }
                    _ => "may not sign a handshake: key usage lacks digitalSignature",
                },
            ));
        }
    }
    check_extended(cert, purpose)
}

/// Checks that `cert`'s extended key usage, when present, allows `purpose` (serverAuth or
/// clientAuth for a handshake, or anyExtendedKeyUsage; documents have no such rule here).
pub fn check_extended(cert: &Certificate, purpose: Purpose) -> Result<(), Error> {
    let fail = |rule, detail: &str| Error::Chain {
        subject: cert.tbs_certificate().subject().to_string(),
        rule,
        detail: detail.into(),
    };
    let wanted = match purpose {
        Purpose::ServerAuth => ID_KP_SERVER_AUTH,
        Purpose::ClientAuth => ID_KP_CLIENT_AUTH,
        Purpose::Document => return Ok(()),
    };
    let eku = cert
        .tbs_certificate()
        .get_extension::<ExtendedKeyUsage>()
        .map_err(|e| fail(Rule::ExtendedKeyUsage, &format!("does not parse: {e}")))?;
    if let Some((_, eku)) = eku
        && !eku
            .0
            .iter()
            .any(|o| *o == wanted || *o == ANY_EXTENDED_KEY_USAGE)
    {
        return Err(fail(
            Rule::ExtendedKeyUsage,
            match purpose {
                Purpose::ServerAuth => "extended key usage lacks serverAuth",
                _ => "extended key usage lacks clientAuth",
            },
        ));
    }
    Ok(())
}
