//! An adaptive measurement's bounds (`--precision`): the targets, the least and the
//! most time, and the time a loop that must fix its plan first (criterion's) is given.

use std::time::Duration;

use crate::stats::FetchStats;
use crate::stats::precision::{self, Targets};

/// An adaptive measurement's bounds (`--precision`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrecisionGoal {
    /// The half-widths asked of p50 and p99.
    pub targets: Targets,
    /// Measure at least this long and this many fetches (a p99 interval needs 500)...
    pub min: Duration,
    pub min_fetches: u64,
    /// ...and at most this long, or twice that while the p99 still lacks the fetches an
    /// interval needs (`p99_fetches`): a slow cell is judged rather than cut short.
    pub limit: Duration,
}

/// The fetches a p99 interval needs (500: 5 beyond it).
pub(super) fn p99_fetches() -> u64 {
    crate::stats::interval::fetches_to_judge(0.99)
}

impl PrecisionGoal {
    /// Whether a cell measured for `elapsed` with `fetches` must stop: at the limit,
    /// or twice it while its p99 still lacks the fetches an interval needs.
    pub(super) fn at_limit(&self, elapsed: Duration, fetches: u64) -> bool {
        elapsed >= self.limit && (fetches >= p99_fetches() || elapsed >= self.limit * 2)
    }

    /// How long to measure for the precision, projected from the warm-up's fetches
    /// (made in `took`): for a loop that must fix its time before it starts
    /// (criterion's). Within `min` and `limit`.
    pub fn planned_time(&self, warm_up: &FetchStats, took: Duration) -> Duration {
        let summary = warm_up.summary_with_intervals();
        // criterion's own warm-up turns this time into fetches, a fifth too few at times
        // (Dolt at 4 MiB: 390 of 500): a p99 gets a quarter more than it needs.
        let needed = precision::fetches_needed(&summary, self.targets)
            .max(self.min_fetches)
            .max(p99_fetches() * 5 / 4);
        let per_fetch = took.as_secs_f64() / summary.count.max(1) as f64;
        let time = |fetches: u64| Duration::from_secs_f64(fetches as f64 * per_fetch);
        let limit = self
            .limit
            .max(time(p99_fetches() * 5 / 4).min(self.limit * 2));
        // No interval before 5 windows of 200 ms, however many fetches they hold: a
        // shorter plan (200 ms of 1 KiB fetches) could only fall short.
        time(needed)
            .max(crate::stats::interval::time_to_judge())
            .clamp(self.min, limit)
    }
}
