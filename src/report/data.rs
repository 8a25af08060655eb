//! What the charts and tables show, computed from a run's results: pure functions
//! over `RunResults`, unit-tested with known inputs.

use crate::db::registry::EngineKind;
use crate::records::results::{EngineResult, RunResults};
use crate::stats::LogHistogram;

/// One engine's values across size classes, sorted by size: (size bytes, value).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub engine: EngineKind,
    pub points: Vec<(u64, f64)>,
}

/// The engines of a run in the suite's fixed order (so colours and rows line up).
pub fn engines(run: &RunResults) -> Vec<EngineKind> {
    let mut engines: Vec<EngineKind> = run.results.iter().map(|r| r.engine).collect();
    engines.sort();
    engines.dedup();
    engines
}

/// Size classes of a run, ascending.
pub fn sizes(run: &RunResults) -> Vec<u64> {
    let mut sizes: Vec<u64> = run.results.iter().map(|r| r.size_bytes).collect();
    sizes.sort();
    sizes.dedup();
    sizes
}

/// How a measured size is named: `64KiB`, or, in a size mix's run, the mix's name
/// (its one dataset's size is its largest blob).
pub fn size_name(run: &RunResults, size: u64) -> String {
    run.config
        .size_mix
        .map_or_else(|| crate::size::format_bytes(size), |mix| mix.to_string())
}

/// The bands a size mix's run is read in: the mix's own grid, but doublings for results
/// written before a mix of a few sizes had a band per size (read as they were written);
/// None in a run of size classes.
pub fn mix_grid(run: &RunResults) -> Option<crate::dataset::mix::BandGrid> {
    let spec = run.config.datasets().into_iter().next()?;
    let written_in_doublings = run
        .results
        .iter()
        .flat_map(|r| &r.measured.bands)
        .any(|b| b.high != b.low + 1);
    Some(match spec.mix?.get().band_grid() {
        crate::dataset::mix::BandGrid::Sizes(_) if written_in_doublings => {
            crate::dataset::mix::BandGrid::Doublings
        }
        grid => grid,
    })
}

/// A size mix's dataset per size band, as the loader drew it from the mix and the seed;
/// None in a run of size classes.
pub fn mix_shares(run: &RunResults) -> Option<Vec<crate::dataset::mix::BandShare>> {
    run.config.size_mix?;
    let spec = run.config.datasets().into_iter().next()?;
    Some(crate::dataset::mix::shares(
        &mix_grid(run)?,
        (1..=spec.rows).map(|id| spec.blob_bytes(id)),
    ))
}

/// Size classes measured under load (more clients or a rate), ascending.
pub fn load_sizes(run: &RunResults) -> Vec<u64> {
    let mut sizes: Vec<u64> = run
        .load_results
        .iter()
        .map(|l| l.result.size_bytes)
        .chain(run.saturations.iter().map(|s| s.size_bytes))
        .chain(run.skipped_loads.iter().map(|s| s.size_bytes))
        .collect();
    sizes.sort();
    sizes.dedup();
    sizes
}

/// Engines measured under load at a size, in the suite's order.
pub fn load_engines(run: &RunResults, size: u64) -> Vec<EngineKind> {
    let mut engines: Vec<EngineKind> = run
        .load_results
        .iter()
        .filter(|l| l.result.size_bytes == size)
        .map(|l| l.result.engine)
        .collect();
    engines.sort();
    engines.dedup();
    engines
}

/// One point of an engine's throughput-latency line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadPointFigures {
    /// Fetches/s achieved.
    pub rate: f64,
    pub p50_ns: f64,
    pub p99_ns: f64,
}

/// An engine's loads at a size, by throughput: its single-client result (1 ÷ mean
/// latency: that loop's rate without the time between fetches), then each load's
/// headline (response time in open loop, service time closed).
pub fn load_curve(run: &RunResults, engine: EngineKind, size: u64) -> Vec<LoadPointFigures> {
    let mut points: Vec<LoadPointFigures> = run
        .result(engine, size)
        .filter(|r| r.measured.latency.mean_ns > 0.0)
        .map(|r| LoadPointFigures {
            rate: 1e9 / r.measured.latency.mean_ns,
            p50_ns: r.measured.latency.p50_ns as f64,
            p99_ns: r.measured.latency.p99_ns as f64,
        })
        .into_iter()
        .collect();
    for l in run
        .load_results
        .iter()
        .filter(|l| l.result.engine == engine && l.result.size_bytes == size)
    {
        let head = l.load.headline(&l.result.measured.latency);
        if head.count == 0 {
            continue;
        }
        points.push(LoadPointFigures {
            rate: l.load.fetches_per_s,
            p50_ns: head.p50_ns as f64,
            p99_ns: head.p99_ns as f64,
        });
    }
    points.sort_by(|a, b| a.rate.total_cmp(&b.rate));
    points
}

