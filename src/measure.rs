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

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

use crate::content::check_blob;
use crate::dataset::DatasetSpec;
use crate::diskio::DiskReadCounter;
use crate::engine::Engine;
use crate::error::FetchMismatch;
use crate::stats::FetchStats;
use crate::stats::precision::{self, Stopped, Targets};

/// Every this-many fetches the whole blob is regenerated and compared.
pub const FULL_CHECK_EVERY: u64 = 64;

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
    engine_name: String,
    spec: DatasetSpec,
    ids: Xoshiro256PlusPlus,
    out: Vec<u8>,
    scratch: Vec<u8>,
    disk: Option<DiskReadCounter>,
    disk_source: String,
    fetches: u64,
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
fn p99_fetches() -> u64 {
    crate::stats::interval::fetches_to_judge(0.99)
}

impl PrecisionGoal {
    /// Whether a cell measured for `elapsed` with `fetches` must stop: at the limit,
    /// or twice it while its p99 still lacks the fetches an interval needs.
    fn at_limit(&self, elapsed: Duration, fetches: u64) -> bool {
        elapsed >= self.limit && (fetches >= p99_fetches() || elapsed >= self.limit * 2)
    }

    /// How long to measure for the precision, projected from the warm-up's fetches
    /// (made in `took`): for a loop that must fix its time before it starts
    /// (criterion's). Within `min` and `limit`.
    pub fn planned_time(&self, warm_up: &FetchStats, took: Duration) -> Duration {
        let summary = warm_up.summary_with_intervals();
        let intervals = summary.intervals.clone().unwrap_or_default();
        // criterion's own warm-up turns this time into fetches, a fifth too few at times
        // (Dolt at 4 MiB: 390 of 500): a p99 gets a quarter more than it needs.
        let needed = precision::fetches_needed(&intervals, &summary, self.targets)
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
            engine_name: engine_name.to_string(),
            spec,
            ids: id_sequence(&spec),
            out: Vec::with_capacity(spec.size.as_usize()),
            scratch: Vec::with_capacity(spec.size.as_usize()),
            disk,
            disk_source,
            fetches: 0,
            first_fetch: None,
            warm_up: FetchStats::new(known),
            measured: FetchStats::new(known),
            stopped: None,
            past_plan_fetches: None,
        }
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
            let id = self.ids.random_range(1..=self.spec.rows);
            self.engine.before_fetch(&mut self.out);
            let before = self.disk.as_mut().and_then(DiskReadCounter::read_bytes);

            let start = Instant::now();
            let fetched = self.engine.fetch(id, &mut self.out).await;
            let took = start.elapsed();

