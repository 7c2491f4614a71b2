//! TLS 1.3 at the connection level: RFC 8998 on shangmi's rustls provider beside rustls with
//! aws-lc-rs doing X25519 or P-256 + ECDSA-P256 + AES-128-GCM, and beside OpenSSL 4.0's own
//! RFC 8998 (`tls_openssl4`, out of process).
//!
//! Client and server run in this thread over memory buffers; the time each side spends in
//! its own calls (creating the connection, reading, processing, writing) is summed apart, so
//! a full handshake gives one rate per side, as rustls' own benchmark reports them. Resumed
//! handshakes use TLS 1.3 tickets. Records: 16 KiB of application data sealed by one side and
//! opened by the other, beside the same work on the bare AEAD (the algorithm-level rate).

use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ClientConfig, ClientConnection, RootCertStore, ServerConfig, ServerConnection};

use crate::harness::{Figure, Plan, Unit, median, trimmed_mean};

mod drive;
use drive::{
    GATHERED, INTERLEAVED, ONE_BY_ONE, Sides, handshake, handshake_slice, interleaved_slice,
    record_slice, sm4_gcm_slice,
};
mod table;
pub use table::*;

/// The ops this module reports, in table order.
pub const OPS: [&str; 5] = [
    "tls13-full-handshake-client",
    "tls13-full-handshake-server",
    "tls13-resumed-handshake-client",
    "tls13-resumed-handshake-server",
    "tls13-records-16k",
];

const RECORD: usize = 16 << 10;

/// One configuration pair to measure.
pub struct Setup {
    pub imp: &'static str,
    /// Without session resumption: every handshake full.
    client_full: Arc<ClientConfig>,
    /// With resumption: every handshake after the first resumes with a ticket.
    client_resume: Arc<ClientConfig>,
    server: Arc<ServerConfig>,
}

impl Setup {
    fn new(imp: &'static str, client: ClientConfig, server: ServerConfig) -> Self {
        let mut full = client.clone();
        full.resumption = rustls::client::Resumption::disabled();
        Setup {
            imp,
            client_full: Arc::new(full),
            client_resume: Arc::new(client),
            server: Arc::new(server),
        }
    }
}

/// The SM setup: curveSM2, sm2sig_sm3, TLS_SM4_GCM_SM3, an SM2 chain (root and leaf).
pub fn sm_setup() -> Setup {
    sm_setup_with("shangmi", shangmi_rustls::CURVE_SM2_GROUP)
}

/// The post-quantum names of the hybrid comparison.
pub const SM_HYBRID: &str = "shangmi curveSM2MLKEM768";
pub const AWS_HYBRID: &str = "rustls+aws-lc-rs X25519MLKEM768";

/// [`sm_setup`] with `group` as the only key exchange.
pub fn sm_setup_with(
    imp: &'static str,
    group: &'static dyn rustls::crypto::SupportedKxGroup,
) -> Setup {
    let root_key = shangmi::sm2::SigningKey::random().expect("key");
    let root = shangmi_pki::self_signed(&root_key, "/CN=bench root", &shangmi_pki::Issue::ca(30))
        .expect("root");
    let key = shangmi::sm2::SigningKey::random().expect("key");
    let csr = shangmi_pki::request(&key, "/CN=localhost", &["DNS:localhost"]).expect("csr");
    let leaf = shangmi_pki::sign_request(&csr, &root, &root_key, &shangmi_pki::Issue::leaf(30))
        .expect("leaf");
    let der =
        |c: &shangmi_pki::Certificate| CertificateDer::from(der::Encode::to_der(c).expect("der"));
    let provider = Arc::new(CryptoProvider {
        cipher_suites: vec![shangmi_rustls::TLS13_SM4_GCM_SM3],
        kx_groups: vec![group],
        ..shangmi_rustls::provider()
    });
    let certified = shangmi_rustls::certified_key(
        vec![der(&leaf)],
        // As `shangmi tls serve` signs by default: every nonce hedged (no presign pool, which
        // a duplicated VM would replay).
        shangmi_rustls::Sm2SigningKey::new(key),
    )
    .expect("matching key");
    let mut server = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("TLS 1.3")
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(shangmi_rustls::SmCertResolver::new(certified)));
    server.ticketer = shangmi_rustls::ticketer().expect("ticketer");
    let roots = shangmi_rustls::Roots::from_ders([der(&root).as_ref()]).expect("anchor");
    let verifier =
        shangmi_rustls::Sm2ServerVerifier::new(Arc::new(roots), provider.clone()).expect("roots");
    let client = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("TLS 1.3")
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Setup::new(imp, client, server)
}

