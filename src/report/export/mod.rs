//! The summary table of a run, exported: one `Exporter` per format, one file each.

mod csv;
mod json;

use anyhow::Result;
use serde::Serialize;

use crate::results::RunResults;

pub use self::csv::Csv;
pub use self::json::Json;

/// One (engine, size) of the summary table. Unknown values are None ("unavailable").
#[derive(Debug, Clone, Serialize)]
pub struct SummaryRow {
    pub engine: String,
    pub size: String,
    pub size_bytes: u64,
    pub fetches: u64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
    pub hit_ratio: Option<f64>,
    pub disk_bytes_per_fetch: Option<f64>,
    /// SeaORM's p50 minus the raw driver's on the same table, for ORM engines.
    pub orm_cost_ns: Option<f64>,
    pub criterion_samples: Option<u64>,
    /// The cap the engine ran under: a size, "uncapped", or "unavailable" (not observable).
    pub memory_cap: String,
    pub regime: String,
}

pub fn summary_rows(run: &RunResults) -> Vec<SummaryRow> {
    let mut rows: Vec<SummaryRow> = run
        .results
        .iter()
        .map(|r| {
            let m = &r.measured;
            SummaryRow {
                engine: r.engine.name().into(),
                size: r.size.clone(),
                size_bytes: r.size_bytes,
                fetches: m.count,
                mean_ns: m.latency.mean_ns,
                p50_ns: m.latency.p50_ns,
                p90_ns: m.latency.p90_ns,
                p99_ns: m.latency.p99_ns,
                p999_ns: m.latency.p999_ns,
                max_ns: m.latency.max_ns,
                hit_ratio: m.hit_ratio,
                disk_bytes_per_fetch: m.disk_bytes_per_fetch,
                orm_cost_ns: super::data::orm_cost_ns(run, r.engine, r.size_bytes),
                criterion_samples: r.criterion_samples,
                memory_cap: match &r.cap {
                    Some(cap) => cap.memory_label(),
                    None => "unavailable".into(),
                },
                regime: r.regime.verdict.clone(),
            }
        })
        .collect();
    rows.sort_by_key(|r| (r.size_bytes, r.engine.clone()));
    rows
}

pub trait Exporter {
    fn extension(&self) -> &'static str;
    fn serialize(&self, rows: &[SummaryRow]) -> Result<Vec<u8>>;
}

pub enum AnyExporter {
    Csv(Csv),
    Json(Json),
}

impl AnyExporter {
    pub const ALL: [AnyExporter; 2] = [AnyExporter::Csv(Csv), AnyExporter::Json(Json)];

    pub fn extension(&self) -> &'static str {
        match self {
            AnyExporter::Csv(e) => e.extension(),
            AnyExporter::Json(e) => e.extension(),
        }
    }

    pub fn serialize(&self, rows: &[SummaryRow]) -> Result<Vec<u8>> {
        match self {
            AnyExporter::Csv(e) => e.serialize(rows),
            AnyExporter::Json(e) => e.serialize(rows),
        }
    }
}
