//! The disk cap: how many reads and writes a second, and how many bytes, the measuring
//! process may take from the block device its data lives on, as the memory and CPU caps
//! bound its memory and CPU. A fetch that misses the page cache is set by the disk, and a
//! dev box's disk is not the volume the blobs will be served from: capped to a cloud
//! volume's published rates (`gp3`: 3,000 IOPS and 125 MiB/s), a run answers for that
//! volume instead, and two machines whose disks are faster than the cap answer alike.
//!
//! The kernel's block throttle does it: cgroup v1's `blkio.throttle.*_device` in a child
//! of this process's blkio cgroup, cgroup v2's `io.max` in its own cgroup. Limits are read
//! back from those files, never assumed. What a rate cap cannot do is said, not hidden:
//! it adds no latency to each I/O (reads pass at the disk's speed until a time slice's
//! budget is spent, then wait: a network volume's round trip is not emulated), and on v1
//! buffered writes are written back by the kernel's flusher, charged to the root cgroup,
//! past the throttle.

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::CapGuard;
use super::cgroupfs::{Hierarchy, Roots, enter, listed, read_trimmed, resolve, write};
use crate::error::InputError;
pub use crate::machine::{BlockDevice, block_device};
use crate::size::{format_bytes, parse_bytes};

/// Rates on one device; None = not limited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DiskLimits {
    pub read_iops: Option<u64>,
    pub read_bytes_per_s: Option<u64>,
    pub write_iops: Option<u64>,
    pub write_bytes_per_s: Option<u64>,
}

impl DiskLimits {
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// "read 3000 IOPS, 125MiB/s; write 3000 IOPS, 125MiB/s", or "none".
    pub fn label(&self) -> String {
        let side = |iops: Option<u64>, bps: Option<u64>| {
            let mut parts = Vec::new();
            if let Some(iops) = iops {
                parts.push(format!("{iops} IOPS"));
            }
            if let Some(bps) = bps {
                parts.push(format!("{}/s", format_bytes(bps)));
            }
            parts.join(", ")
        };
        let read = side(self.read_iops, self.read_bytes_per_s);
        let write = side(self.write_iops, self.write_bytes_per_s);
        match (read.is_empty(), write.is_empty()) {
            (true, true) => "none".into(),
            (false, true) => format!("read {read}"),
            (true, false) => format!("write {write}"),
            (false, false) => format!("read {read}; write {write}"),
        }
    }
}

/// The disk cap asked for: a preset's limits or limits given one by one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskCap {
    /// What was asked, as given ("gp3", "gp3:6000:250", "riops=500,rbps=50MiB").
    pub asked: String,
    pub limits: DiskLimits,
    /// Where a preset's figures come from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// The forms `--disk-cap` takes, for its help and its errors.
pub fn disk_cap_forms() -> String {
    format!(
        "\"none\"; {}; or limits by name, comma-separated: riops=N, rbps=SIZE, wiops=N, wbps=SIZE (per second, e.g. \"riops=500,rbps=50MiB\")",
        super::disk_presets::forms()
    )
}

/// `--disk-cap`: None for "none".
pub fn parse_disk_cap(text: &str) -> Result<Option<DiskCap>, InputError> {
    let asked = text.trim();
    let bad = |why: String| InputError::Value {
        what: "disk cap",
        input: text.into(),
        why: format!("{why}; it takes {}", disk_cap_forms()),
    };
    if asked == "none" {
        return Ok(None);
    }
    if let Some(preset) = super::disk_presets::preset(asked) {
        // A preset's rates hold for reads and writes alike.
        let ((iops, bytes_per_s), source) = preset.map_err(bad)?;
        return Ok(Some(DiskCap {
            asked: asked.into(),
            limits: DiskLimits {
                read_iops: Some(iops),
                read_bytes_per_s: Some(bytes_per_s),
                write_iops: Some(iops),
                write_bytes_per_s: Some(bytes_per_s),
            },
            source: Some(source.into()),
        }));
    }
    let mut limits = DiskLimits::default();
    for part in asked.split(',').map(str::trim) {
        let (key, value) = part
            .split_once('=')
            .ok_or_else(|| bad(format!("'{part}' is neither a preset nor name=value")))?;
        let count =
            || {
                value.parse::<u64>().ok().filter(|&n| n > 0).ok_or_else(|| {
                    bad(format!("{key} needs a whole number above 0, not '{value}'"))
                })
            };
        let bytes = || {
            parse_bytes(value).ok().filter(|&n| n > 0).ok_or_else(|| {
                bad(format!(
                    "{key} needs a size above 0 (\"50MiB\"), not '{value}'"
                ))
            })
        };
        let slot = match key {
            "riops" => (&mut limits.read_iops, count()?),
            "rbps" => (&mut limits.read_bytes_per_s, bytes()?),
            "wiops" => (&mut limits.write_iops, count()?),
            "wbps" => (&mut limits.write_bytes_per_s, bytes()?),
            _ => return Err(bad(format!("unknown limit '{key}'"))),
        };
        if slot.0.replace(slot.1).is_some() {
            return Err(bad(format!("{key} is given twice")));
        }
    }
    Ok(Some(DiskCap {
        asked: asked.into(),
        limits,
        source: None,
    }))
}

