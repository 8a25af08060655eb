//! Per-fetch latency distributions: every measured fetch lands in an
//! HdrHistogram (1 ns – 60 s, 3 significant digits), split into cache hits and
//! misses by whether the fetch read from storage.

pub mod bands;
pub mod hdr;
pub mod interval;
pub mod precision;
pub mod window;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

pub use interval::{Interval, Intervals, Pooled};
pub use window::{Window, WindowRecorder};

/// Highest latency the histograms resolve; slower fetches are clamped to it (and `max` says so).
pub const MAX_TRACKABLE_NS: u64 = 60_000_000_000;

pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_TRACKABLE_NS, 3).expect("valid histogram bounds")
}

/// Fetches of one phase (warm-up or measured) of one (engine, size).
#[derive(Clone)]
pub struct FetchStats {
    pub all: Histogram<u64>,
    pub hits: Histogram<u64>,
    pub misses: Histogram<u64>,
    /// Sum of storage bytes read over all fetches; None when the counter is unavailable.
    pub disk_bytes: Option<u64>,
    pub bytes_returned: u64,
    pub windows: WindowRecorder,
    /// A size mix's fetches per size band (`with_bands`); None for a size class.
    pub bands: Option<bands::BandRecorder>,
}

impl Default for FetchStats {
    fn default() -> Self {
        Self::new(true)
    }
}

impl FetchStats {
    pub fn new(disk_counter_available: bool) -> Self {
        Self {
            all: new_histogram(),
            hits: new_histogram(),
            misses: new_histogram(),
            disk_bytes: disk_counter_available.then_some(0),
            bytes_returned: 0,
            windows: WindowRecorder::new(disk_counter_available),
            bands: None,
        }
    }

    /// The same, also recording each fetch in its size band of `grid` where there is one
    /// (a size mix's).
    pub fn with_bands(mut self, grid: Option<crate::dataset::mix::BandGrid>) -> Self {
        let available = self.disk_bytes.is_some();
        self.bands = grid.map(|grid| bands::BandRecorder::new(available, grid));
        self
    }

    /// Record one fetch that ended `at_ns` after the engine's first fetch began.
    /// `disk_bytes` None: unknown, so neither hit nor miss.
    #[inline]
    pub fn record(&mut self, at_ns: u64, latency_ns: u64, disk_bytes: Option<u64>, returned: u64) {
        let ns = latency_ns.max(1);
        self.windows.record(at_ns, ns, disk_bytes);
        self.all.saturating_record(ns);
        self.bytes_returned += returned;
        if let Some(bands) = self.bands.as_mut() {
            bands.record(at_ns, ns, disk_bytes, returned);
        }
        split_hit_or_miss(
            ns,
            disk_bytes,
            &mut self.disk_bytes,
            &mut self.hits,
            &mut self.misses,
        );
    }

    pub fn count(&self) -> u64 {
        self.all.len()
    }

    /// Take in another client's fetches of the same load (timed from the same start).
    pub fn absorb(&mut self, other: &FetchStats) {
        self.all.add(&other.all).expect("same bounds");
        self.hits.add(&other.hits).expect("same bounds");
        self.misses.add(&other.misses).expect("same bounds");
        self.disk_bytes = self.disk_bytes.zip(other.disk_bytes).map(|(a, b)| a + b);
        self.bytes_returned += other.bytes_returned;
        self.windows.absorb(&other.windows);
        if let (Some(mine), Some(theirs)) = (self.bands.as_mut(), other.bands.as_ref()) {
            mine.absorb(theirs);
        }
    }

    pub fn summary(&self) -> Summary {
        self.summary_of(false)
    }

    /// The summary with its percentiles' 95% intervals (`interval.rs`), its size
    /// bands' too.
    pub fn summary_with_intervals(&self) -> Summary {
        let mut summary = self.summary_of(true);
        summary.intervals = Some(interval::intervals(&summary.windows));
        summary
    }

    fn summary_of(&self, with_intervals: bool) -> Summary {
        let split = self.disk_bytes.map(|_| (&self.hits, &self.misses));
        let mut summary = Summary::of_histograms(
            &self.all,
            split,
            self.disk_bytes,
            self.bytes_returned,
            self.windows.windows(),
        );
        summary.bands = self
            .bands
            .as_ref()
            .map(|b| b.summaries(with_intervals))
            .unwrap_or_default();
        summary
    }
}

