//! The summary table of a run (`crate::summary::SummaryRow`), exported: one
//! `Exporter` per format, one file each; `AnyExporter::ALL` lists them.

mod csv;
mod json;

use anyhow::Result;

pub use self::csv::Csv;
pub use self::json::Json;
pub use crate::summary::SummaryRow;

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
