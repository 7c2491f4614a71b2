//! `shangmi cms`: CMS / PKCS#7 with SM2 (GM/T 0010): SignedData signed and verified,
//! EnvelopedData encrypted to recipient certificates and decrypted.

use std::path::PathBuf;

use clap::{Args as ClapArgs, Subcommand};
use shangmi_pki::Verifier;
use shangmi_pki::cms::{CmsSigner, Flavor};
use shangmi_pki::envelope::{ContentCipher, Envelope, RecipientName, WrappedKey};

use crate::fail::{Outcome, Result, error, rejected};
use crate::files::{Output, open_input, read_small};
use crate::keyio;

/// Messages are read whole; the bound keeps a wrong path such as /dev/zero from exhausting
/// memory.
const MESSAGE_LIMIT: u64 = 1 << 30;

#[derive(ClapArgs)]
#[command(after_help = "\
Examples:
  shangmi cms sign --cert alice.pem --key alice.key -i contract.pdf -o contract.p7
  shangmi cms sign --cert alice.pem --key alice.key --detached --gm -i contract.pdf -o contract.p7
  shangmi cms verify --ca ca.pem -i contract.p7 -o contract.pdf
  shangmi cms verify --ca ca.pem --content contract.pdf -i contract.p7
  shangmi cms encrypt --recipient bob.pem --gm -i secret.txt -o secret.p7
  shangmi cms encrypt --recipient bob.pem --cipher sm4-gcm -i secret.txt -o secret.p7
  shangmi cms encrypt --recipient bob.pem --sign-cert alice.pem --sign-key alice.key -i m -o m.p7
  shangmi cms decrypt --key bob.key --ca ca.pem -i m.p7 -o m
  shangmi cms decrypt --key bob.key --cert bob.pem -i secret.p7 -o secret.txt
  shangmi cms wrap-key --recipient bob.pem --key enc.key -o enc.env
  shangmi cms unwrap-key --key bob.key -i enc.env -o enc.key

SignedData carries SM3 digests and SM2 signatures made with the ID 1234567812345678; --gm writes
GM/T 0010's content-type OIDs (1.2.156.10197.6.1.4.2.x) instead of PKCS#7's, and both are read.
EnvelopedData encrypts the content with SM4-CBC (or --cipher sm4-gcm) under a fresh key,
SM2-encrypted to each recipient; decryption reads both, BER or DER, the key in DER or CFCA's raw form.
Exit status: 0 success, 1 a signature, chain or decryption check failed, 2 usage or input error.")]
pub struct Args {
    #[command(subcommand)]
    cmd: Cmd,
}

/// EnvelopedData's content cipher.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum CipherArg {
    Sm4Cbc,
    Sm4Gcm,
}

#[derive(Subcommand)]
enum Cmd {
    /// Sign data into SignedData (DER, or PEM with --pem).
    Sign {
        /// The signer's certificate (repeat with --key for several signers).
        #[arg(long, value_name = "FILE", required = true)]
        cert: Vec<PathBuf>,
        /// The signer's private key, in the order of --cert.
        #[arg(long, value_name = "FILE", required = true)]
        key: Vec<PathBuf>,
        /// More certificates to include (intermediates).
        #[arg(long, value_name = "FILE")]
        certfile: Vec<PathBuf>,
        /// Leave the content out of the message.
        #[arg(long)]
        detached: bool,
        /// GM/T 0010's content-type OIDs instead of PKCS#7's.
        #[arg(long)]
        gm: bool,
        /// GmSSL 3's SignedData (its own signature form, which only GmSSL reads), as PEM
        /// `CMS`.
        #[arg(long)]
        gmssl: bool,
        /// Write PEM (`-----BEGIN PKCS7-----`) instead of DER.
        #[arg(long)]
        pem: bool,
        /// Reads the keys' password from this file when they are encrypted.
        #[arg(long, value_name = "F")]
        password_file: Option<PathBuf>,
        /// The data to sign (default stdin).
        #[arg(short, long, value_name = "IN")]
        input: Option<PathBuf>,
        /// The file to write (default stdout); it appears only when complete.
        #[arg(short, long, value_name = "OUT")]
        output: Option<PathBuf>,
    },
    /// Encrypt data to recipient certificates (EnvelopedData, DER or PEM with --pem).
    Encrypt {
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
    },
    /// Decrypt EnvelopedData with a recipient's key.
    Decrypt {
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
    },
    /// Envelope an SM2 key pair to a recipient (GB/T 35276 SM2EnvelopedKey, DER).
    WrapKey {
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
    },
    /// Open an SM2 key envelope (GB/T 35276 SM2EnvelopedKey) with the recipient's key; the
    /// key pair inside is written as PKCS#8 PEM.
    UnwrapKey {
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
    },
    /// Verify SignedData and its signers' chains; write the content.
    Verify {
        /// Trusted CA certificates (repeat for several files).
        #[arg(long, value_name = "FILE", required = true)]
        ca: Vec<PathBuf>,
        /// The content, for a detached signature.
        #[arg(long, value_name = "FILE")]
        content: Option<PathBuf>,
        /// Also accept GmSSL 3's signature form (no Z, over the encapsulated content's DER).
        #[arg(long, conflicts_with = "content")]
        gmssl: bool,
        /// Lets a CA given with --ca sign the message itself, even with a key usage of
        /// certificate and CRL signing only.
        #[arg(long)]
        allow_ca_signer: bool,
        /// The SignedData (DER or PEM; default stdin).
        #[arg(short, long, value_name = "IN")]
        input: Option<PathBuf>,
        /// Where the verified content goes (nothing is written unless every check passes).
        #[arg(short, long, value_name = "OUT")]
        output: Option<PathBuf>,
    },
}

