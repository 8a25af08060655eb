//! The memory and CPU cap of the measuring process.
//!
//! An embedded database's cap is the cap of the process that embeds it, so the
//! process measuring SQLite (and the file baselines) must run inside a capped
//! cgroup. It first looks at the cgroup it is in (a capped container, a systemd
//! scope); if that is not capped as asked, it makes a capped cgroup and moves
//! itself in before touching any data, the first way that works:
//! - cgroup v1 (`v1.rs`): a child in the memory and cpu hierarchies (root);
//! - cgroup v2 (`v2.rs`): a leaf where the kernel's delegation rules allow one (root,
//!   or a delegated subtree);
//! - cgroup v2 as a normal user (`systemd.rs`): re-run itself under
//!   `systemd-run --user --scope -p MemoryMax=…`.
//!
//! Limits are always read back from the cgroup files, never assumed. A memory cap that
//! cannot be had is an error (`CapUnavailable`), unless the run asked for none.

pub mod cgroupfs;
pub mod container_disk;
pub mod disk;
mod disk_presets;
pub mod docker_blkio;
mod peaks;
pub mod readahead;
mod systemd;
mod v1;
mod v2;
mod whole;

pub use peaks::{StepMemory, read_step, start_step};
pub use systemd::SCOPE_MARKER;
pub use whole::apply_whole;

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::size::format_bytes;
use cgroupfs::{Hierarchy, Roots};

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

/// How the cap in force came about: which of the ways in this module's header it took.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum CapMethod {
    /// A child cgroup in the v1 memory (and cpu) hierarchies.
    V1Child,
    /// A cgroup v2 leaf beside this process's cgroup, under a parent that delegates.
    V2Sibling,
    /// A cgroup v2 leaf under this process's own cgroup, which it left empty.
    V2ChildLeaf,
    /// Re-run under `systemd-run --scope` with the cap as properties (the user's
    /// manager, `--user`, for a normal user; the system's for root under systemd).
    SystemdScope,
    /// The cgroup the process started in already had the cap.
    Inherited,
    /// The cap Docker sets on a server's container.
    DockerContainer,
    /// The limits Kubernetes sets on a server's pod, read through its API.
    KubernetesPod,
    /// No cap: none was asked for, or none could be had (then the run stops).
    None,
    /// Results written before the method was recorded.
    #[default]
    Unrecorded,
}

impl CapMethod {
    /// Where the cap came from, as results record it: follows from the method.
    pub fn origin(self) -> CapOrigin {
        match self {
            CapMethod::V1Child
            | CapMethod::V2Sibling
            | CapMethod::V2ChildLeaf
            | CapMethod::SystemdScope => CapOrigin::Created,
            // Unrecorded only comes from old files, which carry their own origin.
            CapMethod::Inherited
            | CapMethod::DockerContainer
            | CapMethod::KubernetesPod
            | CapMethod::Unrecorded => CapOrigin::Inherited,
            CapMethod::None => CapOrigin::Uncapped,
        }
    }
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
    #[serde(default)]
    pub method: CapMethod,
    /// "v1", "v2" or "none".
    pub cgroup_version: String,
    /// The memory cgroup the process runs in.
    pub cgroup: String,
    /// Everything a reader should know: caps not as requested, why none could be set.
    pub notes: Vec<String>,
    /// What this process tidied on the way (cgroups left by dead processes): said
    /// once per run, never among the notes a reader must read before the numbers.
    #[serde(default)]
    pub housekeeping: Vec<String>,
    /// The disk cap, where one was asked for (`disk`): what is in force on the data's
    /// disk, read back, and what is not capped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<Box<disk::DiskCapReport>>,
}

impl CapReport {
    /// Whether this cap is a Kubernetes pod's limits (`db::server::place::Places::remote_cap`),
    /// with a memory limit or without (then its method is `None`).
    pub fn is_pod_limits(&self) -> bool {
        self.cgroup_version == "kubernetes"
    }

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

    /// How the cap came about, for one line of output: "created: cgroup-v2-sibling".
    pub fn how(&self) -> String {
        format!(
            "{}: {}",
            crate::serde_name(&self.origin),
            crate::serde_name(&self.method)
        )
    }

    /// True when the memory cap in force is exactly the one asked for.
    pub fn memory_as_requested(&self) -> bool {
        self.requested.memory_bytes.is_some()
            && self.memory_limit_bytes == self.requested.memory_bytes
    }
}

