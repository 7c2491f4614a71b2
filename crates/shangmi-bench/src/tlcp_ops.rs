//! TLCP at the connection level: shangmi's TLCP beside Tongsuo 8.5's NTLS
//! (`bench/tlcp/tongsuo_tlcp.c`, compiled against the Tongsuo that `scripts/peers/build.sh
//! tongsuo` builds, run out of process). Both are timed the same way: client and server in one
//! thread over memory, each side's calls timed apart; both sides present certificate pairs
//! (ECDHE needs them; the ECC handshakes carry them too, so the two kinds compare). Records:
//! 16 KiB of application data sealed by the client and opened by the server.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use der::{Encode, EncodePem};
use shangmi_tlcp::{ClientConfig, Connection, Identity, ServerConfig, Suite};
use x509_cert::ext::pkix::{KeyUsage, KeyUsages};

use crate::harness::{Figure, Plan, Unit, median, trimmed_mean};

/// The ops, in table order.
pub const OPS: [&str; 8] = [
    "tlcp-ecc-full-handshake-client",
    "tlcp-ecc-full-handshake-server",
    "tlcp-ecdhe-full-handshake-client",
    "tlcp-ecdhe-full-handshake-server",
    "tlcp-resumed-handshake-client",
    "tlcp-resumed-handshake-server",
    "tlcp-records-gcm-16k",
    "tlcp-records-cbc-16k",
];

pub const TONGSUO: &str = "tongsuo 8.5 (NTLS)";
const RECORD: usize = 16 << 10;

struct Pki {
    server: Arc<ServerConfig>,
    /// The client's pieces, for making configurations with other suites.
    roots: Vec<shangmi_pki::Cert>,
    client_pair: Box<dyn Fn() -> (Identity, Identity)>,
}

/// A CA, the server's and the client's pairs; PEM copies into `dir` for Tongsuo.
fn pki(dir: &Path) -> Pki {
    let ca_key = shangmi::sm2::SigningKey::random().expect("key");
    let ca = shangmi_pki::self_signed(&ca_key, "/CN=bench TLCP CA", &shangmi_pki::Issue::ca(30))
        .expect("CA");
    let _ = std::fs::create_dir_all(dir);
    let _ = std::fs::write(
        dir.join("ca.pem"),
        ca.to_pem(der::pem::LineEnding::LF).unwrap_or_default(),
    );
    let make = |name: &str, usage: KeyUsage| {
        let key = shangmi::sm2::SigningKey::random().expect("key");
        let csr = shangmi_pki::request(&key, "/CN=localhost", &["DNS:localhost"]).expect("csr");
        let issue = shangmi_pki::Issue {
            key_usage: Some(usage),
            ..shangmi_pki::Issue::leaf(30)
        };
        let cert = shangmi_pki::sign_request(&csr, &ca, &ca_key, &issue).expect("leaf");
        let _ = std::fs::write(
            dir.join(format!("{name}.pem")),
            cert.to_pem(der::pem::LineEnding::LF).unwrap_or_default(),
        );
        let _ = std::fs::write(
            dir.join(format!("{name}.key")),
            key.to_pkcs8_pem()
                .map(|p| p.to_string())
                .unwrap_or_default(),
        );
        (cert.to_der().expect("der"), key.to_bytes())
    };
    let sign = || KeyUsage(KeyUsages::DigitalSignature.into());
    let enc = || KeyUsage(KeyUsages::KeyEncipherment | KeyUsages::KeyAgreement);
    let ident = |(der, key): &(Vec<u8>, zeroize::Zeroizing<[u8; 32]>)| {
        Identity::new(
            vec![der.clone()],
            shangmi::sm2::SigningKey::from_bytes(key).expect("key"),
        )
        .expect("pair")
    };
    let (ss, se) = (make("ss", sign()), make("se", enc()));
    let (cs, ce) = (make("cs", sign()), make("ce", enc()));
    let server = ServerConfig::new(ident(&ss), ident(&se))
        .expect("server")
        .with_client_auth(vec![ca.clone()])
        .expect("client auth");
    Pki {
        server: Arc::new(server),
        roots: vec![ca],
        client_pair: Box::new(move || (ident(&cs), ident(&ce))),
    }
}

fn client(p: &Pki, suite: Suite, resume: bool) -> Arc<ClientConfig> {
    let (s, e) = (p.client_pair)();
    let mut c = ClientConfig::new(p.roots.clone())
        .with_suites(&[suite])
        .with_certificates(s, e);
    if !resume {
        c = c.without_resumption();
    }
    Arc::new(c)
}

