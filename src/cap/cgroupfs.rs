//! Where this process sits in the cgroup hierarchy, what limits apply along it, and the
//! small file operations every way of capping shares. The filesystem roots are values
//! (`Roots`), so the path and delegation logic runs on a fake tree in the unit tests.

use std::fs;
use std::path::{Path, PathBuf};

/// Above this a cgroup v1 `memory.limit_in_bytes` means "no limit" (it reads 2^63 - page).
const V1_UNLIMITED: u64 = 1 << 62;

/// The cgroup mount and /proc, as this process sees them.
#[derive(Debug, Clone, PartialEq)]
pub struct Roots {
    pub cgroup: PathBuf,
    pub proc: PathBuf,
}

impl Roots {
    pub fn system() -> Self {
        Self {
            cgroup: PathBuf::from("/sys/fs/cgroup"),
            proc: PathBuf::from("/proc"),
        }
    }

    /// The machine's own tree (not a test's fake one).
    pub fn is_system(&self) -> bool {
        *self == Self::system()
    }

    fn pid_alive(&self, pid: &str) -> bool {
        self.proc.join(pid).exists()
    }
}

/// The cgroup directory this process sits in, per controller.
#[derive(Debug, Clone, PartialEq)]
pub enum Hierarchy {
    V1 {
        memory: PathBuf,
        cpu: Option<PathBuf>,
    },
    /// `mount` is the cgroup2 mount: the real root, or the root of this process's
    /// cgroup namespace (a container), whose parent is out of sight.
    V2 { dir: PathBuf, mount: PathBuf },
}

pub fn read_trimmed(path: &Path) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// `rel` (from /proc/self/cgroup) under `mount`. Inside a cgroup namespace the listed
/// path is relative to the namespace root, which is what is mounted ("/" there); a path
/// outside the namespace ("/../x") or one the mount does not show (a container without
/// a cgroup namespace, whose mount is its own cgroup) resolves to the mount itself.
pub(super) fn resolve(mount: &Path, rel: &str) -> PathBuf {
    let rel = rel.trim_start_matches('/');
    let joined = mount.join(rel);
    if rel.split('/').any(|part| part == "..") || !joined.is_dir() {
        mount.to_path_buf()
    } else {
        joined
    }
}

/// Where this process sits, from `<proc>/self/cgroup`.
pub fn locate(roots: &Roots) -> Option<Hierarchy> {
    locate_process(roots, "self")
}

/// Where process `pid` (a number, or "self") sits, from `<proc>/<pid>/cgroup`. A
/// directory out of this process's sight resolves to its mount (`resolve`).
pub fn locate_process(roots: &Roots, pid: &str) -> Option<Hierarchy> {
    let own = fs::read_to_string(roots.proc.join(pid).join("cgroup")).ok()?;
    if roots.cgroup.join("cgroup.controllers").exists() {
        let rel = own.lines().find_map(|l| l.strip_prefix("0::"))?;
        return Some(Hierarchy::V2 {
            dir: resolve(&roots.cgroup, rel),
            mount: roots.cgroup.clone(),
        });
    }
    let mut memory = None;
    let mut cpu = None;
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, rel) = (parts.next()?, parts.next()?, parts.next()?);
        let names: Vec<&str> = controllers.split(',').collect();
        if names.contains(&"memory") {
            memory = Some(resolve(&roots.cgroup.join("memory"), rel));
        }
        if names.contains(&"cpu") {
            let mount = if roots.cgroup.join("cpu").is_dir() {
                roots.cgroup.join("cpu")
            } else {
                roots.cgroup.join(controllers)
            };
            cpu = Some(resolve(&mount, rel));
        }
    }
    Some(Hierarchy::V1 {
        memory: memory?,
        cpu,
    })
}

/// The smallest limit along `dir` and its ancestors up to `stop_at` (the mount).
fn min_along(dir: &Path, stop_at: &Path, read: impl Fn(&Path) -> Option<u64>) -> Option<u64> {
    let mut best: Option<u64> = None;
    let mut cur = Some(dir);
    while let Some(d) = cur {
        if let Some(v) = read(d) {
            best = Some(best.map_or(v, |b| b.min(v)));
        }
        if d == stop_at || !d.starts_with(stop_at) {
            break;
        }
        cur = d.parent();
    }
    best
}

/// The mount a v1 controller's directory belongs to: the directory right under the
/// cgroup root on the way up (`/sys/fs/cgroup/memory`, `/sys/fs/cgroup/cpu,cpuacct`).
fn v1_mount(dir: &Path, roots: &Roots) -> PathBuf {
    dir.ancestors()
        .find(|a| a.parent() == Some(roots.cgroup.as_path()))
        .unwrap_or(dir)
        .to_path_buf()
}

fn v2_cpu_millis(d: &Path) -> Option<u64> {
    let text = read_trimmed(&d.join("cpu.max"))?;
    let mut parts = text.split_whitespace();
    // "max 100000" means no quota: the parse fails and the level is skipped.
    let quota: u64 = parts.next()?.parse().ok()?;
    let period: u64 = parts.next()?.parse().ok()?;
    (period > 0).then(|| quota * 1000 / period)
}

fn v1_cpu_millis(d: &Path) -> Option<u64> {
    let quota: i64 = read_trimmed(&d.join("cpu.cfs_quota_us"))?.parse().ok()?;
    let period: i64 = read_trimmed(&d.join("cpu.cfs_period_us"))?.parse().ok()?;
    (quota > 0 && period > 0).then(|| (quota as u64 * 1000) / period as u64)
}