/// One fetch as a hit (it read nothing from storage) or a miss, its bytes read added to
/// `total`; a fetch whose reads are unknown makes the whole total unknown. What a phase
/// and a size band record alike.
#[inline]
pub(crate) fn split_hit_or_miss(
    ns: u64,
    disk_bytes: Option<u64>,
    total: &mut Option<u64>,
    hits: &mut Histogram<u64>,
    misses: &mut Histogram<u64>,
) {
    match (disk_bytes, total.as_mut()) {
        (Some(read), Some(total)) => {
            *total += read;
            if read > 0 {
                misses.saturating_record(ns);
            } else {
                hits.saturating_record(ns);
            }
        }
        _ => *total = None,
    }
}

/// The measured fetches of several repeats of one engine at one size, pooled: its
/// percentiles and intervals over all of them (`interval::pooled`).
pub fn pool(repeats: &[&Summary]) -> Pooled {
    pool_at(repeats, 0.95)
}

/// `pool` with intervals at `confidence`.
pub fn pool_at(repeats: &[&Summary], confidence: f64) -> Pooled {
    let windows: Vec<&[Window]> = repeats.iter().map(|s| s.windows.as_slice()).collect();
    interval::pooled_at(&windows, confidence)
}

/// The mean of every fetch of several repeats (windows keep no sums: from the
/// summaries' own means); None without fetches.
pub fn pooled_mean(repeats: &[&Summary]) -> Option<f64> {
    let count: u64 = repeats.iter().map(|s| s.count).sum();
    (count > 0).then(|| {
        repeats
            .iter()
            .map(|s| s.latency.mean_ns * s.count as f64)
            .sum::<f64>()
            / count as f64
    })
}

/// Fetch counts in log-spaced latency bins: what the report draws distributions and
/// CDFs from, without keeping every fetch. Bin `i` covers
/// `[first * 10^(i/k), first * 10^((i+1)/k))` ns with k bins per decade; the first
/// bin also holds anything faster, the last anything slower.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogHistogram {
    pub first_bin_ns: f64,
    pub bins_per_decade: u32,
    pub all: Vec<u64>,
    /// None when the disk counter is unavailable (hits and misses unknown).
    pub hits: Option<Vec<u64>>,
    pub misses: Option<Vec<u64>>,
}

impl LogHistogram {
    pub const FIRST_BIN_NS: f64 = 100.0;
    pub const BINS_PER_DECADE: u32 = 20;

    /// Bins from 100 ns to 60 s.
    pub fn bin_count() -> usize {
        Self::bin_of(MAX_TRACKABLE_NS as f64) + 1
    }

    pub fn bin_of(ns: f64) -> usize {
        let position = (ns / Self::FIRST_BIN_NS).log10() * f64::from(Self::BINS_PER_DECADE);
        if position.is_finite() && position > 0.0 {
            (position + 1e-9).floor() as usize
        } else {
            0
        }
    }

    /// Lower edge of bin `i` in ns.
    pub fn lower_edge_ns(&self, i: usize) -> f64 {
        self.first_bin_ns * 10f64.powf(i as f64 / f64::from(self.bins_per_decade))
    }

    /// One histogram in log bins (no hit/miss split).
    pub fn of(h: &Histogram<u64>) -> Self {
        Self {
            first_bin_ns: Self::FIRST_BIN_NS,
            bins_per_decade: Self::BINS_PER_DECADE,
            all: Self::bins_of(h),
            hits: None,
            misses: None,
        }
    }

    fn bins_of(h: &Histogram<u64>) -> Vec<u64> {
        let mut bins = vec![0u64; Self::bin_count()];
        let last = bins.len() - 1;
        for v in h.iter_recorded() {
            let bin = Self::bin_of(h.median_equivalent(v.value_iterated_to()) as f64).min(last);
            bins[bin] += v.count_at_value();
        }
        bins
    }
}

/// Latency percentiles in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub count: u64,
    pub mean_ns: f64,
    pub min_ns: u64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
}

