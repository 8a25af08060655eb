//! The measured path. `FetchLoop::run` is the whole of it:
//!
//! ```text
//! id     = next uniform id in 1..=N          (seeded; same sequence for every engine)
//! before = read_bytes (/proc/self/io, or the server container's processes)
//! start  = Instant::now()
//!          engine.fetch(id, &mut out)        <- the only thing timed
//! took   = start.elapsed()
//! after  = read_bytes
//! check length + id stamp (full content every 64th fetch), record (took, after - before)
//! ```
//!
//! Everything but the id and the record is `step::FetchStep`, which the many-client
//! load generator's threads make too.

mod criterion;
pub mod first_bytes;
mod goal;
mod step;
#[cfg(test)]
mod tests;

use std::time::{Duration, Instant};

use anyhow::Result;
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;

use crate::dataset::DatasetSpec;
use crate::db::engine::Engine;
use crate::disk::io::DiskReadCounter;
use crate::stats::FetchStats;
use crate::stats::precision::{self, Stopped};
use crate::workload::access::{Access, Sampler};

pub use criterion::CriterionPhases;
pub use goal::PrecisionGoal;
pub use step::{FetchStep, Fetched};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    WarmUp,
    Measured,
}

/// The id sequence of a dataset: seeded by the run seed and the size class only,
/// so every engine fetches the same ids in the same order.
pub fn id_sequence(spec: &DatasetSpec) -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(
        spec.seed ^ spec.size.bytes().rotate_left(32) ^ 0x6964_7365_7175_656e,
    )
}

pub struct FetchLoop<E: Engine> {
    engine: E,
    spec: DatasetSpec,
    ids: Xoshiro256PlusPlus,
    /// Which ids are asked for (`--access`; uniform unless `with_access` says).
    access: Sampler,
    step: FetchStep,
    disk: Option<DiskReadCounter>,
    disk_source: String,
    /// When the first fetch began: the timeline's zero.
    first_fetch: Option<Instant>,
    pub warm_up: FetchStats,
    pub measured: FetchStats,
    /// How an adaptive measurement ended (`--precision`): why, after how long; None
    /// for a fixed time.
    pub stopped: Option<(Stopped, Duration)>,
    /// Under `cargo bench`: the fetches measured after criterion's plan, which fell
    /// short of the precision (`measure_past_plan`); None where it did not.
    pub past_plan_fetches: Option<u64>,
}

impl<E: Engine> FetchLoop<E> {
    /// `disk`: the counter that sees the engine's storage reads (`/proc/self/io`
    /// in-process, the container's processes for a server), or why there is none.
    pub fn new(
        engine: E,
        engine_name: &str,
        spec: DatasetSpec,
        disk: Result<DiskReadCounter, String>,
    ) -> Self {
        let disk_source = match &disk {
            Ok(counter) => counter.source.clone(),
            Err(why) => format!("unavailable: {why}"),
        };
        let disk = disk.ok();
        let known = disk.is_some();
        Self {
            engine,
            spec,
            ids: id_sequence(&spec),
            access: Access::Uniform.sampler(spec.rows),
            step: FetchStep::new(engine_name, None, spec),
            disk,
            disk_source,
            first_fetch: None,
            warm_up: FetchStats::new(known).with_bands(spec.mix.map(|m| m.get().band_grid())),
            measured: FetchStats::new(known).with_bands(spec.mix.map(|m| m.get().band_grid())),
            stopped: None,
            past_plan_fetches: None,
        }
    }

    /// Ask for ids as `access` says (a zipfian sampler sums its constant over the
    /// rows here, once, outside any clock).
    pub fn with_access(mut self, access: Access) -> Self {
        self.access = access.sampler(self.spec.rows);
        self
    }

    pub fn engine(&self) -> &E {
        &self.engine
    }

    /// Close the engine (after its results are recorded).
    pub async fn close(self) -> Result<()> {
        self.engine.close().await
    }

