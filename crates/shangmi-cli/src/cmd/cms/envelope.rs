//! `cms encrypt`, `cms decrypt`, `cms wrap-key` and `cms unwrap-key`: EnvelopedData and
//! SM2 key envelopes, signed and enveloped data with them.

use std::path::PathBuf;

use clap::Args as ClapArgs;
use shangmi_pki::Verifier;
use shangmi_pki::cms::{CmsSigner, Flavor};
use shangmi_pki::envelope::{ContentCipher, Envelope, RecipientName, WrappedKey};

use super::{Out, certs_of, emit, read_input};
use crate::fail::{Outcome, Result, error, rejected};
use crate::files::Output;
use crate::keyio;

/// EnvelopedData's content cipher.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum CipherArg {
    Sm4Cbc,
    Sm4Gcm,
}

#[derive(ClapArgs)]
pub(super) struct EncryptArgs {
    /// The recipients' certificates (several after one --recipient, or --recipient
    /// repeated).
    #[arg(long, value_name = "CERT", required = true, num_args = 1..)]
    recipient: Vec<PathBuf>,
    /// GM/T 0010's content-type OIDs instead of PKCS#7's.
    #[arg(long)]
    gm: bool,
    /// The content cipher: SM4-CBC (every peer) or SM4-GCM (gmsm's form).
    #[arg(long, value_enum, default_value_t = CipherArg::Sm4Cbc)]
    cipher: CipherArg,
    /// Write each wrapped key as raw C1C2C3 without the 04, as CFCA's SADK does (implies
    /// --gm), instead of GM/T 0009's DER.
    #[arg(long)]
    cfca: bool,
    /// Name recipients by subject key identifier (version 2) instead of issuer and serial.
    #[arg(long)]
    by_key_id: bool,
    /// GmSSL 3's form (GM/T 0010 OIDs, its key-transport label), as PEM `CMS`.
    #[arg(long, conflicts_with_all = ["cfca", "by_key_id"])]
    gmssl: bool,
    /// Also sign, as this certificate (with --sign-key): SignedAndEnvelopedData, SM4-CBC.
    #[arg(long, value_name = "FILE", requires = "sign_key")]
    sign_cert: Option<PathBuf>,
    /// The signer's private key.
    #[arg(long, value_name = "FILE", requires = "sign_cert")]
    sign_key: Option<PathBuf>,
    /// Reads the signer key's password from this file when it is encrypted.
    #[arg(long, value_name = "F")]
    password_file: Option<PathBuf>,
    /// Write PEM (`-----BEGIN PKCS7-----`) instead of DER.
    #[arg(long)]
    pem: bool,
    /// The data to encrypt (default stdin).
    #[arg(short, long, value_name = "IN")]
    input: Option<PathBuf>,
    /// The file to write (default stdout); it appears only when complete.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
}

