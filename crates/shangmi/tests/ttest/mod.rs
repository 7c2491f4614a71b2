//! The statistical machinery of the timing tests (dudect's Welch t-test with cropping), shared
//! by every crate's `tests/timing.rs`: `measure` times an operation on two classes of inputs,
//! `check` judges the evidence with repetitions.
#![allow(dead_code)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// |t| beyond this is a difference (dudect's threshold for "probably leaking").
pub const THRESHOLD: f64 = 4.5;

/// The smallest difference of mean times this test resolves: 1 part in 2000. With tens of
/// thousands of tightly cropped samples, Welch's t finds smaller shifts (a nanosecond in ten
/// microseconds, seen here between a fixed and a random SM4-GCM key and message on the AES-NI
/// backend, and no larger whatever the crop) that come from the machine, not the code (the
/// power drawn by different data, neighbours on the host). What the test is for is far above
/// it: one mispredicted secret branch per SM4 block, or one secret table index, moves the mean
/// by several percent.
const MIN_EFFECT: f64 = 5e-4;

/// Seconds of measurement per check and backend.
pub fn budget() -> Duration {
    let secs: f64 = std::env::var("CT_TIMING_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    Duration::from_secs_f64(secs)
}

/// Running mean and variance (Welford).
#[derive(Default, Clone, Copy)]
struct Moments {
    n: f64,
    mean: f64,
    m2: f64,
}

impl Moments {
    fn push(&mut self, x: f64) {
        self.n += 1.0;
        let d = x - self.mean;
        self.mean += d / self.n;
        self.m2 += d * (x - self.mean);
    }

    fn var(&self) -> f64 {
        if self.n > 1.0 {
            self.m2 / (self.n - 1.0)
        } else {
            0.0
        }
    }
}

fn welch(a: &Moments, b: &Moments) -> f64 {
    let se = (a.var() / a.n + b.var() / b.n).sqrt();
    if se == 0.0 {
        0.0
    } else {
        (a.mean - b.mean) / se
    }
}

/// The evidence of a difference between the classes: the largest |t| over the whole sample
/// and the sample cropped at several percentiles of the pooled times, counting only crops
/// where the means differ by at least [`MIN_EFFECT`] of the time (0 when none does).
pub fn max_t(samples: &[(bool, f64)]) -> Evidence {
    let mut sorted: Vec<f64> = samples.iter().map(|s| s.1).collect();
    sorted.sort_by(f64::total_cmp);
    let mut worst = Evidence::default();
    for p in [1.0, 0.99, 0.95, 0.9, 0.75, 0.5] {
        let limit = sorted[((sorted.len() - 1) as f64 * p) as usize];
        let mut m = [Moments::default(); 2];
        for &(class, t) in samples {
            if t <= limit {
                m[usize::from(class)].push(t);
            }
        }
        if m[0].n > 10.0 && m[1].n > 10.0 {
            let t = welch(&m[0], &m[1]).abs();
            let effect = (m[0].mean - m[1].mean).abs() / m[0].mean.max(m[1].mean);
            worst.any_t = worst.any_t.max(t);
            if effect >= MIN_EFFECT {
                worst.t = worst.t.max(t);
            }
        }
    }
    worst
}

/// What one measurement found: the largest |t| where the means differ by at least
/// [`MIN_EFFECT`] (what decides), and the largest |t| at all (shown, not judged).
#[derive(Default, Clone, Copy)]
pub struct Evidence {
    pub t: f64,
    pub any_t: f64,
}

impl std::fmt::Display for Evidence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.1} (any shift: {:.1})", self.t, self.any_t)
    }
}

/// Times `op` on inputs of the two classes (false: fixed, true: random), prepared ahead by
/// `input`, in random order, for `budget`; each sample is `reps` calls. Returns max |t|.
pub fn measure<I>(
    rng: &mut StdRng,
    budget: Duration,
    reps: usize,
    mut input: impl FnMut(bool, &mut StdRng) -> I,
    mut op: impl FnMut(&I),
) -> Evidence {
    let mut samples = Vec::new();
    let start = Instant::now();
    while start.elapsed() < budget {
        // A batch of inputs prepared outside the timed region, classes shuffled.
        let batch: Vec<(bool, I)> = (0..256)
            .map(|_| {
                let class = rng.random::<bool>();
                (class, input(class, rng))
            })
            .collect();
        for (class, x) in &batch {
            let t = Instant::now();
            for _ in 0..reps {
                op(black_box(x));
            }
            samples.push((*class, t.elapsed().as_nanos() as f64));
        }
    }
    max_t(&samples)
}

/// Runs a check up to three times; fails only if the difference shows in two of them (noise
/// on a shared machine crosses the threshold now and then; a leak does every time).
pub fn check(name: &str, mut run: impl FnMut(&mut StdRng) -> Evidence) {
    let mut rng = StdRng::seed_from_u64(0x5eed);
    let mut over = 0;
    let mut ts = Vec::new();
    for _ in 0..3 {
        let e = run(&mut rng);
        ts.push(e.to_string());
        if e.t > THRESHOLD {
            over += 1;
        }
        if over == 0 || over == 2 {
            break;
        }
    }
    println!("{name}: max |t| {}", ts.join(", then "));
    assert!(
        over < 2,
        "{name}: time depends on the secret (|t| {} > {THRESHOLD})",
        ts.join(", ")
    );
}

pub fn random_bytes<const N: usize>(rng: &mut StdRng) -> [u8; N] {
    let mut b = [0u8; N];
    rng.fill(&mut b[..]);
    b
}