fn read_input(path: Option<&std::path::Path>) -> Result<Vec<u8>> {
    Ok(open_input(path)?.read_all(MESSAGE_LIMIT)?.to_vec())
}

fn certs_of(path: &std::path::Path) -> Result<Vec<shangmi_pki::Cert>> {
    shangmi_pki::certificates(&read_small(path, 16 << 20)?).map_err(|e| error(path.display(), e))
}

/// PEM as `--pem` asks (`PKCS7`), or as GmSSL reads CMS (`CMS`, its only form).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Out {
    Der,
    Pem,
    GmsslPem,
}

impl Out {
    fn of(pem: bool, gmssl: bool) -> Out {
        match (gmssl, pem) {
            (true, _) => Out::GmsslPem,
            (false, true) => Out::Pem,
            (false, false) => Out::Der,
        }
    }
}

fn emit(bytes: &[u8], form: Out, output: Option<&std::path::Path>) -> Result<()> {
    let text;
    let label = match form {
        Out::Der => None,
        Out::Pem => Some("PKCS7"),
        Out::GmsslPem => Some("CMS"),
    };
    let data = if let Some(label) = label {
        text = der::pem::encode_string(label, der::pem::LineEnding::LF, bytes)
            .map_err(|e| error("PEM", e))?;
        text.as_bytes()
    } else {
        bytes
    };
    let mut out = Output::create(output)?;
    out.put(data)?;
    out.commit()
}

pub fn run(args: Args) -> Result<Outcome> {
    match args.cmd {
        Cmd::WrapKey {
            recipient,
            key,
            password_file,
            output,
        } => {
            let cert = certs_of(&recipient)?.remove(0);
            let to = shangmi_pki::public_key(cert.tbs_certificate().subject_public_key_info())
                .map_err(|e| error(recipient.display(), e))?;
            let pair = keyio::private_key(&key, password_file.as_deref())?;
            let env = shangmi_pki::envelope_key(&pair, &to).map_err(|e| error("wrap-key", e))?;
            emit(&env, Out::Der, output.as_deref())?;
        }
        Cmd::UnwrapKey {
            key,
            password_file,
            input,
            output,
        } => {
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
        }
        Cmd::Encrypt {
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
        } => {
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
        }
        Cmd::Decrypt {
            key,
            cert,
            ca,
            allow_ca_signer,
            allow_ecb,
            password_file,
            input,
            output,
        } => {
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
        }
        Cmd::Sign {
            cert,
            key,
            certfile,
            detached,
            gm,
            gmssl,
            pem,
            password_file,
            input,
            output,
        } => {
            if cert.len() != key.len() {
                return Err(error("--cert/--key", "one key for each certificate"));
            }
            let mut pairs = Vec::new();
            for (c, k) in cert.iter().zip(&key) {
                let certs = shangmi_pki::certificates(&read_small(c, 16 << 20)?)
                    .map_err(|e| error(c.display(), e))?;
                let key = keyio::private_key(k, password_file.as_deref())?;
                pairs.push((certs[0].clone(), key));
            }
            let mut extra = Vec::new();
            for f in &certfile {
                extra.extend(
                    shangmi_pki::certificates(&read_small(f, 16 << 20)?)
                        .map_err(|e| error(f.display(), e))?,
                );
            }
            let data = read_input(input.as_deref())?;
            let signers: Vec<CmsSigner<'_>> = pairs
                .iter()
                .map(|(cert, key)| CmsSigner { cert, key })
                .collect();
            let flavor = if gm { Flavor::Gm } else { Flavor::Pkcs7 };
            let der = if gmssl {
                if detached {
                    return Err(error("--gmssl", "GmSSL's SignedData carries its content"));
                }
                shangmi_pki::cms::sign_gmssl(&data, &signers, &extra)
            } else {
                shangmi_pki::cms::sign(&data, &signers, &extra, detached, flavor)
            }
            .map_err(|e| error("signing", e))?;
            emit(&der, Out::of(pem, gmssl), output.as_deref())?;
        }
        Cmd::Verify {
            ca,
            content,
            gmssl,
            allow_ca_signer,
            input,
            output,
        } => {
            let mut anchors = Vec::new();
            for p in &ca {
                anchors.extend(
                    shangmi_pki::certificates(&read_small(p, 16 << 20)?)
                        .map_err(|e| error(p.display(), e))?,
                );
            }
            let message = read_input(input.as_deref())?;
            let detached = content
                .as_deref()
                .map(|p| read_small(p, MESSAGE_LIMIT).map(|d| d.to_vec()))
                .transpose()?;
            let name = input
                .as_deref()
                .map_or("stdin".to_string(), |p| p.display().to_string());
            let mut v = Verifier::new(anchors);
            if allow_ca_signer {
                v = v.allowing_anchor_signers();
            }
            let verified = if gmssl {
                shangmi_pki::cms::verify_accepting_gmssl(&message, &v)
            } else {
                shangmi_pki::cms::verify(&message, detached.as_deref(), &v)
            };
            let verified = verified.map_err(|e| match e {
                shangmi_pki::Error::BadSignature(_) | shangmi_pki::Error::Chain { .. } => {
                    rejected(&name, e)
                }
                e => error(&name, e),
            })?;
            eprintln!("shangmi: {name}: Verification successful");
            if output.is_some() || detached.is_none() {
                let mut out = Output::create(output.as_deref())?;
                out.put(&verified.content)?;
                out.commit()?;
            }
        }
    }
    Ok(Outcome::Ok)
}
