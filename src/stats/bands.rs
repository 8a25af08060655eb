//! A size mix's fetches per size band (`mix::BandGrid`: a doubling or a user's size): a mix's
//! p99 is set by its tail, and which store serves a size well differs by size, so the
//! whole mix's figures are given per band too. Recorded after the clock, from the
//! bytes each fetch returned; each band's histograms keep 2 significant digits (1%):
//! by HdrHistogram's layout (3,840 counters of 8 bytes each, 1 ns to 60 s) the three
//! histograms of each of the 20-odd bands of a wide mix take about 2 MB, where 3
//! digits would take about 14. A band is a `Summary` of its own: its windows (for its
//! 95% intervals, by the same block bootstrap as the whole mix's, and for `merge`),
//! its exact histograms (for `histograms.hlog` and `merge`).

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::{MAX_TRACKABLE_NS, Summary, WindowRecorder, interval};
use crate::dataset::mix::{Band, BandGrid};

/// One band's fetches.
#[derive(Clone)]
struct BandFetches {
    all: Histogram<u64>,
    hits: Histogram<u64>,
    misses: Histogram<u64>,
    disk_bytes: Option<u64>,
    bytes_returned: u64,
    windows: WindowRecorder,
}

impl BandFetches {
    fn new(disk_counter_available: bool) -> Self {
        let histogram =
            || Histogram::new_with_bounds(1, MAX_TRACKABLE_NS, 2).expect("valid histogram bounds");
        BandFetches {
            all: histogram(),
            hits: histogram(),
            misses: histogram(),
            disk_bytes: disk_counter_available.then_some(0),
            bytes_returned: 0,
            windows: WindowRecorder::new(disk_counter_available),
        }
    }
}

/// Every band's fetches of one phase, indexed by the band's slot in its grid.
#[derive(Clone)]
pub struct BandRecorder {
    disk_counter_available: bool,
    grid: BandGrid,
    bands: Vec<Option<BandFetches>>,
}

impl BandRecorder {
    pub fn new(disk_counter_available: bool, grid: BandGrid) -> Self {
        BandRecorder {
            disk_counter_available,
            bands: vec![None; grid.slots()],
            grid,
        }
    }

    pub fn grid(&self) -> &BandGrid {
        &self.grid
    }

    /// One fetch that returned `returned` bytes, ended `at_ns` after the engine's first
    /// fetch began; `disk_bytes` as `FetchStats::record`.
    #[inline]
    pub fn record(&mut self, at_ns: u64, latency_ns: u64, disk_bytes: Option<u64>, returned: u64) {
        let index = self.grid.slot_of(returned);
        let available = self.disk_counter_available;
        let band = self.bands[index].get_or_insert_with(|| BandFetches::new(available));
        band.windows.record(at_ns, latency_ns, disk_bytes);
        band.all.saturating_record(latency_ns);
        band.bytes_returned += returned;
        super::split_hit_or_miss(
            latency_ns,
            disk_bytes,
            &mut band.disk_bytes,
            &mut band.hits,
            &mut band.misses,
        );
    }

    /// Another client's fetches of the same phase.
    pub fn absorb(&mut self, other: &BandRecorder) {
        for (mine, theirs) in self.bands.iter_mut().zip(&other.bands) {
            let Some(theirs) = theirs else { continue };
            match mine {
                None => *mine = Some(theirs.clone()),
                Some(mine) => {
                    mine.all.add(&theirs.all).expect("same bounds");
                    mine.hits.add(&theirs.hits).expect("same bounds");
                    mine.misses.add(&theirs.misses).expect("same bounds");
                    mine.disk_bytes = mine.disk_bytes.zip(theirs.disk_bytes).map(|(a, b)| a + b);
                    mine.bytes_returned += theirs.bytes_returned;
                    mine.windows.absorb(&theirs.windows);
                }
            }
        }
    }

    /// The bands that had fetches, smallest first; with their percentiles' 95%
    /// intervals where `with_intervals` (a measured phase, as `FetchStats`'s).
    pub fn summaries(&self, with_intervals: bool) -> Vec<BandSummary> {
        self.bands
            .iter()
            .enumerate()
            .filter_map(|(i, b)| Some((i, b.as_ref()?)))
            .map(|(i, b)| {
                let split = b.disk_bytes.map(|_| (&b.hits, &b.misses));
                let summary = Summary::of_histograms(
                    &b.all,
                    split,
                    b.disk_bytes,
                    b.bytes_returned,
                    b.windows.windows(),
                );
                BandSummary::new(self.grid.band(i), summary, with_intervals)
            })
            .collect()
    }
}

/// One size band of a mix's measured fetches: the band and everything a phase's
/// summary says of its fetches (`Deref`s to it: `band.latency.p99_ns`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BandSummary {
    /// `8KiB-16KiB`: from `low` (in) to `high` (out).
    pub band: String,
    pub low: u64,
    pub high: u64,
    /// Results written before bands kept windows, intervals and histograms read with
    /// none of them (`Summary`'s defaults).
    #[serde(flatten)]
    pub summary: Summary,
}

