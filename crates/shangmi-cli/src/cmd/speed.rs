//! `shangmi speed`: shangmi's own throughput on this machine, like `openssl speed`: each
//! algorithm at the usual block sizes (MB/s), the SM2 operations in operations per second, and
//! `seal` over 1 GiB in memory (no disk in the way).

use std::hint::black_box;
use std::io::Write;
use std::time::{Duration, Instant};

use shangmi::seal::{Recipients, Sealer};
use shangmi::sm2::{Format, SigningKey};
use shangmi::sm3;
use shangmi::sm4::Sm4;
use shangmi::sm4::modes::gcm::Sm4Gcm;
use shangmi::sm4::modes::{cbc, ctr, xts};

use crate::fail::{Outcome, Result, error};
use crate::files::print;

const SIZES: [usize; 6] = [16, 64, 256, 1024, 8192, 16384];

const ALGORITHMS: &[&str] = &[
    "sm3",
    "sm3-x16",
    "hmac-sm3",
    "sm3-kdf",
    "sm4-ecb",
    "sm4-cbc-enc",
    "sm4-cbc-dec",
    "sm4-ctr",
    "sm4-gcm",
    "sm4-xts",
    "sm2-sign",
    "sm2-verify",
    "sm2-keygen",
    "sm2-encrypt",
    "sm2-decrypt",
    "seal",
];

/// Measure shangmi's own speed (like `openssl speed`).
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  shangmi speed                     every algorithm
  shangmi speed sm4-gcm sm2-sign    just these
  shangmi speed seal --json         1 GiB through seal, as JSON

