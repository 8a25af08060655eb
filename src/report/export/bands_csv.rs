//! A size mix's results per size band as CSV: `bands.csv`, one row per result and band
//! (`stats::bands`). Latencies in nanoseconds, each band's p50 and p99 with their 95%
//! intervals (the block bootstrap over the band's own windows); unknown values, and an
//! interval a band had too few fetches for, written as `unavailable`. No file for a
//! run of size classes.

use std::fmt::Write as _;

use anyhow::Result;

use super::Exporter;
use crate::records::results::RunResults;
use crate::records::summary::unavailable_or;

pub struct BandsCsv;

impl Exporter for BandsCsv {
    fn file_name(&self) -> &'static str {
        "bands.csv"
    }

    fn serialize(&self, run: &RunResults) -> Result<Option<Vec<u8>>> {
        // One client's results, then the many-client loads'.
        let results: Vec<(u32, &crate::records::results::EngineResult)> = run
            .results
            .iter()
            .map(|r| (1, r))
            .chain(
                run.load_results
                    .iter()
                    .map(|l| (l.load.point.clients, &l.result)),
            )
            .collect();
        if results.iter().all(|(_, r)| r.measured.bands.is_empty()) {
            return Ok(None);
        }
        let mut out = String::from(
            "run_id,engine,cache,repeat,clients,size,band,band_low,band_high,fetches,mean_ns,p50_ns,p90_ns,p99_ns,p999_ns,max_ns,hit_ratio,miss_p50_ns,disk_bytes_per_fetch,p50_lo_ns,p50_hi_ns,p99_lo_ns,p99_hi_ns\n",
        );
        for (clients, r) in results {
            for b in &r.measured.bands {
                let bound = |q: f64, hi: bool| {
                    let iv = b.intervals.as_ref().and_then(|i| i.get(q));
                    unavailable_or(iv.map(|i| format!("{:.0}", if hi { i.hi_ns } else { i.lo_ns })))
                };
                writeln!(
                    out,
                    "{},{},{},{},{},{},{},{},{},{},{:.0},{},{},{},{},{},{},{},{},{},{},{},{}",
                    run.run_id,
                    r.engine.name(),
                    r.scenario.cache.name(),
                    r.scenario.repeat,
                    clients,
                    r.size,
                    b.band,
                    b.low,
                    b.high,
                    b.count,
                    b.latency.mean_ns,
                    b.latency.p50_ns,
                    b.latency.p90_ns,
                    b.latency.p99_ns,
                    b.latency.p999_ns,
                    b.latency.max_ns,
                    unavailable_or(b.hit_ratio.map(|h| format!("{h:.4}"))),
                    unavailable_or(
                        b.misses
                            .as_ref()
                            .filter(|m| m.count > 0)
                            .map(|m| m.p50_ns.to_string())
                    ),
                    unavailable_or(b.disk_bytes_per_fetch.map(|d| format!("{d:.0}"))),
                    bound(0.5, false),
                    bound(0.5, true),
                    bound(0.99, false),
                    bound(0.99, true),
                )?;
            }
        }
        Ok(Some(out.into_bytes()))
    }
}
