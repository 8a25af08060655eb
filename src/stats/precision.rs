//! Adaptive measurement (`--precision`): a cell is measured until its p50 and p99 are
//! known to within a share of their estimate, instead of for a fixed time. A fixed time
//! serves no size well: 10 s gives 20,000 fetches of 1 KiB (far more than its p99
//! needs) and about 300 of 32 MiB (too few to judge a p99 at all).
//!
//! "Known to within ±5%" means the 95% interval's half-width (`interval.rs`, a block
//! bootstrap over 200 ms windows) is at most 5% of the percentile. A half-width shrinks
//! about as 1/√n with the fetches n, so one check projects how many more fetches the
//! next needs: the loop checks a few times per cell, never inside the clock.
//!
//! p99 is asked a wider share than p50 (by default 4 times): it rests on 1% of the
//! fetches, and windows differ most in their tails (a disk that stalls for a moment,
//! a scheduler hiccup). Measured here: after 76 windows (15 s) p50 was within ±1-5%
//! and p99 within ±5-38% at 4 and 32 MiB; 1 KiB reads from the page cache had p50
//! ±0.9% and p99 ±39% after 4 s. p99 at ±5% would need hundreds of windows (about
//! (39/5)² × 20), minutes per cell.

use serde::{Deserialize, Serialize};

use super::Summary;
use super::interval::fetches_to_judge;

/// The percentiles the precision is asked of.
const JUDGED: [f64; 2] = [0.5, 0.99];

/// The half-widths asked of p50 and p99, as fractions of each.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Targets {
    pub p50: f64,
    pub p99: f64,
}

impl Targets {
    /// p99 is asked this many times p50's share unless told otherwise.
    pub const P99_WIDER: f64 = 4.0;

    pub fn of(&self, q: f64) -> f64 {
        if q >= 0.99 { self.p99 } else { self.p50 }
    }

    /// "p50 ±5%, p99 ±20%".
    pub fn label(&self) -> String {
        format!("p50 ±{}%, p99 ±{}%", pct(self.p50), pct(self.p99))
    }
}

/// A share as a percentage to a tenth, without trailing zeros: 0.05 -> "5".
fn pct(share: f64) -> String {
    format!("{}", (share * 1000.0).round() / 10.0)
}

/// Where a p99 has no interval yet: the half-width it typically has once it has one
/// (500 fetches: ±10-38% measured here at 4 and 32 MiB, 2026-11-25), for a projection.
const FIRST_P99_HALF_WIDTH: f64 = 0.25;

/// A check after fewer than this many times the last one's fetches would mostly
/// repeat it...
const CHECK_GROWTH: f64 = 1.25;
/// ...and one after more than this many might overshoot: a cold cache fills while it
/// is measured, so its first second's intervals are wide for a while and a projection
/// from them 8 times too long (sqlite 1 KiB: p50 ±29% after 1 s, ±4% after 7 s).
const CHECK_GROWTH_MAX: f64 = 1.5;

/// How precisely a summary knows a percentile: its interval's half-width ÷ its value.
/// None where the summary has no interval for it (too few fetches or windows).
pub fn half_width(summary: &Summary, q: f64) -> Option<f64> {
    let interval = summary.intervals.as_ref()?.get(q)?;
    let value = match q {
        0.5 => summary.latency.p50_ns,
        0.99 => summary.latency.p99_ns,
        _ => return None,
    } as f64;
    (value > 0.0).then(|| (interval.hi_ns - interval.lo_ns) / 2.0 / value)
}

/// Whether p50 and p99 are both known to within their targets.
pub fn reached(summary: &Summary, targets: Targets) -> bool {
    JUDGED
        .iter()
        .all(|&q| half_width(summary, q).is_some_and(|w| w <= targets.of(q)))
}

