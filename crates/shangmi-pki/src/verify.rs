//! Chain verification: from a certificate to a trust anchor through the untrusted
//! certificates given, every signature with the SM2 ID in use, each certificate's validity at
//! the time asked for, basic constraints and path lengths, key usage, name chaining, and
//! revocation against the CRLs given. A failure names the certificate and the rule.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use const_oid::AssociatedOid;
use der::Decode;
use shangmi::sm2::{PrecomputedVerifyingKey, Signature, VerifyingKey};
use x509_cert::Certificate;

use crate::{Cert, Crl, DEFAULT_ID, Error, Rule};

mod checks;

/// No real chain is longer; a loop of cross-certificates stops here.
const MAX_DEPTH: usize = 8;

/// Issuer keys kept precomputed: each costs about 150 KiB and a few verifications' time to
/// build, and then verifies about four times as fast.
const KEY_CACHE: usize = 32;

/// Issuer keys seen by a verifier, precomputed from their second use on: a verifier checks
/// chains to the same anchors and through the same intermediates again and again.
#[derive(Default)]
struct KeyCache(Mutex<HashMap<[u8; 65], Seen>>);

/// How often a key was used, and its precomputation once made.
type Seen = (u32, Option<Arc<PrecomputedVerifyingKey>>);

impl KeyCache {
    fn verify(&self, key: &VerifyingKey, id: &[u8], msg: &[u8], sig: &Signature) -> bool {
        let point = key.to_uncompressed();
        let pre = {
            let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
            if map.len() >= KEY_CACHE && !map.contains_key(&point) {
                map.clear();
            }
            let entry = map.entry(point).or_insert((0, None));
            entry.0 = entry.0.saturating_add(1);
            if entry.1.is_none() && entry.0 >= 2 {
                entry.1 = Some(Arc::new(key.precompute()));
            }
            entry.1.clone()
        };
        match pre {
            Some(p) => p.verify_with_id(id, msg, sig).is_ok(),
            None => key.verify_with_id(id, msg, sig).is_ok(),
        }
    }
}

impl Clone for KeyCache {
    fn clone(&self) -> Self {
        KeyCache(Mutex::new(
            self.0.lock().unwrap_or_else(|e| e.into_inner()).clone(),
        ))
    }
}

impl core::fmt::Debug for KeyCache {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("KeyCache")
    }
}

/// How many issuer signatures one verification may try while it searches for a path: cross
/// certificates and re-keyed CAs give a few candidates per step, never this many.
const SEARCH_BUDGET: usize = 64;

/// Verifies certificates against trust anchors. One verifier may serve many threads; it keeps
/// the issuer keys it meets precomputed, so repeated verifications under the same anchors and
/// intermediates cost about a quarter of the first.
#[derive(Clone, Debug)]
pub struct Verifier {
    anchors: Vec<Cert>,
    id: Vec<u8>,
    at: Option<SystemTime>,
    crls: Vec<Crl>,
    keys: KeyCache,
    /// Whether a trust anchor may sign CMS content whatever its key usage.
    anchor_signers: bool,
}

fn subject(c: &Certificate) -> String {
    c.tbs_certificate().subject().to_string()
}

fn chain_err(c: &Certificate, rule: Rule, detail: impl Into<String>) -> Error {
    Error::Chain {
        subject: subject(c),
        rule,
        detail: detail.into(),
    }
}

fn extension<T: AssociatedOid + for<'a> Decode<'a>>(c: &Certificate) -> Result<Option<T>, Error> {
    c.tbs_certificate()
        .get_extension::<T>()
        .map(|o| o.map(|(_, v)| v))
        .map_err(|e| chain_err(c, Rule::CriticalExtension, format!("extension: {e}")))
}

/// What one step of the path search learned when a candidate issuer did not lead to an
/// anchor; a candidate whose key verified the signature says more than one whose did not.
struct Failure {
    error: Error,
    signed: bool,
}

impl Verifier {
    /// A verifier trusting `anchors`, checking signatures with GM/T 0009's default ID, at the
    /// current time, with no CRLs.
    pub fn new<C: Into<Cert>>(anchors: impl IntoIterator<Item = C>) -> Self {
        Verifier {
            anchors: anchors.into_iter().map(Into::into).collect(),
            id: DEFAULT_ID.to_vec(),
            at: None,
            crls: Vec::new(),
            keys: KeyCache::default(),
            anchor_signers: false,
        }
    }

    /// The SM2 ID the certificates' signatures were made with.
    pub fn with_id(mut self, id: &[u8]) -> Self {
        self.id = id.to_vec();
        self
    }

    /// Lets a trust anchor itself sign CMS content (SignedData, SignedAndEnvelopedData) even
    /// when its key usage is certificate and CRL signing only, as CAs that deliver encryption
    /// keys sign their deliveries with the CA key (www.gmcert.org's, GM/T 0014 flows). Every
    /// other signer still needs digitalSignature or nonRepudiation when it states a usage.
    pub fn allowing_anchor_signers(mut self) -> Self {
        self.anchor_signers = true;
        self
    }

    /// Whether `cert` may sign CMS content as a trust anchor despite its key usage.
    pub(crate) fn anchor_may_sign(&self, cert: &Certificate) -> bool {
        self.anchor_signers && self.is_anchor(cert)
    }

