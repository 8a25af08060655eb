//! 95% confidence intervals for a result's percentiles, by a block bootstrap over its
//! time windows: resample whole windows (with replacement), merge their fetches, take
//! the percentile; the interval is the 2.5th..97.5th percentile of 1000 such
//! resamples. Whole windows, not single fetches, because fetches are not independent:
//! a cache that is still filling, or a disk that slows for a few seconds, moves many
//! neighbouring fetches together, and a per-fetch bootstrap would call that precision.
//!
//! An interval needs at least `MIN_WINDOWS` windows and, for the q-th percentile, at
//! least `MIN_TAIL` fetches on its far side (n * min(q, 1-q)): a p99 of 50 fetches is
//! the second-slowest fetch, which no resampling can turn into a p99. Without them the
//! percentile has no interval and says "too few fetches".

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};

use super::window::{Window, fine_bins};

pub const RESAMPLES: usize = 1000;
/// The percentiles that get intervals, in the order of every array here.
const QS: [f64; 3] = [0.5, 0.9, 0.99];

/// The value for percentile `q` out of `values` (in `QS` order); None for another q.
fn for_quantile<T: Copy>(q: f64, values: [Option<T>; 3]) -> Option<T> {
    QS.iter().position(|&at| at == q).and_then(|k| values[k])
}

/// Windows and fetches over `groups`.
fn counts(groups: &[&[Window]]) -> (usize, u64) {
    let windows = groups.iter().map(|g| g.len()).sum();
    let fetches = groups
        .iter()
        .flat_map(|g| g.iter())
        .map(|w| w.fetches)
        .sum();
    (windows, fetches)
}
pub const MIN_WINDOWS: usize = 5;
pub const MIN_TAIL: f64 = 5.0;

/// A 95% interval of one percentile, in ns.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub lo_ns: f64,
    pub hi_ns: f64,
}

impl Interval {
    pub fn overlaps(&self, other: &Interval) -> bool {
        self.lo_ns <= other.hi_ns && other.lo_ns <= self.hi_ns
    }

    pub fn contains(&self, ns: f64) -> bool {
        self.lo_ns <= ns && ns <= self.hi_ns
    }
}

/// The intervals of one result's percentiles; None where too few fetches or windows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Intervals {
    pub p50: Option<Interval>,
    pub p90: Option<Interval>,
    pub p99: Option<Interval>,
    /// The windows resampled.
    pub windows: usize,
    pub fetches: u64,
}

impl Intervals {
    pub fn get(&self, q: f64) -> Option<Interval> {
        for_quantile(q, [self.p50, self.p90, self.p99])
    }

    /// Why percentile `q` has no interval, or None when it has one.
    pub fn missing_why(&self, q: f64) -> Option<String> {
        if self.get(q).is_some() {
            return None;
        }
        Some(too_few(q, self.fetches, self.windows))
    }
}

/// Why percentile `q` of `fetches` over `windows` windows has no interval: "too few
/// fetches to judge p99 (n=50 in 10 windows; it needs 500)", or "measured too briefly".
pub fn too_few(q: f64, fetches: u64, windows: usize) -> String {
    let needed = fetches_to_judge(q);
    let window_ms = super::window::WINDOW_NS / 1_000_000;
    if fetches < needed {
        format!(
            "too few fetches to judge p{} (n={fetches} in {windows} windows; it needs {needed})",
            q * 100.0
        )
    } else {
        format!(
            "measured too briefly to judge p{} ({windows} windows of {window_ms}ms; it needs {MIN_WINDOWS}+)",
            q * 100.0
        )
    }
}

/// The fewest fetches percentile `q` can have an interval with: 500 for p99.
pub fn fetches_to_judge(q: f64) -> u64 {
    (MIN_TAIL / q.min(1.0 - q) - 1e-9).ceil() as u64
}

/// The least measuring time any interval needs: `MIN_WINDOWS` windows (1 s).
pub fn time_to_judge() -> std::time::Duration {
    std::time::Duration::from_nanos(MIN_WINDOWS as u64 * super::window::WINDOW_NS)
}

/// Whether percentile `q` of `fetches` over `windows` windows can have an interval.
pub fn enough(q: f64, fetches: u64, windows: usize) -> bool {
    windows >= MIN_WINDOWS && fetches as f64 * q.min(1.0 - q) + 1e-9 >= MIN_TAIL
}