/// rustls with aws-lc-rs: `group` + ECDSA-P256 + TLS_AES_128_GCM_SHA256, a P-256 chain made
/// with OpenSSL.
pub fn aws_setup(imp: &'static str, group: rustls::NamedGroup) -> Setup {
    use openssl::ec::{EcGroup, EcKey};
    use openssl::nid::Nid;
    use openssl::pkey::PKey;
    use openssl::x509::extension::{BasicConstraints, SubjectAlternativeName};
    use openssl::x509::{X509, X509NameBuilder};
    let base = rustls::crypto::aws_lc_rs::default_provider();
    let provider = Arc::new(CryptoProvider {
        cipher_suites: vec![rustls::crypto::aws_lc_rs::cipher_suite::TLS13_AES_128_GCM_SHA256],
        kx_groups: base
            .kx_groups
            .iter()
            .copied()
            .filter(|g| g.name() == group)
            .collect(),
        ..base
    });
    let p256 = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).expect("P-256");
    let make = |cn: &str, ca: bool, issuer: Option<(&X509, &PKey<openssl::pkey::Private>)>| {
        let key = PKey::from_ec_key(EcKey::generate(&p256).expect("key")).expect("pkey");
        let mut name = X509NameBuilder::new().expect("name");
        name.append_entry_by_text("CN", cn).expect("CN");
        let name = name.build();
        let mut b = X509::builder().expect("builder");
        b.set_version(2).expect("v3");
        let serial = openssl::bn::BigNum::from_u32(if ca { 1 } else { 2 }).expect("serial");
        b.set_serial_number(&serial.to_asn1_integer().expect("serial"))
            .expect("serial");
        b.set_subject_name(&name).expect("subject");
        b.set_issuer_name(issuer.map_or(&name, |(c, _)| c.subject_name()))
            .expect("issuer");
        b.set_pubkey(&key).expect("key");
        b.set_not_before(&openssl::asn1::Asn1Time::days_from_now(0).expect("time"))
            .expect("nb");
        b.set_not_after(&openssl::asn1::Asn1Time::days_from_now(30).expect("time"))
            .expect("na");
        if ca {
            b.append_extension(BasicConstraints::new().critical().ca().build().expect("bc"))
                .expect("bc");
        } else {
            let san = SubjectAlternativeName::new()
                .dns("localhost")
                .build(&b.x509v3_context(issuer.map(|(c, _)| c.as_ref()), None))
                .expect("san");
            b.append_extension(san).expect("san");
        }
        let signer = issuer.map_or(&key, |(_, k)| k);
        b.sign(signer, openssl::hash::MessageDigest::sha256())
            .expect("sign");
        (b.build(), key)
    };
    let (root, root_key) = make("bench root", true, None);
    let (leaf, leaf_key) = make("localhost", false, Some((&root, &root_key)));
    let leaf_der = CertificateDer::from(leaf.to_der().expect("der"));
    let key_der =
        PrivateKeyDer::try_from(leaf_key.private_key_to_pkcs8().expect("pkcs8")).expect("pkcs8");
    let mut server = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("TLS 1.3")
        .with_no_client_auth()
        .with_single_cert(vec![leaf_der], key_der)
        .expect("cert");
    server.ticketer = rustls::crypto::aws_lc_rs::Ticketer::new().expect("ticketer");
    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from(root.to_der().expect("der")))
        .expect("anchor");
    let client = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("TLS 1.3")
        .with_root_certificates(roots)
        .with_no_client_auth();
    Setup::new(imp, client, server)
}

