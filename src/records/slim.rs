//! A run's results as the front page keeps them (`blobrace tables --add-run`): every
//! figure the tables read (percentiles, their intervals, hit ratios, the verdict's
//! inputs), without what only the run's own report draws (log-bin histograms, exact
//! HdrHistogram encodings, 200 ms windows): those are most of a results.json's bytes
//! (a full run's several MB) and would make the repository carry them for every run a
//! page cites.

use crate::records::results::RunResults;
use crate::stats::Summary;

fn slim_summary(summary: &mut Summary) {
    summary.histogram = None;
    summary.hdr = None;
    summary.windows.clear();
    for band in &mut summary.bands {
        slim_summary(&mut band.summary);
    }
}

impl RunResults {
    /// Drop the histograms and windows; every percentile, interval and fact stays.
    pub fn slim(&mut self) {
        let results = self
            .results
            .iter_mut()
            .chain(self.load_results.iter_mut().map(|l| &mut l.result));
        for r in results {
            slim_summary(&mut r.warm_up);
            slim_summary(&mut r.measured);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::stats::window::Window;
    use crate::stats::{LogHistogram, Summary};

    #[test]
    fn slimming_keeps_the_figures_and_drops_the_distributions() {
        let mut s = Summary {
            count: 10,
            histogram: Some(LogHistogram {
                first_bin_ns: LogHistogram::FIRST_BIN_NS,
                bins_per_decade: LogHistogram::BINS_PER_DECADE,
                all: vec![10],
                hits: None,
                misses: None,
            }),
            windows: vec![Window {
                start_s: 0.0,
                fetches: 10,
                hits: None,
                disk_bytes: None,
                bins: vec![(3, 10)],
            }],
            ..Default::default()
        };
        s.latency.p99_ns = 7;
        super::slim_summary(&mut s);
        assert_eq!((s.count, s.latency.p99_ns), (10, 7));
        assert!(s.histogram.is_none() && s.windows.is_empty());
    }
}