/// How the disk cap came about and what is in force, read from the kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiskCapReport {
    pub asked: DiskCap,
    /// The block device throttled ("253:0 vda"); None where none could be found.
    pub device: Option<String>,
    /// What the cgroup holds for that device, read back.
    pub in_force: DiskLimits,
    /// "v1 blkio child", "v2 io.max", or "not capped".
    pub method: String,
    /// The cgroup whose files hold the limits.
    pub cgroup: String,
    /// What a reader must know: a part not capped and why; what a rate cap leaves out.
    pub notes: Vec<String>,
}

impl DiskCapReport {
    /// What is in force and where, "uncapped" where nothing is: runs and parts of a run
    /// stand together only where this is the same.
    pub fn in_force_label(&self) -> String {
        match &self.device {
            Some(device) if !self.in_force.is_empty() => {
                format!("{} on {device}", self.in_force.label())
            }
            _ => "uncapped".into(),
        }
    }

    /// True when every limit asked for is in force, exactly.
    pub fn as_asked(&self) -> bool {
        self.in_force == self.asked.limits
    }

    /// For a sentence: "the disk capped at read 3000 IOPS, 125MiB/s; write … (gp3)".
    pub fn phrase(&self) -> String {
        if self.device.is_some() && !self.in_force.is_empty() {
            format!(
                "the disk capped at {} ({})",
                self.in_force.label(),
                self.asked.asked
            )
        } else {
            format!(
                "this machine's own disk, uncapped: the disk cap asked ({}) could not be set",
                self.asked.asked
            )
        }
    }

    /// One line: "disk: read 3000 IOPS, 125MiB/s; ... on 253:0 vda (v1 blkio child)".
    pub fn line(&self) -> String {
        if self.in_force.is_empty() || self.device.is_none() {
            return format!("disk not capped (asked: {})", self.asked.asked);
        }
        format!(
            "disk {} ({}, asked: {})",
            self.in_force_label(),
            self.method,
            self.asked.asked
        )
    }
}

/// The disk cap as a systemd scope's properties (`IOReadIOPSMax=/dev/vda 3000`, ...):
/// where blobrace re-runs itself under `systemd-run --scope`, systemd sets the scope's
/// `io.max` and keeps it (and the io controller above it) across a daemon-reload,
/// which a limit blobrace wrote itself in a tree systemd owns would not survive.
#[derive(Debug, Clone, PartialEq)]
pub struct ScopeDisk {
    /// The disk's device node (the whole disk, as the throttle takes it).
    pub node: PathBuf,
    pub limits: DiskLimits,
}

impl ScopeDisk {
    /// The disk of `data_dir` capped as `cap` asks; None where its node is not found
    /// (the cap is then written by `apply` itself, or said to be missing).
    pub fn of(cap: &DiskCap, data_dir: &Path) -> Option<ScopeDisk> {
        let device = block_device(data_dir, Path::new("/sys")).ok()?;
        let node = Path::new("/dev").join(&device.name);
        node.exists().then_some(ScopeDisk {
            node,
            limits: cap.limits,
        })
    }

    /// The `-p` properties, one `Name=node value` each for the limits set.
    pub fn properties(&self) -> Vec<String> {
        let l = &self.limits;
        [
            ("IOReadIOPSMax", l.read_iops),
            ("IOReadBandwidthMax", l.read_bytes_per_s),
            ("IOWriteIOPSMax", l.write_iops),
            ("IOWriteBandwidthMax", l.write_bytes_per_s),
        ]
        .into_iter()
        .filter_map(|(name, v)| Some(format!("{name}={} {}", self.node.display(), v?)))
        .collect()
    }
}

