//! What a step is doing, said while it works: progress, not findings (nothing here is
//! recorded in the results). A step hands a `Progress` to the run
//! (`Run::progress`), which passes it to every sink; the terminal writes it as a line
//! (`terminal::progress_line`), the files and the report ignore it.

use std::path::Path;
use std::time::Duration;

use crate::db::registry::EngineKind;
use crate::load_gen::SaturationStep;
use crate::workload::steady::{Prefill, SteadyReport};

pub enum Progress<'a> {
    /// This process continues a run an earlier one stopped (`resume`).
    Continuing(&'a crate::records::results::RunResults),
    /// What the run will do and about how long it takes, once its engines are known.
    Outlook(&'a super::outlook::Outlook),
    /// The disk cannot hold every dataset at once: what the run keeps and drops.
    DiskPlan(&'a [String]),
    /// A cell starts: which of how many, and the time left.
    Cell(&'a super::outlook::CellProgress<'a>),
    /// The data directory is on tmpfs: RAM the cap does not see as page cache.
    DataOnTmpfs,
    /// One file per blob at this size presses the cap with inodes and dentries.
    MetadataPressure {
        engine: EngineKind,
        size: String,
        why: &'a str,
    },
    /// A server was restarted and its files dropped from the page cache: seconds of
    /// waiting a user should see, and the point where its measurement begins.
    StartedCold {
        engine: EngineKind,
        size: String,
        seconds: f64,
        /// What was done (`EvictionReport::method`).
        how: &'a str,
    },
    /// The steady state's prefill is done.
    Prefilled {
        engine: EngineKind,
        size: String,
        prefill: &'a Prefill,
    },
    /// The engine's disk reads cannot be counted.
    NoDiskCounter { engine: EngineKind, why: &'a str },
    /// The steady state's warm-up fetches are done.
    Settled {
        engine: EngineKind,
        size: String,
        report: &'a SteadyReport,
    },
    /// A cell whose dataset did not load is left out.
    NotLoaded { cell: &'a str, size: String },
    /// A many-client load starts.
    UnderLoad {
        cell: &'a str,
        size: String,
        engine: EngineKind,
    },
    /// The closed loop a saturation search starts from.
    ClosedLoop {
        engine: EngineKind,
        size: String,
        clients: u32,
        fetches_per_s: f64,
    },
    /// A saturation search starts below the closed loop's rate.
    Searching {
        engine: EngineKind,
        size: String,
        clients: u32,
        capacity: f64,
        steps: u32,
        target: Duration,
    },
    /// One step of the search.
    SearchStep(&'a SaturationStep),
    /// A dataset dropped after its measurements: `--drop-after`, or the disk plan.
    Dropped {
        location: &'a Path,
        why: &'static str,
    },
    /// The writer beside a measurement stopped (`--write-rate`).
    Wrote {
        engine: EngineKind,
        size: String,
        report: &'a crate::workload::live::WriterReport,
    },
}