/// Undoes what this process did to the cgroup tree when dropped: disables the
/// controllers it enabled, moves itself back and removes the leaves it created.
#[derive(Debug, Default)]
pub struct CapGuard {
    /// (cgroup, controller) enabled in that cgroup's `cgroup.subtree_control`.
    enabled: Vec<(PathBuf, String)>,
    /// (leaf created, cgroup to move back to before removing it).
    created: Vec<(PathBuf, PathBuf)>,
    /// Stale leaves removed on the way (`CapReport::housekeeping`).
    housekeeping: Vec<String>,
    /// The hierarchies the leaves were made in. Their parents are looked through
    /// again at the end: a killed run's leaf still held its watchdogs (finishing their
    /// work) when this run began, and only an empty cgroup can be removed.
    roots: Option<Roots>,
}

impl CapGuard {
    /// Create this process's leaf under `parent` (first removing leaves of dead
    /// processes there, each named in `housekeeping`) and remember it, with the
    /// cgroup to move back to, for removal on drop.
    fn new_leaf(
        &mut self,
        roots: &Roots,
        parent: &Path,
        return_to: &Path,
    ) -> Result<PathBuf, String> {
        for stale in cgroupfs::remove_stale_leaves(parent, roots) {
            self.housekeeping.push(stale.describe());
        }
        let leaf = parent.join(cgroupfs::leaf_name(std::process::id()));
        fs::create_dir_all(&leaf)
            .map_err(|e| format!("cannot create cgroup {}: {e}", leaf.display()))?;
        self.created.push((leaf.clone(), return_to.to_path_buf()));
        self.roots.get_or_insert_with(|| roots.clone());
        Ok(leaf)
    }
}

impl Drop for CapGuard {
    fn drop(&mut self) {
        let pid = std::process::id().to_string();
        // A cgroup with controllers enabled for its children may hold no processes:
        // undo those first, or moving back into it fails.
        for (dir, controller) in self.enabled.iter().rev() {
            let _ = fs::write(dir.join("cgroup.subtree_control"), format!("-{controller}"));
        }
        for (leaf, back) in self.created.iter().rev() {
            let _ = fs::write(back.join("cgroup.procs"), &pid);
            let _ = fs::remove_dir(leaf);
        }
        if let Some(roots) = &self.roots {
            for parent in self.created.iter().filter_map(|(leaf, _)| leaf.parent()) {
                cgroupfs::remove_stale_leaves(parent, roots);
            }
        }
    }
}

/// The memory cap asked for is not the one in force, and none could be made.
#[derive(Debug)]
pub struct CapUnavailable {
    /// What is in force instead, for `blobrace env` to show.
    pub report: Box<CapReport>,
    pub why: String,
}

/// The command the user ran, to put under systemd-run: `cargo bench` for the bench, else
/// this program and its subcommand (the flags left to the user: they may hold a
/// server's password).
fn this_command() -> String {
    let args: Vec<String> = std::env::args().take(2).collect();
    match args.first() {
        Some(program)
            if std::path::Path::new(program)
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("blobrace")) =>
        {
            format!("{} <its flags>", args.join(" "))
        }
        _ => "cargo bench".into(),
    }
}

impl std::fmt::Display for CapUnavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let want = self.report.requested;
        let memory = want.memory_bytes.map(format_bytes).unwrap_or_default();
        write!(
            f,
            "cannot run under the requested {memory} memory cap: {}. A number measured without the cap it claims is not a result. Three ways to get the cap: run as root (blobrace makes its own cgroup); on cgroup v2 under systemd as a normal user, `{}` (blobrace tries this itself when systemd-run works); or the capped compose runner, `scripts/compose-run.sh`. To measure uncapped on purpose, pass --cap none",
            self.why,
            systemd::scope_command_line(&want, &this_command()),
        )
    }
}

impl std::error::Error for CapUnavailable {}

impl From<CapUnavailable> for crate::error::InputError {
    fn from(e: CapUnavailable) -> Self {
        crate::error::InputError::CapUnavailable(e.to_string())
    }
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

/// Put this process under the requested cap if it is not already, and report what
/// is in force. Call before touching any data and before spawning threads (it may
/// re-execute the process under systemd-run). A requested memory cap that is not in
/// force afterwards is an error: the run must not go on claiming it.
/// `disk`: the disk cap to give a systemd scope, where the process re-runs under one
/// (`apply_disk` then finds it in force).
pub fn apply(
    req: CapRequest,
    disk: Option<&disk::ScopeDisk>,
) -> Result<(CapReport, CapGuard), CapUnavailable> {
    apply_at(
        &Roots::system(),
        req,
        Reexec {
            allowed: true,
            disk,
        },
    )
}

/// Whether `apply` may re-run the process under systemd-run, and the disk cap to give
/// the scope.
#[derive(Clone, Copy)]
struct Reexec<'a> {
    allowed: bool,
    disk: Option<&'a disk::ScopeDisk>,
}

