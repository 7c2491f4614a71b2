//! Timing: every implementation of an op runs in short slices, taking turns round by round,
//! so that drift of the shared machine's speed hits all of them alike; each reports the median
//! of its rounds.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// What a figure counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Megabytes (10^6) of input per second.
    MBps,
    /// Operations per second.
    OpsPerSec,
}

impl Unit {
    pub fn label(self) -> &'static str {
        match self {
            Unit::MBps => "MB/s",
            Unit::OpsPerSec => "ops/s",
        }
    }
}

/// Computes the op once, writing its result into the buffer.
pub type Job = Box<dyn FnMut(&mut [u8])>;

/// One implementation of an op.
pub struct Candidate {
    pub imp: &'static str,
    pub run: Job,
    /// A deterministic variant of `run` for the agreement check, for ops whose timed form is
    /// randomised (signatures with fresh nonces): it must write what every peer writes.
    pub check: Option<Job>,
    /// Not an implementation of the op but a reference algorithm timed alongside it (SHA-256
    /// beside SM3, ECDSA beside SM2...), so that a target ratio compares two rates measured in
    /// the same alternating rounds. Its output is not compared; its name starts "yardstick:".
    pub yardstick: bool,
}

impl Candidate {
    pub fn new(imp: &'static str, run: impl FnMut(&mut [u8]) + 'static) -> Self {
        Candidate {
            imp,
            run: Box::new(run),
            check: None,
            yardstick: false,
        }
    }

    /// A reference algorithm doing the same amount of work per call (see `yardstick`).
    pub fn yardstick(imp: &'static str, run: impl FnMut(&mut [u8]) + 'static) -> Self {
        debug_assert!(imp.starts_with("yardstick:"));
        Candidate {
            imp,
            run: Box::new(run),
            check: None,
            yardstick: true,
        }
    }

    pub fn checked(
        imp: &'static str,
        check: impl FnMut(&mut [u8]) + 'static,
        run: impl FnMut(&mut [u8]) + 'static,
    ) -> Self {
        Candidate {
            imp,
            run: Box::new(run),
            check: Some(Box::new(check)),
            yardstick: false,
        }
    }
}

/// An op at one size, with every implementation that has it.
pub struct Case {
    pub op: &'static str,
    /// Input size in bytes, for throughput ops; None for per-operation ops.
    pub size: Option<usize>,
    pub unit: Unit,
    /// Bytes (for MB/s) or operations (for ops/s) one call of `run` accounts for.
    pub work: f64,
    /// Length of the output buffer each call writes.
    pub out_len: usize,
    pub candidates: Vec<Candidate>,
}

/// A measured rate: the median of the rounds, and the published studies' statistic (the mean
/// after dropping the largest and the smallest round).
#[derive(Clone, Debug)]
pub struct Figure {
    pub op: String,
    pub size: Option<usize>,
    pub imp: String,
    pub unit: Unit,
    pub median: f64,
    pub trimmed: f64,
}

pub struct Plan {
    pub rounds: usize,
    pub slice: Duration,
}

