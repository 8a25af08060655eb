//! Fetches in time windows: the timeline of one engine at one size (how the hit ratio
//! and the latencies moved from the first fetch to the last), and the blocks the
//! confidence intervals resample (`interval.rs`). A window closes every `WINDOW_NS`
//! of wall time; its latencies are kept in fine log bins (100 per decade, 2.3% wide),
//! fine enough for a percentile's interval, small enough to keep thousands.

use serde::{Deserialize, Serialize};

use super::MAX_TRACKABLE_NS;

/// The length of one window.
pub const WINDOW_NS: u64 = 200_000_000;

/// Log bins from 100 ns, 100 per decade: bin `i` covers
/// `[100 * 10^(i/100), 100 * 10^((i+1)/100))` ns; the first also holds anything faster.
pub mod fine_bins {
    pub const FIRST_NS: f64 = 100.0;
    pub const PER_DECADE: f64 = 100.0;

    pub fn count() -> usize {
        position(super::MAX_TRACKABLE_NS) as usize + 1
    }

    fn position(ns: u64) -> f64 {
        (ns as f64 / FIRST_NS).log10() * PER_DECADE
    }

    pub fn of(ns: u64) -> usize {
        let at = position(ns);
        if at.is_finite() && at > 0.0 {
            ((at + 1e-9).floor() as usize).min(count() - 1)
        } else {
            0
        }
    }

    /// The latency `fraction` (0..1) of the way through bin `i`, geometrically.
    pub fn at(i: usize, fraction: f64) -> f64 {
        FIRST_NS * 10f64.powf((i as f64 + fraction) / PER_DECADE)
    }

    /// The value at quantile `q` of fetches counted in dense `bins` (`total` of them),
    /// interpolated inside its bin: HdrHistogram's rank rule (the `ceil(q * n)`-th).
    pub fn quantile(bins: &[u64], total: u64, q: f64) -> Option<f64> {
        if total == 0 {
            return None;
        }
        let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
        let mut below = 0u64;
        for (i, &c) in bins.iter().enumerate() {
            if c > 0 && below + c >= rank {
                let fraction = (rank - below) as f64 - 0.5;
                return Some(at(i, fraction / c as f64));
            }
            below += c;
        }
        None
    }
}

/// One window of one phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Window {
    /// Seconds from the engine's first fetch (warm-up included) to this window's start.
    pub start_s: f64,
    pub fetches: u64,
    /// Fetches that read nothing from storage; None when the disk counter is unavailable.
    pub hits: Option<u64>,
    pub disk_bytes: Option<u64>,
    /// Non-empty fine bins, (bin, fetches).
    pub bins: Vec<(u32, u64)>,
}

impl Window {
    pub fn hit_ratio(&self) -> Option<f64> {
        self.hits
            .filter(|_| self.fetches > 0)
            .map(|h| h as f64 / self.fetches as f64)
    }

    /// Add another window of the same start (another client's).
    pub fn absorb(&mut self, other: &Window) {
        self.fetches += other.fetches;
        self.hits = self.hits.zip(other.hits).map(|(a, b)| a + b);
        self.disk_bytes = self.disk_bytes.zip(other.disk_bytes).map(|(a, b)| a + b);
        let mut bins: std::collections::BTreeMap<u32, u64> = self.bins.iter().copied().collect();
        for &(i, c) in &other.bins {
            *bins.entry(i).or_default() += c;
        }
        self.bins = bins.into_iter().collect();
    }

    /// The window's own percentile (for the timeline), in ns.
    pub fn quantile_ns(&self, q: f64) -> Option<f64> {
        let mut dense = vec![0u64; fine_bins::count()];
        for &(i, c) in &self.bins {
            dense[i as usize] += c;
        }
        fine_bins::quantile(&dense, self.fetches, q)
    }
}

/// Fills windows as fetches are recorded: a dense bin array for the open window
/// (no allocation per fetch), made sparse when the window closes.
#[derive(Clone)]
pub struct WindowRecorder {
    pub closed: Vec<Window>,
    open_start_ns: Option<u64>,
    open_bins: Vec<u64>,
    open_fetches: u64,
    open_hits: Option<u64>,
    open_disk: Option<u64>,
    known: bool,
}

impl WindowRecorder {
    pub fn new(disk_counter_available: bool) -> Self {
        Self {
            closed: Vec::new(),
            open_start_ns: None,
            open_bins: vec![0; fine_bins::count()],
            open_fetches: 0,
            open_hits: disk_counter_available.then_some(0),
            open_disk: disk_counter_available.then_some(0),
            known: disk_counter_available,
        }
    }

    /// One fetch that ended `at_ns` after the engine's first fetch began.
    #[inline]
    pub fn record(&mut self, at_ns: u64, latency_ns: u64, disk_bytes: Option<u64>) {
        let start = *self.open_start_ns.get_or_insert(at_ns - at_ns % WINDOW_NS);
        if at_ns >= start + WINDOW_NS {
            self.close();
            self.open_start_ns = Some(at_ns - at_ns % WINDOW_NS);
        }
        self.open_bins[fine_bins::of(latency_ns)] += 1;
        self.open_fetches += 1;
        match disk_bytes {
            Some(read) => {
                if let Some(h) = self.open_hits.as_mut() {
                    *h += u64::from(read == 0);
                }
                if let Some(d) = self.open_disk.as_mut() {
                    *d += read;
                }
            }
            None => {
                self.open_hits = None;
                self.open_disk = None;
            }
        }
    }

