use anyhow::Result;

use super::{Exporter, SummaryRow};

pub struct Json;

impl Exporter for Json {
    fn extension(&self) -> &'static str {
        "json"
    }

    fn serialize(&self, rows: &[SummaryRow]) -> Result<Vec<u8>> {
        Ok(serde_json::to_vec_pretty(rows)?)
    }
}
