//! Two runs side by side, one cache state at a time: the ratio current / baseline
//! per (engine, size, percentile). p50, p90 and p99 are a change only where their
//! 95% intervals do not overlap. Where both runs repeated the engine list
//! (`--repeat`), the figures and intervals are pooled over the repeats
//! (`stats::interval::pooled`): they cover how far whole runs disagree. Otherwise
//! they are one measurement's, which cover only the noise inside it; two quick runs
//! minutes apart disagreed beyond them on 19 of 32 p50s, so such a mark is said to be
//! "within one measurement". Where either has too few fetches for an interval, the
//! change cannot be judged. The mean and p99.9 have no intervals and are shown,
//! never marked. Only results recorded before intervals existed fall back to the old
//! rule (a ratio beyond 1 ± noise). Only what both runs measured is compared; the
//! rest is listed.

use crate::db::registry::EngineKind;
use crate::records::results::RunResults;
use crate::report::data::{engines, sizes};
use crate::size::format_bytes;
use crate::stats::interval::{Ratio, p50_ratio};
use crate::stats::{Interval, Pooled, Summary, Window, pooled_mean};
use crate::workload::steady::CacheState;

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
    /// p50 rows of engines other than the floor: the engine ÷ the floor of its own
    /// run, in both runs, and whether that changed (intervals apart).
    pub vs_floor: Option<VsFloor>,
}

/// An engine's p50 as a multiple of its own run's floor, in both runs: what stays
/// when the disk moved between them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VsFloor {
    pub baseline: Ratio,
    pub current: Ratio,
    pub verdict: Option<ChangeVerdict>,
}

impl VsFloor {
    /// "÷floor 1.65 → 1.56 (0.95x, within noise)", or "slower"/"faster" where the
    /// intervals are apart.
    pub fn label(&self) -> String {
        let change = self.current.ratio / self.baseline.ratio;
        format!(
            "÷floor {:.2} → {:.2} ({change:.2}x{})",
            self.baseline.ratio,
            self.current.ratio,
            match self.verdict {
                Some(v) => format!(", {}", v.word()),
                None => ", within noise".into(),
            }
        )
    }
}

/// The measured windows of an engine's repeats at one size: all of them, or only
/// repeat 1's.
fn repeat_windows(
    run: &RunResults,
    engine: EngineKind,
    size: u64,
    cache: CacheState,
    all_repeats: bool,
) -> Vec<&[Window]> {
    let summaries: Vec<&Summary> = run.repeats_of(engine, size, cache);
    let take = if all_repeats { summaries.len() } else { 1 };
    summaries
        .into_iter()
        .take(take)
        .map(|s| s.windows.as_slice())
        .collect()
}

/// One run's windows of an engine's repeats and of the floor's.
type EngineAndFloor<'a> = (Vec<&'a [Window]>, Vec<&'a [Window]>);

/// Engine ÷ floor at one size in each run (`windows`: per run, the engine's and the
/// floor's repeats), judged by whether the two ratios' intervals overlap.
fn vs_floor(windows: [EngineAndFloor; 2]) -> Option<VsFloor> {
    let [(b_engine, b_floor), (c_engine, c_floor)] = windows;
    let baseline = p50_ratio(&b_engine, &b_floor)?;
    let current = p50_ratio(&c_engine, &c_floor)?;
    let verdict = (!baseline.overlaps(&current)).then_some(if current.ratio > baseline.ratio {
        ChangeVerdict::Slower
    } else {
        ChangeVerdict::Faster
    });
    Some(VsFloor {
        baseline,
        current,
        verdict,
    })
}