impl EncryptArgs {
    pub(super) fn run(self) -> Result<Outcome> {
        let EncryptArgs {
            recipient,
            gm,
            cipher,
            cfca,
            by_key_id,
            gmssl,
            sign_cert,
            sign_key,
            password_file,
            pem,
            input,
            output,
        } = self;
        let mut certs = Vec::new();
        for p in &recipient {
            certs.push(certs_of(p)?.remove(0));
        }
        let data = read_input(input.as_deref())?;
        if let (Some(sc), Some(sk)) = (&sign_cert, &sign_key) {
            if cipher != CipherArg::Sm4Cbc || cfca || by_key_id || gmssl {
                return Err(error(
                    "--sign-cert",
                    "signed and enveloped data is written with SM4-CBC and DER keys only",
                ));
            }
            let cert = certs_of(sc)?.remove(0);
            let key = keyio::private_key(sk, password_file.as_deref())?;
            let signers = [CmsSigner {
                cert: &cert,
                key: &key,
            }];
            let flavor = if gm { Flavor::Gm } else { Flavor::Pkcs7 };
            let der =
                shangmi_pki::signed_envelope::sign_and_encrypt(&data, &signers, &certs, flavor)
                    .map_err(|e| error("signing and encrypting", e))?;
            emit(&der, Out::of(pem, false), output.as_deref())?;
            return Ok(Outcome::Ok);
        }
        let how = Envelope {
            flavor: if gm || cfca || gmssl {
                Flavor::Gm
            } else {
                Flavor::Pkcs7
            },
            cipher: match cipher {
                CipherArg::Sm4Cbc => ContentCipher::Sm4Cbc,
                CipherArg::Sm4Gcm => ContentCipher::Sm4Gcm,
            },
            wrapped_key: if cfca {
                WrappedKey::CfcaRaw
            } else if gmssl {
                WrappedKey::Gmssl
            } else {
                WrappedKey::Der
            },
            recipient_name: if by_key_id {
                RecipientName::SubjectKeyId
            } else {
                RecipientName::IssuerAndSerial
            },
        };
        let der = shangmi_pki::envelope::encrypt_with(&data, &certs, &how)
            .map_err(|e| error("encrypting", e))?;
        emit(&der, Out::of(pem, gmssl), output.as_deref())?;
        Ok(Outcome::Ok)
    }
}

#[derive(ClapArgs)]
pub(super) struct DecryptArgs {
    /// The recipient's private key.
    #[arg(long, value_name = "FILE")]
    key: PathBuf,
    /// The recipient's certificate (picks its recipient info; without it each is tried).
    #[arg(long, value_name = "FILE")]
    cert: Option<PathBuf>,
    /// Trusted CA certificates: needed for SignedAndEnvelopedData, whose signers are
    /// verified before anything is written; with it, unsigned input is refused.
    #[arg(long, value_name = "FILE")]
    ca: Vec<PathBuf>,
    /// Lets a CA given with --ca sign the delivery itself, even with a key usage of
    /// certificate and CRL signing only (as CAs that deliver encryption keys do).
    #[arg(long, requires = "ca")]
    allow_ca_signer: bool,
    /// Reads SM4-ECB content (no IV, nothing authenticated), which is refused otherwise.
    #[arg(long)]
    allow_ecb: bool,
    /// Reads the key's password from this file when it is encrypted.
    #[arg(long, value_name = "F")]
    password_file: Option<PathBuf>,
    /// The EnvelopedData or SignedAndEnvelopedData (DER, BER or PEM; default stdin).
    #[arg(short, long, value_name = "IN")]
    input: Option<PathBuf>,
    /// Where the content goes (nothing is written unless decryption succeeds).
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
}

impl DecryptArgs {
    pub(super) fn run(self) -> Result<Outcome> {
        let DecryptArgs {
            key,
            cert,
            ca,
            allow_ca_signer,
            allow_ecb,
            password_file,
            input,
            output,
        } = self;
        let k = keyio::private_key(&key, password_file.as_deref())?;
        let c = cert
            .as_deref()
            .map(certs_of)
            .transpose()?
            .map(|mut v| v.remove(0));
        let message = read_input(input.as_deref())?;
        let name = input
            .as_deref()
            .map_or("stdin".to_string(), |p| p.display().to_string());
        let failed = |e| match e {
            shangmi_pki::Error::Decryption(_)
            | shangmi_pki::Error::BadSignature(_)
            | shangmi_pki::Error::Chain { .. } => rejected(&name, e),
            e => error(&name, e),
        };
        let kind = shangmi_pki::signed_envelope::kind(&message).map_err(|e| error(&name, e))?;
        let content = if kind == shangmi_pki::signed_envelope::CmsKind::SignedAndEnvelopedData {
            if ca.is_empty() {
                return Err(error(
                    &name,
                    "signed and enveloped data: give --ca to verify its signers",
                ));
            }
            let mut anchors = Vec::new();
            for f in &ca {
                anchors.extend(certs_of(f)?);
            }
            let mut v = Verifier::new(anchors);
            if allow_ca_signer {
                v = v.allowing_anchor_signers();
            }
            let opened = shangmi_pki::signed_envelope::decrypt_and_verify(&message, &k, &v)
                .map_err(failed)?;
            for s in &opened.signers {
                eprintln!("signed by: {}", s.tbs_certificate().subject());
            }
            opened.content
        } else if !ca.is_empty() {
            // --ca promises signed delivery (the GM/T key-delivery flow): anyone holding
            // the recipient's certificate can make an unsigned envelope.
            return Err(rejected(
                &name,
                "the message is not signed (EnvelopedData), but --ca asks for signers \
                 verified to it; without --ca it is decrypted unauthenticated",
            ));
        } else if allow_ecb {
            shangmi_pki::envelope::decrypt_allowing_ecb(&message, &k, c.as_deref())
                .map_err(failed)?
        } else {
            shangmi_pki::envelope::decrypt(&message, &k, c.as_deref()).map_err(failed)?
        };
        let mut out = Output::create(output.as_deref())?;
        out.put(&content)?;
        out.commit()?;
        Ok(Outcome::Ok)
    }
}

