//! A run's tables as files beside results.json: one `Exporter` per file, listed in
//! `AnyExporter::ALL`. The report writes them all; the run rewrites the ones it
//! keeps current as it goes (`run::sinks::ResultFiles`).

mod bands_csv;
mod csv;
mod hlog;
mod json;
mod loads_csv;
mod mix_text;

use anyhow::Result;

pub use self::bands_csv::BandsCsv;
pub use self::csv::Csv;
pub use self::hlog::Hlog;
pub use self::json::Json;
pub use self::loads_csv::LoadsCsv;
pub use self::mix_text::MixText;
use crate::records::results::RunResults;
pub use crate::records::summary::SummaryRow;

pub trait Exporter {
    /// The file it writes in the run directory, e.g. `summary.csv`.
    fn file_name(&self) -> &'static str;
    /// The file's bytes; None where the run has nothing for it (no file is written).
    fn serialize(&self, run: &RunResults) -> Result<Option<Vec<u8>>>;
}

pub enum AnyExporter {
    Csv(Csv),
    Json(Json),
    LoadsCsv(LoadsCsv),
    Hlog(Hlog),
    BandsCsv(BandsCsv),
    MixText(MixText),
}

impl AnyExporter {
    pub const ALL: [AnyExporter; 6] = [
        AnyExporter::Csv(Csv),
        AnyExporter::Json(Json),
        AnyExporter::LoadsCsv(LoadsCsv),
        AnyExporter::Hlog(Hlog),
        AnyExporter::BandsCsv(BandsCsv),
        AnyExporter::MixText(MixText),
    ];

    pub fn file_name(&self) -> &'static str {
        match self {
            AnyExporter::Csv(e) => e.file_name(),
            AnyExporter::Json(e) => e.file_name(),
            AnyExporter::LoadsCsv(e) => e.file_name(),
            AnyExporter::Hlog(e) => e.file_name(),
            AnyExporter::BandsCsv(e) => e.file_name(),
            AnyExporter::MixText(e) => e.file_name(),
        }
    }

    pub fn serialize(&self, run: &RunResults) -> Result<Option<Vec<u8>>> {
        match self {
            AnyExporter::Csv(e) => e.serialize(run),
            AnyExporter::Json(e) => e.serialize(run),
            AnyExporter::LoadsCsv(e) => e.serialize(run),
            AnyExporter::Hlog(e) => e.serialize(run),
            AnyExporter::BandsCsv(e) => e.serialize(run),
            AnyExporter::MixText(e) => e.serialize(run),
        }
    }
}