impl Hierarchy {
    /// Effective limits (the smallest along the ancestry): memory bytes and CPUs.
    pub fn limits(&self, roots: &Roots) -> (Option<u64>, Option<f64>) {
        let (memory, cpu_millis) = match self {
            Hierarchy::V1 { memory, cpu } => (
                min_along(memory, &v1_mount(memory, roots), |d| {
                    read_trimmed(&d.join("memory.limit_in_bytes"))?
                        .parse::<u64>()
                        .ok()
                        .filter(|&v| v < V1_UNLIMITED)
                }),
                cpu.as_deref()
                    .and_then(|c| min_along(c, &v1_mount(c, roots), v1_cpu_millis)),
            ),
            Hierarchy::V2 { dir, mount } => (
                min_along(dir, mount, |d| {
                    read_trimmed(&d.join("memory.max"))?.parse::<u64>().ok()
                }),
                min_along(dir, mount, v2_cpu_millis),
            ),
        };
        // Integers compare cleanly along the ancestry; CPUs are reported as a float.
        (memory, cpu_millis.map(|m| m as f64 / 1000.0))
    }

    pub fn version(&self) -> &'static str {
        match self {
            Hierarchy::V1 { .. } => "v1",
            Hierarchy::V2 { .. } => "v2",
        }
    }

    /// The cgroup whose memory this process is charged to.
    pub fn memory_dir(&self) -> &Path {
        match self {
            Hierarchy::V1 { memory, .. } => memory,
            Hierarchy::V2 { dir, .. } => dir,
        }
    }
}

/// The name of the cgroup this process creates for itself.
pub fn leaf_name(pid: u32) -> String {
    format!("blobrace-{pid}")
}

/// A stale cgroup removed, and what its counters said of how its process ended.
pub struct StaleLeaf {
    pub path: PathBuf,
    pub pid: String,
    /// Times the kernel killed a process inside it for its memory limit.
    pub oom_kills: u64,
    /// That limit.
    pub limit_bytes: Option<u64>,
}

impl StaleLeaf {
    /// The line for the run that found it.
    pub fn describe(&self) -> String {
        if self.oom_kills == 0 {
            return format!(
                "removed {} (left by a process that no longer runs)",
                self.path.display()
            );
        }
        let cap = self
            .limit_bytes
            .map(|b| format!("{} MiB", b >> 20))
            .unwrap_or_else(|| "its cap".into());
        format!(
            "the blobrace process {} was killed by the kernel for memory inside its own cap of {cap} (its cgroup {} counted {} OOM kill(s); it ended with exit 137 and no word of its own): that cap was too small for what it ran. Raise --cap, load and measure fewer or smaller size classes at once, or take a smaller --dataset-bytes; the cgroup is removed",
            self.pid,
            self.path.display(),
            self.oom_kills
        )
    }
}

/// The kernel's count of OOM kills in a cgroup: v1's memory.oom_control, v2's
/// memory.events, each a line `oom_kill N`; 0 where neither has one.
pub fn oom_kills(dir: &Path) -> u64 {
    oom_kill_count(dir).unwrap_or(0)
}

/// `oom_kills`, or None where neither file has the line (a kernel before 4.13, no
/// memory controller there): unknown, not 0.
pub fn oom_kill_count(dir: &Path) -> Option<u64> {
    ["memory.oom_control", "memory.events"]
        .iter()
        .filter_map(|f| fs::read_to_string(dir.join(f)).ok())
        .flat_map(|text| {
            text.lines()
                .filter_map(|l| l.strip_prefix("oom_kill "))
                .filter_map(|n| n.trim().parse::<u64>().ok())
                .collect::<Vec<_>>()
        })
        .max()
}

/// Remove empty cgroups left under `parent` by blobrace processes that no longer run
/// (a run killed with kill -9 never gets to remove its own; one the kernel killed for
/// memory inside its own cap neither, and its counters say so).
pub fn remove_stale_leaves(parent: &Path, roots: &Roots) -> Vec<StaleLeaf> {
    let mut removed = Vec::new();
    let Ok(entries) = fs::read_dir(parent) else {
        return removed;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("blobrace-")) else {
            continue;
        };
        if !pid.bytes().all(|b| b.is_ascii_digit()) || roots.pid_alive(pid) {
            continue;
        }
        // rmdir removes a cgroup with its interface files, and only an empty one.
        let path = entry.path();
        let oom_kills = oom_kills(&path);
        let limit_bytes = ["memory.limit_in_bytes", "memory.max"]
            .iter()
            .filter_map(|f| read_trimmed(&path.join(f)))
            .find_map(|v| v.parse::<u64>().ok())
            .filter(|b| *b < V1_UNLIMITED);
        if fs::remove_dir(&path).is_ok() {
            removed.push(StaleLeaf {
                path,
                pid: pid.to_string(),
                oom_kills,
                limit_bytes,
            });
        }
    }
    removed
}

pub fn write(path: &Path, value: &str) -> Result<(), String> {
    fs::write(path, value).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Move this process into `dir`.
pub fn enter(dir: &Path, pid: u32) -> Result<(), String> {
    write(&dir.join("cgroup.procs"), &pid.to_string())
}

/// The controllers listed in a space-separated cgroup v2 file.
pub fn listed(dir: &Path, file: &str) -> Vec<String> {
    read_trimmed(&dir.join(file))
        .unwrap_or_default()
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// Pids in a cgroup other than `except`.
pub fn other_processes(dir: &Path, except: u32) -> usize {
    read_trimmed(&dir.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.trim() != except.to_string())
        .count()
}