/// The fetches `targets` likely need, from a check at `summary.count`: each
/// half-width shrinks as 1/√n; a p99 without an interval first needs the fetches one
/// takes, then as many more as a typical first interval's width says.
pub fn fetches_needed(summary: &Summary, targets: Targets) -> u64 {
    let n = summary.count.max(1) as f64;
    let first_p99 = fetches_to_judge(0.99) as f64;
    JUDGED
        .iter()
        .map(|&q| match half_width(summary, q) {
            Some(w) => n * (w / targets.of(q)).powi(2),
            None if q == 0.99 => {
                first_p99.max(n) * (FIRST_P99_HALF_WIDTH / targets.p99).powi(2).max(1.0)
            }
            None => n * 2.0,
        })
        .fold(n, f64::max)
        .ceil() as u64
}

/// When to check next: at the fetches the targets likely need, but after at least 1.25
/// and at most 1.5 times the fetches so far.
pub fn next_check(summary: &Summary, targets: Targets) -> u64 {
    let n = summary.count.max(1) as f64;
    (fetches_needed(summary, targets) as f64)
        .clamp(n * CHECK_GROWTH, n * CHECK_GROWTH_MAX)
        .ceil() as u64
}

/// Why a cell's measurement stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stopped {
    /// p50 and p99 were known to within the precision asked.
    Reached,
    /// The time limit came first: the result says how precise it got.
    TimeLimit,
    /// criterion's plan (fixed before it measures from its warm-up's fetches, it cannot
    /// stop early or go on) met the precision; where it fell short, blobrace measured
    /// past it (`past_plan_fetches`) and the result ends `Reached` or `TimeLimit`.
    Planned,
}

/// What an adaptive measurement asked and got, recorded with each result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrecisionReport {
    /// The half-widths asked of p50 and p99, fractions of each (0.05: ±5%).
    pub asked: Targets,
    /// The half-widths measured, as fractions; None where a percentile had too few
    /// fetches for an interval.
    pub p50: Option<f64>,
    pub p99: Option<f64>,
    pub stopped: Stopped,
    /// The measuring time: at least, at most (s).
    pub min_s: f64,
    pub limit_s: f64,
    /// The time measured (s).
    pub seconds: f64,
    /// Under `cargo bench`: the fetches blobrace measured after criterion's plan fell
    /// short of the precision (criterion's own figures cover its plan only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub past_plan_fetches: Option<u64>,
}

impl PrecisionReport {
    pub fn of(
        asked: Targets,
        summary: &Summary,
        stopped: Stopped,
        min_s: f64,
        limit_s: f64,
        seconds: f64,
    ) -> Self {
        PrecisionReport {
            asked,
            p50: half_width(summary, 0.5),
            p99: half_width(summary, 0.99),
            stopped,
            min_s,
            limit_s,
            seconds,
            past_plan_fetches: None,
        }
    }

    /// Whether both percentiles got the precision asked.
    pub fn met(&self) -> bool {
        [(self.p50, self.asked.p50), (self.p99, self.asked.p99)]
            .iter()
            .all(|&(w, asked)| w.is_some_and(|w| w <= asked))
    }