/// (queue depth, reads/s) of the disk's own throughput measured at a size.
pub fn disk_rates(run: &RunResults, size: u64) -> Vec<(u32, f64)> {
    let mut rates: Vec<(u32, f64)> = run
        .disk_limits
        .iter()
        .filter(|d| d.size_bytes == size)
        .filter_map(|d| Some((d.queue_depth, d.throughput.as_ref().ok()?.reads_per_s)))
        .collect();
    rates.sort_by_key(|&(depth, _)| depth);
    rates
}

/// (clients, fetches/s) of an engine at a size: 1 client from its single-client
/// result (1 ÷ mean latency), then each closed-loop load.
pub fn clients_curve(run: &RunResults, engine: EngineKind, size: u64) -> Vec<(f64, f64)> {
    let mut points: Vec<(f64, f64)> = run
        .result(engine, size)
        .filter(|r| r.measured.latency.mean_ns > 0.0)
        .map(|r| (1.0, 1e9 / r.measured.latency.mean_ns))
        .into_iter()
        .collect();
    for l in run.load_results.iter().filter(|l| {
        l.result.engine == engine
            && l.result.size_bytes == size
            && l.load.point.rate.is_none()
            && l.load.fetches_per_s > 0.0
    }) {
        points.push((f64::from(l.load.point.clients), l.load.fetches_per_s));
    }
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    points
}

/// One series per engine of `value(result)`; results where it is None are left out.
pub fn series(run: &RunResults, value: impl Fn(&EngineResult) -> Option<f64>) -> Vec<Series> {
    engines(run)
        .into_iter()
        .map(|engine| {
            let mut points: Vec<(u64, f64)> = run
                .results
                .iter()
                .filter(|r| r.engine == engine)
                .filter_map(|r| value(r).map(|v| (r.size_bytes, v)))
                .collect();
            points.sort_by_key(|p| p.0);
            Series { engine, points }
        })
        .filter(|s| !s.points.is_empty())
        .collect()
}

/// One window of an engine's timeline at one size.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelinePoint {
    /// Seconds from the engine's first fetch to the window's middle.
    pub t_s: f64,
    pub p50_ns: f64,
    pub p99_ns: f64,
    pub hit_ratio: Option<f64>,
    pub measured: bool,
}

/// An engine's windows from its first warm-up fetch to its last measured one, and
/// when the measurement began (seconds). Empty for results recorded before windows.
pub fn timeline(r: &EngineResult) -> (Vec<TimelinePoint>, Option<f64>) {
    let half = crate::stats::window::WINDOW_NS as f64 / 2e9;
    let points = [(&r.warm_up, false), (&r.measured, true)]
        .into_iter()
        .flat_map(|(phase, measured)| phase.windows.iter().map(move |w| (w, measured)))
        .filter_map(|(w, measured)| {
            Some(TimelinePoint {
                t_s: w.start_s + half,
                p50_ns: w.quantile_ns(0.5)?,
                p99_ns: w.quantile_ns(0.99)?,
                hit_ratio: w.hit_ratio(),
                measured,
            })
        })
        .collect();
    (points, r.measured.windows.first().map(|w| w.start_s))
}

/// One histogram bar: [lo, hi) ns with the fraction of fetches that were hits,
/// misses, or unknown (no disk counter).
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub lo_ns: f64,
    pub hi_ns: f64,
    pub hits: f64,
    pub misses: f64,
    pub unknown: f64,
}

/// Non-empty bins as fractions of all fetches.
pub fn bars(h: &LogHistogram) -> Vec<Bar> {
    let total: u64 = h.all.iter().sum();
    if total == 0 {
        return Vec::new();
    }
    let frac = |n: u64| n as f64 / total as f64;
    (0..h.all.len())
        .filter(|&i| h.all[i] > 0)
        .map(|i| {
            let (hits, misses) = match (&h.hits, &h.misses) {
                (Some(hits), Some(misses)) => (hits[i], misses[i]),
                _ => (0, 0),
            };
            Bar {
                lo_ns: h.lower_edge_ns(i),
                hi_ns: h.lower_edge_ns(i + 1),
                hits: frac(hits),
                misses: frac(misses),
                unknown: frac(h.all[i] - hits - misses),
            }
        })
        .collect()
}

