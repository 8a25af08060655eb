//! One fetch as every measuring loop makes it (`FetchLoop::run`, each client thread of
//! `load_gen`): the engine's fetch alone inside the clock, the disk counter read on
//! either side of it, then, outside it, the failure's context and the content check.
//! One step for both, so what the clock covers cannot differ between one client and
//! many (`benches/overhead.rs` measures what it adds).

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::dataset::DatasetSpec;
use crate::dataset::content::check_blob;
use crate::db::engine::Engine;
use crate::disk::io::DiskReadCounter;
use crate::error::FetchMismatch;
use crate::workload::live::LiveCount;

/// Every this-many fetches the whole blob is regenerated and compared, besides each
/// row's first fetch in the loop.
pub const FULL_CHECK_EVERY: u64 = 64;

/// The buffers and the count one loop's fetches share: the blob lands in `out`,
/// reused from fetch to fetch; `scratch` holds the expected blob for a full check.
pub struct FetchStep {
    engine_name: String,
    /// Which client of a many-client load made the fetch, for the error.
    client: Option<u32>,
    spec: DatasetSpec,
    out: Vec<u8>,
    scratch: Vec<u8>,
    fetches: u64,
    /// One bit per row: whether its whole content was checked in this loop. The first
    /// fetch of every row is checked fully, so no row's damage is measured as a result
    /// (one in 64 let a flipped byte through); a row fetched again is checked by its
    /// length and id stamp, and fully every `FULL_CHECK_EVERY`th fetch.
    checked: Vec<u64>,
    /// A dataset written while it is measured: its writer's counts (`live.rs`).
    live: Option<Arc<LiveCount>>,
}

/// One checked fetch: when its clock started, what it read.
pub struct Fetched {
    pub start: Instant,
    pub took: Duration,
    /// Bytes read from storage across the fetch; None without a disk counter.
    pub disk_bytes: Option<u64>,
    /// Bytes the fetch returned.
    pub bytes: u64,
}

impl FetchStep {
    pub fn new(engine_name: &str, client: Option<u32>, spec: DatasetSpec) -> Self {
        FetchStep {
            engine_name: engine_name.to_string(),
            client,
            spec,
            out: Vec::with_capacity(spec.size.as_usize()),
            scratch: Vec::with_capacity(spec.size.as_usize()),
            fetches: 0,
            checked: vec![0; spec.rows.div_ceil(64) as usize],
            live: crate::workload::live::count_of(&spec),
        }
    }

    /// Fetch `id` through `engine`, timed alone, and check what came back: its length
    /// and id stamp, and its whole content the first time the row is fetched and every
    /// `FULL_CHECK_EVERY`th fetch.
    #[inline]
    pub async fn fetch(
        &mut self,
        engine: &mut impl Engine,
        id: u64,
        mut disk: Option<&mut DiskReadCounter>,
    ) -> Result<Fetched> {
        engine.before_fetch(id, &mut self.out);
        let committed = self.live.as_ref().map(|l| l.committed());
        let before = disk.as_mut().and_then(|d| d.read_bytes());

        let start = Instant::now();
        let fetched = engine.fetch(id, &mut self.out).await;
        let took = start.elapsed();

        let after = disk.as_mut().and_then(|d| d.read_bytes());
        fetched.with_context(|| {
            let client = self
                .client
                .map(|k| format!(", client {k}"))
                .unwrap_or_default();
            format!(
                "{} fetch of id {id} (size {}{client}) failed",
                self.engine_name,
                self.spec.size_label()
            )
        })?;
        self.check(id, committed)?;
        Ok(Fetched {
            start,
            took,
            disk_bytes: before.zip(after).map(|(b, a)| a.saturating_sub(b)),
            bytes: self.out.len() as u64,
        })
    }

    /// Fetch `id` in pieces of about `chunk` bytes (`Engine::fetch_streamed`), checked as
    /// `fetch` checks: the time to its first piece and to its end.
    pub async fn fetch_streamed(
        &mut self,
        engine: &mut impl Engine,
        id: u64,
        chunk: usize,
    ) -> Result<(Duration, Duration)> {
        engine.before_fetch(id, &mut self.out);
        let committed = self.live.as_ref().map(|l| l.committed());
        let start = Instant::now();
        let first = engine.fetch_streamed(id, chunk, &mut self.out).await;
        let took = start.elapsed();
        let first = first.with_context(|| {
            format!(
                "{} streamed fetch of id {id} (size {}) failed",
                self.engine_name,
                self.spec.size_label()
            )
        })?;
        self.check(id, committed)?;
        Ok((first.saturating_duration_since(start), took))
    }

    /// Check what the last fetch left in `out`: its length and id stamp, and its whole
    /// content on the row's first fetch and every `FULL_CHECK_EVERY`th fetch. On a dataset being written, the
    /// version of a row whose change was in flight during the fetch (begun after
    /// `committed`, the count when it started) may be either; any other row's only one.
    fn check(&mut self, id: u64, committed: Option<u64>) -> Result<()> {
        let first = id
            .checked_sub(1)
            .and_then(|i| Some((self.checked.get_mut((i / 64) as usize)?, 1u64 << (i % 64))))
            .is_some_and(|(word, bit)| {
                let first = *word & bit == 0;
                *word |= bit;
                first
            });
        let full = first || self.fetches.is_multiple_of(FULL_CHECK_EVERY);
        let (low, high) = match (&self.live, committed) {
            (Some(live), Some(committed)) if full => {
                crate::workload::live::versions_between(&self.spec, id, committed, live.begun())
            }
            _ => {
                let v = self.spec.final_version_of(id);
                (v, v)
            }
        };
        let (seed, size, content) = (self.spec.seed, self.spec.size, self.spec.content);
        let row = (id, self.spec.blob_bytes(id));
        let mut wrong = check_blob(
            seed,
            size,
            content,
            row,
            &self.out,
            full.then_some(low),
            &mut self.scratch,
        );
        if wrong.is_some() && full && high != low {
            wrong = check_blob(
                seed,
                size,
                content,
                row,
                &self.out,
                Some(high),
                &mut self.scratch,
            );
        }
        if let Some(what) = wrong {
            return Err(FetchMismatch {
                engine: self.engine_name.clone(),
                size: self.spec.size_label(),
                id,
                what,
            }
            .into());
        }
        self.fetches += 1;
        Ok(())
    }

    /// The buffer the blobs land in, for a loop that fetches without checking (a CPU
    /// profile of the fetch alone).
    pub fn out(&mut self) -> &mut Vec<u8> {
        &mut self.out
    }
}