/// Put this process under `cap` on the disk holding `data_dir`. Never fails the run by
/// itself: what cannot be capped is said in the report's notes and the report says "not
/// capped", so the run's figures say what disk they were measured on.
pub fn apply(
    cap: &DiskCap,
    data_dir: &Path,
    roots: &Roots,
    hierarchy: Option<&Hierarchy>,
    (own_cgroup, method): (bool, &str),
    guard: &mut CapGuard,
) -> DiskCapReport {
    let mut report = DiskCapReport {
        asked: cap.clone(),
        device: None,
        in_force: DiskLimits::default(),
        method: "not capped".into(),
        cgroup: String::new(),
        notes: Vec::new(),
    };
    let device = match block_device(data_dir, Path::new("/sys")) {
        Ok(device) => device,
        Err(why) => {
            report.notes.push(format!("disk not capped: {why}"));
            return report;
        }
    };
    report.device = Some(format!("{} {}", device.major_minor, device.name));
    let placed = match hierarchy {
        // On v2 the limit goes on the process's own cgroup: only one it made for itself,
        // never the one it started in (a login's scope, a service), which it would
        // throttle whole and leave throttled.
        // Unless it already holds the cap asked: a container created with it
        // (`docker_blkio`: the compose runner of a capped run).
        Some(Hierarchy::V2 { dir, .. })
            if !own_cgroup && read_io_max(dir, &device.major_minor) == cap.limits =>
        {
            Ok((INHERITED, dir.clone(), cap.limits))
        }
        Some(Hierarchy::V2 { .. }) if !own_cgroup => Err(format!(
            "on cgroup v2 the disk cap goes on a cgroup this process made for its memory cap, and its cap came about otherwise ({method}): the cgroup it runs in is not its own to throttle"
        )),
        Some(Hierarchy::V2 { dir, .. }) => v2(dir, &device, &cap.limits, guard),
        Some(Hierarchy::V1 { .. }) => v1(roots, &device, &cap.limits, guard),
        None => Err("no cgroup hierarchy found".into()),
    };
    match placed {
        Ok((method, cgroup, in_force)) => {
            report.method = method.into();
            report.cgroup = cgroup.display().to_string();
            report.in_force = in_force;
        }
        Err(why) => {
            report.notes.push(format!("disk not capped: {why}"));
            return report;
        }
    }
    if !report.as_asked() {
        report.notes.push(format!(
            "disk cap in force is {}, not the {} asked",
            report.in_force.label(),
            cap.limits.label()
        ));
    }
    if matches!(hierarchy, Some(Hierarchy::V1 { .. }))
        && (cap.limits.write_iops.is_some() || cap.limits.write_bytes_per_s.is_some())
    {
        report.notes.push("writes not capped when buffered: cgroup v1 charges the page cache's writeback to the root cgroup, so only direct and synchronous writes meet the write limits".into());
    }
    report.notes.push("a rate cap adds no time to each read: the kernel lets reads through at the disk's own speed until its time slice's budget is spent, then holds the next ones, so the cap shows in the mean and the tail, not the p50, and a network volume's per-I/O latency is not emulated".into());
    report
}

/// The method of a disk cap found in force in the cgroup the process started in.
const INHERITED: &str = "inherited: the cgroup it runs in holds the cap asked (a container created with it: Docker's blkio_config)";

/// Where one v1 throttle file's figure goes in `DiskLimits`.
pub(crate) type LimitSlot = fn(&mut DiskLimits) -> &mut Option<u64>;

const V1_FILES: [(&str, LimitSlot); 4] = [
    ("blkio.throttle.read_iops_device", |l| &mut l.read_iops),
    ("blkio.throttle.read_bps_device", |l| {
        &mut l.read_bytes_per_s
    }),
    ("blkio.throttle.write_iops_device", |l| &mut l.write_iops),
    ("blkio.throttle.write_bps_device", |l| {
        &mut l.write_bytes_per_s
    }),
];