/// What a change was judged on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum JudgedBy {
    /// The 95% intervals of one measurement in each run: noise within it only.
    Intervals {
        baseline: Interval,
        current: Interval,
    },
    /// The 95% intervals pooled over each run's repeats (how many in each).
    Repeats {
        baseline: Interval,
        current: Interval,
        repeats: (usize, usize),
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

/// Percentile `q` of two runs pooled over their repeats: (baseline, current,
/// verdict, basis); None where either has no figure at all.
fn judge_pooled(
    baseline: &Pooled,
    current: &Pooled,
    q: f64,
) -> Option<(f64, f64, Option<ChangeVerdict>, JudgedBy)> {
    let (bv, cv) = (baseline.get(q)?, current.get(q)?);
    let judged = match (baseline.intervals.get(q), current.intervals.get(q)) {
        (Some(b), Some(c)) => {
            let (verdict, _) = judge_change(cv / bv, Some(b), Some(c), true, None);
            (
                verdict,
                JudgedBy::Repeats {
                    baseline: b,
                    current: c,
                    repeats: (baseline.repeats, current.repeats),
                },
            )
        }
        _ => (None, JudgedBy::NotJudged),
    };
    Some((bv, cv, judged.0, judged.1))
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

    /// What the mark rests on, for the table: "repeats 3/3", "1 measurement".
    pub fn basis(&self) -> String {
        match self.judged_by {
            JudgedBy::Repeats {
                repeats: (b, c), ..
            } => format!("repeats {b}/{c}"),
            JudgedBy::Intervals { .. } => "1 measurement".into(),
            JudgedBy::Noise => "±noise (old results)".into(),
            JudgedBy::NotJudged | JudgedBy::Shown => String::new(),
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
    pub cache: CacheState,
    pub noise: f64,
    pub changes: Vec<Change>,
    /// (engine, size) measured in only one of the runs, said in words.
    pub not_compared: Vec<String>,
}

impl Comparison {
    /// The floor's own change at `change`'s size and percentile, where it is marked
    /// and `change` is another engine's: the disk moved between the runs, and the
    /// engine's change at that size may be the disk's, not its own.
    pub fn floor_moved(&self, change: &Change) -> Option<&Change> {
        let floor = EngineKind::floor();
        if change.engine == floor {
            return None;
        }
        self.changes.iter().find(|c| {
            c.engine == floor
                && c.size_bytes == change.size_bytes
                && c.percentile == change.percentile
                && c.verdict.is_some()
        })
    }

    /// Compare the `cache` state of two runs: pooled over repeats where both have
    /// two or more, else their first repeats.
    pub fn of(baseline: &RunResults, current: &RunResults, cache: CacheState, noise: f64) -> Self {
        let (base_view, current_view) = (baseline.view(cache), current.view(cache));
        let mut changes = Vec::new();
        let mut not_compared = Vec::new();
        let mut all_engines = engines(&base_view);
        all_engines.extend(engines(&current_view));
        all_engines.sort();
        all_engines.dedup();
        let mut all_sizes = sizes(&base_view);
        all_sizes.extend(sizes(&current_view));
        all_sizes.sort();
        all_sizes.dedup();
        for &size in &all_sizes {
            for &engine in &all_engines {
                match (
                    base_view.result(engine, size),
                    current_view.result(engine, size),
                ) {
                    (Some(b), Some(c)) => {
                        let pooled = (
                            baseline.pooled(engine, size, cache),
                            current.pooled(engine, size, cache),
                        );
                        let by_repeats = pooled.0.repeats >= 2 && pooled.1.repeats >= 2;
                        // The windows of each run's repeats (all where judged by
                        // repeats, else the first), for the ratio to the floor.
                        let windows_of =
                            |run, engine| repeat_windows(run, engine, size, cache, by_repeats);
                        let floor = EngineKind::floor();
                        let p50_vs_floor = (engine != floor)
                            .then(|| {
                                vs_floor([
                                    (windows_of(baseline, engine), windows_of(baseline, floor)),
                                    (windows_of(current, engine), windows_of(current, floor)),
                                ])
                            })
                            .flatten();
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
                            let (bv, cv, verdict, judged_by) = match q {
                                Some(q) if by_repeats => {
                                    match judge_pooled(&pooled.0, &pooled.1, q) {
                                        Some(judged) => judged,
                                        None => continue,
                                    }
                                }
                                // Pooled means: every fetch of every repeat.
                                None if by_repeats && percentile == "mean" => {
                                    let mean = |run: &RunResults| {
                                        pooled_mean(&run.repeats_of(engine, size, cache))
                                            .unwrap_or(0.0)
                                    };
                                    (mean(baseline), mean(current), None, JudgedBy::Shown)
                                }
                                // p99.9 needs more fetches than windows can show
                                // pooled; it stays repeat 1's, shown only.
                                _ => {
                                    let (verdict, judged_by) = judge_change(
                                        cv / bv,
                                        interval(&b.measured, q),
                                        interval(&c.measured, q),
                                        q.is_some(),
                                        legacy.then_some(noise),
                                    );
                                    (bv, cv, verdict, judged_by)
                                }
                            };
                            if bv <= 0.0 {
                                continue;
                            }
                            changes.push(Change {
                                engine,
                                size_bytes: size,
                                percentile,
                                baseline_ns: bv,
                                current_ns: cv,
                                ratio: cv / bv,
                                verdict,
                                judged_by,
                                vs_floor: (percentile == "p50").then_some(p50_vs_floor).flatten(),
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
            cache,
            noise,
            changes,
            not_compared,
        }
    }

    /// The comparison as a plain table for the terminal.
    pub fn table(&self) -> String {
        let mut out = format!(
            "{} against baseline {}, {} cache (a change is marked where the 95% intervals do not overlap: pooled over repeats where both runs have them, else within one measurement, which does not cover how runs differ; results without intervals: beyond ±{:.0}%)\n{:<13} {:>7} {:>6} {:>11} {:>11} {:>7}\n",
            self.current_id,
            self.baseline_id,
            self.cache.name(),
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
                "{:<13} {:>7} {:>6} {:>11} {:>11} {:>6.2}x {} {}\n",
                c.engine.name(),
                format_bytes(c.size_bytes),
                c.percentile,
                crate::stats::format_ns(c.baseline_ns),
                crate::stats::format_ns(c.current_ns),
                c.ratio,
                c.mark(),
                match c.basis() {
                    basis if basis.is_empty() => basis,
                    basis => format!("[{basis}]"),
                }
            ));
            let mut notes = Vec::new();
            if let (Some(_), Some(floor)) = (c.verdict, self.floor_moved(c)) {
                notes.push(format!(
                    "the floor too: {:.2}x; the disk moved",
                    floor.ratio
                ));
            }
            if let Some(v) = c.vs_floor {
                notes.push(v.label());
            }
            if !notes.is_empty() {
                out.pop();
                out.push_str(&format!(" ({})\n", notes.join("; ")));
            }
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

    fn pooled(repeats: usize, p50: f64, interval: Option<Interval>) -> Pooled {
        Pooled {
            repeats,
            p50_ns: Some(p50),
            p90_ns: None,
            p99_ns: None,
            intervals: crate::stats::Intervals {
                p50: interval,
                ..Default::default()
            },
        }
    }

    #[test]
    fn pooled_repeats_judge_by_their_own_intervals() {
        // Repeats that spread widely: 20% slower is within them, no change.
        let base = pooled(3, 1.0e6, iv(0.8e6, 1.3e6));
        let wider = pooled(3, 1.2e6, iv(0.9e6, 1.5e6));
        let (b, c, verdict, by) = judge_pooled(&base, &wider, 0.5).unwrap();
        assert_eq!((b, c, verdict), (1.0e6, 1.2e6, None));
        assert!(matches!(
            by,
            JudgedBy::Repeats {
                repeats: (3, 3),
                ..
            }
        ));
        // Repeats that agree tightly: 20% slower is a change.
        let tight = pooled(2, 1.0e6, iv(0.98e6, 1.02e6));
        let slower = pooled(2, 1.2e6, iv(1.18e6, 1.22e6));
        let (.., verdict, _) = judge_pooled(&tight, &slower, 0.5).unwrap();
        assert_eq!(verdict, Some(ChangeVerdict::Slower));
        // A pooled figure without an interval cannot be judged; none at all: no row.
        let (.., verdict, by) = judge_pooled(&tight, &pooled(2, 3.0e6, None), 0.5).unwrap();
        assert_eq!((verdict, by), (None, JudgedBy::NotJudged));
        assert!(judge_pooled(&tight, &slower, 0.99).is_none());
    }

    #[test]
    fn an_engines_change_where_the_floor_moved_too_says_so() {
        let named = |n: &str| n.parse::<EngineKind>().unwrap();
        let change = |engine: &str, size: u64, ratio: f64, marked: bool| Change {
            engine: named(engine),
            size_bytes: size,
            percentile: "p50",
            baseline_ns: 1e6,
            current_ns: ratio * 1e6,
            ratio,
            verdict: marked.then_some(ChangeVerdict::Slower),
            judged_by: JudgedBy::Shown,
            vs_floor: None,
        };
        let c = Comparison {
            baseline_id: "a".into(),
            current_id: "b".into(),
            cache: CacheState::Cold,
            noise: 0.1,
            changes: vec![
                change("floor", 512 << 10, 1.30, true),
                change("sqlite", 512 << 10, 1.24, true),
                change("floor", 64 << 10, 1.01, false),
                change("sqlite", 64 << 10, 1.40, true),
            ],
            not_compared: vec![],
        };
        let table = c.table();
        let line = |needle: &str| table.lines().find(|l| l.contains(needle)).unwrap();
        assert!(line("sqlite         512KiB").ends_with("(the floor too: 1.30x; the disk moved)"));
        assert!(
            !line("sqlite          64KiB").contains("floor too"),
            "{table}"
        );
        assert!(
            !line("floor          512KiB").contains("floor too"),
            "{table}"
        );
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