            let after = self.disk.as_mut().and_then(DiskReadCounter::read_bytes);
            fetched.with_context(|| {
                format!(
                    "{} fetch of id {id} (size {}) failed",
                    self.engine_name, self.spec.size
                )
            })?;
            let full = self.fetches.is_multiple_of(FULL_CHECK_EVERY);
            if let Some(what) = check_blob(
                self.spec.seed,
                self.spec.size,
                id,
                &self.out,
                full,
                &mut self.scratch,
            ) {
                return Err(FetchMismatch {
                    engine: self.engine_name.clone(),
                    size: self.spec.size.to_string(),
                    id,
                    what,
                }
                .into());
            }
            self.fetches += 1;
            timed += took;
            let disk_bytes = before.zip(after).map(|(b, a)| a.saturating_sub(b));
            let stats = match phase {
                Phase::WarmUp => &mut self.warm_up,
                Phase::Measured => &mut self.measured,
            };
            let at = (start + took - *self.first_fetch.get_or_insert(start)).as_nanos() as u64;
            stats.record(
                at,
                took.as_nanos() as u64,
                disk_bytes,
                self.out.len() as u64,
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
            while round_started.elapsed() < crate::steady::ROUND_MIN
                || self.warm_up.count() - n0 < crate::steady::ROUND_MIN_FETCHES
            {
                self.run(1, Phase::WarmUp).await?;
                if started.elapsed() >= limit {
                    break;
                }
            }
            rounds.push((self.warm_up.hits.len() - hits0, self.warm_up.count() - n0));
            if !known {
                if rounds.len() >= crate::steady::STABLE_ROUNDS || started.elapsed() >= limit {
                    break (None, None);
                }
                continue;
            }
            let (stable, tolerance) = crate::steady::stable(&rounds);
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
            let id = self.ids.random_range(1..=self.spec.rows);
            self.engine.before_fetch(&mut self.out);
            self.engine.fetch(id, &mut self.out).await?;
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
        let intervals = summary.intervals.clone().unwrap_or_default();
        if precision::reached(&intervals, &summary, goal.targets) {
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
            let intervals = summary.intervals.clone().unwrap_or_default();
            if precision::reached(&intervals, &summary, goal.targets) {
                break Stopped::Reached;
            }
            if at_limit {
                break Stopped::TimeLimit;
            }
            check_at = precision::next_check(&intervals, &summary, goal.targets);
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

/// Tells, inside criterion's `iter_custom`, whether a call is warm-up or measurement.
///
/// criterion 0.8 warms up by calling the routine with 1, 2, 4... iterations until
/// the summed wall time of those calls exceeds `warm_up_time`, then makes exactly
/// `sample_size` measurement calls. Summing the wall time of our own calls the
/// same way tells the phases apart, so warm-up fetches never mix into the
/// measured distribution, and the measured fetches are exactly the ones behind
/// criterion's own report.
#[derive(Debug)]
pub struct CriterionPhases {
    warm_up_time: Duration,
    wall: Duration,
    measured_calls: u64,
    measured_wall: Duration,
}

impl CriterionPhases {
    pub fn new(warm_up_time: Duration) -> Self {
        Self {
            warm_up_time,
            wall: Duration::ZERO,
            measured_calls: 0,
            measured_wall: Duration::ZERO,
        }
    }

    pub fn next(&self) -> Phase {
        if self.wall > self.warm_up_time {
            Phase::Measured
        } else {
            Phase::WarmUp
        }
    }

    /// Record the wall time of the call that just ran in `phase`.
    pub fn finished(&mut self, phase: Phase, wall: Duration) {
        self.wall += wall;
        if phase == Phase::Measured {
            self.measured_calls += 1;
            self.measured_wall += wall;
        }
    }

    /// The wall time of the measured calls.
    pub fn measured_wall(&self) -> Duration {
        self.measured_wall
    }

    pub fn measured_calls(&self) -> u64 {
        self.measured_calls
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::fill_blob;
    use crate::engine::EngineSettings;
    use crate::size::SizeClass;

    /// Serves correct blobs from memory: a fetch that costs (almost) nothing.
    struct MemoryEngine {
        spec: DatasetSpec,
        corrupt_id: Option<u64>,
        /// How long each fetch waits first: a slow engine.
        delay: Duration,
    }

    impl Engine for MemoryEngine {
        async fn fetch(&mut self, id: u64, out: &mut Vec<u8>) -> Result<()> {
            if !self.delay.is_zero() {
                tokio::time::sleep(self.delay).await;
            }
            out.resize(self.spec.size.as_usize(), 0);
            fill_blob(self.spec.seed, self.spec.size, id, out);
            if self.corrupt_id == Some(id) {
                out[20] ^= 0xff;
            }
            Ok(())
        }
        fn settings(&self) -> EngineSettings {
            EngineSettings::new()
        }
    }

    fn spec() -> DatasetSpec {
        DatasetSpec {
            size: SizeClass::new(256).unwrap(),
            rows: 100,
            seed: 5,
            key: Default::default(),
        }
    }

    #[tokio::test]
    async fn phases_are_recorded_apart() {
        let mut l = FetchLoop::new(
            MemoryEngine {
                spec: spec(),
                corrupt_id: None,
                delay: Duration::ZERO,
            },
            "memory",
            spec(),
            Err("not counted".into()),
        );
        l.run(7, Phase::WarmUp).await.unwrap();
        let timed = l.run(50, Phase::Measured).await.unwrap();
        assert_eq!(l.warm_up.count(), 7);
        assert_eq!(l.measured.count(), 50);
        assert_eq!(l.measured.summary().bytes_returned, 50 * 256);
        // Not counting disk reads: unavailable, never a 0 that would read as "all hits".
        assert_eq!(l.measured.summary().disk_bytes_per_fetch, None);
        assert_eq!(l.measured.summary().hit_ratio, None);
        assert!(timed > Duration::ZERO);
    }

    fn memory_loop(delay: Duration) -> FetchLoop<MemoryEngine> {
        FetchLoop::new(
            MemoryEngine {
                spec: spec(),
                corrupt_id: None,
                delay,
            },
            "memory",
            spec(),
            Err("not counted".into()),
        )
    }

    #[tokio::test]
    async fn a_measurement_goes_on_until_its_minimum_fetches_within_twice_its_time() {
        // 26 ms fetches, 50 ms of measurement: time alone stops after the 2nd
        // (52 ms); a minimum of 3 takes one more, within twice the time.
        let mut short = memory_loop(Duration::from_millis(26));
        short
            .run_for(Duration::ZERO, Duration::from_millis(50), 3)
            .await
            .unwrap();
        assert_eq!(short.measured.count(), 3);
        assert_eq!(
            short.warm_up.count(),
            1,
            "the minimum is for the measurement only"
        );
        // Slow fetches: past the measurement time, but no further than twice it.
        let mut slow = memory_loop(Duration::from_millis(5));
        let started = Instant::now();
        slow.run_for(Duration::ZERO, Duration::from_millis(50), 1000)
            .await
            .unwrap();
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(100), "{took:?}");
        assert!(took < Duration::from_secs(5), "{took:?}");
        assert!(slow.measured.count() < 1000);
        // No minimum: the time alone.
        let mut timed = memory_loop(Duration::from_millis(5));
        let started = Instant::now();
        timed
            .run_for(Duration::ZERO, Duration::from_millis(50), 0)
            .await
            .unwrap();
        assert!(started.elapsed() < Duration::from_millis(100) + Duration::from_millis(50));
    }

    #[tokio::test]
    async fn a_wrong_byte_is_caught_on_a_full_check() {
        // Fetch #0 gets a full check; corrupt exactly the first id drawn.
        let first = id_sequence(&spec()).random_range(1..=spec().rows);
        let mut l = FetchLoop::new(
            MemoryEngine {
                spec: spec(),
                delay: Duration::ZERO,
                corrupt_id: Some(first),
            },
            "memory",
            spec(),
            Err("not counted".into()),
        );
        let err = l.run(1, Phase::Measured).await.unwrap_err().to_string();
        assert!(
            err.contains("memory")
                && err.contains(&format!("id {first}"))
                && err.contains("byte 20"),
            "{err}"
        );
    }

    #[test]
    fn ids_are_uniform_over_the_whole_range() {
        let s = DatasetSpec {
            size: SizeClass::new(1024).unwrap(),
            rows: 10,
            seed: 1,
            key: Default::default(),
        };
        let mut ids = id_sequence(&s);
        let mut seen = [0u32; 11];
        for _ in 0..10_000 {
            seen[ids.random_range(1..=s.rows) as usize] += 1;
        }
        assert_eq!(seen[0], 0);
        assert!(
            seen[1..].iter().all(|&n| (800..1200).contains(&n)),
            "{seen:?}"
        );
    }

    #[tokio::test]
    async fn a_plan_that_falls_short_is_measured_past_and_one_at_its_limit_is_not() {
        let goal = |limit_ms| PrecisionGoal {
            targets: crate::stats::precision::Targets {
                p50: 0.5,
                p99: 0.99,
            },
            min: Duration::ZERO,
            min_fetches: 0,
            limit: Duration::from_millis(limit_ms),
        };
        // criterion's plan: 100 fetches of about 1 ms, where a p99 needs 500 and 5
        // windows of 200 ms.
        let mut short = memory_loop(Duration::from_millis(1));
        let plan = short.run(100, Phase::Measured).await.unwrap();
        short.measure_past_plan(goal(20_000), plan).await.unwrap();
        let (stopped, took) = short.stopped.unwrap();
        assert_eq!(stopped, Stopped::Reached);
        let more = short.past_plan_fetches.unwrap();
        assert_eq!(short.measured.count(), 100 + more);
        assert!(short.measured.count() >= 500, "{more} more");
        assert!(took >= Duration::from_secs(1) && took < Duration::from_secs(20));
        // Met by the plan: nothing more.
        let count = short.measured.count();
        short.past_plan_fetches = None;
        short.measure_past_plan(goal(20_000), took).await.unwrap();
        assert_eq!(short.stopped.unwrap().0, Stopped::Planned);
        assert_eq!(
            (short.measured.count(), short.past_plan_fetches),
            (count, None)
        );
        // A plan that already took twice the limit: stopped there, nothing more.
        let mut late = memory_loop(Duration::from_millis(1));
        late.run(100, Phase::Measured).await.unwrap();
        late.measure_past_plan(goal(50), Duration::from_millis(100))
            .await
            .unwrap();
        assert_eq!(late.stopped.unwrap().0, Stopped::TimeLimit);
        assert_eq!((late.measured.count(), late.past_plan_fetches), (100, None));
    }

    #[test]
    fn criterion_phases_follow_the_warm_up_budget() {
        let mut p = CriterionPhases::new(Duration::from_millis(10));
        assert_eq!(p.next(), Phase::WarmUp);
        p.finished(Phase::WarmUp, Duration::from_millis(6));
        assert_eq!(p.next(), Phase::WarmUp, "6 ms is not past 10 ms");
        p.finished(Phase::WarmUp, Duration::from_millis(6));
        assert_eq!(p.next(), Phase::Measured);
        p.finished(Phase::Measured, Duration::from_millis(1));
        assert_eq!(p.measured_calls(), 1);
    }
}
