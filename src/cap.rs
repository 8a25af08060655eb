//! The memory and CPU cap of the measuring process.
//!
//! An embedded database's cap is the cap of the process that embeds it, so the
//! process measuring SQLite (and the file baselines) must run inside a capped
//! cgroup. It first looks at the cgroup it is in (a capped container); if that
//! is not capped as asked and it may (root, or a delegated subtree), it creates
//! a child cgroup with the requested limits and moves itself in before touching
//! any data. Limits are always read back from the cgroup files, never assumed.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::size::format_bytes;

/// Above this a cgroup v1 `memory.limit_in_bytes` means "no limit" (it reads 2^63 - page).
const V1_UNLIMITED: u64 = 1 << 62;
const CFS_PERIOD_US: u64 = 100_000;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CapRequest {
    /// None: do not cap, only observe.
    pub memory_bytes: Option<u64>,
    pub cpus: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CapOrigin {
    /// This process created a cgroup with the requested limits and entered it.
    Created,
    /// The cgroup the process started in (a container, a systemd scope) caps it.
    Inherited,
    /// No memory limit applies to this process.
    Uncapped,
}

/// What cap the measuring process actually runs under, read from the kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapReport {
    pub requested: CapRequest,
    /// Effective memory limit (the smallest along the cgroup's ancestry); None = uncapped.
    pub memory_limit_bytes: Option<u64>,
    /// Effective CPU limit in CPUs (CFS quota / period); None = uncapped.
    pub cpu_limit: Option<f64>,
    pub origin: CapOrigin,
    /// "v1", "v2" or "none".
    pub cgroup_version: String,
    /// The memory cgroup the process runs in.
    pub cgroup: String,
    /// Everything a reader should know: caps not as requested, why none could be set.
    pub notes: Vec<String>,
}

impl CapReport {
    pub fn memory_label(&self) -> String {
        self.memory_limit_bytes
            .map(format_bytes)
            .unwrap_or_else(|| "uncapped".into())
    }

    pub fn cpu_label(&self) -> String {
        self.cpu_limit
            .map(|c| format!("{c} CPUs"))
            .unwrap_or_else(|| "uncapped".into())
    }

    /// True when the memory cap in force is exactly the one asked for.
    pub fn memory_as_requested(&self) -> bool {
        self.requested.memory_bytes.is_some()
            && self.memory_limit_bytes == self.requested.memory_bytes
    }
}

/// Removes the cgroup this process created when dropped (moving the process back first).
#[derive(Debug, Default)]
pub struct CapGuard {
    created: Vec<PathBuf>,
}

impl Drop for CapGuard {
    fn drop(&mut self) {
        let pid = std::process::id().to_string();
        for dir in &self.created {
            if let Some(parent) = dir.parent() {
                let _ = fs::write(parent.join("cgroup.procs"), &pid);
            }
            let _ = fs::remove_dir(dir);
        }
    }
}

enum Hierarchy {
    V1 {
        memory: PathBuf,
        cpu: Option<PathBuf>,
    },
    V2 {
        dir: PathBuf,
    },
}

fn read_trimmed(path: &Path) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// Where this process sits: the cgroup directory per controller.
fn locate() -> Option<Hierarchy> {
    let own = fs::read_to_string("/proc/self/cgroup").ok()?;
    let root = Path::new("/sys/fs/cgroup");
    // Inside a container without a cgroup namespace the listed path does not exist
    // under the mount (the mount is the container's own cgroup): use the mount root.
    let resolve = |mount: PathBuf, rel: &str| {
        let joined = mount.join(rel.trim_start_matches('/'));
        if joined.is_dir() { joined } else { mount }
    };
    if root.join("cgroup.controllers").exists() {
        let rel = own.lines().find_map(|l| l.strip_prefix("0::"))?;
        return Some(Hierarchy::V2 {
            dir: resolve(root.to_path_buf(), rel),
        });
    }
    let mut memory = None;
    let mut cpu = None;
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, rel) = (parts.next()?, parts.next()?, parts.next()?);
        let names: Vec<&str> = controllers.split(',').collect();
        if names.contains(&"memory") {
            memory = Some(resolve(root.join("memory"), rel));
        }
        if names.contains(&"cpu") {
            let mount = if root.join("cpu").is_dir() {
                root.join("cpu")
            } else {
                root.join(controllers)
            };
            cpu = Some(resolve(mount, rel));
        }
    }
    Some(Hierarchy::V1 {
        memory: memory?,
        cpu,
    })
}

/// The smallest limit along `dir` and its ancestors up to the mount root.
fn min_along<F: Fn(&Path) -> Option<u64>>(dir: &Path, stop_at: &Path, read: F) -> Option<u64> {
    let mut best: Option<u64> = None;
    let mut cur = Some(dir);
    while let Some(d) = cur {
        if let Some(v) = read(d) {
            best = Some(best.map_or(v, |b: u64| b.min(v)));
        }
        if d == stop_at {
            break;
        }
        cur = d.parent();
    }
    best
}

