//! Two runs side by side: the ratio current / baseline per (engine, size,
//! percentile). p50, p90 and p99 are a change only where their 95% intervals do not
//! overlap; where either has too few fetches for one, the change cannot be judged.
//! The mean and p99.9 have no intervals and are shown, never marked. Only results
//! recorded before intervals existed fall back to the old rule (a ratio beyond
//! 1 ± noise). Only what both runs measured is compared; the rest is listed.

use crate::engine::EngineKind;
use crate::report::data::{engines, sizes};
use crate::results::RunResults;
use crate::size::format_bytes;
use crate::stats::Interval;

#[derive(Debug, Clone)]
pub struct Change {
    pub engine: EngineKind,
    pub size_bytes: u64,
    pub percentile: &'static str,
    pub baseline_ns: f64,
    pub current_ns: f64,
    pub ratio: f64,
    /// Slower or faster; None: no change, or none that can be judged (`judged_by`).
    pub verdict: Option<ChangeVerdict>,
    pub judged_by: JudgedBy,
}

/// What a change was judged on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum JudgedBy {
    /// The 95% intervals of both runs.
    Intervals {
        baseline: Interval,
        current: Interval,
    },
    /// A ratio beyond 1 ± noise: results from before intervals existed.
    Noise,
    /// A percentile with too few fetches in one run for an interval.
    NotJudged,
    /// A statistic without intervals (mean, p99.9): shown, never marked.
    Shown,
}

/// Whether a ratio is a change: by non-overlapping intervals where both runs have
/// one; for a statistic with intervals where one run has none, not judged; for one
/// without intervals, shown only; by `legacy_noise` for results before intervals.
pub fn judge_change(
    ratio: f64,
    baseline: Option<Interval>,
    current: Option<Interval>,
    has_intervals: bool,
    legacy_noise: Option<f64>,
) -> (Option<ChangeVerdict>, JudgedBy) {
    let direction = if ratio > 1.0 {
        ChangeVerdict::Slower
    } else {
        ChangeVerdict::Faster
    };
    match (baseline, current, legacy_noise) {
        (Some(baseline), Some(current), _) => (
            (!baseline.overlaps(&current)).then_some(direction),
            JudgedBy::Intervals { baseline, current },
        ),
        (_, _, Some(noise)) => (
            (ratio > 1.0 + noise || ratio < 1.0 / (1.0 + noise)).then_some(direction),
            JudgedBy::Noise,
        ),
        _ if has_intervals => (None, JudgedBy::NotJudged),
        _ => (None, JudgedBy::Shown),
    }
}

