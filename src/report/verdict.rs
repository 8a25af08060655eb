//! The product's answer: how one engine's sizes stand against the latency target, and
//! the largest size up to which every one meets it. The report's verdict page, the
//! size-mix page and the front page's tables (`blobrace tables`) all judge with this.

use crate::db::registry::EngineKind;
use crate::records::results::RunResults;
use crate::stats::Summary;

/// How one size class stands against the latency target.
#[derive(Debug, Clone, PartialEq)]
pub enum SizeJudgement {
    Meets,
    Misses {
        p99_ns: u64,
    },
    /// Its p99 has no interval: too few fetches (or windows) to say.
    CannotJudge {
        why: String,
    },
}

/// An engine's verdict: the largest size up to which every size meets the target,
/// and where (and why) the walk up the sizes stopped.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub largest: Option<u64>,
    pub stopped: Option<(u64, SizeJudgement)>,
    /// Sizes counted as meeting or missing whose p99 interval spans the target.
    pub close_calls: Vec<(u64, crate::stats::Interval)>,
}

/// One size's p99 against the target. Results recorded before intervals existed
/// (no `intervals` at all) are judged on their point estimate.
pub fn judge(measured: &Summary, target_ns: u64) -> SizeJudgement {
    let p99 = measured.latency.p99_ns;
    if let Some(iv) = &measured.intervals
        && let Some(why) = iv.missing_why(0.99)
    {
        // Too few fetches for a p99 interval can still be plenty to say it misses: with
        // a tenth of 50 or more fetches above the target, a p99 at or under it (at most
        // 1 fetch in 100 above) would give that with a chance under 2 in 10,000. The
        // full profile's servers at 32 MiB took 150-280 ms a fetch, 230-410 fetches
        // in their cells: "cannot judge" said nothing a reader could not see.
        // Spread over 10 windows or more: not one stall's neighbouring fetches.
        if measured.count >= 50 && iv.windows >= 10 && measured.latency.p90_ns > target_ns {
            return SizeJudgement::Misses { p99_ns: p99 };
        }
        return SizeJudgement::CannotJudge { why };
    }
    if measured.count == 0 {
        return SizeJudgement::CannotJudge {
            why: "no fetches".into(),
        };
    }
    if p99 <= target_ns {
        SizeJudgement::Meets
    } else {
        SizeJudgement::Misses { p99_ns: p99 }
    }
}

/// Walk the engine's sizes up from the smallest: every one must meet the target;
/// the first that misses, or cannot be judged, ends the walk. A size that happens
/// to pass above one that failed does not count.
pub fn verdict(run: &RunResults, engine: EngineKind, target_ns: u64) -> Verdict {
    let mut sizes: Vec<(u64, &Summary)> = run
        .results
        .iter()
        .filter(|r| r.engine == engine)
        .map(|r| (r.size_bytes, &r.measured))
        .collect();
    sizes.sort_by_key(|s| s.0);
    verdict_of(&sizes, target_ns)
}

/// `verdict` over (size, measured) pairs, ascending.
pub fn verdict_of(sizes: &[(u64, &Summary)], target_ns: u64) -> Verdict {
    let mut v = Verdict {
        largest: None,
        stopped: None,
        close_calls: Vec::new(),
    };
    for &(size, measured) in sizes {
        let judgement = judge(measured, target_ns);
        if let Some(iv) = measured.intervals.as_ref().and_then(|i| i.p99)
            && iv.contains(target_ns as f64)
        {
            v.close_calls.push((size, iv));
        }
        match judgement {
            SizeJudgement::Meets => v.largest = Some(size),
            other => {
                v.stopped = Some((size, other));
                break;
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict_on(
        points: &[(u64, u64, Option<crate::stats::Intervals>)],
        target_ns: u64,
    ) -> Verdict {
        let summaries: Vec<(u64, Summary)> = points
            .iter()
            .map(|(size, p99, iv)| {
                let mut m = Summary {
                    count: 1000,
                    intervals: iv.clone(),
                    ..Default::default()
                };
                m.latency.p99_ns = *p99;
                (*size, m)
            })
            .collect();
        let refs: Vec<(u64, &Summary)> = summaries.iter().map(|(s, m)| (*s, m)).collect();
        verdict_of(&refs, target_ns)
    }

    #[test]
    fn the_verdict_stops_at_the_first_size_that_misses() {
        let ms = 1_000_000;
        // 1 KiB and 64 KiB meet 50 ms, 512 KiB misses, 4 MiB happens to meet: 64 KiB.
        let points = [
            (1024, 2 * ms, None),
            (64 << 10, 10 * ms, None),
            (512 << 10, 726 * ms, None),
            (4 << 20, 40 * ms, None),
        ];
        let v = verdict_on(&points, 50 * ms);
        assert_eq!(v.largest, Some(64 << 10));
        assert_eq!(
            v.stopped,
            Some((512 << 10, SizeJudgement::Misses { p99_ns: 726 * ms }))
        );
        // Missing at the smallest size: none.
        let v = verdict_on(&points, ms);
        assert_eq!(v.largest, None);
        assert_eq!(v.stopped.unwrap().0, 1024);
    }

    #[test]
    fn too_few_fetches_cannot_be_judged() {
        let ms = 1_000_000;
        let judged = crate::stats::Intervals {
            p99: Some(crate::stats::Interval {
                lo_ns: 40e6,
                hi_ns: 60e6,
            }),
            windows: 50,
            fetches: 1000,
            ..Default::default()
        };
        let thin = crate::stats::Intervals {
            windows: 10,
            fetches: 50,
            ..Default::default()
        };
        let v = verdict_on(
            &[
                (1024, 45 * ms, Some(judged)),
                (64 << 10, 20 * ms, Some(thin)),
            ],
            50 * ms,
        );
        assert_eq!(v.largest, Some(1024));
        assert_eq!(v.close_calls.len(), 1, "45 ms with 40..60 spans 50 ms");
        match v.stopped {
            Some((size, SizeJudgement::CannotJudge { why })) => {
                assert_eq!(size, 64 << 10);
                assert!(why.contains("too few fetches to judge p99 (n=50"), "{why}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn too_few_fetches_for_an_interval_still_miss_where_a_tenth_are_over_the_target() {
        let ms = 1_000_000;
        let thin = crate::stats::Intervals {
            windows: 300,
            fetches: 347,
            ..Default::default()
        };
        let cell = |count: u64, p90_ns: u64| {
            let mut m = Summary {
                count,
                intervals: Some(thin.clone()),
                ..Default::default()
            };
            m.latency.p90_ns = p90_ns;
            m.latency.p99_ns = 251 * ms;
            m
        };
        // PostgreSQL at 32 MiB: 347 fetches, p90 230 ms against 50 ms.
        assert_eq!(
            judge(&cell(347, 230 * ms), 50 * ms),
            SizeJudgement::Misses { p99_ns: 251 * ms }
        );
        // A p90 under the target says nothing of the p99; nor do a handful of fetches.
        assert!(matches!(
            judge(&cell(347, 40 * ms), 50 * ms),
            SizeJudgement::CannotJudge { .. }
        ));
        assert!(matches!(
            judge(&cell(20, 230 * ms), 50 * ms),
            SizeJudgement::CannotJudge { .. }
        ));
        // Nor does one stall: the fetches over the target all in a few windows.
        let mut stalled = cell(347, 230 * ms);
        stalled.intervals = Some(crate::stats::Intervals {
            windows: 5,
            fetches: 347,
            ..Default::default()
        });
        assert!(matches!(
            judge(&stalled, 50 * ms),
            SizeJudgement::CannotJudge { .. }
        ));
    }
}
