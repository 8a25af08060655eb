//! A run's tables as files beside results.json: one `Exporter` per file, listed in
//! `ALL`. The report writes them all; the run rewrites the ones it
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

/// Every exporter, in the order the report writes them: adding one is its file and
/// its line here.
pub const ALL: &[&dyn Exporter] = &[&Csv, &Json, &LoadsCsv, &Hlog, &BandsCsv, &MixText];