impl Percentiles {
    pub fn of(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return Self::default();
        }
        Self {
            count: h.len(),
            mean_ns: h.mean(),
            min_ns: h.min(),
            p50_ns: h.value_at_quantile(0.50),
            p90_ns: h.value_at_quantile(0.90),
            p99_ns: h.value_at_quantile(0.99),
            p999_ns: h.value_at_quantile(0.999),
            max_ns: h.max(),
        }
    }
}

/// What one phase of one (engine, size) measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub count: u64,
    pub latency: Percentiles,
    /// Fetches that read nothing from storage; None when the disk counter is unavailable.
    pub hits: Option<Percentiles>,
    /// Fetches that read from storage; None when the disk counter is unavailable.
    pub misses: Option<Percentiles>,
    pub hit_ratio: Option<f64>,
    pub disk_bytes_total: Option<u64>,
    pub disk_bytes_per_fetch: Option<f64>,
    pub bytes_returned: u64,
    /// The distribution in log bins (None in results written before it existed).
    #[serde(default)]
    pub histogram: Option<LogHistogram>,
    /// The fetches in 200 ms windows, in order (empty in results written before).
    #[serde(default)]
    pub windows: Vec<Window>,
    /// 95% intervals of p50/p90/p99 (measured phase only; None before they existed).
    #[serde(default)]
    pub intervals: Option<Intervals>,
    /// The exact histograms (`hdr`); None in results written before them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hdr: Option<hdr::HdrSet>,
    /// A size mix's fetches per size band, smallest first (empty for a size class).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bands: Vec<bands::BandSummary>,
}

impl Summary {
    /// Everything a phase's summary says, from its histograms (hits and misses where
    /// the disk counter told them apart), its disk and returned bytes and its windows;
    /// intervals are the caller's. A measured phase (`FetchStats::summary`) and runs
    /// merged (`merge`) build theirs alike.
    pub fn of_histograms(
        all: &Histogram<u64>,
        split: Option<(&Histogram<u64>, &Histogram<u64>)>,
        disk_bytes_total: Option<u64>,
        bytes_returned: u64,
        windows: Vec<Window>,
    ) -> Summary {
        let count = all.len();
        Summary {
            count,
            latency: Percentiles::of(all),
            hits: split.map(|(h, _)| Percentiles::of(h)),
            misses: split.map(|(_, m)| Percentiles::of(m)),
            hit_ratio: split
                .filter(|_| count > 0)
                .map(|(h, _)| h.len() as f64 / count as f64),
            disk_bytes_total,
            disk_bytes_per_fetch: disk_bytes_total
                .filter(|_| count > 0)
                .map(|b| b as f64 / count as f64),
            bytes_returned,
            histogram: Some(LogHistogram {
                first_bin_ns: LogHistogram::FIRST_BIN_NS,
                bins_per_decade: LogHistogram::BINS_PER_DECADE,
                all: LogHistogram::bins_of(all),
                hits: split.map(|(h, _)| LogHistogram::bins_of(h)),
                misses: split.map(|(_, m)| LogHistogram::bins_of(m)),
            }),
            windows,
            intervals: None,
            hdr: Some(hdr::HdrSet::of(all, split)),
            bands: Vec::new(),
        }
    }
}

impl Summary {
    pub fn hit_ratio_label(&self) -> String {
        hit_ratio_label(self.hit_ratio)
    }

    pub fn disk_per_fetch_label(&self) -> String {
        disk_per_fetch_label(self.disk_bytes_per_fetch)
    }
}

/// `93.5%`, or `unavailable` when the disk counter is.
pub fn hit_ratio_label(hit_ratio: Option<f64>) -> String {
    hit_ratio
        .map(|h| format!("{:.1}%", h * 100.0))
        .unwrap_or_else(|| "unavailable".into())
}

/// `58.5KiB`, or `unavailable` when the disk counter is.
pub fn disk_per_fetch_label(bytes: Option<f64>) -> String {
    bytes
        .map(|d| crate::size::format_bytes(d as u64))
        .unwrap_or_else(|| "unavailable".into())
}

/// `500`, `12.5`: a rate without trailing zeros.
pub fn rate_label(rate: f64) -> String {
    if rate >= 100.0 || rate.fract() == 0.0 {
        format!("{rate:.0}")
    } else {
        format!("{rate:.1}")
    }
}

