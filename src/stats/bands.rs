//! A size mix's fetches per size band (`mix::band_of`, one doubling each): a mix's
//! p99 is set by its tail, and which store serves a size well differs by size, so the
//! whole mix's figures are given per band too. Recorded after the clock, from the
//! bytes each fetch returned; each band's histograms keep 2 significant digits (1%):
//! by HdrHistogram's layout (3,840 counters of 8 bytes each, 1 ns to 60 s) the three
//! histograms of each of the 20-odd bands of a wide mix take about 2 MB, where 3
//! digits would take about 14.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::{MAX_TRACKABLE_NS, Percentiles};
use crate::mix::{Band, band_of};

/// One band's fetches.
#[derive(Clone)]
struct BandFetches {
    all: Histogram<u64>,
    hits: Histogram<u64>,
    misses: Histogram<u64>,
    disk_bytes: Option<u64>,
    bytes_returned: u64,
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
        }
    }
}

/// Every band's fetches of one phase, indexed by the band's power of two.
#[derive(Clone)]
pub struct BandRecorder {
    disk_counter_available: bool,
    bands: Vec<Option<BandFetches>>,
}

impl BandRecorder {
    pub fn new(disk_counter_available: bool) -> Self {
        BandRecorder {
            disk_counter_available,
            bands: vec![None; 64],
        }
    }

    /// One fetch that returned `returned` bytes; `disk_bytes` as `FetchStats::record`.
    #[inline]
    pub fn record(&mut self, latency_ns: u64, disk_bytes: Option<u64>, returned: u64) {
        let index = band_of(returned).low.trailing_zeros() as usize;
        let available = self.disk_counter_available;
        let band = self.bands[index].get_or_insert_with(|| BandFetches::new(available));
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
                }
            }
        }
    }

    /// The bands that had fetches, smallest first.
    pub fn summaries(&self) -> Vec<BandSummary> {
        self.bands
            .iter()
            .enumerate()
            .filter_map(|(i, b)| Some((i, b.as_ref()?)))
            .map(|(i, b)| {
                let band = band_of(1u64 << i);
                let count = b.all.len();
                let split = b.disk_bytes.is_some();
                BandSummary {
                    band: band.label(),
                    low: band.low,
                    high: band.high,
                    count,
                    latency: Percentiles::of(&b.all),
                    hits: split.then(|| Percentiles::of(&b.hits)),
                    misses: split.then(|| Percentiles::of(&b.misses)),
                    hit_ratio: split
                        .then(|| b.hits.len() as f64 / count.max(1) as f64)
                        .filter(|_| count > 0),
                    disk_bytes_per_fetch: b
                        .disk_bytes
                        .filter(|_| count > 0)
                        .map(|d| d as f64 / count as f64),
                    bytes_returned: b.bytes_returned,
                }
            })
            .collect()
    }
}

/// One size band of a mix's measured fetches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BandSummary {
    /// `8KiB-16KiB`: from `low` (in) to `high` (out).
    pub band: String,
    pub low: u64,
    pub high: u64,
    pub count: u64,
    pub latency: Percentiles,
    /// As the whole mix's: None where the disk counter is unavailable.
    pub hits: Option<Percentiles>,
    pub misses: Option<Percentiles>,
    pub hit_ratio: Option<f64>,
    pub disk_bytes_per_fetch: Option<f64>,
    pub bytes_returned: u64,
}

impl BandSummary {
    pub fn band(&self) -> Band {
        Band {
            low: self.low,
            high: self.high,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fetches_land_in_the_band_of_the_bytes_they_returned() {
        let mut r = BandRecorder::new(true);
        for i in 0..100 {
            r.record(1_000 + i, Some(0), 3000); // 2-4 KiB, hits
        }
        for i in 0..100 {
            r.record(50_000 + i, Some(8192), 9000); // 8-16 KiB, misses
        }
        let mut other = BandRecorder::new(true);
        other.record(70_000, Some(4096), 16383);
        r.absorb(&other);
        let bands = r.summaries();
        assert_eq!(bands.len(), 2);
        assert_eq!(bands[0].band, "2KiB-4KiB");
        assert_eq!(bands[0].count, 100);
        assert_eq!(bands[0].hit_ratio, Some(1.0));
        assert_eq!(bands[0].disk_bytes_per_fetch, Some(0.0));
        assert!(
            (990..=1110).contains(&bands[0].latency.p50_ns),
            "{:?}",
            bands[0]
        );
        assert_eq!(bands[1].band, "8KiB-16KiB");
        assert_eq!(bands[1].count, 101);
        assert_eq!(bands[1].hit_ratio, Some(0.0));
        assert_eq!(bands[1].bytes_returned, 100 * 9000 + 16383);
        // Without a disk counter no band says hit or miss.
        let mut blind = BandRecorder::new(false);
        blind.record(5, None, 100);
        let b = &blind.summaries()[0];
        assert_eq!((b.hit_ratio, b.hits.is_none()), (None, true));
    }
}
