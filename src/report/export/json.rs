//! The summary table as JSON: `summary.json` of the report.

use anyhow::Result;

use super::Exporter;
use crate::records::results::RunResults;
use crate::records::summary::rows;

pub struct Json;

impl Exporter for Json {
    fn file_name(&self) -> &'static str {
        "summary.json"
    }

    fn serialize(&self, run: &RunResults) -> Result<Option<Vec<u8>>> {
        Ok(Some(serde_json::to_vec_pretty(&rows(run))?))
    }
}
