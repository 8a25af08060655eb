//! cgroup v2: create a capped leaf cgroup and move this process into it.
//!
//! Two kernel rules shape this. A controller can be handed to children only by a cgroup
//! whose parent offers it (`cgroup.controllers`): asking for one it cannot offer fails
//! with ENOENT, so controllers are enabled one at a time and what can be capped is.
//! And "no internal processes": a non-root cgroup that enables controllers for its
//! children may hold no processes itself (EBUSY). So the leaf goes where that holds:
//! - a **sibling** under the parent when the parent already offers the controllers
//!   (a delegated subtree: systemd's `Delegate=`, a job runner's per-process cgroup);
//! - a **child leaf** when this process is alone in its cgroup (or it is the real
//!   root): it moves into the leaf first, then enables the controllers on its old cgroup;
//! - a sibling after enabling the controllers on a parent that holds no processes.

use std::path::{Path, PathBuf};

use super::cgroupfs::{Roots, enter, listed, other_processes, write};
use super::{CFS_PERIOD_US, CapGuard, CapMethod, CapRequest};

#[derive(Debug, Clone, PartialEq)]
pub enum Placement {
    Sibling { parent: PathBuf },
    ChildLeaf { dir: PathBuf },
}

impl Placement {
    fn parent(&self) -> &Path {
        match self {
            Placement::Sibling { parent } => parent,
            Placement::ChildLeaf { dir } => dir,
        }
    }

    fn method(&self) -> CapMethod {
        match self {
            Placement::Sibling { .. } => CapMethod::V2Sibling,
            Placement::ChildLeaf { .. } => CapMethod::V2ChildLeaf,
        }
    }
}

/// The real root cgroup has no `cgroup.type` and is exempt from "no internal
/// processes"; a cgroup namespace's root (a container's mount) is not.
fn is_real_root(dir: &Path) -> bool {
    !dir.join("cgroup.type").exists()
}

/// Where the capped leaf can go, or why nowhere.
pub fn place(dir: &Path, mount: &Path, controller: &str, pid: u32) -> Result<Placement, String> {
    let parent = (dir != mount).then(|| dir.parent()).flatten();
    if let Some(parent) = parent
        && listed(parent, "cgroup.subtree_control")
            .iter()
            .any(|c| c == controller)
    {
        return Ok(Placement::Sibling {
            parent: parent.to_path_buf(),
        });
    }
    let others_here = other_processes(dir, pid);
    if others_here == 0 || is_real_root(dir) {
        return Ok(Placement::ChildLeaf {
            dir: dir.to_path_buf(),
        });
    }
    if let Some(parent) = parent
        && listed(parent, "cgroup.controllers")
            .iter()
            .any(|c| c == controller)
        && (other_processes(parent, 0) == 0 || is_real_root(parent))
    {
        return Ok(Placement::Sibling {
            parent: parent.to_path_buf(),
        });
    }
    let above = match parent {
        None => format!(
            "it is the root of this cgroup namespace ({}), so nothing above it is reachable",
            mount.display()
        ),
        Some(p) => format!(
            "its parent {} neither offers {controller} to its children nor may enable it",
            p.display()
        ),
    };
    Err(format!(
        "cgroup v2: {} holds {others_here} other process(es), so it cannot hand {controller} to a child (\"no internal processes\"), and {above}",
        dir.display()
    ))
}

/// Enable `controller` for the children of `parent` unless it already is.
fn enable(parent: &Path, controller: &str, guard: &mut CapGuard) -> Result<(), String> {
    if listed(parent, "cgroup.subtree_control")
        .iter()
        .any(|c| c == controller)
    {
        return Ok(());
    }
    if !listed(parent, "cgroup.controllers")
        .iter()
        .any(|c| c == controller)
    {
        return Err(format!(
            "the {controller} controller is not delegated to {}",
            parent.display()
        ));
    }
    write(
        &parent.join("cgroup.subtree_control"),
        &format!("+{controller}"),
    )?;
    guard
        .enabled
        .push((parent.to_path_buf(), controller.to_string()));
    Ok(())
}

/// Create the leaf, cap it and enter it. Memory must be capped when asked for; a CPU
/// limit that cannot be set is a note (memory capped, CPU uncapped is a valid outcome).
pub fn create(
    roots: &Roots,
    dir: &Path,
    mount: &Path,
    req: &CapRequest,
    guard: &mut CapGuard,
) -> Result<(CapMethod, Vec<String>), String> {
    let pid = std::process::id();
    let first = if req.memory_bytes.is_some() {
        "memory"
    } else {
        "cpu"
    };
    let placement = place(dir, mount, first, pid)?;
    let parent = placement.parent();
    let mut notes = Vec::new();
    let leaf = guard.new_leaf(roots, parent, dir)?;
    if let Placement::ChildLeaf { .. } = placement {
        // Out of the old cgroup first: it may enable controllers only once empty.
        enter(&leaf, pid)?;
    }
    if let Some(bytes) = req.memory_bytes {
        enable(parent, "memory", guard)?;
        write(&leaf.join("memory.max"), &bytes.to_string())?;
        // Swap must not stretch the cap; without swap accounting the file is absent.
        if leaf.join("memory.swap.max").exists() {
            write(&leaf.join("memory.swap.max"), "0")?;
        }
    }
    if let Some(cpus) = req.cpus {
        let quota = (cpus * CFS_PERIOD_US as f64) as u64;
        match enable(parent, "cpu", guard)
            .and_then(|()| write(&leaf.join("cpu.max"), &format!("{quota} {CFS_PERIOD_US}")))
        {
            Ok(()) => {}
            Err(why) => notes.push(format!("CPU left uncapped: {why}")),
        }
    }
    if let Placement::Sibling { .. } = placement {
        enter(&leaf, pid)?;
    }
    Ok((placement.method(), notes))
}
