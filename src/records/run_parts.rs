//! A run in parts. A run stopped before its end (Ctrl-C, SIGTERM, a kill, a reboot, a
//! server that failed under it) is continued by the next run with the same flags
//! (`run::resume`): the cells it measured are kept and only the missing ones are
//! measured. What each part did is recorded here, in the run's results.json: when it
//! ran, which cells it measured, and where its time went.

use serde::{Deserialize, Serialize};

use crate::db::registry::EngineKind;
use crate::size::SizeClass;
use crate::workload::steady::CacheState;

/// One process's share of a run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunPart {
    pub started_at: String,
    /// None while it runs, or where it was stopped before it could say (a kill, a
    /// reboot): its figures are then those of its last measured cell.
    pub finished_at: Option<String>,
    /// Its command line (URLs without their passwords).
    pub command: String,
    /// Where it ran: a part still running on this host blocks another from continuing.
    pub host: String,
    pub pid: u32,
    /// Cells this part measured.
    pub cells_measured: u32,
    /// Seconds loading datasets, measuring cells, and in all (setup, servers' cold
    /// restarts between cells, the report: the rest).
    pub load_seconds: f64,
    pub measure_seconds: f64,
    pub total_seconds: f64,
    /// Where the disk could not hold every dataset at once: the plan this part
    /// followed (what it kept, what it dropped after measuring, the peak).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disk_plan: Vec<String>,
    /// How it ended: "complete", "complete, with failures", "interrupted by SIGINT";
    /// None while it runs or where it was killed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
}

/// One cell of the plan: an engine at a size, in one cache state and repeat.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash)]
pub struct CellKey {
    pub engine: EngineKind,
    pub size: SizeClass,
    /// The cell's scenario (`results::Scenario`), as results name it.
    pub cache: CacheState,
    pub repeat: u32,
}

/// A cell every load of which was measured (or skipped for the cap, saying why), and
/// the part that did it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DoneCell {
    #[serde(flatten)]
    pub cell: CellKey,
    /// Index into `RunResults::parts` (0: the first part).
    pub part: u32,
    pub finished_at: String,
}

/// The part (index into `RunResults::parts`) that measured the cell of `engine` at
/// `size_bytes` in `cache` and `repeat`; None where no part is recorded for it (a run
/// from before parts, or a cell not done).
pub fn part_that_measured(
    done: &[DoneCell],
    engine: EngineKind,
    size_bytes: u64,
    (cache, repeat): (CacheState, u32),
) -> Option<u32> {
    done.iter()
        .find(|d| {
            d.cell.engine == engine
                && d.cell.size.bytes() == size_bytes
                && d.cell.cache == cache
                && d.cell.repeat == repeat
        })
        .map(|d| d.part)
}

/// Cells measured by each of `parts`, in part order.
pub fn cells_per_part(parts: &[RunPart], done: &[DoneCell]) -> Vec<u32> {
    let mut counts = vec![0; parts.len()];
    for d in done {
        if let Some(c) = counts.get_mut(d.part as usize) {
            *c += 1;
        }
    }
    counts
}