/// One handshake, each side's time added to its total.
fn handshake(
    cc: &Arc<ClientConfig>,
    sc: &Arc<ServerConfig>,
    tc: &mut Duration,
    ts: &mut Duration,
) -> (Connection, Connection) {
    let t = Instant::now();
    let mut c = Connection::client(cc.clone(), "localhost").expect("client");
    let mut out = c.take_tls();
    *tc += t.elapsed();
    let t = Instant::now();
    let mut s = Connection::server(sc.clone());
    *ts += t.elapsed();
    while !out.is_empty() || c.is_handshaking() || s.is_handshaking() {
        let t = Instant::now();
        s.read_tls_bytes(&out).expect("server");
        let back = s.take_tls();
        *ts += t.elapsed();
        let t = Instant::now();
        if !back.is_empty() {
            c.read_tls_bytes(&back).expect("client");
        }
        out = c.take_tls();
        *tc += t.elapsed();
        if out.is_empty() && back.is_empty() {
            break;
        }
    }
    assert!(
        !c.is_handshaking() && !s.is_handshaking(),
        "handshake did not finish"
    );
    (c, s)
}

fn untimed(cc: &Arc<ClientConfig>, sc: &Arc<ServerConfig>) -> (Connection, Connection) {
    let (mut a, mut b) = (Duration::ZERO, Duration::ZERO);
    handshake(cc, sc, &mut a, &mut b)
}

fn handshake_rates(
    cc: &Arc<ClientConfig>,
    sc: &Arc<ServerConfig>,
    slice: Duration,
    resumed: bool,
) -> (f64, f64) {
    if resumed {
        // A session to resume (the server's cache keeps the newest sessions; the full
        // handshakes before may have pushed an older one out).
        untimed(cc, sc);
    }
    let (mut tc, mut ts) = (Duration::ZERO, Duration::ZERO);
    let (mut n, start) = (0u32, Instant::now());
    while start.elapsed() < slice || n < 2 {
        let (c, _) = handshake(cc, sc, &mut tc, &mut ts);
        assert_eq!(
            c.agreed().map(|a| a.resumed),
            Some(resumed),
            "resumption as intended"
        );
        n += 1;
    }
    (
        f64::from(n) / tc.as_secs_f64(),
        f64::from(n) / ts.as_secs_f64(),
    )
}

fn record_rate(p: &Pki, suite: Suite, slice: Duration) -> f64 {
    let cc = client(p, suite, false);
    let (mut c, mut s) = untimed(&cc, &p.server);
    let data = vec![0x5au8; RECORD];
    let (mut n, start) = (0u32, Instant::now());
    while start.elapsed() < slice || n < 4 {
        c.send(&data).expect("send");
        s.read_tls_bytes(&c.take_tls()).expect("open");
        assert_eq!(s.take_plaintext().len(), RECORD);
        n += 1;
    }
    f64::from(n) * RECORD as f64 / start.elapsed().as_secs_f64() / 1e6
}

/// Tongsuo's loop, built once.
struct Tongsuo {
    exe: PathBuf,
    dir: PathBuf,
}

fn tongsuo(root: &Path, dir: &Path) -> Result<Tongsuo, String> {
    let built = Command::new(root.join("scripts/peers/build.sh"))
        .arg("tongsuo")
        .output()
        .map_err(|e| format!("scripts/peers/build.sh: {e}"))?;
    if !built.status.success() {
        return Err("Tongsuo could not be built (scripts/peers/build.sh tongsuo)".into());
    }
    let tool = PathBuf::from(String::from_utf8_lossy(&built.stdout).trim());
    let prefix = tool
        .parent()
        .and_then(Path::parent)
        .ok_or("unexpected Tongsuo path")?;
    let exe = dir.join("tongsuo_tlcp");
    let cc = Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(root.join("bench/tlcp/tongsuo_tlcp.c"))
        .arg(format!("-I{}", prefix.join("include").display()))
        .arg(prefix.join("lib/libssl.a"))
        .arg(prefix.join("lib/libcrypto.a"))
        .args(["-ldl", "-lpthread"])
        .output()
        .map_err(|e| format!("cc: {e}"))?;
    if !cc.status.success() {
        return Err(format!(
            "compiling bench/tlcp/tongsuo_tlcp.c: {}",
            String::from_utf8_lossy(&cc.stderr)
                .lines()
                .next()
                .unwrap_or("")
        ));
    }
    Ok(Tongsuo {
        exe,
        dir: dir.to_path_buf(),
    })
}