/// The empirical CDF: (upper edge of a bin in ns, fraction of fetches at or below it),
/// one point per non-empty bin, starting from the lower edge of the first at 0.
pub fn cdf(h: &LogHistogram) -> Vec<(f64, f64)> {
    let total: u64 = h.all.iter().sum();
    if total == 0 {
        return Vec::new();
    }
    let mut points = Vec::new();
    let mut seen = 0u64;
    for (i, &n) in h.all.iter().enumerate() {
        if n == 0 {
            continue;
        }
        if points.is_empty() {
            points.push((h.lower_edge_ns(i), 0.0));
        }
        seen += n;
        points.push((h.lower_edge_ns(i + 1), seen as f64 / total as f64));
    }
    points
}

/// An axis for blob sizes: a little room either side of the classes, which are
/// the tick marks (decades of bytes would label 1000B, 9.8KiB...).
pub fn size_axis(sizes: &[u64]) -> Option<(f64, f64, Vec<f64>)> {
    let lo = *sizes.iter().min()? as f64;
    let hi = *sizes.iter().max()? as f64;
    Some((
        lo / 1.6,
        hi * 1.6,
        sizes.iter().map(|&s| s as f64).collect(),
    ))
}

/// Range [lo, hi] spanning all positive values, widened to whole decades for log axes.
pub fn log_range(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64)> {
    let (mut lo, mut hi) = (f64::INFINITY, 0f64);
    for v in values.into_iter().filter(|v| *v > 0.0 && v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    (hi > 0.0).then(|| {
        (
            10f64.powf(lo.log10().floor()),
            10f64.powf(hi.log10().ceil().max(lo.log10().floor() + 1.0)),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(all: &[(usize, u64)], hits: &[(usize, u64)]) -> LogHistogram {
        let n = LogHistogram::bin_count();
        let mut a = vec![0; n];
        let mut h = vec![0; n];
        for &(i, c) in all {
            a[i] = c;
        }
        for &(i, c) in hits {
            h[i] = c;
        }
        let misses = a.iter().zip(&h).map(|(a, h)| a - h).collect();
        LogHistogram {
            first_bin_ns: LogHistogram::FIRST_BIN_NS,
            bins_per_decade: LogHistogram::BINS_PER_DECADE,
            all: a,
            hits: Some(h),
            misses: Some(misses),
        }
    }

    #[test]
    fn bars_split_each_bin_into_hits_and_misses() {
        // 1 µs bin (20): 3 hits; 1 ms bin (80): 1 miss.
        let h = histogram(&[(20, 3), (80, 1)], &[(20, 3)]);
        let b = bars(&h);
        assert_eq!(b.len(), 2);
        assert!((b[0].lo_ns - 1_000.0).abs() < 1e-6);
        assert_eq!((b[0].hits, b[0].misses, b[0].unknown), (0.75, 0.0, 0.0));
        assert_eq!((b[1].hits, b[1].misses), (0.0, 0.25));
        assert!((b[1].hi_ns / b[1].lo_ns - 10f64.powf(0.05)).abs() < 1e-9);
    }

    #[test]
    fn bars_without_a_disk_counter_are_unknown_not_hits() {
        let mut h = histogram(&[(40, 2)], &[]);
        h.hits = None;
        h.misses = None;
        let b = bars(&h);
        assert_eq!((b[0].hits, b[0].misses, b[0].unknown), (0.0, 0.0, 1.0));
    }

    #[test]
    fn cdf_rises_to_one_at_the_slowest_bin() {
        let h = histogram(&[(20, 1), (40, 2), (60, 1)], &[]);
        let c = cdf(&h);
        assert_eq!(c.len(), 4);
        assert_eq!(c[0].1, 0.0);
        assert_eq!(c[1].1, 0.25);
        assert_eq!(c[2].1, 0.75);
        assert_eq!(c[3].1, 1.0);
        assert!(c.windows(2).all(|w| w[0].0 < w[1].0), "x increases: {c:?}");
    }

    #[test]
    fn size_axes_tick_at_the_size_classes() {
        let (lo, hi, ticks) = size_axis(&[1024, 65536]).unwrap();
        assert!(lo < 1024.0 && hi > 65536.0);
        assert_eq!(ticks, vec![1024.0, 65536.0]);
        assert_eq!(size_axis(&[]), None);
    }

    #[test]
    fn log_ranges_cover_whole_decades() {
        assert_eq!(log_range([150.0, 2_500.0]), Some((100.0, 10_000.0)));
        assert_eq!(log_range([1_000.0]), Some((1_000.0, 10_000.0)));
        assert_eq!(log_range([0.0, -1.0]), None);
    }
}
