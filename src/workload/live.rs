//! Where a dataset written while it is measured stands (`--write-rate`): the count of
//! changes its writer has committed and the count it has begun. A row's version is a
//! function of that count (`churn::Order::version_of`), so a reader knows which
//! versions a fetch may return without a per-row table: a change committed before
//! the fetch began must be seen, a change begun after it ended cannot be, and only
//! the rows of changes in flight in between may hold either their old or new version.
//!
//! The counts are published per dataset in one process-wide table, so every reader
//! of the dataset (the one-client loop, each client thread of a load, the steady
//! prefill) finds them when it is built, outside the timed path, without each layer
//! between the writer and the fetch passing them down.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::dataset::DatasetSpec;

/// What the writer did while a measurement ran (`--write-rate`): its warm-up and
/// measurement both, one change per transaction, on its own connection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WriterReport {
    /// Changes a second asked for (a schedule: change k is due at k / rate).
    pub rate_asked: f64,
    /// Changes committed, and the seconds from the first due to the last committed.
    pub writes: u64,
    pub seconds: f64,
    /// The store's count of changes before and after (`blobrace_churn`).
    pub applied_before: u64,
    pub applied_after: u64,
    /// Each change's time, from the start of its statement to its commit (None: no
    /// change was made).
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub max_ms: Option<f64>,
    /// Seconds from the writer's start to its stop (right after the measurement's
    /// last fetch): where its timeline sits against the readers' windows.
    #[serde(default)]
    pub ran_s: f64,
    /// The most a change started after it was due: the writer falling behind its rate.
    pub most_behind_ms: f64,
    /// Per second of the writer's run: changes committed and the slowest one (ms), the
    /// timeline where a checkpoint, vacuum or flush shows as a slow second.
    pub per_second: Vec<(u32, f64)>,
}

impl WriterReport {
    /// Changes committed a second; None where none was (no rate to give).
    pub fn rate_achieved(&self) -> Option<f64> {
        (self.writes > 0 && self.seconds > 0.0).then(|| self.writes as f64 / self.seconds)
    }
}

/// A live dataset's change counts; they only grow.
#[derive(Debug)]
pub struct LiveCount {
    /// Changes committed: every reader that starts now sees them.
    committed: AtomicU64,
    /// Changes begun (committed or in flight): no reader can see a later one.
    begun: AtomicU64,
}

impl LiveCount {
    fn new(applied: u64) -> Self {
        Self {
            committed: AtomicU64::new(applied),
            begun: AtomicU64::new(applied),
        }
    }

    pub fn committed(&self) -> u64 {
        self.committed.load(Ordering::Acquire)
    }

    pub fn begun(&self) -> u64 {
        self.begun.load(Ordering::Acquire)
    }

    /// The writer is about to write change `applied` (0-based).
    pub fn begin(&self, applied: u64) {
        self.begun.fetch_max(applied + 1, Ordering::AcqRel);
    }

    /// The writer's change `applied` is committed.
    pub fn commit(&self, applied: u64) {
        self.committed.fetch_max(applied + 1, Ordering::AcqRel);
    }
}

/// `--write-rate`: changes a second, 0 or more (0: the live dataset, no writer).
pub fn parse_write_rate(text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|r| r.is_finite() && *r >= 0.0 && *r <= 1e6)
        .ok_or_else(|| {
            format!(
                "--write-rate {text:?} is not a rate: give changes a second, 0 or more (50 replaces 50 rows a second; 0 measures the written dataset without a writer)"
            )
        })
}

static LIVE: Mutex<Vec<(DatasetSpec, Arc<LiveCount>)>> = Mutex::new(Vec::new());

/// Say where `spec` stands now (read from its store before its readers open): the
/// count its readers and its writer share from here on.
pub fn publish(spec: DatasetSpec, applied: u64) -> Arc<LiveCount> {
    let count = Arc::new(LiveCount::new(applied));
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    live.retain(|(s, _)| *s != spec);
    live.push((spec, count.clone()));
    count
}

/// The count published for `spec`; None for a dataset nobody writes.
pub fn count_of(spec: &DatasetSpec) -> Option<Arc<LiveCount>> {
    if !spec.live {
        return None;
    }
    let live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    live.iter()
        .find(|(s, _)| s == spec)
        .map(|(_, count)| count.clone())
}

/// The versions row `id` may hold for a fetch that began when `committed` changes
/// were in and ended when `begun` had begun: the lowest and the highest.
pub fn versions_between(spec: &DatasetSpec, id: u64, committed: u64, begun: u64) -> (u32, u32) {
    let order = spec.churn_order();
    (
        order.version_of(id, committed),
        order.version_of(id, begun.max(committed)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::size::SizeClass;

    fn spec(seed: u64) -> DatasetSpec {
        DatasetSpec {
            live: true,
            ..DatasetSpec::new(
                SizeClass::new(1024).unwrap(),
                100 << 10,
                seed,
                Default::default(),
            )
            .unwrap()
        }
    }

    #[test]
    fn readers_find_the_count_their_writer_moves() {
        let (a, b) = (spec(11), spec(12));
        let count = publish(a, 7);
        assert!(count_of(&b).is_none());
        assert!(count_of(&DatasetSpec { live: false, ..a }).is_none());
        let seen = count_of(&a).unwrap();
        count.begin(7);
        assert_eq!((seen.committed(), seen.begun()), (7, 8));
        count.commit(7);
        assert_eq!((seen.committed(), seen.begun()), (8, 8));
        // Published again (the next measurement): a fresh count, the old one dropped.
        publish(a, 20);
        assert_eq!(count_of(&a).unwrap().committed(), 20);
    }

    #[test]
    fn only_a_change_in_flight_allows_two_versions() {
        let s = spec(13);
        let order = s.churn_order();
        let (in_flight, _) = order.change_at(5);
        let (done, _) = order.change_at(4);
        let (later, _) = order.change_at(6);
        assert_eq!(versions_between(&s, in_flight, 5, 6), (0, 1));
        assert_eq!(versions_between(&s, done, 5, 6), (1, 1));
        assert_eq!(versions_between(&s, later, 5, 6), (0, 0));
    }
}