    /// What counts the bytes read from storage per fetch, or "unavailable: why".
    pub fn disk_source(&self) -> &str {
        &self.disk_source
    }

    /// Run `iters` fetches; returns the sum of their timed spans.
    pub async fn run(&mut self, iters: u64, phase: Phase) -> Result<Duration> {
        let mut timed = Duration::ZERO;
        for _ in 0..iters {
            let id = self.access.next(&mut self.ids);
            let fetched = self
                .step
                .fetch(&mut self.engine, id, self.disk.as_mut())
                .await?;
            timed += fetched.took;
            let stats = match phase {
                Phase::WarmUp => &mut self.warm_up,
                Phase::Measured => &mut self.measured,
            };
            let first = *self.first_fetch.get_or_insert(fetched.start);
            let at = (fetched.start + fetched.took - first).as_nanos() as u64;
            stats.record(
                at,
                fetched.took.as_nanos() as u64,
                fetched.disk_bytes,
                fetched.bytes,
            );
        }
        Ok(timed)
    }

    /// Steady state, step 2 (see `steady`): warm-up fetches in rounds of at least
    /// `ROUND_MIN` and `ROUND_MIN_FETCHES` until the last rounds' hit ratios agree,
    /// or `limit` passes. Without a disk counter hits are unknown: it runs
    /// `STABLE_ROUNDS` rounds and says steadiness was not judged.
    pub async fn settle(&mut self, limit: Duration) -> Result<Settled> {
        let started = Instant::now();
        let fetches_before = self.warm_up.count();
        let mut rounds: Vec<(u64, u64)> = Vec::new();
        let known = self.warm_up.disk_bytes.is_some();
        let (converged, tolerance) = loop {
            let round_started = Instant::now();
            let (hits0, n0) = (self.warm_up.hits.len(), self.warm_up.count());
            while round_started.elapsed() < crate::workload::steady::ROUND_MIN
                || self.warm_up.count() - n0 < crate::workload::steady::ROUND_MIN_FETCHES
            {
                self.run(1, Phase::WarmUp).await?;
                if started.elapsed() >= limit {
                    break;
                }
            }
            rounds.push((self.warm_up.hits.len() - hits0, self.warm_up.count() - n0));
            if !known {
                if rounds.len() >= crate::workload::steady::STABLE_ROUNDS
                    || started.elapsed() >= limit
                {
                    break (None, None);
                }
                continue;
            }
            let (stable, tolerance) = crate::workload::steady::stable(&rounds);
            if stable {
                break (Some(true), Some(tolerance));
            }
            if started.elapsed() >= limit {
                break (Some(false), Some(tolerance));
            }
        };
        Ok(Settled {
            round_hit_ratios: rounds
                .iter()
                .filter(|_| known)
                .map(|&(h, n)| h as f64 / n.max(1) as f64)
                .collect(),
            converged,
            tolerance,
            fetches: self.warm_up.count() - fetches_before,
            seconds: started.elapsed().as_secs_f64(),
        })
    }

    /// Fetch for `budget` with nothing around the fetches (no clock per fetch, no
    /// disk counter, no content check: the measurement before checked them), for a
    /// CPU profile of the fetch alone. Returns how many it made.
    pub async fn fetch_for(&mut self, budget: Duration) -> Result<u64> {
        let started = Instant::now();
        let mut fetches = 0;
        while started.elapsed() < budget {
            let id = self.access.next(&mut self.ids);
            let out = self.step.out();
            self.engine.before_fetch(id, out);
            self.engine.fetch(id, out).await?;
            fetches += 1;
        }
        Ok(fetches)
    }

