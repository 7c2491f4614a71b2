//! RFC 8998 handshakes' curveSM2 agreements, gathered across connections so that they run
//! eight at a time in IFMA lanes ([`shangmi_rustls::prepare_agreements`]).
//!
//! A connection whose ClientHello carries the SM2 point rustls will agree with queues it and
//! waits. One thread computes what is queued, at most [`MOST`] at a time. It waits for more
//! only while other connections are still reading their first flights ([`Arriving`]), and
//! for [`WINDOW`] at most: a lone handshake is computed at once, and none waits longer than
//! the window and one batch. A connection that finds a full batch queued computes it itself,
//! on its own worker thread, so that under load the agreements spread over every core rather
//! than queue behind one thread. Gathering pays only with IFMA lanes and shares arriving
//! faster than one per window; otherwise it costs a hand-over, so the gateway computes inline
//! unless told (`key_agreements = "gathered"`).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use shangmi_rustls::{PreparedAgreement, prepare_agreements};
use tokio::sync::oneshot;

/// One lane group: a batch is computed in one pass of the lanes, so what waits behind it waits
/// for one pass.
pub const MOST: usize = 8;

/// The longest a partial batch waits for connections still reading their first flights.
pub const WINDOW: Duration = Duration::from_micros(100);

/// What the gatherer did, for the metrics.
#[derive(Debug, Default)]
pub struct GatherCounts {
    /// Agreements computed.
    pub agreements: AtomicU64,
    /// Calls that computed them (agreements / batches is the mean batch).
    pub batches: AtomicU64,
    /// Agreements computed but not used: the handshake asked for another share (a hello
    /// retry) or failed before its key exchange.
    pub unused: AtomicU64,
}

struct Job {
    share: Vec<u8>,
    reply: oneshot::Sender<Option<PreparedAgreement>>,
}

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    /// Connections reading their first flight: shares that may be queued soon.
    arriving: usize,
    closed: bool,
}

struct Inner {
    queue: Mutex<Queue>,
    ready: Condvar,
    counts: Arc<GatherCounts>,
    window: Duration,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // Jobs are whole whenever the lock is released, so a panic elsewhere leaves a usable
        // queue.
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn compute(&self, batch: Vec<Job>) {
        let shares: Vec<&[u8]> = batch.iter().map(|j| &j.share[..]).collect();
        let agreed = prepare_agreements(&shares);
        let c = &self.counts;
        c.agreements
            .fetch_add(batch.len() as u64, Ordering::Relaxed);
        c.batches.fetch_add(1, Ordering::Relaxed);
        for (job, result) in batch.into_iter().zip(agreed) {
            // A connection that gave up (timeout, reset) no longer listens; its agreement
            // is dropped, and wiped.
            let _ = job.reply.send(result.ok());
        }
    }
}

/// The queue and its computing thread; the thread ends when this is dropped.
pub struct Gatherer {
    inner: Arc<Inner>,
}

impl core::fmt::Debug for Gatherer {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Gatherer").finish_non_exhaustive()
    }
}

impl Gatherer {
    /// Starts the computing thread.
    pub fn start(counts: Arc<GatherCounts>) -> std::io::Result<Gatherer> {
        Gatherer::start_with(counts, WINDOW)
    }

    fn start_with(counts: Arc<GatherCounts>, window: Duration) -> std::io::Result<Gatherer> {
        let mut g = Gatherer::without_thread(counts);
        Arc::get_mut(&mut g.inner).expect("not shared yet").window = window;
        let inner = g.inner.clone();
        std::thread::Builder::new()
            .name("shangmi-gather".into())
            .spawn(move || run(&inner))?;
        Ok(g)
    }

    fn without_thread(counts: Arc<GatherCounts>) -> Gatherer {
        Gatherer {
            inner: Arc::new(Inner {
                queue: Mutex::default(),
                ready: Condvar::new(),
                counts,
                window: WINDOW,
            }),
        }
    }