/// Block-bootstrap intervals of p50, p90 and p99 over `windows`. Seeded: the same
/// windows give the same intervals.
pub fn intervals(windows: &[Window]) -> Intervals {
    bootstrap(&[windows], 0.95)
}

/// One engine at one size pooled over the repeats of a run: the percentiles of all
/// its fetches, with intervals that also cover how far the repeats disagree.
#[derive(Debug, Clone, PartialEq)]
pub struct Pooled {
    pub repeats: usize,
    pub p50_ns: Option<f64>,
    pub p90_ns: Option<f64>,
    pub p99_ns: Option<f64>,
    /// None where fewer than two repeats, or too few fetches or windows.
    pub intervals: Intervals,
}

impl Pooled {
    pub fn get(&self, q: f64) -> Option<f64> {
        for_quantile(q, [self.p50_ns, self.p90_ns, self.p99_ns])
    }
}

/// Pool the measured windows of each repeat. The interval is a two-level bootstrap:
/// draw as many repeats as were run (with replacement), then within each drawn
/// repeat as many of its windows as it has. One measurement's intervals only cover
/// the noise inside it; two runs minutes apart differ by more (the disk's mood, where
/// the cache happened to fill), and only resampling whole repeats shows that. With
/// few repeats the interval is about the range of the repeats: wide, and honest.
pub fn pooled(repeats: &[&[Window]]) -> Pooled {
    pooled_at(repeats, 0.95)
}

/// `pooled` with intervals at `confidence` (0.95 for 95%): a judgement made many
/// times over in one run (every ORM engine at every size) needs each at a higher one.
pub fn pooled_at(repeats: &[&[Window]], confidence: f64) -> Pooled {
    let mut dense = vec![0u64; fine_bins::count()];
    for w in repeats.iter().flat_map(|r| r.iter()) {
        for &(i, c) in &w.bins {
            dense[i as usize] += c;
        }
    }
    let (windows, total) = counts(repeats);
    let intervals = if repeats.len() >= 2 {
        bootstrap(repeats, confidence)
    } else {
        Intervals {
            windows,
            fetches: total,
            ..Default::default()
        }
    };
    Pooled {
        repeats: repeats.len(),
        p50_ns: fine_bins::quantile(&dense, total, 0.5),
        p90_ns: fine_bins::quantile(&dense, total, 0.9),
        p99_ns: fine_bins::quantile(&dense, total, 0.99),
        intervals,
    }
}

/// The bootstrap behind both: each resample draws `groups.len()` groups with
/// replacement (no draw when there is one), then from each drawn group as many of
/// its windows as it has, merges their fetches and takes the percentiles.
fn bootstrap(groups: &[&[Window]], confidence: f64) -> Intervals {
    let (n_windows, fetches) = counts(groups);
    let mut out = Intervals {
        windows: n_windows,
        fetches,
        ..Default::default()
    };
    if !QS.iter().any(|&q| enough(q, fetches, n_windows)) || groups.iter().any(|g| g.is_empty()) {
        return out;
    }
    let mut draws = resample(groups, 0x626f_6f74_7374_7261);
    let mut interval = |k: usize| {
        let d = &mut draws[k];
        if !enough(QS[k], fetches, n_windows) || d.is_empty() {
            return None;
        }
        d.sort_by(f64::total_cmp);
        let at = |p: f64| d[((p * (d.len() - 1) as f64).round() as usize).min(d.len() - 1)];
        let tail = (1.0 - confidence) / 2.0;
        Some(Interval {
            lo_ns: at(tail),
            hi_ns: at(1.0 - tail),
        })
    };
    out.p50 = interval(0);
    out.p90 = interval(1);
    out.p99 = interval(2);
    out
}