/// Human-readable duration from nanoseconds: `850ns`, `12.3µs`, `4.56ms`, `1.20s`.
pub fn format_ns(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.0}ns")
    } else if ns < 1e6 {
        format!("{:.1}µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2}ms", ns / 1e6)
    } else {
        format!("{:.2}s", ns / 1e9)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn log_bins_place_known_latencies() {
        // 20 bins per decade from 100 ns: 1 µs is bin 20, 1 ms bin 80, 10 ms bin 100.
        assert_eq!(LogHistogram::bin_of(50.0), 0);
        assert_eq!(LogHistogram::bin_of(100.0), 0);
        assert_eq!(LogHistogram::bin_of(1_000.0), 20);
        assert_eq!(LogHistogram::bin_of(1_000_000.0), 80);
        let mut s = FetchStats::new(true);
        for _ in 0..3 {
            s.record(0, 1_050_000, Some(0), 1);
        }
        s.record(0, 10_500_000, Some(4096), 1);
        let h = s.summary().histogram.unwrap();
        assert_eq!(h.all.iter().sum::<u64>(), 4);
        assert_eq!(h.all[80], 3);
        assert_eq!(h.all[100], 1);
        assert_eq!(h.hits.as_ref().unwrap()[80], 3);
        assert_eq!(h.misses.as_ref().unwrap()[100], 1);
        assert!((h.lower_edge_ns(80) - 1e6).abs() < 1.0);
    }

    use super::*;

    #[test]
    fn percentiles_of_a_known_distribution() {
        let mut s = FetchStats::new(true);
        // 1..=1000 µs, one each: p50 ≈ 500 µs, p99 ≈ 990 µs within 0.1 %.
        for us in 1..=1000u64 {
            s.record(0, us * 1000, Some(0), 10);
        }
        let sum = s.summary();
        assert_eq!(sum.count, 1000);
        let close =
            |got: u64, want: u64| (got as f64 - want as f64).abs() <= want as f64 * 0.001 + 1.0;
        assert!(close(sum.latency.p50_ns, 500_000), "{}", sum.latency.p50_ns);
        assert!(close(sum.latency.p90_ns, 900_000), "{}", sum.latency.p90_ns);
        assert!(close(sum.latency.p99_ns, 990_000), "{}", sum.latency.p99_ns);
        assert!(close(sum.latency.max_ns, 1_000_000));
        assert!((sum.latency.mean_ns - 500_500.0).abs() < 500.0);
        assert_eq!(sum.bytes_returned, 10_000);
    }

    #[test]
    fn hits_and_misses_split_on_disk_reads() {
        let mut s = FetchStats::new(true);
        for _ in 0..90 {
            s.record(0, 2_000, Some(0), 1);
        }
        for _ in 0..10 {
            s.record(0, 5_000_000, Some(65536), 1);
        }
        let sum = s.summary();
        assert_eq!(sum.hit_ratio, Some(0.9));
        assert_eq!(sum.hits.unwrap().count, 90);
        assert_eq!(sum.misses.unwrap().count, 10);
        assert!(sum.misses.unwrap().p50_ns > 4_990_000);
        assert_eq!(sum.disk_bytes_per_fetch, Some(6553.6));
        // The bimodal shape shows in the whole distribution.
        assert!(sum.latency.p50_ns < 3_000 && sum.latency.p99_ns > 4_990_000);
    }

    #[test]
    fn unknown_disk_reads_are_unavailable_not_zero() {
        let mut s = FetchStats::new(false);
        s.record(0, 1_000, None, 1);
        let sum = s.summary();
        assert_eq!(sum.disk_bytes_per_fetch, None);
        assert_eq!(sum.hit_ratio, None);
        assert!(sum.hits.is_none());
        // One unknown reading poisons the total: a partial sum would under-count.
        let mut t = FetchStats::new(true);
        t.record(0, 1_000, Some(4096), 1);
        t.record(0, 1_000, None, 1);
        assert_eq!(t.summary().disk_bytes_total, None);
    }

    #[test]
    fn durations_format_for_humans() {
        assert_eq!(format_ns(850.0), "850ns");
        assert_eq!(format_ns(12_345.0), "12.3µs");
        assert_eq!(format_ns(4_560_000.0), "4.56ms");
    }
}