    /// "p50 ±1.2%, p99 ±14.1% (asked p50 ±5%, p99 ±20%) in 3.4 s", and why it
    /// stopped where the precision was not met.
    pub fn label(&self) -> String {
        let got = |w: Option<f64>| match w {
            Some(w) => format!("±{:.1}%", w * 100.0),
            None => "not judged".into(),
        };
        let mut label = format!(
            "p50 {}, p99 {} (asked {}) in {:.1} s",
            got(self.p50),
            got(self.p99),
            self.asked.label(),
            self.seconds
        );
        if let Some(more) = self.past_plan_fetches {
            label.push_str(&format!(
                "; criterion's plan fell short, {more} fetches measured past it"
            ));
        }
        if !self.met() {
            label.push_str(match self.stopped {
                Stopped::TimeLimit => "; stopped at the time limit",
                // `Planned` and `Reached` are only recorded where the precision was met.
                Stopped::Planned | Stopped::Reached => "",
            });
        }
        label
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::interval::{Interval, Intervals};

    fn summary(count: u64, p50: u64, p99: u64) -> Summary {
        let mut s = Summary {
            count,
            ..Summary::default()
        };
        s.latency.p50_ns = p50;
        s.latency.p99_ns = p99;
        s
    }

    fn intervals(p50: Option<(f64, f64)>, p99: Option<(f64, f64)>) -> Intervals {
        let iv = |x: Option<(f64, f64)>| x.map(|(lo_ns, hi_ns)| Interval { lo_ns, hi_ns });
        Intervals {
            p50: iv(p50),
            p90: None,
            p99: iv(p99),
            windows: 10,
            fetches: 0,
        }
    }

    /// `s` with these intervals.
    fn at(s: &Summary, iv: &Intervals) -> Summary {
        Summary {
            intervals: Some(iv.clone()),
            ..s.clone()
        }
    }

    fn t(p50: f64, p99: f64) -> Targets {
        Targets { p50, p99 }
    }

    #[test]
    fn both_percentiles_must_be_within_their_precision() {
        let s = summary(4000, 1000, 10_000);
        let tight = intervals(Some((990.0, 1010.0)), Some((9600.0, 10_400.0)));
        assert!((half_width(&at(&s, &tight), 0.5).unwrap() - 0.01).abs() < 1e-9);
        assert!((half_width(&at(&s, &tight), 0.99).unwrap() - 0.04).abs() < 1e-9);
        assert!(reached(&at(&s, &tight), t(0.05, 0.05)));
        assert!(!reached(&at(&s, &tight), t(0.05, 0.03)), "p99 is ±4%");
        assert!(!reached(&at(&s, &tight), t(0.005, 0.2)), "p50 is ±1%");
        let no_p99 = intervals(Some((990.0, 1010.0)), None);
        assert!(
            !reached(&at(&s, &no_p99), t(0.5, 0.5)),
            "an unjudged p99 is never precise"
        );
        assert_eq!(t(0.05, 0.2).label(), "p50 ±5%, p99 ±20%");
        assert_eq!(t(0.025, 0.1).label(), "p50 ±2.5%, p99 ±10%");
    }

    #[test]
    fn the_fetches_needed_grow_as_the_square_of_the_width_asked() {
        // p99 ±10% at 1000 fetches: ±5% needs about 4000.
        let s = summary(1000, 1000, 10_000);
        let iv = intervals(Some((990.0, 1010.0)), Some((9000.0, 11_000.0)));
        assert_eq!(fetches_needed(&at(&s, &iv), t(0.05, 0.05)), 4000);
        // p50 ±1% asked ±0.5%: 4000 as well.
        assert_eq!(fetches_needed(&at(&s, &iv), t(0.005, 0.5)), 4000);
        // Already there: the fetches so far.
        assert_eq!(fetches_needed(&at(&s, &iv), t(0.5, 0.5)), 1000);
        // The next check comes after a quarter to a half more.
        assert_eq!(next_check(&at(&s, &iv), t(0.5, 0.5)), 1250);
        assert_eq!(next_check(&at(&s, &iv), t(0.05, 0.05)), 1500);
        // No p99 interval after 100 fetches: 500 first, at ±25%, then (25/5)² as many.
        let s = summary(100, 1000, 10_000);
        let iv = intervals(Some((990.0, 1010.0)), None);
        assert_eq!(fetches_needed(&at(&s, &iv), t(0.05, 0.05)), 12_500);
        assert_eq!(fetches_needed(&at(&s, &iv), t(0.05, 0.5)), 500);
    }

    #[test]
    fn a_report_says_what_it_got_and_why_it_stopped_short() {
        let mut s = summary(600, 1000, 10_000);
        s.intervals = Some(intervals(Some((980.0, 1020.0)), Some((8000.0, 12_000.0))));
        let r = PrecisionReport::of(t(0.05, 0.1), &s, Stopped::TimeLimit, 2.0, 30.0, 30.0);
        assert!(!r.met());
        assert_eq!(
            r.label(),
            "p50 ±2.0%, p99 ±20.0% (asked p50 ±5%, p99 ±10%) in 30.0 s; stopped at the time limit"
        );
        let r = PrecisionReport::of(t(0.025, 0.25), &s, Stopped::Reached, 2.0, 30.0, 3.1);
        assert!(r.met());
        assert_eq!(
            r.label(),
            "p50 ±2.0%, p99 ±20.0% (asked p50 ±2.5%, p99 ±25%) in 3.1 s"
        );
    }
}