impl BandSummary {
    /// The band's summary as kept: without the log-binned histogram the report draws
    /// for a whole phase (its windows and exact histograms hold the same fetches);
    /// intervals computed where asked (a measured phase), and only there its windows
    /// kept, which serve nothing but intervals (a warm-up's took two fifths of a
    /// full-scale mix's results.json).
    pub fn new(band: Band, mut summary: Summary, with_intervals: bool) -> Self {
        summary.intervals = with_intervals.then(|| interval::intervals(&summary.windows));
        if !with_intervals {
            summary.windows.clear();
        }
        Self::of_summary(band, summary)
    }

    /// A band of a summary already whole (its intervals computed, or merged from two
    /// runs' bands): kept without the log-binned histogram, as every band is.
    pub fn of_summary(band: Band, mut summary: Summary) -> Self {
        summary.histogram = None;
        BandSummary {
            band: band.label(),
            low: band.low,
            high: band.high,
            summary,
        }
    }

    pub fn band(&self) -> Band {
        Band {
            low: self.low,
            high: self.high,
        }
    }
}

impl std::ops::Deref for BandSummary {
    type Target = Summary;

    fn deref(&self) -> &Summary {
        &self.summary
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fetches_land_in_the_band_of_the_bytes_they_returned_with_their_own_intervals() {
        const MS: u64 = 1_000_000;
        let mut r = BandRecorder::new(true, BandGrid::Doublings);
        // 2-4 KiB: 1,000 hits over 10 s (50 windows), 1.0-1.1 µs.
        for i in 0..1000 {
            r.record(i * 10 * MS, 1_000 + i % 100, Some(0), 3000);
        }
        // 8-16 KiB: 100 misses over 1 s, 50-51 µs: too few for a p99 interval.
        for i in 0..100 {
            r.record(i * 10 * MS, 50_000 + i * 10, Some(8192), 9000);
        }
        let mut other = BandRecorder::new(true, BandGrid::Doublings);
        other.record(5 * MS, 70_000, Some(4096), 16383);
        r.absorb(&other);
        let bands = r.summaries(true);
        assert_eq!(bands.len(), 2);
        let (small, large) = (&bands[0], &bands[1]);
        assert_eq!(small.band, "2KiB-4KiB");
        assert_eq!(small.count, 1000);
        assert_eq!(small.hit_ratio, Some(1.0));
        assert_eq!(small.disk_bytes_per_fetch, Some(0.0));
        assert!((990..=1110).contains(&small.latency.p50_ns), "{small:?}");
        let iv = small
            .intervals
            .as_ref()
            .expect("a measured band's intervals");
        assert_eq!((iv.windows, iv.fetches), (50, 1000));
        let p99 = iv.p99.expect("1,000 fetches in 50 windows judge a p99");
        assert!(p99.lo_ns >= 900.0 && p99.hi_ns <= 1_200.0, "{p99:?}");
        assert!(small.hdr.is_some() && small.histogram.is_none());
        assert_eq!(large.band, "8KiB-16KiB");
        assert_eq!(large.count, 101);
        assert_eq!(large.hit_ratio, Some(0.0));
        assert_eq!(large.bytes_returned, 100 * 9000 + 16383);
        // The other client's fetch joined the first window.
        assert_eq!(large.windows[0].fetches, 21);
        let iv = large.intervals.as_ref().unwrap();
        assert!(iv.p50.is_some());
        assert!(iv.missing_why(0.99).unwrap().contains("too few fetches"));
        // A warm-up's bands have no intervals, nor the windows they come from.
        assert!(
            r.summaries(false)
                .iter()
                .all(|b| b.intervals.is_none() && b.windows.is_empty() && b.hdr.is_some())
        );
        // Without a disk counter no band says hit or miss.
        let mut blind = BandRecorder::new(false, BandGrid::Doublings);
        blind.record(0, 5, None, 100);
        let b = &blind.summaries(true)[0];
        assert_eq!((b.hit_ratio, b.hits.is_none()), (None, true));
    }

    /// Results written before bands kept windows and histograms still read.
    #[test]
    fn a_band_written_before_its_intervals_reads() {
        let old = r#"{"band":"1KiB-2KiB","low":1024,"high":2048,"count":3,
            "latency":{"count":3,"mean_ns":5.0,"min_ns":5,"p50_ns":5,"p90_ns":5,"p99_ns":5,"p999_ns":5,"max_ns":5},
            "hits":null,"misses":null,"hit_ratio":null,"disk_bytes_per_fetch":null,
            "bytes_returned":3072}"#;
        let b: BandSummary = serde_json::from_str(old).unwrap();
        assert_eq!((b.count, b.low, b.latency.p99_ns), (3, 1024, 5));
        assert!(b.intervals.is_none() && b.hdr.is_none() && b.windows.is_empty());
        let again: BandSummary = serde_json::from_str(&serde_json::to_string(&b).unwrap()).unwrap();
        assert_eq!(again, b);
    }
}