Algorithms: sm3 sm3-x16 hmac-sm3 sm3-kdf sm4-ecb sm4-cbc-enc sm4-cbc-dec sm4-ctr sm4-gcm
sm4-xts sm2-sign sm2-verify sm2-keygen sm2-encrypt sm2-decrypt seal")]
pub struct Args {
    /// Algorithms to measure (default: all).
    algorithms: Vec<String>,
    /// Seconds per measurement.
    #[arg(long, default_value_t = 1.0)]
    seconds: f64,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

struct Row {
    algorithm: &'static str,
    /// (size in bytes or None for per-operation, value, unit)
    cells: Vec<(Option<usize>, f64, &'static str)>,
}

/// Calls `f` repeatedly for about `secs`; returns calls per second.
fn rate(secs: f64, mut f: impl FnMut()) -> f64 {
    let budget = Duration::from_secs_f64(secs);
    let start = Instant::now();
    let mut n = 0u64;
    let mut batch = 1u64;
    while start.elapsed() < budget {
        for _ in 0..batch {
            f();
        }
        n += batch;
        batch = (batch * 2).min(1 << 16);
    }
    n as f64 / start.elapsed().as_secs_f64()
}

fn throughput(secs: f64, f: impl Fn(&mut [u8])) -> Vec<(Option<usize>, f64, &'static str)> {
    SIZES
        .iter()
        .map(|&n| {
            let mut buf = vec![0x5au8; n];
            let r = rate(secs, || f(black_box(&mut buf)));
            (Some(n), r * n as f64 / 1e6, "MB/s")
        })
        .collect()
}

fn per_op(secs: f64, f: impl FnMut()) -> Vec<(Option<usize>, f64, &'static str)> {
    vec![(None, rate(secs, f), "ops/s")]
}

fn measure(name: &'static str, secs: f64) -> Result<Row> {
    let key = [7u8; 16];
    let iv = [9u8; 16];
    let sm4 = Sm4::new(&key);
    let cells = match name {
        "sm3" => throughput(secs, |b| {
            black_box(sm3::hash(b));
        }),
        "sm3-x16" => throughput(secs, |b| {
            let msgs = [&*b; 16];
            black_box(sm3::hash_many(&msgs));
        })
        .into_iter()
        .map(|(s, r, u)| (s, r * 16.0, u))
        .collect(),
        "hmac-sm3" => throughput(secs, |b| {
            black_box(sm3::hmac(&key, b));
        }),
        "sm3-kdf" => throughput(secs, |b| {
            sm3::kdf_into(&[1; 64], b).expect("short output");
        }),
        "sm4-ecb" => throughput(secs, |b| {
            let (blocks, _) = b.as_chunks_mut::<16>();
            sm4.encrypt_blocks(blocks);
        }),
        "sm4-cbc-enc" => throughput(secs, |b| {
            cbc::Encryptor::new(&sm4, &iv)
                .encrypt_blocks(b)
                .expect("whole blocks");
        }),
        "sm4-cbc-dec" => throughput(secs, |b| {
            cbc::Decryptor::new(&sm4, &iv)
                .decrypt_blocks(b)
                .expect("whole blocks");
        }),
        "sm4-ctr" => throughput(secs, |b| {
            ctr::apply_keystream(&sm4, &iv, b).expect("in range");
        }),
        "sm4-gcm" => {
            let g = Sm4Gcm::new(&key);
            throughput(secs, |b| {
                black_box(g.encrypt_in_place_detached(&[1; 12], &[], b).expect("gcm"));
            })
        }
        "sm4-xts" => {
            // XTS refuses a key whose two halves are equal.
            let xts_key: [u8; 32] = core::array::from_fn(|i| i as u8);
            let x = xts::Xts::new(&xts_key, xts::Variant::Gb).map_err(|e| error(name, e))?;
            throughput(secs, |b| x.encrypt(&iv, b).expect("at least a block"))
        }
        "sm2-sign" | "sm2-verify" | "sm2-keygen" | "sm2-encrypt" | "sm2-decrypt" => {
            sm2_cells(name, secs)?
        }
        "seal" => seal_cells(name)?,
        _ => return Err(error(name, "unknown algorithm (see shangmi speed --help)")),
    };
    Ok(Row {
        algorithm: name,
        cells,
    })
}

type Cells = Vec<(Option<usize>, f64, &'static str)>;

/// SM2's operations, each on one key made for the run.
fn sm2_cells(name: &'static str, secs: f64) -> Result<Cells> {
    let k = SigningKey::random().map_err(|e| error(name, e))?;
    let msg = [0x5au8; 32];
    let sig = k.sign(&msg).map_err(|e| error(name, e))?;
    let ct = k
        .verifying_key()
        .encrypt(&msg, Format::C1C3C2)
        .map_err(|e| error(name, e))?;
    Ok(match name {
        "sm2-sign" => per_op(secs, || {
            black_box(k.sign(&msg).expect("sign"));
        }),
        "sm2-verify" => per_op(secs, || {
            k.verifying_key().verify(&msg, &sig).expect("verifies");
        }),
        "sm2-keygen" => per_op(secs, || {
            black_box(SigningKey::random().expect("OS RNG"));
        }),
        "sm2-encrypt" => per_op(secs, || {
            black_box(
                k.verifying_key()
                    .encrypt(&msg, Format::C1C3C2)
                    .expect("encrypt"),
            );
        }),
        _ => per_op(secs, || {
            black_box(k.decrypt(&ct, Format::C1C3C2).expect("decrypt"));
        }),
    })
}

/// `seal`: 1 GiB sealed to one key, through the streaming writer.
fn seal_cells(name: &'static str) -> Result<Cells> {
    let k = SigningKey::random().map_err(|e| error(name, e))?;
    let to = [*k.verifying_key()];
    let chunk = vec![0x5au8; 1 << 20];
    let total = 1u64 << 30;
    let start = Instant::now();
    let mut s = Sealer::new(std::io::sink(), Recipients::Keys(&to)).map_err(|e| error(name, e))?;
    for _ in 0..total >> 20 {
        s.write_all(&chunk).map_err(|e| error(name, e))?;
    }
    s.finish().map_err(|e| error(name, e))?;
    Ok(vec![(
        Some(total as usize),
        total as f64 / start.elapsed().as_secs_f64() / 1e6,
        "MB/s",
    )])
}

fn size_label(n: usize) -> String {
    match n {
        n if n >= 1 << 30 => format!("{} GiB", n >> 30),
        n if n >= 1024 => format!("{} KiB", n >> 10),
        n => format!("{n} B"),
    }
}

pub fn run(args: Args) -> Result<Outcome> {
    let names: Vec<&'static str> = if args.algorithms.is_empty() {
        ALGORITHMS.to_vec()
    } else {
        args.algorithms
            .iter()
            .map(|a| {
                ALGORITHMS
                    .iter()
                    .copied()
                    .find(|k| k == a)
                    .ok_or_else(|| error(a, "unknown algorithm (see shangmi speed --help)"))
            })
            .collect::<Result<_>>()?
    };
    if !(args.seconds > 0.0 && args.seconds <= 600.0) {
        return Err(error("--seconds", "between 0 and 600"));
    }
    let backend = shangmi::Backend::best();
    let mut rows = Vec::new();
    for name in names {
        let row = measure(name, args.seconds)?;
        if !args.json {
            let cells: Vec<String> = row
                .cells
                .iter()
                .map(|(s, r, u)| match s {
                    Some(n) => format!("{}: {r:.1} {u}", size_label(*n)),
                    None => format!("{r:.0} {u}"),
                })
                .collect();
            print(&format!("{:<12} {}\n", row.algorithm, cells.join("  ")))?;
        }
        rows.push(row);
    }
    if args.json {
        let items: Vec<String> = rows
            .iter()
            .flat_map(|r| {
                r.cells.iter().map(move |(s, v, u)| {
                    format!(
                        "{{\"algorithm\":\"{}\",\"size\":{},\"value\":{v:.3},\"unit\":\"{u}\"}}",
                        r.algorithm,
                        s.map_or("null".into(), |n| n.to_string())
                    )
                })
            })
            .collect();
        let implementations: Vec<String> = shangmi::implementations(backend)
            .map(|l| l.iter().map(|(a, i)| format!("\"{a}\":\"{i}\"")).collect())
            .unwrap_or_default();
        print(&format!(
            "{{\"backend\":\"{}\",\"implementations\":{{{}}},\"results\":[{}]}}\n",
            backend.name(),
            implementations.join(","),
            items.join(",")
        ))?;
    } else {
        let implementations: Vec<String> = shangmi::implementations(backend)
            .map(|l| l.iter().map(|(a, i)| format!("{a} {i}")).collect())
            .unwrap_or_default();
        print(&format!(
            "(backend {}: {}; {} s per measurement)\n",
            backend.name(),
            implementations.join(", "),
            args.seconds
        ))?;
    }
    Ok(Outcome::Ok)
}
