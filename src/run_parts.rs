//! A run in parts. A run stopped before its end (Ctrl-C, SIGTERM, a kill, a reboot, a
//! server that failed under it) is continued by the next run with the same flags
//! (`run::resume`): the cells it measured are kept and only the missing ones are
//! measured. What each part did is recorded here, in the run's results.json: when it
//! ran, which cells it measured, and where its time went.

use serde::{Deserialize, Serialize};

use crate::db::registry::EngineKind;
use crate::results::{RunResults, Scenario};
use crate::size::SizeClass;

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
    #[serde(flatten)]
    pub scenario: Scenario,
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

/// Mark the running part of the run in `results_json` stopped by `how` ("interrupted
/// by SIGINT"), with its end time; then no other write follows in this process (the
/// write lock is kept: the caller exits).
pub fn mark_stopped(results_json: &std::path::Path, how: &str) {
    let writing = crate::results::WRITING.lock();
    let Ok(mut run) = RunResults::read(results_json) else {
        return; // Nothing saved yet: nothing to mark.
    };
    if let Some(part) = run.parts.last_mut() {
        part.finished_at = Some(crate::now_rfc3339());
        part.ended = Some(how.to_string());
    }
    if let Ok(bytes) = serde_json::to_vec_pretty(&run) {
        let _ = crate::results::write_atomic(results_json, &bytes);
    }
    std::mem::forget(writing);
}

impl RunResults {
    /// Whether `cell` was measured to its end in this run (in any part).
    pub fn is_done(&self, cell: &CellKey) -> bool {
        self.done_cells.iter().any(|d| d.cell == *cell)
    }

    /// Forget what a stopped part recorded of cells it did not finish (a cell's 1-client
    /// result whose 16-client load was cut off, a cell whose server failed) and every
    /// failure, so the next part measures those cells once, whole. Loads, disk limits
    /// and done cells stay.
    pub fn keep_done_cells_only(&mut self) {
        let done = |engine: EngineKind, size_bytes: u64, scenario: Scenario| {
            self.done_cells.iter().any(|d| {
                d.cell.engine == engine
                    && d.cell.size.bytes() == size_bytes
                    && d.cell.scenario == scenario
            })
        };
        let done_in = |engine: &str, size: &str, cache: &str| {
            self.done_cells.iter().any(|d| {
                d.cell.engine.name() == engine
                    && d.cell.size.to_string() == size
                    && d.cell.scenario.cache.name() == cache
            })
        };
        let results = self
            .results
            .iter()
            .filter(|r| done(r.engine, r.size_bytes, r.scenario))
            .cloned()
            .collect();
        let load_results = self
            .load_results
            .iter()
            .filter(|l| done(l.result.engine, l.result.size_bytes, l.result.scenario))
            .cloned()
            .collect();
        let saturations = self
            .saturations
            .iter()
            .filter(|s| done(s.engine, s.size_bytes, s.scenario))
            .cloned()
            .collect();
        // A skipped load names no scenario: kept where any of its engine's cells at
        // that size is done (it is skipped again, the same way, where not).
        let skipped_loads = self
            .skipped_loads
            .iter()
            .filter(|s| {
                self.done_cells
                    .iter()
                    .any(|d| d.cell.engine == s.engine && d.cell.size.bytes() == s.size_bytes)
            })
            .cloned()
            .collect();
        let profiles = self
            .profiles
            .iter()
            .filter(|p| done_in(&p.engine, &p.size, &p.cache))
            .cloned()
            .collect();
        let first_bytes = self
            .first_bytes
            .iter()
            .filter(|f| done_in(f.engine.name(), &f.size, &f.cache))
            .cloned()
            .collect();
        self.results = results;
        self.load_results = load_results;
        self.saturations = saturations;
        self.skipped_loads = skipped_loads;
        self.profiles = profiles;
        self.first_bytes = first_bytes;
        self.failures.clear();
    }

    /// Cells measured by each part, in part order.
    pub fn cells_per_part(&self) -> Vec<u32> {
        let mut counts = vec![0; self.parts.len()];
        for d in &self.done_cells {
            if let Some(c) = counts.get_mut(d.part as usize) {
                *c += 1;
            }
        }
        counts
    }
}
