//! The summary table as CSV: `summary.csv` of the report; the run keeps the same
//! table current as `results.csv`. Latencies in nanoseconds; unknown values are written
//! as `unavailable`, never as an empty 0.

use std::fmt::Write as _;

use anyhow::Result;

use super::{Exporter, SummaryRow};
use crate::records::results::RunResults;
use crate::records::summary::{rows, unavailable_or};

pub struct Csv;

/// A steady-state figure: "n/a" for a cold result (it does not apply), else the
/// value or "unavailable".
fn steady(r: &SummaryRow, value: Option<String>) -> String {
    if r.cache == "cold" {
        "n/a".into()
    } else {
        unavailable_or(value)
    }
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    unavailable_or(v.map(|v| v.to_string()))
}

impl Exporter for Csv {
    fn file_name(&self) -> &'static str {
        "summary.csv"
    }

    fn serialize(&self, run: &RunResults) -> Result<Option<Vec<u8>>> {
        Ok(Some(table(&rows(run))?.into_bytes()))
    }
}

/// The CSV text of some rows.
fn table(rows: &[SummaryRow]) -> Result<String> {
    let mut out = String::from(
        "run_id,engine,cache,repeat,size,size_bytes,rows,fetches,mean_ns,p50_ns,p90_ns,p99_ns,p999_ns,max_ns,hit_ratio,hit_p50_ns,miss_p50_ns,miss_p99_ns,disk_bytes_per_fetch,orm_cost_ns,orm_cost_real,criterion_samples,memory_cap,cpu_cap,regime_ratio,regime,p50_lo_ns,p50_hi_ns,p90_lo_ns,p90_hi_ns,p99_lo_ns,p99_hi_ns,floor_p50_ratio,floor_p99_ratio,disk_probe_p50,steady_converged,model_hit_ratio\n",
    );
    for r in rows {
        writeln!(
            out,
            "{},{},{},{},{},{},{},{},{:.0},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.3},{},{},{},{},{},{},{},{},{},{},{},{}",
            r.run_id,
            r.engine,
            r.cache,
            r.repeat,
            r.size,
            r.size_bytes,
            r.rows,
            r.fetches,
            r.mean_ns,
            r.p50_ns,
            r.p90_ns,
            r.p99_ns,
            r.p999_ns,
            r.max_ns,
            opt(r.hit_ratio.map(|h| format!("{h:.4}"))),
            opt(r.hit_p50_ns),
            opt(r.miss_p50_ns),
            opt(r.miss_p99_ns),
            opt(r.disk_bytes_per_fetch.map(|d| format!("{d:.0}"))),
            opt(r.orm_cost_ns.map(|d| format!("{d:.0}"))),
            opt(r.orm_cost_real),
            opt(r.criterion_samples),
            r.memory_cap,
            r.cpu_cap,
            opt(Some(r.regime_ratio).filter(|x| x.is_finite())),
            r.regime,
            opt(r.p50_interval.map(|i| format!("{:.0}", i.lo_ns))),
            opt(r.p50_interval.map(|i| format!("{:.0}", i.hi_ns))),
            opt(r.p90_interval.map(|i| format!("{:.0}", i.lo_ns))),
            opt(r.p90_interval.map(|i| format!("{:.0}", i.hi_ns))),
            opt(r.p99_interval.map(|i| format!("{:.0}", i.lo_ns))),
            opt(r.p99_interval.map(|i| format!("{:.0}", i.hi_ns))),
            opt(r.floor_p50_ratio.map(|x| format!("{x:.3}"))),
            opt(r.floor_p99_ratio.map(|x| format!("{x:.3}"))),
            r.disk_probe,
            steady(r, r.steady_converged.map(|c| c.to_string())),
            steady(r, r.model_hit_ratio.map(|x| format!("{x:.4}"))),
        )?;
    }
    Ok(out)
}