/// Every TLS figure, implementations alternating round by round. `extra` measures
/// out-of-process peers (OpenSSL 4) once per round and returns (op, imp, rate) triples.
pub fn measure(plan: &Plan, extra: &mut dyn FnMut() -> Vec<(String, String, f64)>) -> Vec<Figure> {
    let setups = [
        sm_setup(),
        aws_setup("rustls+aws-lc-rs X25519", rustls::NamedGroup::X25519),
        aws_setup("rustls+aws-lc-rs P-256", rustls::NamedGroup::secp256r1),
    ];
    let hybrids = [
        sm_setup_with(SM_HYBRID, shangmi_rustls::CURVE_SM2_MLKEM768_GROUP),
        aws_setup(AWS_HYBRID, rustls::NamedGroup::X25519MLKEM768),
    ];
    for s in &hybrids {
        handshake(s, false, &mut Sides::default());
    }
    // Warm each (and seed the resumption tickets).
    let mut conns: Vec<(ClientConnection, ServerConnection)> = setups
        .iter()
        .map(|s| handshake(s, true, &mut Sides::default()))
        .collect();
    let mut rates: Vec<(String, String, Vec<f64>)> = Vec::new();
    let mut push = |op: &str, imp: &str, r: f64| match rates
        .iter_mut()
        .find(|(o, i, _)| o == op && i == imp)
    {
        Some((_, _, v)) => v.push(r),
        None => rates.push((op.into(), imp.into(), vec![r])),
    };
    for round in 0..plan.rounds {
        for j in 0..setups.len() {
            let k = (round + j) % setups.len();
            let s = &setups[k];
            let (full_c, full_s) = handshake_slice(s, false, plan.slice);
            push(OPS[0], s.imp, full_c);
            push(OPS[1], s.imp, full_s);
            let (res_c, res_s) = handshake_slice(s, true, plan.slice);
            push(OPS[2], s.imp, res_c);
            push(OPS[3], s.imp, res_s);
            let (c, srv) = &mut conns[k];
            push(OPS[4], s.imp, record_slice(c, srv, plan.slice));
        }
        push(
            OPS[4],
            "shangmi SM4-GCM (algorithm)",
            sm4_gcm_slice(plan.slice),
        );
        for j in 0..3 {
            match (round + j) % 3 {
                0 => push(
                    INTERLEAVED,
                    GATHERED,
                    interleaved_slice(&setups[0], true, plan.slice),
                ),
                1 => push(
                    INTERLEAVED,
                    ONE_BY_ONE,
                    interleaved_slice(&setups[0], false, plan.slice),
                ),
                _ => push(
                    INTERLEAVED,
                    setups[1].imp,
                    interleaved_slice(&setups[1], false, plan.slice),
                ),
            }
        }
        // The post-quantum hybrids: full handshakes only (resumption and records do not
        // involve the key exchange).
        for j in 0..hybrids.len() {
            let s = &hybrids[(round + j) % hybrids.len()];
            let (full_c, full_s) = handshake_slice(s, false, plan.slice);
            push(OPS[0], s.imp, full_c);
            push(OPS[1], s.imp, full_s);
        }
        for (op, imp, r) in extra() {
            push(&op, &imp, r);
        }
    }
    rates
        .into_iter()
        .map(|(op, imp, r)| {
            let records = op == OPS[4];
            Figure {
                op,
                size: records.then_some(RECORD),
                imp,
                unit: if records { Unit::MBps } else { Unit::OpsPerSec },
                trimmed: trimmed_mean(&r),
                median: median(r),
            }
        })
        .collect()
}

/// The OpenSSL 4.0 column's name.
pub const OPENSSL4: &str = "openssl 4.0 (SM)";
/// OpenSSL 4.0's libssl with shangmi.so serving the SM algorithms.
pub const OPENSSL4_PROVIDER: &str = "openssl 4.0 + shangmi.so";
