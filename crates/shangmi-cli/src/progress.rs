//! A progress bar on stderr, only when stderr is a terminal and only once the work has taken
//! about a second: quick commands and scripts see nothing.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress {
    bar: Option<ProgressBar>,
    start: Instant,
    shown: bool,
}

const DELAY: Duration = Duration::from_secs(1);

impl Progress {
    /// A bar over `total` bytes (a spinner when the size is unknown).
    pub fn new(total: Option<u64>, label: &str) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = match total {
                Some(t) => ProgressBar::with_draw_target(Some(t), ProgressDrawTarget::hidden())
                    .with_style(
                        ProgressStyle::with_template(
                            "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
                        )
                        .expect("valid template")
                        .progress_chars("=> "),
                    ),
                None => ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden())
                    .with_style(
                        ProgressStyle::with_template("{msg} {spinner} {bytes} {bytes_per_sec}")
                            .expect("valid template"),
                    ),
            };
            bar.set_message(label.to_string());
            bar
        });
        Progress {
            bar,
            start: Instant::now(),
            shown: false,
        }
    }

    pub fn advance(&mut self, n: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(n);
            if !self.shown && self.start.elapsed() >= DELAY {
                bar.set_draw_target(ProgressDrawTarget::stderr());
                self.shown = true;
            }
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