impl Tongsuo {
    fn round(&self, slice: Duration) -> Vec<(String, f64)> {
        match Command::new(&self.exe)
            .arg(&self.dir)
            .arg(slice.as_millis().to_string())
            .output()
        {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter_map(|l| {
                    let (op, rate) = l.split_once(' ')?;
                    Some((op.to_string(), rate.trim().parse().ok()?))
                })
                .collect(),
            Ok(o) => {
                eprintln!(
                    "shangmi-bench: Tongsuo TLCP loop failed: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                Vec::new()
            }
            Err(e) => {
                eprintln!("shangmi-bench: Tongsuo TLCP loop: {e}");
                Vec::new()
            }
        }
    }
}

/// Every TLCP figure, shangmi and Tongsuo alternating round by round; the table after.
pub fn measure(plan: &Plan) -> (Vec<Figure>, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = root.join("target/tls-peers/tlcp");
    let p = pki(&dir);
    let peer = tongsuo(&root, &dir);
    let ecc = client(&p, Suite::ECC_SM4_GCM_SM3, false);
    let ecdhe = client(&p, Suite::ECDHE_SM4_GCM_SM3, false);
    let resume = client(&p, Suite::ECC_SM4_GCM_SM3, true);
    let mut rates: Vec<(String, String, Vec<f64>)> = Vec::new();
    let mut push = |op: &str, imp: &str, r: f64| match rates
        .iter_mut()
        .find(|(o, i, _)| o == op && i == imp)
    {
        Some((_, _, v)) => v.push(r),
        None => rates.push((op.into(), imp.into(), vec![r])),
    };
    for round in 0..plan.rounds {
        let ours = |push: &mut dyn FnMut(&str, &str, f64)| {
            let (c, s) = handshake_rates(&ecc, &p.server, plan.slice, false);
            push(OPS[0], "shangmi", c);
            push(OPS[1], "shangmi", s);
            let (c, s) = handshake_rates(&ecdhe, &p.server, plan.slice, false);
            push(OPS[2], "shangmi", c);
            push(OPS[3], "shangmi", s);
            let (c, s) = handshake_rates(&resume, &p.server, plan.slice, true);
            push(OPS[4], "shangmi", c);
            push(OPS[5], "shangmi", s);
            push(
                OPS[6],
                "shangmi",
                record_rate(&p, Suite::ECC_SM4_GCM_SM3, plan.slice),
            );
            push(
                OPS[7],
                "shangmi",
                record_rate(&p, Suite::ECC_SM4_CBC_SM3, plan.slice),
            );
        };
        let theirs = |push: &mut dyn FnMut(&str, &str, f64)| {
            if let Ok(t) = &peer {
                for (op, r) in t.round(plan.slice) {
                    push(&op, TONGSUO, r);
                }
            }
        };
        if round % 2 == 0 {
            ours(&mut push);
            theirs(&mut push);
        } else {
            theirs(&mut push);
            ours(&mut push);
        }
    }
    let figs: Vec<Figure> = rates
        .into_iter()
        .map(|(op, imp, r)| {
            let records = op.starts_with("tlcp-records");
            Figure {
                op,
                size: records.then_some(RECORD),
                imp,
                unit: if records { Unit::MBps } else { Unit::OpsPerSec },
                trimmed: trimmed_mean(&r),
                median: median(r),
            }
        })
        .collect();
    let text = markdown(&figs, peer.as_ref().err().map(String::as_str));
    (figs, text)
}

fn markdown(figs: &[Figure], missing: Option<&str>) -> String {
    use std::fmt::Write as _;
    let get = |op: &str, imp: &str| {
        figs.iter()
            .find(|f| f.op == op && f.imp == imp)
            .map(|f| f.median)
    };
    let mut s = String::new();
    let _ = writeln!(s, "\n### TLCP (GB/T 38636) beside Tongsuo's NTLS\n");
    let _ = writeln!(
        s,
        "Client and server in one thread over memory, each side's time apart; both sides with \
         certificate pairs; full handshakes with ECC_SM4_GCM_SM3 and ECDHE_SM4_GCM_SM3, resumed \
         with ECC_SM4_GCM_SM3 by session ID; records: 16 KiB sealed and opened. Tongsuo 8.5 in \
         the same loop (bench/tlcp/tongsuo_tlcp.c){}.\n",
        missing
            .map(|m| format!(" — not measured: {m}"))
            .unwrap_or_default()
    );
    let _ = writeln!(
        s,
        "| op | shangmi | {TONGSUO} | shangmi / Tongsuo |\n|---|---:|---:|---:|"
    );
    for op in OPS {
        let unit = if op.starts_with("tlcp-records") {
            "MB/s"
        } else {
            "/s"
        };
        let (a, b) = (get(op, "shangmi"), get(op, TONGSUO));
        let cell = |v: Option<f64>| v.map(|v| format!("{v:.0}")).unwrap_or_default();
        let ratio = match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
            _ => String::new(),
        };
        let _ = writeln!(s, "| {op} ({unit}) | {} | {} | {ratio} |", cell(a), cell(b));
    }
    s
}
