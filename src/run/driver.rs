//! What drives a cell's fetches: `blobrace measure`'s fixed time (`drive::FixedTime`)
//! or criterion (benches/fetch.rs). The cell (`cell::CellRun`) hands its prepared
//! engine to the driver's scope; the loop (`drive`) opens a scope per size.

use anyhow::Result;
use tokio::runtime::Runtime;

use crate::dataset::DatasetSpec;

use super::Prepared;

/// What the driver did with one engine at one size.
pub enum Driven {
    /// Measured; with criterion, the number of its measurement calls (samples).
    Measured { criterion_samples: Option<u64> },
    /// Nothing to record (criterion's filter skipped it, or it only profiled).
    Skipped,
}

/// Drives the fetches of each engine. `size` opens a scope per size class.
pub trait Driver {
    type Size<'a>: SizeScope
    where
        Self: 'a;
    fn size(&mut self, spec: DatasetSpec) -> Self::Size<'_>;
}

pub trait SizeScope {
    /// Warm up and measure one engine, prepared in its scenario; `label` names it
    /// (`Scenario::label`).
    fn drive(&mut self, rt: &Runtime, label: &str, prepared: &mut Prepared) -> Result<Driven>;
    fn finish(self);
}