    /// Without criterion: warm up for `warm_up`, then measure for `measure`
    /// (each at least one fetch), in small batches so the clock is checked often.
    pub async fn run_for(
        &mut self,
        warm_up: Duration,
        measure: Duration,
        min_fetches: u64,
    ) -> Result<()> {
        for (phase, budget) in [(Phase::WarmUp, warm_up), (Phase::Measured, measure)] {
            let started = Instant::now();
            loop {
                self.run(1, phase).await?;
                let elapsed = started.elapsed();
                // The measurement goes on past its time until `min_fetches`, for at
                // most as long again: slow blobs get a p99 that can be judged.
                let wanting = phase == Phase::Measured && self.measured.count() < min_fetches;
                if elapsed >= budget && (!wanting || elapsed >= budget * 2) {
                    break;
                }
            }
        }
        Ok(())
    }

    /// Warm-up fetches for `budget`; returns how long they took (a little more).
    pub async fn warm_up_for(&mut self, budget: Duration) -> Result<Duration> {
        let started = Instant::now();
        while started.elapsed() < budget {
            self.run(1, Phase::WarmUp).await?;
        }
        Ok(started.elapsed())
    }

    /// Warm up for `warm_up`, then measure until p50 and p99 are known to within
    /// `goal.targets`, at least `goal.min` and `goal.min_fetches`, at most `goal.limit`.
    /// The intervals are computed between fetches (never inside the clock), at the
    /// fetch counts the last check projected (`precision::fetches_needed`).
    pub async fn run_to_precision(&mut self, warm_up: Duration, goal: PrecisionGoal) -> Result<()> {
        self.warm_up_for(warm_up).await?;
        let stopped = self.measure_to_precision(goal, Duration::ZERO).await?;
        self.stopped = Some(stopped);
        Ok(())
    }

    /// After criterion measured its plan (`already`, wall time): where p50 and p99 are
    /// not yet known to within `goal.targets`, go on measuring (the same fetch loop, the
    /// same histograms) until they are or the limit counted from the plan's start comes.
    /// criterion fixes its fetches from its own warm-up's time per fetch, which a few
    /// slow warm-up fetches inflate: from an empty data directory 8 of 44 quick cells
    /// planned 30-480 fetches where a p99 needs 500.
    pub async fn measure_past_plan(
        &mut self,
        goal: PrecisionGoal,
        already: Duration,
    ) -> Result<()> {
        let summary = self.measured.summary_with_intervals();
        if precision::reached(&summary, goal.targets) {
            self.stopped = Some((Stopped::Planned, already));
            return Ok(());
        }
        if goal.at_limit(already, self.measured.count()) {
            self.stopped = Some((Stopped::TimeLimit, already));
            return Ok(());
        }
        let before = self.measured.count();
        let stopped = self.measure_to_precision(goal, already).await?;
        self.past_plan_fetches = Some(self.measured.count() - before);
        self.stopped = Some(stopped);
        Ok(())
    }

    /// Measure until p50 and p99 are known to within `goal.targets`, with `already`
    /// measured before this call (its time counts towards `goal.min` and the limit).
    async fn measure_to_precision(
        &mut self,
        goal: PrecisionGoal,
        already: Duration,
    ) -> Result<(Stopped, Duration)> {
        let started = Instant::now();
        let mut check_at = goal.min_fetches.max(1).max(self.measured.count() + 1);
        let stopped = loop {
            self.run(1, Phase::Measured).await?;
            let elapsed = already + started.elapsed();
            let at_limit = goal.at_limit(elapsed, self.measured.count());
            if !at_limit && (elapsed < goal.min || self.measured.count() < check_at) {
                continue;
            }
            let summary = self.measured.summary_with_intervals();
            if precision::reached(&summary, goal.targets) {
                break Stopped::Reached;
            }
            if at_limit {
                break Stopped::TimeLimit;
            }
            check_at = precision::next_check(&summary, goal.targets);
        };
        Ok((stopped, already + started.elapsed()))
    }
}

/// What `FetchLoop::settle` did.
pub struct Settled {
    pub round_hit_ratios: Vec<f64>,
    pub converged: Option<bool>,
    pub tolerance: Option<f64>,
    pub fetches: u64,
    pub seconds: f64,
}