fn v1_memory_limit(dir: &Path) -> Option<u64> {
    min_along(dir, Path::new("/sys/fs/cgroup/memory"), |d| {
        read_trimmed(&d.join("memory.limit_in_bytes"))?
            .parse::<u64>()
            .ok()
            .filter(|&v| v < V1_UNLIMITED)
    })
}

/// CPU limit in millicpus (integers compare cleanly along the ancestry).
fn v1_cpu_millis(dir: &Path) -> Option<u64> {
    min_along(dir, Path::new("/sys/fs/cgroup"), |d| {
        let quota: i64 = read_trimmed(&d.join("cpu.cfs_quota_us"))?.parse().ok()?;
        let period: i64 = read_trimmed(&d.join("cpu.cfs_period_us"))?.parse().ok()?;
        (quota > 0 && period > 0).then(|| (quota as u64 * 1000) / period as u64)
    })
}

fn v2_memory_limit(dir: &Path) -> Option<u64> {
    min_along(dir, Path::new("/sys/fs/cgroup"), |d| {
        read_trimmed(&d.join("memory.max"))?.parse::<u64>().ok()
    })
}

fn v2_cpu_millis(dir: &Path) -> Option<u64> {
    min_along(dir, Path::new("/sys/fs/cgroup"), |d| {
        let text = read_trimmed(&d.join("cpu.max"))?;
        let mut parts = text.split_whitespace();
        let quota: u64 = parts.next()?.parse().ok()?;
        let period: u64 = parts.next()?.parse().ok()?;
        (period > 0).then(|| quota * 1000 / period)
    })
}

fn observe(h: &Hierarchy) -> (Option<u64>, Option<f64>, String, String) {
    match h {
        Hierarchy::V1 { memory, cpu } => (
            v1_memory_limit(memory),
            cpu.as_deref()
                .and_then(v1_cpu_millis)
                .map(|m| m as f64 / 1000.0),
            "v1".into(),
            memory.display().to_string(),
        ),
        Hierarchy::V2 { dir } => (
            v2_memory_limit(dir),
            v2_cpu_millis(dir).map(|m| m as f64 / 1000.0),
            "v2".into(),
            dir.display().to_string(),
        ),
    }
}

/// Remove cgroups left by earlier blobrace processes that no longer run.
fn remove_stale_children(parent: &Path) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("blobrace-")) else {
            continue;
        };
        if !Path::new("/proc").join(pid).exists() {
            let _ = fs::remove_dir(entry.path());
        }
    }
}