impl Change {
    /// "slower", "faster", "" (no change) or "not judged" (no intervals to judge by).
    pub fn mark(&self) -> &'static str {
        match (self.verdict, self.judged_by) {
            (Some(v), _) => v.word(),
            (None, JudgedBy::NotJudged) => "not judged",
            _ => "",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeVerdict {
    Slower,
    Faster,
}

impl ChangeVerdict {
    pub fn word(self) -> &'static str {
        match self {
            ChangeVerdict::Slower => "slower",
            ChangeVerdict::Faster => "faster",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Comparison {
    pub baseline_id: String,
    pub current_id: String,
    pub noise: f64,
    pub changes: Vec<Change>,
    /// (engine, size) measured in only one of the runs, said in words.
    pub not_compared: Vec<String>,
}

impl Comparison {
    pub fn of(baseline: &RunResults, current: &RunResults, noise: f64) -> Self {
        let mut changes = Vec::new();
        let mut not_compared = Vec::new();
        let mut all_engines = engines(baseline);
        all_engines.extend(engines(current));
        all_engines.sort();
        all_engines.dedup();
        let mut all_sizes = sizes(baseline);
        all_sizes.extend(sizes(current));
        all_sizes.sort();
        all_sizes.dedup();
        for &size in &all_sizes {
            for &engine in &all_engines {
                match (baseline.result(engine, size), current.result(engine, size)) {
                    (Some(b), Some(c)) => {
                        let (bl, cl) = (&b.measured.latency, &c.measured.latency);
                        let legacy =
                            b.measured.intervals.is_none() && c.measured.intervals.is_none();
                        let interval = |m: &crate::stats::Summary, q: Option<f64>| {
                            m.intervals.as_ref().and_then(|i| i.get(q?))
                        };
                        for (percentile, q, bv, cv) in [
                            ("mean", None, bl.mean_ns, cl.mean_ns),
                            ("p50", Some(0.5), bl.p50_ns as f64, cl.p50_ns as f64),
                            ("p90", Some(0.9), bl.p90_ns as f64, cl.p90_ns as f64),
                            ("p99", Some(0.99), bl.p99_ns as f64, cl.p99_ns as f64),
                            ("p99.9", None, bl.p999_ns as f64, cl.p999_ns as f64),
                        ] {
                            if bv <= 0.0 {
                                continue;
                            }
                            let ratio = cv / bv;
                            let (verdict, judged_by) = judge_change(
                                ratio,
                                interval(&b.measured, q),
                                interval(&c.measured, q),
                                q.is_some(),
                                legacy.then_some(noise),
                            );
                            changes.push(Change {
                                engine,
                                size_bytes: size,
                                percentile,
                                baseline_ns: bv,
                                current_ns: cv,
                                ratio,
                                verdict,
                                judged_by,
                            });
                        }
                    }
                    (Some(_), None) => not_compared.push(format!(
                        "{} {}: only in the baseline",
                        engine.name(),
                        format_bytes(size)
                    )),
                    (None, Some(_)) => not_compared.push(format!(
                        "{} {}: only in this run",
                        engine.name(),
                        format_bytes(size)
                    )),
                    (None, None) => {}
                }
            }
        }
        Self {
            baseline_id: baseline.run_id.clone(),
            current_id: current.run_id.clone(),
            noise,
            changes,
            not_compared,
        }
    }

    /// The comparison as a plain table for the terminal.
    pub fn table(&self) -> String {
        let mut out = format!(
            "{} against baseline {} (a change is marked where the 95% intervals do not overlap; results without intervals: beyond ±{:.0}%)\n{:<13} {:>7} {:>6} {:>11} {:>11} {:>7}\n",
            self.current_id,
            self.baseline_id,
            self.noise * 100.0,
            "engine",
            "size",
            "stat",
            "baseline",
            "this run",
            "ratio"
        );
        for c in &self.changes {
            out.push_str(&format!(
                "{:<13} {:>7} {:>6} {:>11} {:>11} {:>6.2}x {}\n",
                c.engine.name(),
                format_bytes(c.size_bytes),
                c.percentile,
                crate::stats::format_ns(c.baseline_ns),
                crate::stats::format_ns(c.current_ns),
                c.ratio,
                c.mark()
            ));
        }
        for n in &self.not_compared {
            out.push_str(&format!("not compared: {n}\n"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(lo: f64, hi: f64) -> Option<Interval> {
        Some(Interval {
            lo_ns: lo,
            hi_ns: hi,
        })
    }

    #[test]
    fn a_change_needs_intervals_that_do_not_overlap() {
        // 15x slower, but the intervals overlap (a thin, noisy run): no change.
        let (v, by) = judge_change(15.0, iv(2.8e6, 3.0e6), iv(2.9e6, 700e6), true, None);
        assert_eq!(v, None);
        assert!(matches!(by, JudgedBy::Intervals { .. }));
        // 5% slower with tight, disjoint intervals: a change.
        let (v, _) = judge_change(1.05, iv(2.80e6, 2.84e6), iv(2.93e6, 2.97e6), true, None);
        assert_eq!(v, Some(ChangeVerdict::Slower));
        let (v, _) = judge_change(0.5, iv(2.0, 3.0), iv(1.0, 1.5), true, None);
        assert_eq!(v, Some(ChangeVerdict::Faster));
    }

    #[test]
    fn without_intervals_nothing_is_marked_except_old_results() {
        let (v, by) = judge_change(3.0, iv(1.0, 2.0), None, true, None);
        assert_eq!((v, by), (None, JudgedBy::NotJudged));
        let (v, by) = judge_change(3.0, None, None, false, None);
        assert_eq!((v, by), (None, JudgedBy::Shown));
        // Both runs from before intervals: the old ±noise rule.
        let (v, by) = judge_change(1.2, None, None, true, Some(0.1));
        assert_eq!((v, by), (Some(ChangeVerdict::Slower), JudgedBy::Noise));
        let (v, _) = judge_change(1.05, None, None, true, Some(0.1));
        assert_eq!(v, None);
    }
}
