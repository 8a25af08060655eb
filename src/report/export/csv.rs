use std::fmt::Write as _;

use anyhow::Result;

use super::{Exporter, SummaryRow};

pub struct Csv;

/// Unknown values are written as `unavailable`, never as an empty 0.
fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map(|v| v.to_string())
        .unwrap_or_else(|| "unavailable".into())
}

impl Exporter for Csv {
    fn extension(&self) -> &'static str {
        "csv"
    }

    fn serialize(&self, rows: &[SummaryRow]) -> Result<Vec<u8>> {
        let mut out = String::from(
            "engine,size,size_bytes,fetches,mean_ns,p50_ns,p90_ns,p99_ns,p999_ns,max_ns,hit_ratio,disk_bytes_per_fetch,orm_cost_ns,criterion_samples,memory_cap,regime\n",
        );
        for r in rows {
            writeln!(
                out,
                "{},{},{},{},{:.0},{},{},{},{},{},{},{},{},{},{},{}",
                r.engine,
                r.size,
                r.size_bytes,
                r.fetches,
                r.mean_ns,
                r.p50_ns,
                r.p90_ns,
                r.p99_ns,
                r.p999_ns,
                r.max_ns,
                opt(r.hit_ratio.map(|h| format!("{h:.4}"))),
                opt(r.disk_bytes_per_fetch.map(|d| format!("{d:.0}"))),
                opt(r.orm_cost_ns.map(|d| format!("{d:.0}"))),
                opt(r.criterion_samples),
                r.memory_cap,
                r.regime,
            )?;
        }
        Ok(out.into_bytes())
    }
}
