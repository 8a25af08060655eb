//! Cold at equal fill: every engine's cold figure over the same number of fetches
//! from its cold start. A cold cell's cache fills as it fetches, and adaptive
//! precision measures a fast engine for longer: at full scale sqlite-raw's cold 1 KiB
//! cell ran 239k fetches and ended at a 21% hit ratio, Dolt's 4.8k at 25% of far
//! fewer, so their cold percentiles described different caches. Here each engine of a
//! size and cold round is read over its first N fetches (warm-up included: it is
//! where a cold cache starts filling), N the fewest any of them made;
//! every engine fetches the same seeded sequence of ids, so their first N fetches drew
//! the same blobs, and the caches are as full as each engine's caching lets them be. Cut at the 200 ms
//! windows the fetches were recorded in (`stats::Window`): at least N, the count used
//! is said.

use crate::records::results::{EngineResult, RunResults};
use crate::stats::Window;
use crate::stats::window::fine_bins;
use crate::workload::steady::CacheState;

/// Fewer fetches than this give no p99 (five fetches beyond it; the judged p99
/// elsewhere asks as many).
pub const P99_FETCHES: u64 = 500;

/// One engine's cold figure over its first fetches.
#[derive(Debug, Clone, PartialEq)]
pub struct EqualFill {
    pub engine: String,
    /// The fetches counted: the first windows holding at least the round's N.
    pub fetches: u64,
    pub p50_ns: f64,
    /// None below `P99_FETCHES`.
    pub p99_ns: Option<f64>,
    pub hit_ratio: Option<f64>,
    /// Its whole cold cell, for comparison: fetches (warm-up included), the measured
    /// p50 and the measured hit ratio.
    pub cell_fetches: u64,
    pub cell_p50_ns: u64,
    pub cell_hit_ratio: Option<f64>,
}

/// One size's cold round (one repeat): N and every engine over its first N fetches.
#[derive(Debug, Clone, PartialEq)]
pub struct EqualFillRound {
    pub size: String,
    pub size_bytes: u64,
    pub repeat: u32,
    /// The fewest fetches any engine of the round made from its cold start.
    pub fetches: u64,
    pub rows: Vec<EqualFill>,
}

/// Every cold round with two engines or more that recorded their windows.
pub fn rounds(run: &RunResults) -> Vec<EqualFillRound> {
    let mut keys: Vec<(u64, u32)> = run
        .results
        .iter()
        .filter(|r| r.scenario.cache == CacheState::Cold && has_windows(r))
        .map(|r| (r.size_bytes, r.scenario.repeat))
        .collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter_map(|(size_bytes, repeat)| {
            let round: Vec<&EngineResult> = run
                .results
                .iter()
                .filter(|r| {
                    r.scenario.cache == CacheState::Cold
                        && r.size_bytes == size_bytes
                        && r.scenario.repeat == repeat
                        && has_windows(r)
                })
                .collect();
            (round.len() >= 2).then(|| round_of(&round))
        })
        .collect()
}

/// Windows from one cold start: a cell merged from several runs (`blobrace merge`)
/// holds each run's windows one after another, so it has no first N fetches.
fn has_windows(r: &EngineResult) -> bool {
    r.runs.len() <= 1 && (!r.warm_up.windows.is_empty() || !r.measured.windows.is_empty())
}

fn all_windows(r: &EngineResult) -> impl Iterator<Item = &Window> {
    r.warm_up.windows.iter().chain(&r.measured.windows)
}

fn round_of(round: &[&EngineResult]) -> EqualFillRound {
    let total = |r: &EngineResult| all_windows(r).map(|w| w.fetches).sum::<u64>();
    let fetches = round.iter().map(|r| total(r)).min().unwrap_or(0);
    let rows = round
        .iter()
        .map(|r| first_fetches(r, fetches, total(r)))
        .collect();
    EqualFillRound {
        size: round[0].size.clone(),
        size_bytes: round[0].size_bytes,
        repeat: round[0].scenario.repeat,
        fetches,
        rows,
    }
}

/// `r` over its first windows holding at least `n` fetches.
fn first_fetches(r: &EngineResult, n: u64, cell_fetches: u64) -> EqualFill {
    let mut bins = vec![0u64; fine_bins::count()];
    let (mut fetches, mut hits, mut counted) = (0u64, Some(0u64), 0u64);
    for w in all_windows(r) {
        if fetches >= n.max(1) {
            break;
        }
        for &(i, c) in &w.bins {
            bins[i as usize] += c;
        }
        fetches += w.fetches;
        hits = hits.zip(w.hits).map(|(a, b)| a + b);
        if w.hits.is_some() {
            counted += w.fetches;
        }
    }
    EqualFill {
        engine: r.engine.name().to_string(),
        fetches,
        p50_ns: fine_bins::quantile(&bins, fetches, 0.5).unwrap_or(0.0),
        p99_ns: (fetches >= P99_FETCHES)
            .then(|| fine_bins::quantile(&bins, fetches, 0.99))
            .flatten(),
        hit_ratio: hits
            .filter(|_| counted > 0)
            .map(|h| h as f64 / counted as f64),
        cell_fetches,
        cell_p50_ns: r.measured.latency.p50_ns,
        cell_hit_ratio: r.measured.hit_ratio,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(fetches: u64, hits: u64, ns: u64) -> Window {
        Window {
            start_s: 0.0,
            fetches,
            hits: Some(hits),
            disk_bytes: None,
            bins: vec![(fine_bins::of(ns) as u32, fetches)],
        }
    }

    #[test]
    fn each_engine_is_read_over_the_fewest_fetches_any_made_from_its_cold_start() {
        let run: RunResults =
            serde_json::from_str(include_str!("../../tests/fixtures/one-cold-round.json")).unwrap();
        let mut run = run;
        // A fast engine: 1,000 cold fetches at 10 µs (no hits), then 9,000 at 1 µs
        // (its cache filled). A slow one: 1,000 fetches in all, at 100 µs.
        run.results[0].warm_up.windows = vec![window(1000, 0, 10_000)];
        run.results[0].measured.windows = vec![window(9000, 9000, 1_000)];
        run.results[1].warm_up.windows = vec![window(400, 0, 100_000)];
        run.results[1].measured.windows = vec![window(600, 0, 100_000)];
        let rounds = rounds(&run);
        assert_eq!(rounds.len(), 1);
        let round = &rounds[0];
        assert_eq!(round.fetches, 1000);
        let fast = &round.rows[0];
        // Over its first 1,000 fetches, not its 10,000: the cold reads, no hits.
        assert_eq!((fast.fetches, fast.hit_ratio), (1000, Some(0.0)));
        assert!((9_000.0..11_000.0).contains(&fast.p50_ns), "{fast:?}");
        assert!(fast.p99_ns.is_some());
        assert_eq!(fast.cell_fetches, 10_000);
        let slow = &round.rows[1];
        assert_eq!(slow.fetches, 1000);
        assert!((90_000.0..110_000.0).contains(&slow.p50_ns), "{slow:?}");
        // Too few fetches for a p99: none rather than one from 10 fetches.
        run.results[1].warm_up.windows = vec![window(10, 0, 100_000)];
        run.results[1].measured.windows = Vec::new();
        let round = &super::rounds(&run)[0];
        assert_eq!(round.fetches, 10);
        assert_eq!(round.rows[0].fetches, 1000, "the first window holds 1,000");
        assert_eq!(round.rows[1].p99_ns, None);
    }
}
