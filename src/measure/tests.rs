//! The timed loop against an engine that serves from memory: phases, minimums, the
//! content check, the id stream, precision and criterion's phases.

use crate::dataset::content::fill_blob;
use crate::db::engine::EngineSettings;
use crate::size::SizeClass;
use rand::RngExt;

use super::*;

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
        out.resize(self.spec.blob_bytes(id) as usize, 0);
        fill_blob(self.spec.seed, self.spec.size, self.spec.content, id, out);
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
        churn: None,
        live: false,
        mix: None,
        content: Default::default(),
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
        err.contains("memory") && err.contains(&format!("id {first}")) && err.contains("byte 20"),
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
        churn: None,
        live: false,
        mix: None,
        content: Default::default(),
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
