//! One of the runs a merged run was made of (`blobrace merge`, `RunResults::merged_from`):
//! its machine, cap, share and times. A record of its own, below `results` and
//! `merge`, which both name it.

use serde::{Deserialize, Serialize};

use crate::cap::CapReport;
use crate::machine::MachineFacts;

/// One of the runs a merged run was made of.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MergedRun {
    pub run_id: String,
    pub machine: MachineFacts,
    /// The measuring process's cap (each result keeps its own, servers' included).
    pub cap: CapReport,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<crate::config::Share>,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub complete: bool,
    pub command: String,
    /// Its blobrace build and variables (None for a run made before they were recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<super::provenance::Provenance>,
    /// One-client results it contributed.
    pub results: usize,
}

impl MergedRun {
    /// `20261127-031500-42 on host-a (share 1/2, 03:15 to 03:40)`.
    pub fn label(&self) -> String {
        let share = self
            .share
            .map(|s| format!("share {s}, "))
            .unwrap_or_default();
        format!(
            "{} on {} ({share}{} to {})",
            self.run_id,
            self.machine.hostname,
            self.started_at,
            self.finished_at.as_deref().unwrap_or("unfinished")
        )
    }
}