/// `RESAMPLES` two-level resamples of `groups`: their p50, p90 and p99, in order.
fn resample(groups: &[&[Window]], seed: u64) -> [Vec<f64>; 3] {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut dense = vec![0u64; fine_bins::count()];
    let mut draws: [Vec<f64>; 3] = Default::default();
    for _ in 0..RESAMPLES {
        dense.iter_mut().for_each(|c| *c = 0);
        let mut total = 0;
        for _ in 0..groups.len() {
            let group = if groups.len() == 1 {
                groups[0]
            } else {
                groups[rng.random_range(0..groups.len())]
            };
            for _ in 0..group.len() {
                let w = &group[rng.random_range(0..group.len())];
                for &(i, c) in &w.bins {
                    dense[i as usize] += c;
                }
                total += w.fetches;
            }
        }
        for (k, &q) in QS.iter().enumerate() {
            if let Some(v) = fine_bins::quantile(&dense, total, q) {
                draws[k].push(v);
            }
        }
    }
    draws
}

/// One engine's p50 as a multiple of another's measured in the same run (the floor's),
/// with its 95% interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ratio {
    pub ratio: f64,
    pub lo: f64,
    pub hi: f64,
}

impl Ratio {
    pub fn overlaps(&self, other: &Ratio) -> bool {
        self.lo <= other.hi && other.lo <= self.hi
    }
}

