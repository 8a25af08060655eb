//! The writer of `--write-rate`: one connection that replaces rows at a steady rate
//! while the readers are measured, each change its own transaction committed with the
//! dataset's count of changes (`Store::churn`), the way an application updates one
//! document a request. It runs on its own thread and runtime, so the readers' loops
//! are the same with it as without it; what it costs them shows in their latency.
//!
//! Each change is due at k / rate from the writer's start (a schedule, not a loop that
//! waits after each change): a write that stalls (a checkpoint, a vacuum, a flush)
//! makes the next ones late, recorded as how far behind it fell, not hidden.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::dataset::DatasetSpec;
use crate::dataset::content::fill_blob_version;
use crate::db::locations::Locations;
use crate::db::registry::StoreKind;
use crate::stats::new_histogram;
use crate::workload::live::{LiveCount, WriterReport};

use super::super::Progress;
use super::{CellRun, Prepared};

impl CellRun<'_> {
    /// Run `measure` with the writer beside it (`--write-rate` above 0, a dataset its
    /// store writes): started before it, stopped after it whatever it returned, what
    /// it did kept in `prepared.writer`. A failed writer fails the step.
    pub(super) fn beside_writer<T>(
        &mut self,
        prepared: &mut Prepared,
        measure: impl FnOnce(&mut Self, &mut Prepared) -> Result<T>,
    ) -> Result<T> {
        let writer = self.start_writer(prepared)?;
        let measured = measure(self, prepared);
        prepared.writer = self.stop_writer(writer)?;
        measured
    }

    /// The writer beside a measurement of `engine`; None without one: the floor, or
    /// a rate of 0.
    fn start_writer(&self, prepared: &Prepared) -> Result<Option<Writer>> {
        let (engine, spec) = (self.engine, self.spec);
        let (Some(rate), Some(count)) = (self.config().write_rate, &prepared.live) else {
            return Ok(None);
        };
        if rate <= 0.0 {
            return Ok(None);
        }
        let at = self.config().locations();
        Writer::start(engine.store(), at, spec, rate, count.clone()).map(Some)
    }

    /// Stop the writer and say what it did; a writer that failed fails the step.
    fn stop_writer(&self, writer: Option<Writer>) -> Result<Option<WriterReport>> {
        let (engine, spec) = (self.engine, self.spec);
        let Some(writer) = writer else {
            return Ok(None);
        };
        let report = writer.stop().with_context(|| self.failed("writer"))?;
        self.progress(Progress::Wrote {
            engine,
            size: spec.size_label(),
            report: &report,
        });
        Ok(Some(report))
    }
}

/// A writer running; `stop` ends it and says what it did.
pub struct Writer {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Result<WriterReport>>,
}

impl Writer {
    /// Start replacing rows of `spec` in `kind`'s store at `rate` a second, moving
    /// `count` (published for its readers) with each change.
    pub fn start(
        kind: StoreKind,
        at: Locations,
        spec: DatasetSpec,
        rate: f64,
        count: Arc<LiveCount>,
    ) -> Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::Builder::new()
            .name("blobrace-writer".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                rt.block_on(write(kind, at, spec, rate, count, stopping))
            })
            .context("cannot start the writer thread")?;
        Ok(Self { stop, thread })
    }

    /// Stop after the change in flight; its report, or why it failed.
    pub fn stop(self) -> Result<WriterReport> {
        self.stop.store(true, Ordering::SeqCst);
        self.thread
            .join()
            .map_err(|_| anyhow::anyhow!("the writer thread panicked"))?
    }
}

async fn write(
    kind: StoreKind,
    at: Locations,
    spec: DatasetSpec,
    rate: f64,
    count: Arc<LiveCount>,
    stop: Arc<AtomicBool>,
) -> Result<WriterReport> {
    let mut store = kind.open(&at, spec);
    // Connected before the first change is timed; and the store's count is the one its
    // readers were given (nothing else writes this dataset).
    let stored = store
        .churning()?
        .churn_applied()
        .await
        .context("the writer's first look at its dataset")?
        .applied;
    anyhow::ensure!(
        stored == count.committed(),
        "{} holds {stored} changes where its readers were told {}: something else writes this dataset",
        store.location().display(),
        count.committed()
    );
    let order = spec.churn_order();
    let applied_before = count.committed();
    let mut applied = applied_before;
    let mut blobs = vec![vec![0u8; spec.size.as_usize()]];
    let mut took = new_histogram();
    let mut per_second: Vec<(u32, f64)> = Vec::new();
    let mut most_behind = Duration::ZERO;
    let interval = Duration::from_secs_f64(1.0 / rate);
    let start = Instant::now();
    let mut last_commit = start;
    let mut k: u32 = 0;
    while !stop.load(Ordering::Relaxed) {
        let due = start + interval * k;
        let now = Instant::now();
        if now < due {
            // Wake for the stop at least every 50 ms at a slow rate.
            tokio::time::sleep((due - now).min(Duration::from_millis(50))).await;
            continue;
        }
        most_behind = most_behind.max(now - due);
        let (id, version) = order.change_at(applied);
        fill_blob_version(
            spec.seed,
            spec.size,
            spec.content,
            id,
            version,
            &mut blobs[0],
        );
        count.begin(applied);
        let t0 = Instant::now();
        store
            .churning()?
            .churn(&[id], &mut blobs, applied + 1)
            .await
            .with_context(|| {
                format!(
                    "the writer's change {} (id {id}) in {}",
                    applied + 1,
                    store.location().display()
                )
            })?;
        let done = Instant::now();
        count.commit(applied);
        applied += 1;
        k += 1;
        let ns = (done - t0).as_nanos() as u64;
        took.saturating_record(ns.max(1));
        let second = (done - start).as_secs() as usize;
        if per_second.len() <= second {
            per_second.resize(second + 1, (0, 0.0));
        }
        let slot = &mut per_second[second];
        slot.0 += 1;
        slot.1 = slot.1.max(ns as f64 / 1e6);
        last_commit = done;
    }
    let ran_s = start.elapsed().as_secs_f64();
    store.churning()?.churn_finish().await?;
    let wrote = applied > applied_before;
    let ms = |q: f64| wrote.then(|| took.value_at_quantile(q) as f64 / 1e6);
    Ok(WriterReport {
        rate_asked: rate,
        writes: applied - applied_before,
        seconds: (last_commit - start).as_secs_f64(),
        applied_before,
        applied_after: applied,
        p50_ms: ms(0.50),
        p99_ms: ms(0.99),
        max_ms: wrote.then(|| took.max() as f64 / 1e6),
        ran_s,
        most_behind_ms: most_behind.as_secs_f64() * 1e3,
        per_second,
    })
}