fn write(path: &Path, value: &str) -> Result<(), String> {
    fs::write(path, value).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn create_child(parent: &Path, guard: &mut CapGuard) -> Result<PathBuf, String> {
    remove_stale_children(parent);
    let child = parent.join(format!("blobrace-{}", std::process::id()));
    if !child.is_dir() {
        fs::create_dir(&child)
            .map_err(|e| format!("cannot create cgroup {}: {e}", child.display()))?;
    }
    guard.created.push(child.clone());
    Ok(child)
}

fn enter(child: &Path) -> Result<(), String> {
    write(&child.join("cgroup.procs"), &std::process::id().to_string())
}

fn create_v1(
    memory: &Path,
    cpu: Option<&Path>,
    req: &CapRequest,
    guard: &mut CapGuard,
) -> Result<(), String> {
    if let Some(bytes) = req.memory_bytes {
        let child = create_child(memory, guard)?;
        write(&child.join("memory.limit_in_bytes"), &bytes.to_string())?;
        // With swap accounting on, memory+swap gets the same limit: swap must not stretch the cap.
        let memsw = child.join("memory.memsw.limit_in_bytes");
        if memsw.exists() {
            write(&memsw, &bytes.to_string())?;
        }
        enter(&child)?;
    }
    if let (Some(cpus), Some(cpu)) = (req.cpus, cpu) {
        let child = create_child(cpu, guard)?;
        write(&child.join("cpu.cfs_period_us"), &CFS_PERIOD_US.to_string())?;
        write(
            &child.join("cpu.cfs_quota_us"),
            &((cpus * CFS_PERIOD_US as f64) as u64).to_string(),
        )?;
        enter(&child)?;
    }
    Ok(())
}

fn create_v2(dir: &Path, req: &CapRequest, guard: &mut CapGuard) -> Result<(), String> {
    // cgroup v2 only lets a cgroup hand controllers to children while it holds no
    // processes itself: this works in a delegated, otherwise empty subtree.
    write(&dir.join("cgroup.subtree_control"), "+memory +cpu")?;
    let child = create_child(dir, guard)?;
    if let Some(bytes) = req.memory_bytes {
        write(&child.join("memory.max"), &bytes.to_string())?;
        write(&child.join("memory.swap.max"), "0").ok();
    }
    if let Some(cpus) = req.cpus {
        write(
            &child.join("cpu.max"),
            &format!("{} {CFS_PERIOD_US}", (cpus * CFS_PERIOD_US as f64) as u64),
        )?;
    }
    enter(&child)
}

/// What a reader must know when the cap in force is not the one asked for.
pub fn cap_notes(req: &CapRequest, memory: Option<u64>, cpus: Option<f64>) -> Vec<String> {
    let mut notes = Vec::new();
    if let (Some(want), Some(have)) = (req.memory_bytes, memory)
        && want != have
    {
        notes.push(format!(
            "memory cap is {} but {} was requested",
            format_bytes(have),
            format_bytes(want)
        ));
    }
    if req.memory_bytes.is_some() && memory.is_none() {
        notes.push(
            "UNCAPPED: no memory limit applies; the page cache can hold the whole dataset".into(),
        );
    }
    if let (Some(want), Some(have)) = (req.cpus, cpus)
        && (want - have).abs() > 1e-6
    {
        notes.push(format!("CPU cap is {have} CPUs but {want} were requested"));
    }
    if req.cpus.is_some() && cpus.is_none() {
        notes.push("CPU uncapped: no CFS quota applies".into());
    }
    notes
}

/// Put this process under the requested cap if it is not already, and report
/// what is in force. Call before touching any data and before spawning threads.
pub fn apply(req: CapRequest) -> (CapReport, CapGuard) {
    let mut guard = CapGuard::default();
    let mut notes = Vec::new();
    let Some(hierarchy) = locate() else {
        notes.push("no cgroup hierarchy found (/proc/self/cgroup or /sys/fs/cgroup missing): cannot cap or observe a cap".into());
        return (
            CapReport {
                requested: req,
                memory_limit_bytes: None,
                cpu_limit: None,
                origin: CapOrigin::Uncapped,
                cgroup_version: "none".into(),
                cgroup: String::new(),
                notes,
            },
            guard,
        );
    };
    let (mem_before, cpu_before, _, _) = observe(&hierarchy);
    let needs_memory =
        matches!(req.memory_bytes, Some(want) if mem_before.is_none_or(|have| have > want));
    let needs_cpu =
        matches!(req.cpus, Some(want) if cpu_before.is_none_or(|have| have > want + 1e-9));
    let mut created = false;
    if needs_memory || needs_cpu {
        let narrowed = CapRequest {
            memory_bytes: req.memory_bytes.filter(|_| needs_memory),
            cpus: req.cpus.filter(|_| needs_cpu),
        };
        let outcome = match &hierarchy {
            Hierarchy::V1 { memory, cpu } => {
                create_v1(memory, cpu.as_deref(), &narrowed, &mut guard)
            }
            Hierarchy::V2 { dir } => create_v2(dir, &narrowed, &mut guard),
        };
        match outcome {
            Ok(()) => created = true,
            Err(why) => notes.push(format!(
                "could not create a capped cgroup ({why}); run as root, inside a capped container (docker compose, see README), or under `systemd-run --scope -p MemoryMax=1G -p CPUQuota=200%`"
            )),
        }
    }
    let hierarchy = locate().unwrap_or(hierarchy);
    let (memory_limit_bytes, cpu_limit, version, cgroup) = observe(&hierarchy);
    notes.extend(cap_notes(&req, memory_limit_bytes, cpu_limit));
    let origin = match (memory_limit_bytes, created) {
        (None, _) => CapOrigin::Uncapped,
        (Some(_), true) => CapOrigin::Created,
        (Some(_), false) => CapOrigin::Inherited,
    };
    (
        CapReport {
            requested: req,
            memory_limit_bytes,
            cpu_limit,
            origin,
            cgroup_version: version,
            cgroup,
            notes,
        },
        guard,
    )
}

/// Only observe: what cap is this process under right now?
pub fn observe_current() -> CapReport {
    apply(CapRequest {
        memory_bytes: None,
        cpus: None,
    })
    .0
}

/// Page cache charged to the cgroup, bytes (v1 `cache`, v2 `file` in memory.stat).
pub fn cgroup_page_cache_bytes(report: &CapReport) -> Option<u64> {
    let stat = fs::read_to_string(Path::new(&report.cgroup).join("memory.stat")).ok()?;
    let key = if report.cgroup_version == "v1" {
        "cache "
    } else {
        "file "
    };
    stat.lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().parse().ok())
}

/// Drop all page cache charged to the cgroup this process created, so datasets
/// read by earlier engines do not occupy the cap while the next one is measured.
/// Returns what was done, or None when the cgroup is not ours to empty.
pub fn reclaim_page_cache(report: &CapReport) -> Option<String> {
    if report.origin != CapOrigin::Created {
        return None;
    }
    let dir = Path::new(&report.cgroup);
    let done = match report.cgroup_version.as_str() {
        // v1: reclaims every reclaimable page of the cgroup (clean cache; no swap here).
        "v1" => fs::write(dir.join("memory.force_empty"), "0")
            .ok()
            .map(|_| "memory.force_empty"),
        // v2 (Linux >= 5.19): asks for more than there is; EAGAIN just means "all it could".
        "v2" => {
            let _ = fs::write(dir.join("memory.reclaim"), "1T");
            Some("memory.reclaim")
        }
        _ => None,
    }?;
    Some(format!("{done} on {}", dir.display()))
}