/// A child of this process's blkio cgroup with the limits, entered.
fn v1(
    roots: &Roots,
    device: &BlockDevice,
    limits: &DiskLimits,
    guard: &mut CapGuard,
) -> Result<(&'static str, PathBuf, DiskLimits), String> {
    let own = fs::read_to_string(roots.proc.join("self/cgroup"))
        .map_err(|e| format!("cannot read /proc/self/cgroup: {e}"))?;
    let (controllers, rel) = own
        .lines()
        .find_map(|l| {
            let mut parts = l.splitn(3, ':');
            let (_, controllers, rel) = (parts.next()?, parts.next()?, parts.next()?);
            controllers
                .split(',')
                .any(|c| c == "blkio")
                .then_some((controllers, rel))
        })
        .ok_or("the blkio controller is not mounted")?;
    // Mounted alone (`/sys/fs/cgroup/blkio`) or with others under their joined names.
    let mount = [roots.cgroup.join("blkio"), roots.cgroup.join(controllers)]
        .into_iter()
        .find(|m| m.is_dir())
        .ok_or("the blkio hierarchy is not mounted under the cgroup root")?;
    // As for memory: inside a container the listed path is the host's, and the mount
    // shows the container's own cgroup.
    let parent = resolve(&mount, rel);
    if !parent.join("blkio.throttle.read_iops_device").exists() {
        return Err(format!("{} has no blkio.throttle files", parent.display()));
    }
    // Already in force where it runs: a container created with it (`docker_blkio`: the
    // compose runner of a capped run), whose cgroup it could not make a child in anyway.
    if read_v1(&parent, &device.major_minor) == *limits {
        return Ok((INHERITED, parent, *limits));
    }
    let leaf = guard.new_leaf(roots, &parent, &parent)?;
    write_v1(&leaf, &device.major_minor, limits)?;
    enter(&leaf, std::process::id())?;
    let in_force = read_v1(&leaf, &device.major_minor);
    Ok(("v1 blkio child", leaf, in_force))
}

/// `io.max` of the cgroup the memory cap made for this process (a leaf, or its own
/// systemd scope), with the io controller enabled above it where it is not.
fn v2(
    dir: &Path,
    device: &BlockDevice,
    limits: &DiskLimits,
    guard: &mut CapGuard,
) -> Result<(&'static str, PathBuf, DiskLimits), String> {
    if !listed(dir, "cgroup.controllers").iter().any(|c| c == "io") {
        let parent = dir.parent().ok_or("the cgroup has no parent")?;
        if !listed(parent, "cgroup.controllers")
            .iter()
            .any(|c| c == "io")
        {
            return Err(format!(
                "the io controller is not available to {} (not delegated)",
                dir.display()
            ));
        }
        write(&parent.join("cgroup.subtree_control"), "+io")?;
        guard.enabled.push((parent.to_path_buf(), "io".into()));
    }
    // Re-run under systemd-run with the cap as the scope's IO*Max (`ScopeDisk`):
    // systemd wrote it, and keeps it; writing it again would change nothing.
    if read_io_max(dir, &device.major_minor) == *limits {
        return Ok((
            "v2 io.max, set by systemd as its scope's IO*Max",
            dir.to_path_buf(),
            *limits,
        ));
    }
    write_io_max(dir, &device.major_minor, limits)?;
    let in_force = read_io_max(dir, &device.major_minor);
    Ok(("v2 io.max", dir.to_path_buf(), in_force))
}

/// Every v1 throttle file of `dir` set for `device` ("MAJ:MIN"): an unset limit
/// written as 0, which removes its rule. Shared with a container's cgroup
/// (`container_disk.rs`).
pub(super) fn write_v1(dir: &Path, device: &str, limits: &DiskLimits) -> Result<(), String> {
    let mut limits = *limits;
    for (file, slot) in V1_FILES {
        let value = slot(&mut limits).unwrap_or(0);
        write(&dir.join(file), &format!("{device} {value}"))?;
    }
    Ok(())
}

/// The limits the v1 throttle files of `dir` hold for `device`, read back.
pub(super) fn read_v1(dir: &Path, device: &str) -> DiskLimits {
    let mut in_force = DiskLimits::default();
    for (file, slot) in V1_FILES {
        *slot(&mut in_force) = read_trimmed(&dir.join(file))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{device} "))?.trim().parse().ok());
    }
    in_force
}

