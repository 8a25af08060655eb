//! The memory one step of a run (one engine at one size and cache state) took at its
//! highest: the measuring process's resident memory, its cgroup's usage (page cache
//! included, which the kernel charges to the reader), and the kernel memory charged
//! to the cgroup (dentries and inodes: the fs store's 786k files of 1 KiB cost 158 MB
//! there on cgroup v1). Peaks are reset when a step starts, so each result says what
//! that step took, not what the run held by then.

use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{CapOrigin, CapReport};

/// A step's cgroup memory peaks; None where the kernel does not tell. (The process's
/// own peak is `EngineResult::process_peak_rss_bytes`, reset here too.)
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepMemory {
    /// The cgroup's peak usage: anonymous memory, page cache and kernel memory.
    pub cgroup_peak_bytes: Option<u64>,
    /// The cgroup's peak kernel memory (v1 `memory.kmem.max_usage_in_bytes`).
    pub kernel_peak_bytes: Option<u64>,
    /// Since when the cgroup's peaks count: "this step", or why not.
    pub cgroup_peaks_since: String,
}

fn read_u64(path: &Path) -> Option<u64> {
    fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Start a step: reset the process's VmHWM (`clear_refs` 5) and, in a cgroup this
/// process created, the cgroup's peaks. Returns since when the cgroup's peaks count.
pub fn start_step(report: &CapReport) -> String {
    // Resets VmHWM to the current RSS; refused only where /proc is read-only.
    let _ = fs::write("/proc/self/clear_refs", "5");
    let dir = Path::new(&report.cgroup);
    match report.cgroup_version.as_str() {
        "v1" if report.origin == CapOrigin::Created => {
            let usage = fs::write(dir.join("memory.max_usage_in_bytes"), "0");
            let _ = fs::write(dir.join("memory.kmem.max_usage_in_bytes"), "0");
            match usage {
                Ok(()) => "this step".into(),
                Err(e) => format!("the cgroup's start (its peak could not be reset: {e})"),
            }
        }
        "v1" => "the cgroup's start (a cgroup this process did not create is not reset)".into(),
        // v2's memory.peak resets only for the descriptor that wrote it (Linux 6.12+),
        // and other readers would not see that: read as the cgroup's lifetime peak.
        "v2" => "the cgroup's start (cgroup v2 keeps one peak per cgroup)".into(),
        _ => "unavailable (no memory cgroup)".into(),
    }
}

/// The step's peaks, read when it ends.
pub fn read_step(report: &CapReport, since: String) -> StepMemory {
    let dir = Path::new(&report.cgroup);
    let (cgroup_peak_bytes, kernel_peak_bytes) = match report.cgroup_version.as_str() {
        "v1" => (
            read_u64(&dir.join("memory.max_usage_in_bytes")),
            read_u64(&dir.join("memory.kmem.max_usage_in_bytes")),
        ),
        "v2" => (read_u64(&dir.join("memory.peak")), None),
        _ => (None, None),
    };
    StepMemory {
        cgroup_peak_bytes,
        kernel_peak_bytes,
        cgroup_peaks_since: since,
    }
}
