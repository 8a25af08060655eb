//! Progress through a dataset's rows (a load, a verify): a bar on a terminal, a line
//! every few seconds otherwise, so a long run in a CI log is not silent.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::size::format_bytes;

/// The rows pass in progress in this process, for whoever watches it from another
/// thread (the run's metrics): (verb, label, bytes in all), set once a pass; None
/// between. Its bytes done are a counter of their own, moved without a lock or a copy.
static IN_PROGRESS: Mutex<Option<(&'static str, String, u64)>> = Mutex::new(None);
static DONE_BYTES: AtomicU64 = AtomicU64::new(0);

/// The load or verify in progress: (verb, dataset label, bytes done, bytes in all).
pub fn in_progress() -> Option<(&'static str, String, u64, u64)> {
    let (verb, label, total) = IN_PROGRESS.lock().ok()?.clone()?;
    Some((verb, label, DONE_BYTES.load(Ordering::Relaxed), total))
}

fn set_in_progress(now: Option<(&'static str, String, u64)>) {
    if let Ok(mut p) = IN_PROGRESS.lock() {
        *p = now;
    }
}

/// Progress: a bar on a terminal, a line every few seconds otherwise (CI logs).
pub struct RowsProgress {
    /// What is being done: "load", "verify".
    verb: &'static str,
    bar: Option<ProgressBar>,
    label: String,
    row_bytes: u64,
    total: u64,
    done: u64,
    started: Instant,
    last_line: Instant,
}

impl RowsProgress {
    const LINE_EVERY: Duration = Duration::from_secs(5);

    /// `total` bytes of rows of `row_bytes`, `done` of them before this start.
    pub fn new(verb: &'static str, label: String, row_bytes: u64, total: u64, done: u64) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(total).with_position(done);
            bar.set_style(
                ProgressStyle::with_template(
                    "{prefix:>14} [{bar:30}] {bytes}/{total_bytes} {msg} {binary_bytes_per_sec} ETA {eta}",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            bar.set_prefix(label.clone());
            bar
        });
        DONE_BYTES.store(done, Ordering::Relaxed);
        set_in_progress(Some((verb, label.clone(), total)));
        Self {
            verb,
            bar,
            label,
            row_bytes,
            total,
            done,
            started: Instant::now(),
            last_line: Instant::now(),
        }
    }

    /// `bytes` more done; `resumed_at`: the bytes done before this start (not in the rate).
    pub fn advance(&mut self, bytes: u64, resumed_at: u64) {
        self.done += bytes;
        DONE_BYTES.store(self.done, Ordering::Relaxed);
        let rows = format!(
            "{}/{} rows",
            self.done / self.row_bytes,
            self.total / self.row_bytes
        );
        if let Some(bar) = &self.bar {
            bar.set_message(rows);
            bar.set_position(self.done);
        } else if self.last_line.elapsed() >= Self::LINE_EVERY {
            self.last_line = Instant::now();
            let secs = self.started.elapsed().as_secs_f64();
            let rate = (self.done - resumed_at) as f64 / secs;
            let eta = (self.total - self.done) as f64 / rate.max(1.0);
            say!(
                "{} {}: {rows}, {} / {} ({:.0}%), {:.0} MB/s, ETA {:.0}s",
                self.verb,
                self.label,
                format_bytes(self.done),
                format_bytes(self.total),
                100.0 * self.done as f64 / self.total as f64,
                rate / 1e6,
                eta
            );
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        set_in_progress(None);
    }
}

impl Drop for RowsProgress {
    /// A pass ended by an error is over too.
    fn drop(&mut self) {
        set_in_progress(None);
    }
}