#[derive(ClapArgs)]
pub(super) struct WrapKeyArgs {
    /// The recipient's certificate.
    #[arg(long, value_name = "CERT")]
    recipient: PathBuf,
    /// The key pair to envelope.
    #[arg(long, value_name = "FILE")]
    key: PathBuf,
    /// Reads the key's password from this file when it is encrypted.
    #[arg(long, value_name = "F")]
    password_file: Option<PathBuf>,
    /// The file to write (default stdout); it appears only when complete.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
}

impl WrapKeyArgs {
    pub(super) fn run(self) -> Result<Outcome> {
        let WrapKeyArgs {
            recipient,
            key,
            password_file,
            output,
        } = self;
        let cert = certs_of(&recipient)?.remove(0);
        let to = shangmi_pki::public_key(cert.tbs_certificate().subject_public_key_info())
            .map_err(|e| error(recipient.display(), e))?;
        let pair = keyio::private_key(&key, password_file.as_deref())?;
        let env = shangmi_pki::envelope_key(&pair, &to).map_err(|e| error("wrap-key", e))?;
        emit(&env, Out::Der, output.as_deref())?;
        Ok(Outcome::Ok)
    }
}

#[derive(ClapArgs)]
pub(super) struct UnwrapKeyArgs {
    /// The recipient's private key.
    #[arg(long, value_name = "FILE")]
    key: PathBuf,
    /// Reads the recipient key's password from this file when it is encrypted.
    #[arg(long, value_name = "F")]
    password_file: Option<PathBuf>,
    /// The envelope (DER or PEM; default stdin).
    #[arg(short, long, value_name = "IN")]
    input: Option<PathBuf>,
    /// Where the key goes (default stdout); written only when the envelope opens.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
}

impl UnwrapKeyArgs {
    pub(super) fn run(self) -> Result<Outcome> {
        let UnwrapKeyArgs {
            key,
            password_file,
            input,
            output,
        } = self;
        let k = keyio::private_key(&key, password_file.as_deref())?;
        let envelope = read_input(input.as_deref())?;
        let name = input
            .as_deref()
            .map_or("stdin".to_string(), |p| p.display().to_string());
        let pair = shangmi_pki::open_enveloped_key(&envelope, &k).map_err(|e| match e {
            shangmi_pki::Error::Decryption(_) => rejected(&name, e),
            e => error(&name, e),
        })?;
        let pem = pair.to_pkcs8_pem().map_err(|e| error("unwrap-key", e))?;
        let mut out = Output::create(output.as_deref())?;
        out.put(pem.as_bytes())?;
        out.commit()?;
        Ok(Outcome::Ok)
    }
}