    /// Marks a connection that is reading its first flight until the mark is dropped: while
    /// any is marked, a partial batch waits (up to [`WINDOW`]) for their shares.
    pub fn arriving(&self) -> Arriving<'_> {
        self.inner.lock().arriving += 1;
        Arriving(self)
    }

    /// The server's agreement with a ClientHello's curveSM2 share, computed with whatever
    /// other connections sent meanwhile. `None` if the share is invalid (rustls then refuses
    /// it as usual).
    pub async fn agree(&self, share: &[u8]) -> Option<PreparedAgreement> {
        let (reply, answer) = oneshot::channel();
        let job = Job {
            share: share.to_vec(),
            reply,
        };
        let full = {
            let mut q = self.inner.lock();
            if q.closed {
                return None; // the thread is gone: rustls computes inline
            }
            q.jobs.push_back(job);
            if q.jobs.len() >= MOST {
                Some(q.jobs.drain(..MOST).collect::<Vec<_>>())
            } else {
                self.inner.ready.notify_one();
                None
            }
        };
        if let Some(batch) = full {
            self.inner.compute(batch);
        }
        answer.await.ok().flatten()
    }
}

/// See [`Gatherer::arriving`].
pub struct Arriving<'a>(&'a Gatherer);

impl Drop for Arriving<'_> {
    fn drop(&mut self) {
        self.0.inner.lock().arriving -= 1;
        self.0.inner.ready.notify_one();
    }
}

impl Drop for Gatherer {
    fn drop(&mut self) {
        self.inner.lock().closed = true;
        self.inner.ready.notify_one();
    }
}

/// Closes the queue when the thread ends, however it ends: what is queued is answered with
/// nothing (those handshakes compute inline) and nothing more is queued.
struct Stop<'a>(&'a Inner);

impl Drop for Stop<'_> {
    fn drop(&mut self) {
        let mut q = self.0.lock();
        q.closed = true;
        q.jobs.clear();
    }
}

