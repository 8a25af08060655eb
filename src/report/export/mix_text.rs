//! A size mix as text: `size-mix.txt`, its canonical form (a sampled or file-read mix
//! as its buckets), so the run can be repeated without its source: `--size-mix
//! file:size-mix.txt`. No file for a run of size classes.

use anyhow::Result;

use super::Exporter;
use crate::records::results::RunResults;

pub struct MixText;

impl Exporter for MixText {
    fn file_name(&self) -> &'static str {
        "size-mix.txt"
    }

    fn serialize(&self, run: &RunResults) -> Result<Option<Vec<u8>>> {
        Ok(run
            .config
            .size_mix
            .map(|mix| format!("{}\n", mix.get().canonical()).into_bytes()))
    }
}