    fn close(&mut self) {
        let Some(start) = self.open_start_ns else {
            return;
        };
        if self.open_fetches > 0 {
            let bins = self
                .open_bins
                .iter_mut()
                .enumerate()
                .filter(|(_, c)| **c > 0)
                .map(|(i, c)| (i as u32, std::mem::take(c)))
                .collect();
            self.closed.push(Window {
                start_s: start as f64 / 1e9,
                fetches: self.open_fetches,
                hits: self.open_hits,
                disk_bytes: self.open_disk,
                bins,
            });
        }
        self.open_fetches = 0;
        self.open_hits = self.known.then_some(0);
        self.open_disk = self.known.then_some(0);
    }

    /// Take in another recorder's windows (another client of the same load, timed
    /// from the same start): windows with the same start become one.
    pub fn absorb(&mut self, other: &WindowRecorder) {
        let mut by_start: std::collections::BTreeMap<u64, Window> =
            std::collections::BTreeMap::new();
        for w in self.windows().into_iter().chain(other.windows()) {
            let key = (w.start_s * 1e9 / WINDOW_NS as f64).round() as u64;
            match by_start.get_mut(&key) {
                None => {
                    by_start.insert(key, w);
                }
                Some(into) => into.absorb(&w),
            }
        }
        let known = self.known && other.known;
        *self = WindowRecorder::new(known);
        self.closed = by_start.into_values().collect();
    }

    /// Every window, the open one included.
    pub fn windows(&self) -> Vec<Window> {
        let mut all = self.clone();
        all.close();
        all.closed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fine_bins_round_trip_within_a_bin() {
        for ns in [150u64, 1_000, 12_345, 1_370_000, 33_000_000, 2_000_000_000] {
            let i = fine_bins::of(ns);
            let (lo, hi) = (fine_bins::at(i, 0.0), fine_bins::at(i, 1.0));
            assert!(
                lo <= ns as f64 * 1.000001 && (ns as f64) < hi,
                "{ns}: {lo}..{hi}"
            );
            assert!(hi / lo < 1.024);
        }
        assert_eq!(fine_bins::of(MAX_TRACKABLE_NS * 10), fine_bins::count() - 1);
        assert_eq!(fine_bins::of(0), 0);
    }

    #[test]
    fn quantiles_of_binned_fetches_are_within_a_bin() {
        let mut bins = vec![0u64; fine_bins::count()];
        for us in 1..=1000u64 {
            bins[fine_bins::of(us * 1000)] += 1;
        }
        for (q, want) in [(0.5, 500_000.0), (0.9, 900_000.0), (0.99, 990_000.0)] {
            let got = fine_bins::quantile(&bins, 1000, q).unwrap();
            assert!((got / want - 1.0).abs() < 0.012, "{q}: {got}");
        }
        assert_eq!(fine_bins::quantile(&bins, 0, 0.5), None);
    }

    #[test]
    fn recorders_of_two_clients_merge_by_window_start() {
        let ms = 1_000_000;
        let mut a = WindowRecorder::new(false);
        a.record(10 * ms, 5_000, None);
        a.record(250 * ms, 9_000, None);
        let mut b = WindowRecorder::new(false);
        b.record(20 * ms, 5_000, None);
        b.record(620 * ms, 7_000, None);
        a.absorb(&b);
        let w = a.windows();
        let starts: Vec<(f64, u64)> = w.iter().map(|w| (w.start_s, w.fetches)).collect();
        assert_eq!(starts, [(0.0, 2), (0.2, 1), (0.6, 1)]);
        assert_eq!(w[0].bins, vec![(fine_bins::of(5_000) as u32, 2)]);
        assert_eq!(w[0].hits, None);
    }

    #[test]
    fn windows_close_on_wall_time_and_keep_hits() {
        let mut r = WindowRecorder::new(true);
        let ms = 1_000_000;
        r.record(10 * ms, 5_000, Some(0));
        r.record(150 * ms, 5_000_000, Some(65536));
        r.record(250 * ms, 5_000, Some(0)); // the second window
        r.record(900 * ms, 7_000, Some(0)); // the fifth (empty ones are not kept)
        let w = r.windows();
        assert_eq!(w.len(), 3);
        assert_eq!((w[0].start_s, w[0].fetches, w[0].hits), (0.0, 2, Some(1)));
        assert_eq!(w[0].hit_ratio(), Some(0.5));
        assert_eq!(w[0].disk_bytes, Some(65536));
        assert_eq!((w[1].start_s, w[1].fetches), (0.2, 1));
        assert!((w[2].start_s - 0.8).abs() < 1e-9);
        let p50 = w[1].quantile_ns(0.5).unwrap();
        assert!((p50 / 5_000.0 - 1.0).abs() < 0.03, "{p50}");
        // The open window is still being filled: reading it changes nothing.
        r.record(950 * ms, 7_000, None);
        let w = r.windows();
        assert_eq!(w[2].fetches, 2);
        assert_eq!(
            w[2].hits, None,
            "an unknown reading makes the window's hits unknown"
        );
    }
}