/// Implementations measured outside this process (the Go peers), taking their turn at the end
/// of each round, so their figures come from the same moments as the in-process ones.
pub trait Peers {
    /// Starts a case; `reference` is shangmi's output, to check the peers' against.
    fn begin(&mut self, op: &'static str, size: Option<usize>, reference: &[u8]);
    /// One timed slice of each peer.
    fn round(&mut self);
    /// The figures of the peers that computed the right thing.
    fn end(&mut self) -> Vec<Figure>;
}

/// No out-of-process peers.
pub struct NoPeers;

impl Peers for NoPeers {
    fn begin(&mut self, _: &'static str, _: Option<usize>, _: &[u8]) {}
    fn round(&mut self) {}
    fn end(&mut self) -> Vec<Figure> {
        Vec::new()
    }
}

/// Checks that every candidate computes what the first (shangmi; never a yardstick) computes,
/// then times them, with `peers` taking their turn in every round.
/// A candidate that disagrees is reported and left out: a peer that silently fails would look
/// fast. Returns the figures and the reference output (for checking out-of-process peers).
pub fn measure(case: &mut Case, plan: &Plan, peers: &mut dyn Peers) -> Vec<Figure> {
    let mut reference = vec![0u8; case.out_len];
    let mut ok = Vec::new();
    let first = case.candidates.first().map_or("?", |c| c.imp);
    for (i, c) in case.candidates.iter_mut().enumerate() {
        if c.yardstick {
            ok.push(true);
            continue;
        }
        let mut out = vec![0u8; case.out_len];
        match c.check.as_mut() {
            Some(check) => check(&mut out),
            None => (c.run)(&mut out),
        }
        if i == 0 {
            reference = out;
            ok.push(true);
        } else if out == reference {
            ok.push(true);
        } else {
            eprintln!(
                "shangmi-bench: {} {}: {} disagrees with {}; not timed",
                case.op,
                size_label(case.size),
                c.imp,
                first
            );
            ok.push(false);
        }
    }
    peers.begin(case.op, case.size, &reference);
    // Calibrate: how many calls fill a slice.
    let mut out = vec![0u8; case.out_len];
    let mut calls: Vec<u64> = Vec::new();
    for c in case.candidates.iter_mut() {
        let t = Instant::now();
        let mut n = 0u64;
        while t.elapsed() < plan.slice / 4 || n == 0 {
            (c.run)(&mut out);
            n += 1;
        }
        let per_call = t.elapsed().as_secs_f64() / n as f64;
        calls.push(((plan.slice.as_secs_f64() / per_call) as u64).max(1));
    }
    let k = case.candidates.len();
    let mut rates = vec![Vec::with_capacity(plan.rounds); k];
    for round in 0..plan.rounds {
        // Rotate who goes first, so no implementation always follows the same neighbour.
        for j in 0..k {
            let i = (round + j) % k;
            if !ok[i] {
                continue;
            }
            let c = &mut case.candidates[i];
            let t = Instant::now();
            for _ in 0..calls[i] {
                (c.run)(black_box(&mut out));
            }
            let secs = t.elapsed().as_secs_f64();
            let amount = case.work * calls[i] as f64;
            rates[i].push(match case.unit {
                Unit::MBps => amount / secs / 1e6,
                Unit::OpsPerSec => amount / secs,
            });
        }
        peers.round();
    }
    let mut figures: Vec<Figure> = case
        .candidates
        .iter()
        .zip(rates)
        .zip(ok)
        .filter(|(_, ok)| *ok)
        .map(|((c, r), _)| Figure {
            op: case.op.to_string(),
            size: case.size,
            imp: c.imp.to_string(),
            unit: case.unit,
            trimmed: trimmed_mean(&r),
            median: median(r),
        })
        .collect();
    figures.extend(peers.end());
    figures
}

/// The mean without the largest and the smallest value (the plain mean under three values).
pub fn trimmed_mean(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let inner = if v.len() > 2 {
        &v[1..v.len() - 1]
    } else {
        &v[..]
    };
    if inner.is_empty() {
        0.0
    } else {
        inner.iter().sum::<f64>() / inner.len() as f64
    }
}

pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n == 0 {
        return 0.0;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

pub fn size_label(size: Option<usize>) -> String {
    match size {
        None => "-".into(),
        Some(s) if s >= 1 << 20 && s % (1 << 20) == 0 => format!("{} MiB", s >> 20),
        Some(s) if s >= 1024 && s % 1024 == 0 => format!("{} KiB", s >> 10),
        Some(s) => format!("{s} B"),
    }
}

/// The backend profiles this CPU runs other than the one shangmi picks, with the names their
/// candidates carry (`shangmi-<profile>`); the report puts them in a table of their own.
pub fn other_profiles() -> Vec<(&'static str, shangmi::Backend)> {
    use shangmi::Backend;
    Backend::available()
        .into_iter()
        .filter(|b| *b != Backend::best())
        .map(|b| {
            let name = match b {
                Backend::Portable => "shangmi-portable",
                Backend::Avx2 => "shangmi-avx2",
                Backend::Avx2Vaes => "shangmi-avx2-vaes",
                Backend::Avx2Gfni => "shangmi-avx2-gfni",
                _ => "shangmi-avx512",
            };
            (name, b)
        })
        .collect()
}
