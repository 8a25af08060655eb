//! cgroup v1: one hierarchy per controller. A child cgroup is made in the memory
//! hierarchy (and in the cpu one) under the cgroup this process is in; v1 has no
//! "no internal processes" rule, so the child can sit right under it. Needs write
//! access to the hierarchy: root, or a delegated subtree.

use std::path::Path;

use super::cgroupfs::{Roots, enter, write};
use super::{CFS_PERIOD_US, CapGuard, CapMethod, CapRequest};

/// Memory is capped or this fails; a CPU limit that cannot be set is a note.
pub fn create(
    roots: &Roots,
    memory: &Path,
    cpu: Option<&Path>,
    req: &CapRequest,
    guard: &mut CapGuard,
) -> Result<(CapMethod, Vec<String>), String> {
    let pid = std::process::id();
    let mut notes = Vec::new();
    if let Some(bytes) = req.memory_bytes {
        let leaf = guard.new_leaf(roots, memory, memory)?;
        write(&leaf.join("memory.limit_in_bytes"), &bytes.to_string())?;
        // With swap accounting on, memory+swap gets the same limit: swap must not stretch the cap.
        let memsw = leaf.join("memory.memsw.limit_in_bytes");
        if memsw.exists() {
            write(&memsw, &bytes.to_string())?;
        }
        enter(&leaf, pid)?;
    }
    if let Some(cpus) = req.cpus {
        let capped = cpu
            .ok_or_else(|| "no cpu hierarchy is mounted".to_string())
            .and_then(|cpu| {
                let leaf = guard.new_leaf(roots, cpu, cpu)?;
                write(&leaf.join("cpu.cfs_period_us"), &CFS_PERIOD_US.to_string())?;
                let quota = (cpus * CFS_PERIOD_US as f64) as u64;
                write(&leaf.join("cpu.cfs_quota_us"), &quota.to_string())?;
                enter(&leaf, pid)
            });
        if let Err(why) = capped {
            notes.push(format!("CPU left uncapped: {why}"));
        }
    }
    Ok((CapMethod::V1Child, notes))
}