/// `io.max` of `dir` set for `device`: an unset limit written as `max`.
pub(super) fn write_io_max(dir: &Path, device: &str, limits: &DiskLimits) -> Result<(), String> {
    let value = |v: Option<u64>| v.map_or("max".to_string(), |v| v.to_string());
    write(
        &dir.join("io.max"),
        &format!(
            "{device} riops={} rbps={} wiops={} wbps={}",
            value(limits.read_iops),
            value(limits.read_bytes_per_s),
            value(limits.write_iops),
            value(limits.write_bytes_per_s)
        ),
    )
}

/// The limits `io.max` of `dir` holds for `device`, read back.
pub(super) fn read_io_max(dir: &Path, device: &str) -> DiskLimits {
    let line = read_trimmed(&dir.join("io.max"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(&format!("{device} ")))
        .map(String::from)
        .unwrap_or_default();
    parse_io_max(&line)
}

/// The limits of one `io.max` line ("253:0 rbps=131072000 wbps=max riops=3000 wiops=max").
fn parse_io_max(line: &str) -> DiskLimits {
    let mut limits = DiskLimits::default();
    for field in line.split_whitespace().skip(1) {
        let Some((key, value)) = field.split_once('=') else {
            continue;
        };
        let value = value.parse().ok();
        match key {
            "riops" => limits.read_iops = value,
            "rbps" => limits.read_bytes_per_s = value,
            "wiops" => limits.write_iops = value,
            "wbps" => limits.write_bytes_per_s = value,
            _ => {}
        }
    }
    limits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_and_limits_parse_and_bad_ones_say_the_forms() {
        let gp3 = parse_disk_cap("gp3").unwrap().unwrap();
        assert_eq!(gp3.limits.read_iops, Some(3000));
        assert_eq!(gp3.limits.read_bytes_per_s, Some(125 << 20));
        assert_eq!(gp3.limits.write_iops, Some(3000));
        assert!(gp3.source.unwrap().contains("docs.aws.amazon.com"));
        let provisioned = parse_disk_cap("gp3:6000:250").unwrap().unwrap();
        assert_eq!(provisioned.limits.read_iops, Some(6000));
        assert_eq!(provisioned.limits.write_bytes_per_s, Some(250 << 20));
        assert_eq!(parse_disk_cap("none").unwrap(), None);
        // Every preset caps reads and writes alike.
        for asked in [
            "io2:1000",
            "pd-balanced:100GiB",
            "pd-ssd:500GiB",
            "azure-p30",
        ] {
            let l = parse_disk_cap(asked).unwrap().unwrap().limits;
            assert_eq!(
                (l.read_iops, l.read_bytes_per_s),
                (l.write_iops, l.write_bytes_per_s),
                "{asked}"
            );
        }
        let own = parse_disk_cap("riops=500, rbps=50MiB").unwrap().unwrap();
        assert_eq!(
            own.limits,
            DiskLimits {
                read_iops: Some(500),
                read_bytes_per_s: Some(50 << 20),
                write_iops: None,
                write_bytes_per_s: None,
            }
        );
        assert_eq!(own.limits.label(), "read 500 IOPS, 50MiB/s");
        for bad in [
            "gp2",
            "gp3:100",
            "gp3:3000:5000",
            "riops=0",
            "riops=5,riops=6",
            "xiops=3",
            "3000",
        ] {
            let err = parse_disk_cap(bad).unwrap_err().to_string();
            assert!(err.contains("riops=N"), "{bad}: {err}");
        }
    }

    #[test]
    fn io_max_is_read_back_field_by_field() {
        let limits = parse_io_max("253:0 rbps=131072000 wbps=max riops=3000 wiops=max");
        assert_eq!(limits.read_iops, Some(3000));
        assert_eq!(limits.read_bytes_per_s, Some(131_072_000));
        assert_eq!(limits.write_iops, None);
        assert_eq!(limits.write_bytes_per_s, None);
    }

    #[test]
    fn a_directory_on_tmpfs_has_no_disk_to_throttle() {
        // /dev/shm is a tmpfs on Linux: its device has no /sys/dev/block entry.
        if Path::new("/dev/shm").is_dir() {
            let err =
                block_device(Path::new("/dev/shm/not-there/yet"), Path::new("/sys")).unwrap_err();
            assert!(err.contains("not a block device"), "{err}");
        }
    }
}