impl Reexec<'_> {
    /// Tests on fake cgroup trees: never.
    #[cfg(test)]
    const NEVER: Reexec<'static> = Reexec {
        allowed: false,
        disk: None,
    };
}

/// Put this process under `cap` on the disk holding `data_dir` as well, after `apply`
/// (see `disk`): what is in force goes on the report; what cannot be capped is said there.
pub fn apply_disk(
    report: &mut CapReport,
    guard: &mut CapGuard,
    cap: &disk::DiskCap,
    data_dir: &Path,
) {
    let roots = Roots::system();
    let hierarchy = cgroupfs::locate(&roots);
    let own_cgroup = matches!(
        report.method,
        CapMethod::V2Sibling | CapMethod::V2ChildLeaf | CapMethod::SystemdScope
    );
    report.disk = Some(Box::new(disk::apply(
        cap,
        data_dir,
        &roots,
        hierarchy.as_ref(),
        (own_cgroup, &report.how()),
        guard,
    )));
}

/// What is in force right now, with no change: limits, version and cgroup.
fn observe(
    roots: &Roots,
    hierarchy: Option<&Hierarchy>,
) -> (Option<u64>, Option<f64>, &'static str, String) {
    match hierarchy {
        None => (None, None, "none", String::new()),
        Some(h) => {
            let (memory, cpus) = h.limits(roots);
            (
                memory,
                cpus,
                h.version(),
                h.memory_dir().display().to_string(),
            )
        }
    }
}

/// Make a capped cgroup for what `narrowed` asks and enter it: the way that fits the hierarchy.
fn create(
    roots: &Roots,
    hierarchy: &Hierarchy,
    narrowed: &CapRequest,
    reexec: Reexec,
    guard: &mut CapGuard,
) -> Result<(CapMethod, Vec<String>), String> {
    let v2 = matches!(hierarchy, Hierarchy::V2 { .. });
    let manager = systemd::Manager::for_this_process();
    // Root on a v2 host systemd runs: a scope of the system manager first, whose
    // limits systemd keeps (a leaf of ours in its slices loses its CPU cap on the next
    // daemon-reload; see `systemd`). Where that cannot be had, the leaf.
    let system_scope = if reexec.allowed
        && v2
        && manager == systemd::Manager::System
        && roots.is_system()
        && systemd::booted()
    {
        Some(systemd::reexec(narrowed, manager, reexec.disk))
    } else {
        None
    };
    let direct = match hierarchy {
        Hierarchy::V1 { memory, cpu } => v1::create(roots, memory, cpu.as_deref(), narrowed, guard),
        Hierarchy::V2 { dir, mount } => v2::create(roots, dir, mount, narrowed, guard),
    };
    let why = match direct {
        Ok((method, mut notes)) => {
            if let Some(scope) = system_scope {
                notes.push(format!(
                    "a cgroup of its own in a tree systemd owns, which a `systemctl daemon-reload` during the run may strip of its CPU and disk limits: {scope}"
                ));
            }
            return Ok((method, notes));
        }
        Err(why) => why,
    };
    // Leave the tree as it was before trying the next way.
    std::mem::take(guard);
    // The user's systemd manager delegates memory and cpu only on cgroup v2.
    if reexec.allowed && narrowed.memory_bytes.is_some() && v2 && manager == systemd::Manager::User
    {
        let scope = systemd::reexec(narrowed, manager, reexec.disk);
        return Err(format!("{why}; {scope}"));
    }
    match system_scope {
        Some(scope) => Err(format!("{why}; {scope}")),
        None => Err(why),
    }
}