    /// Validity is checked at `at` instead of now.
    pub fn at(mut self, at: SystemTime) -> Self {
        self.at = Some(at);
        self
    }

    /// CRLs to check revocation against (a CRL counts for the issuer that signed it), each
    /// signature checked over its signed part as the CRL holds it ([`Crl::signed_part`]:
    /// read them with [`crls`](crate::crls) to keep the bytes received). The one door for
    /// revocation: TLCP's, RFC 8998's and the gateway's checks come through here.
    pub fn with_crls<L: Into<Crl>>(mut self, crls: impl IntoIterator<Item = L>) -> Self {
        self.crls.extend(crls.into_iter().map(Into::into));
        self
    }

    /// Verifies `cert` up to an anchor, using `untrusted` as intermediates; returns the path,
    /// from `cert` to the anchor. Each signature is checked over the signed part as its
    /// certificate holds it ([`Cert::signed_part`]). Where several certificates could be an
    /// issuer (cross-signed roots, a re-keyed CA under the same name), each is tried in turn,
    /// anchors first, until one leads to an anchor.
    pub fn verify(&self, cert: &Cert, untrusted: &[Cert]) -> Result<Vec<Cert>, Error> {
        self.verify_at(cert, untrusted, self.at.unwrap_or_else(SystemTime::now))
    }

    /// [`Verifier::verify`] with validity checked at `at`: for callers that are given the
    /// time with each chain (a TLS library's verifier), sharing one verifier and its keys.
    pub fn verify_at(
        &self,
        cert: &Cert,
        untrusted: &[Cert],
        at: SystemTime,
    ) -> Result<Vec<Cert>, Error> {
        let mut path = vec![cert.clone()];
        let mut budget = SEARCH_BUDGET;
        match self.extend(&mut path, untrusted, at, &mut budget) {
            Ok(()) => Ok(path),
            Err(f) => Err(f.error),
        }
    }

    /// Extends `path` (whose last certificate is not yet checked) to an anchor, depth first;
    /// on failure `path` is as it was given.
    fn extend(
        &self,
        path: &mut Vec<Cert>,
        untrusted: &[Cert],
        at: SystemTime,
        budget: &mut usize,
    ) -> Result<(), Failure> {
        let current = path
            .last()
            .expect("the path starts with the certificate")
            .clone();
        let fail = |error| Failure {
            error,
            signed: true,
        };
        self.check_one(&current, at).map_err(fail)?;
        if self.is_anchor(&current) {
            return Ok(());
        }
        if path.len() > MAX_DEPTH {
            return Err(fail(chain_err(
                &path[0],
                Rule::TooLong,
                "no anchor within 8 certificates",
            )));
        }
        let mut named = 0;
        let mut best: Option<Failure> = None;
        for candidate in self.anchors.iter().chain(untrusted) {
            if candidate.raw_subject() != current.raw_issuer() || path.contains(candidate) {
                continue;
            }
            named += 1;
            if *budget == 0 {
                return Err(fail(chain_err(
                    &current,
                    Rule::TooLong,
                    format!("gave up the path search after {SEARCH_BUDGET} candidate issuers"),
                )));
            }
            *budget -= 1;
            let attempt = match self.signature_ok(&current, candidate) {
                Err(detail) => Err(Failure {
                    error: chain_err(&current, Rule::Signature, detail),
                    signed: false,
                }),
                Ok(()) => self
                    .check_issuer(candidate, path.len() - 1)
                    .and_then(|()| self.check_revocation(&current, candidate, at))
                    .map_err(fail)
                    .and_then(|()| {
                        path.push(candidate.clone());
                        let r = self.extend(path, untrusted, at, budget);
                        if r.is_err() {
                            path.pop();
                        }
                        r
                    }),
            };
            match attempt {
                Ok(()) => return Ok(()),
                Err(f) => {
                    if best.as_ref().is_none_or(|b| f.signed && !b.signed) {
                        best = Some(f);
                    }
                }
            }
        }
        // A self-signed certificate that is not an anchor ends the search.
        if named == 0 {
            return Err(Failure {
                error: chain_err(
                    &current,
                    Rule::NoIssuer,
                    format!(
                        "no trusted or given certificate is its issuer \"{}\"",
                        current.tbs_certificate().issuer()
                    ),
                ),
                signed: false,
            });
        }
        Err(best.expect("a named candidate left a failure"))
    }

    fn is_anchor(&self, c: &Certificate) -> bool {
        self.anchors.iter().any(|a| a.certificate() == c)
    }

    fn signature_ok(&self, c: &Cert, issuer: &Cert) -> Result<(), String> {
        let key = issuer
            .public_key()
            .map_err(|e| format!("issuer \"{}\": {e}", subject(issuer)))?;
        if c.signature_algorithm() != c.tbs_certificate().signature() {
            return Err("the signature algorithm inside and outside the signed part differ".into());
        }
        let sig = crate::alg::signature_of(c.signature_algorithm(), c.signature())?;
        if self.keys.verify(key, &self.id, c.signed_part(), &sig) {
            Ok(())
        } else {
            Err(crate::alg::does_not_verify(&self.id))
        }
    }
}