/// The p50 of `num` ÷ the p50 of `den`, both pooled over their repeats, each resampled
/// on its own as `pooled` does and the ratio taken per resample. Dividing by the floor
/// of the same run takes out what moved both: the disk's mood, which changes by an
/// order of magnitude within an hour here. None without enough windows on either side.
pub fn p50_ratio(num: &[&[Window]], den: &[&[Window]]) -> Option<Ratio> {
    let enough_in = |groups: &[&[Window]]| {
        let (windows, fetches) = counts(groups);
        !groups.is_empty() && groups.iter().all(|g| !g.is_empty()) && enough(0.5, fetches, windows)
    };
    if !enough_in(num) || !enough_in(den) {
        return None;
    }
    let ratio = pooled(num).p50_ns? / pooled(den).p50_ns?;
    let [top, ..] = resample(num, 0x6e75_6d65_7261_746f);
    let [bottom, ..] = resample(den, 0x6465_6e6f_6d69_6e61);
    let mut ratios: Vec<f64> = top.iter().zip(&bottom).map(|(a, b)| a / b).collect();
    ratios.sort_by(f64::total_cmp);
    let at =
        |p: f64| ratios[((p * (ratios.len() - 1) as f64).round() as usize).min(ratios.len() - 1)];
    (!ratios.is_empty()).then(|| Ratio {
        ratio,
        lo: at(0.025),
        hi: at(0.975),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::window::WindowRecorder;

    /// `n_windows` windows of `per` fetches, latencies from `latency(window, i)`.
    fn windows(n_windows: u64, per: u64, latency: impl Fn(u64, u64) -> u64) -> Vec<Window> {
        let mut r = WindowRecorder::new(false);
        for w in 0..n_windows {
            for i in 0..per {
                r.record(w * super::super::window::WINDOW_NS + i, latency(w, i), None);
            }
        }
        r.windows()
    }

    #[test]
    fn steady_fetches_give_a_narrow_interval_around_the_percentile() {
        // Every window the same spread 1..=1000 µs: p50 ≈ 500 µs, known to within bins.
        let w = windows(20, 1000, |_, i| (i + 1) * 1000);
        let iv = intervals(&w);
        let p50 = iv.p50.unwrap();
        assert!(
            p50.contains(500_000.0) || (p50.lo_ns / 500_000.0 - 1.0).abs() < 0.012,
            "{p50:?}"
        );
        assert!(p50.hi_ns / p50.lo_ns < 1.03, "{p50:?}");
        assert!(iv.p99.unwrap().lo_ns > 950_000.0);
    }

    #[test]
    fn drifting_windows_widen_the_interval() {
        // Half the windows at 1 ms, half at 10 ms: the p50 could be either.
        let w = windows(10, 100, |w, _| if w < 5 { 1_000_000 } else { 10_000_000 });
        let p50 = intervals(&w).p50.unwrap();
        assert!(p50.lo_ns < 1.1e6 && p50.hi_ns > 9e6, "{p50:?}");
    }

    #[test]
    fn too_few_fetches_or_windows_have_no_interval() {
        // 50 fetches: p50 and p90 can be judged, p99 cannot.
        let iv = intervals(&windows(10, 5, |_, i| (i + 1) * 1000));
        assert!(iv.p50.is_some() && iv.p90.is_some());
        assert_eq!(iv.p99, None);
        assert!(
            iv.missing_why(0.99)
                .unwrap()
                .contains("n=50 in 10 windows; it needs 500"),
            "{:?}",
            iv.missing_why(0.99)
        );
        // 4 windows: nothing.
        let iv = intervals(&windows(4, 1000, |_, i| i + 1000));
        assert_eq!((iv.p50, iv.p99), (None, None));
        assert!(
            iv.missing_why(0.5)
                .unwrap()
                .starts_with("measured too briefly"),
            "{:?}",
            iv.missing_why(0.5)
        );
    }

    #[test]
    fn repeats_that_disagree_widen_the_pooled_interval() {
        // Three repeats, each tight inside itself, at 1.0, 1.3 and 1.6 ms: one
        // measurement's interval misses the others; the pooled one spans them.
        let runs: Vec<Vec<Window>> = [1_000_000u64, 1_300_000, 1_600_000]
            .iter()
            .map(|&at| windows(10, 200, move |_, i| at + (i % 10) * 1000))
            .collect();
        let alone = intervals(&runs[0]).p50.unwrap();
        assert!(!alone.contains(1.3e6), "{alone:?}");
        let refs: Vec<&[Window]> = runs.iter().map(|r| r.as_slice()).collect();
        let all = pooled(&refs);
        assert_eq!(all.repeats, 3);
        let p50 = all.intervals.p50.unwrap();
        assert!(p50.lo_ns < 1.1e6 && p50.hi_ns > 1.5e6, "{p50:?}");
        // The point is the p50 of all fetches: the middle repeat's.
        let mid = all.p50_ns.unwrap();
        assert!((mid / 1.3e6 - 1.0).abs() < 0.03, "{mid}");
        // Repeats that agree keep it narrow.
        let same: Vec<&[Window]> = vec![&runs[1], &runs[1], &runs[1]];
        let p50 = pooled(&same).intervals.p50.unwrap();
        assert!(p50.hi_ns / p50.lo_ns < 1.03, "{p50:?}");
    }

    #[test]
    fn a_ratio_to_the_floor_takes_out_what_moved_both() {
        // Run A: engine 2 ms, floor 1 ms. Run B: the disk 1.5x slower, both moved.
        // Windows wander by up to 9%, fetches spread by 19%.
        let at = |ns: u64| {
            windows(10, 200, move |w, i| {
                ns * (100 + (w * 7) % 10) / 100 + (i % 20) * ns / 100
            })
        };
        let (engine_a, floor_a) = (at(2_000_000), at(1_000_000));
        let (engine_b, floor_b) = (at(3_000_000), at(1_500_000));
        let a = p50_ratio(&[&engine_a], &[&floor_a]).unwrap();
        let b = p50_ratio(&[&engine_b], &[&floor_b]).unwrap();
        assert!((a.ratio - 2.0).abs() < 0.05, "{a:?}");
        assert!(a.overlaps(&b), "{a:?} {b:?}");
        // The engines alone do not overlap: that is the disk.
        let (ea, eb) = (
            intervals(&engine_a).p50.unwrap(),
            intervals(&engine_b).p50.unwrap(),
        );
        assert!(!ea.overlaps(&eb));
        // An engine that really got slower than its floor still shows.
        let slower = at(4_000_000);
        let c = p50_ratio(&[&slower], &[&floor_b]).unwrap();
        assert!(!a.overlaps(&c), "{a:?} {c:?}");
        // Too few windows: no ratio.
        let short = windows(3, 200, |_, i| 1000 + i);
        assert_eq!(p50_ratio(&[&short], &[&floor_a]), None);
    }

    #[test]
    fn one_repeat_has_a_point_but_no_pooled_interval() {
        let run = windows(10, 200, |_, i| 1000 + i);
        let one = pooled(&[&run]);
        assert!(one.p50_ns.is_some());
        assert_eq!(one.intervals.p50, None);
        assert_eq!(one.intervals.fetches, 2000);
    }

    #[test]
    fn intervals_are_reproducible() {
        let w = windows(8, 300, |w, i| 1000 + w * 37 + i * 11);
        assert_eq!(intervals(&w), intervals(&w));
    }
}
