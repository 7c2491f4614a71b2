//! RFC 8998 handshakes' curveSM2 agreements, gathered across connections so that they run
//! eight at a time in IFMA lanes ([`shangmi_rustls::prepare_agreements`]).
//!
//! One thread computes. A connection whose ClientHello carries the curveSM2 share rustls will
//! complete sends it over and waits; the thread takes what is queued (at most [`MOST`]),
//! computes it in one call and answers each. Nothing waits to fill a batch: a lone handshake
//! is computed as soon as it arrives, and one waiting behind a batch waits for at most that
//! batch. On CPUs without lanes the gateway computes inline instead (`key_agreements =
//! "auto"`): there gathering would only add a hand-over.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};

use shangmi_rustls::{PreparedAgreement, prepare_agreements};
use tokio::sync::oneshot;

/// One lane group: a batch is computed in one pass of the lanes, so what waits behind it waits
/// for one pass.
pub const MOST: usize = 8;

/// What the gatherer did, for the metrics.
#[derive(Debug, Default)]
pub struct GatherCounts {
    /// Agreements computed.
    pub agreements: AtomicU64,
    /// Calls that computed them (agreements / batches is the mean batch).
    pub batches: AtomicU64,
    /// Agreements computed but not used: the handshake completed another share.
    pub unused: AtomicU64,
}

struct Job {
    share: Vec<u8>,
    reply: oneshot::Sender<Option<PreparedAgreement>>,
}

/// The queue to the computing thread; the thread ends when this is dropped.
#[derive(Debug)]
pub struct Gatherer {
    jobs: Sender<Job>,
}

impl Gatherer {
    /// Starts the computing thread.
    pub fn start(counts: Arc<GatherCounts>) -> std::io::Result<Gatherer> {
        let (jobs, queue) = channel();
        std::thread::Builder::new()
            .name("shangmi-gather".into())
            .spawn(move || compute(&queue, &counts))?;
        Ok(Gatherer { jobs })
    }

    /// The server's agreement with a ClientHello's curveSM2 share, computed with whatever
    /// other connections sent meanwhile. `None` if the share is invalid (rustls then refuses
    /// it as usual) or the thread is gone (rustls then computes inline).
    pub async fn agree(&self, share: &[u8]) -> Option<PreparedAgreement> {
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send(Job {
                share: share.to_vec(),
                reply,
            })
            .ok()?;
        answer.await.ok().flatten()
    }
}

fn compute(queue: &Receiver<Job>, counts: &GatherCounts) {
    while let Ok(first) = queue.recv() {
        let mut batch = vec![first];
        while batch.len() < MOST {
            match queue.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let shares: Vec<&[u8]> = batch.iter().map(|j| &j.share[..]).collect();
        let agreed = prepare_agreements(&shares);
        counts
            .agreements
            .fetch_add(batch.len() as u64, Ordering::Relaxed);
        counts.batches.fetch_add(1, Ordering::Relaxed);
        for (job, result) in batch.into_iter().zip(agreed) {
            // A connection that gave up (timeout, reset) no longer listens; its agreement
            // is dropped, and wiped.
            let _ = job.reply.send(result.ok());
        }
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
    async fn the_thread_ends_with_its_gatherer() {
        let counts = Arc::new(GatherCounts::default());
        let g = Gatherer::start(counts.clone()).unwrap();
        let share = EphemeralSecret::random()
            .unwrap()
            .public_key()
            .to_uncompressed();
        assert!(g.agree(&share).await.is_some());
        drop(g);
        // The thread holds the other reference to the counts until it returns.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while Arc::strong_count(&counts) > 1 {
            assert!(
                std::time::Instant::now() < deadline,
                "the thread still runs"
            );
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    }
}