fn run(inner: &Inner) {
    let _stop = Stop(inner);
    loop {
        let mut q = inner.lock();
        while q.jobs.is_empty() && !q.closed {
            q = inner.ready.wait(q).unwrap_or_else(|p| p.into_inner());
        }
        if q.jobs.is_empty() {
            return;
        }
        let deadline = Instant::now() + inner.window;
        while q.jobs.len() < MOST && q.arriving > 0 && !q.closed {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                break;
            };
            q = inner
                .ready
                .wait_timeout(q, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        // A connection that filled a batch meanwhile took it.
        let n = q.jobs.len().min(MOST);
        if n == 0 {
            continue;
        }
        let batch: Vec<Job> = q.jobs.drain(..n).collect();
        drop(q);
        inner.compute(batch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shangmi::sm2::EphemeralSecret;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn many_connections_at_once_get_their_own_agreements() {
        let counts = Arc::new(GatherCounts::default());
        let g = Arc::new(Gatherer::start(counts.clone()).unwrap());
        let mut tasks = Vec::new();
        for i in 0..40 {
            let g = g.clone();
            tasks.push(tokio::spawn(async move {
                let client = EphemeralSecret::random().unwrap();
                let mut share = client.public_key().to_uncompressed().to_vec();
                if i % 13 == 5 {
                    share[64] ^= 1; // off the curve
                }
                let got = g.agree(&share).await;
                if i % 13 == 5 {
                    assert!(got.is_none());
                    return;
                }
                let got = got.expect("a valid share");
                let server = shangmi_rustls::parse_key_share(got.share()).unwrap();
                let want = client.diffie_hellman(&server).unwrap();
                // The secret is only reachable through rustls: complete it as rustls would.
                let mut prepared = Some(got);
                let done = shangmi_rustls::with_prepared(&mut prepared, || {
                    rustls::crypto::SupportedKxGroup::start_and_complete(
                        &shangmi_rustls::CurveSm2,
                        &share,
                    )
                })
                .unwrap();
                assert!(prepared.is_none());
                assert_eq!(done.secret.secret_bytes(), want.as_bytes());
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(counts.agreements.load(Ordering::Relaxed), 40);
        let batches = counts.batches.load(Ordering::Relaxed);
        assert!(
            (5..=40).contains(&batches),
            "{batches} batches of at most {MOST}"
        );
    }

    #[tokio::test]
    async fn the_connection_that_fills_a_batch_computes_it() {
        // No thread: only the eighth arrival can compute, and it computes for all eight.
        let counts = Arc::new(GatherCounts::default());
        let g = Arc::new(Gatherer::without_thread(counts.clone()));
        let mut waiting = Vec::new();
        for _ in 0..MOST - 1 {
            waiting.push(agree_in_task(&g));
        }
        while g.inner.lock().jobs.len() < MOST - 1 {
            tokio::task::yield_now().await;
        }
        assert_eq!(counts.batches.load(Ordering::Relaxed), 0);
        assert!(g.agree(&share()).await.is_some());
        for w in waiting {
            assert!(w.await.unwrap());
        }
        assert_eq!(counts.batches.load(Ordering::Relaxed), 1);
        assert_eq!(counts.agreements.load(Ordering::Relaxed), MOST as u64);
    }

    fn share() -> [u8; 65] {
        EphemeralSecret::random()
            .unwrap()
            .public_key()
            .to_uncompressed()
    }

    /// A connection's agreement in a task of its own: whether it came back.
    fn agree_in_task(g: &Arc<Gatherer>) -> tokio::task::JoinHandle<bool> {
        let g = g.clone();
        tokio::spawn(async move { g.agree(&share()).await.is_some() })
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_partial_batch_waits_only_while_connections_are_arriving() {
        // A window far longer than the test, so that only the rules can end a wait.
        let counts = Arc::new(GatherCounts::default());
        let g = Arc::new(Gatherer::start_with(counts.clone(), Duration::from_secs(60)).unwrap());
        let started = Instant::now();

        // Nobody arriving: a lone agreement is computed at once.
        assert!(agree_in_task(&g).await.unwrap());
        assert_eq!(counts.batches.load(Ordering::Relaxed), 1);

        // One connection still reading: the next share waits for it.
        let arriving = g.arriving();
        let first = agree_in_task(&g);
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(!first.is_finished(), "computed without waiting");
        assert_eq!(counts.batches.load(Ordering::Relaxed), 1);
        // Its share arrives (the mark ends before the share is queued, as in serve.rs).
        drop(arriving);
        let second = agree_in_task(&g);
        assert!(first.await.unwrap() && second.await.unwrap());
        let (batches, agreements) = (
            counts.batches.load(Ordering::Relaxed),
            counts.agreements.load(Ordering::Relaxed),
        );
        assert_eq!(agreements, 3);
        // The mark's end alone ends the wait: the second share may have come just after.
        assert!((2..=3).contains(&batches), "{batches}");

        // Shares queued while a connection is arriving go together.
        let arriving = g.arriving();
        let (a, b) = (agree_in_task(&g), agree_in_task(&g));
        while g.inner.lock().jobs.len() < 2 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        drop(arriving);
        assert!(a.await.unwrap() && b.await.unwrap());
        assert_eq!(counts.batches.load(Ordering::Relaxed), batches + 1);
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "a wait ran out its window"
        );
    }

    #[tokio::test]
    async fn a_thread_that_ended_leaves_handshakes_to_compute_inline() {
        let g = Arc::new(Gatherer::without_thread(Arc::default()));
        let queued = agree_in_task(&g);
        while g.inner.lock().jobs.is_empty() {
            tokio::task::yield_now().await;
        }
        // The thread's end, however it came (a panic included), closes the queue.
        drop(Stop(&g.inner));
        assert!(
            !queued.await.unwrap(),
            "what was queued is answered with nothing"
        );
        let later = tokio::time::timeout(Duration::from_secs(10), g.agree(&share())).await;
        assert!(
            later.expect("answered at once").is_none(),
            "and nothing more waits"
        );
    }

    #[tokio::test]
    async fn the_thread_ends_with_its_gatherer() {
        let counts = Arc::new(GatherCounts::default());
        let g = Gatherer::start(counts.clone()).unwrap();
        assert!(g.agree(&share()).await.is_some());
        drop(g);
        // The thread holds the other references to the counts until it returns.
        let deadline = Instant::now() + Duration::from_secs(10);
        while Arc::strong_count(&counts) > 1 {
            assert!(Instant::now() < deadline, "the thread still runs");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}