fn apply_at(
    roots: &Roots,
    req: CapRequest,
    reexec: Reexec,
) -> Result<(CapReport, CapGuard), CapUnavailable> {
    let mut guard = CapGuard::default();
    let mut notes = Vec::new();
    let mut failure = None;
    let hierarchy = cgroupfs::locate(roots);
    let (mem_before, cpu_before, _, _) = observe(roots, hierarchy.as_ref());
    // The kernel keeps a memory limit in whole pages, rounding a request down: that
    // rounded figure is the cap asked for (a note says so), not a cap from elsewhere.
    let page = 4096;
    let want_memory = req.memory_bytes.map(|b| b - b % page);
    let narrowed = CapRequest {
        memory_bytes: want_memory.filter(|&want| mem_before.is_none_or(|have| have > want)),
        cpus: req
            .cpus
            .filter(|&want| cpu_before.is_none_or(|have| have > want + 1e-9)),
    };
    let mut method = if mem_before.is_some() {
        CapMethod::Inherited
    } else {
        CapMethod::None
    };
    let wants_change = narrowed.memory_bytes.is_some() || narrowed.cpus.is_some();
    match &hierarchy {
        None if req.memory_bytes.is_some() => {
            failure = Some(format!(
                "no cgroup hierarchy found ({}/self/cgroup or {} missing)",
                roots.proc.display(),
                roots.cgroup.display()
            ))
        }
        Some(_) if wants_change && systemd::in_own_scope() => {
            failure = Some("re-run under systemd-run, but its scope did not get the cap: the user's systemd manager may not delegate the memory controller (`systemctl show -p DelegateControllers --value user@$(id -u).service` lists what it delegates)".into())
        }
        Some(h) if wants_change => {
            match create(roots, h, &narrowed, reexec, &mut guard) {
                Ok((made, more)) => {
                    method = made;
                    notes.extend(more);
                }
                Err(why) => failure = Some(why),
            }
        }
        _ => {}
    }
    if systemd::in_own_scope() {
        method = CapMethod::SystemdScope;
    }
    let hierarchy = cgroupfs::locate(roots).or(hierarchy);
    let (memory_limit_bytes, cpu_limit, version, cgroup) = observe(roots, hierarchy.as_ref());
    if memory_limit_bytes.is_none() {
        method = CapMethod::None;
    }
    notes.extend(cap_notes(&req, memory_limit_bytes, cpu_limit));
    let report = CapReport {
        requested: req,
        memory_limit_bytes,
        cpu_limit,
        origin: method.origin(),
        method,
        cgroup_version: version.into(),
        cgroup,
        notes,
        housekeeping: guard.housekeeping.clone(),
        disk: None,
    };
    match want_memory {
        Some(want) if memory_limit_bytes != Some(want) => {
            let why = failure.unwrap_or_else(|| match memory_limit_bytes {
                Some(have) => format!(
                    "this process is already capped at {} by {} (below the request; a cap cannot be raised from inside): ask for --cap {}",
                    format_bytes(have),
                    report.cgroup,
                    have
                ),
                None => "no memory limit applies after the attempt".into(),
            });
            Err(CapUnavailable {
                report: Box::new(report),
                why,
            })
        }
        _ => Ok((report, guard)),
    }
}

/// A figure of the cgroup's `memory.stat` (the line `<key> <bytes>`).
fn memory_stat(report: &CapReport, key: &str) -> Option<u64> {
    let stat = fs::read_to_string(Path::new(&report.cgroup).join("memory.stat")).ok()?;
    stat.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse().ok())
}

/// Page cache charged to the cgroup, bytes (v1 `cache`, v2 `file` in memory.stat).
pub fn cgroup_page_cache_bytes(report: &CapReport) -> Option<u64> {
    memory_stat(
        report,
        if report.cgroup_version == "v1" {
            "cache"
        } else {
            "file"
        },
    )
}

/// Kernel memory charged to the cgroup, bytes: where the dentries and inodes of the
/// files an engine opened stay (fs's 3 million files at 1 KiB; 100,000 files held
/// 134 MB here). v1: `memory.kmem.usage_in_bytes` (all kernel memory: slab, and this
/// process's stacks and page tables); v2: `slab` in memory.stat.
pub fn cgroup_kernel_bytes(report: &CapReport) -> Option<u64> {
    if report.cgroup_version != "v1" {
        return memory_stat(report, "slab");
    }
    fs::read_to_string(Path::new(&report.cgroup).join("memory.kmem.usage_in_bytes"))
        .ok()?
        .trim()
        .parse()
        .ok()
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
        // v1: reclaims every reclaimable page of the cgroup (clean cache; no swap here),
        // and its reclaimable slab: 100,000 files' dentries and inodes, 134 MB, left
        // 10.6 MB of kernel memory here.
        "v1" => fs::write(dir.join("memory.force_empty"), "0")
            .ok()
            .map(|_| "memory.force_empty"),
        // v2 (Linux >= 5.19; slab is reclaimed with the cache): asks for more than there
        // is; EAGAIN just means "all it could". Any other error (no such file on older kernels, a scope this user may
        // not write) means nothing was reclaimed.
        "v2" => match fs::write(dir.join("memory.reclaim"), "1T") {
            Ok(()) => Some("memory.reclaim"),
            Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => Some("memory.reclaim"),
            Err(_) => None,
        },
        _ => None,
    }?;
    Some(format!("{done} on {}", dir.display()))
}

#[cfg(test)]
mod tests;
