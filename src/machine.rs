//! Facts about the machine a run measured on, recorded with every result.

use std::ffi::CString;
use std::fs;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MachineFacts {
    pub cpu_model: String,
    pub logical_cpus: usize,
    pub ram_bytes: u64,
    pub kernel: String,
    pub hostname: String,
    /// Filesystem type holding the data directory (ext4, xfs, overlay, tmpfs...).
    pub data_filesystem: String,
    /// Device or source of that filesystem.
    pub data_device: String,
    /// The readahead of the disk under the data directory (`queue/read_ahead_kb`, KiB):
    /// how much a cold read may pull in past what it asked for. None where there is no
    /// block device (tmpfs, overlay) or it cannot be read.
    #[serde(default)]
    pub data_read_ahead_kb: Option<u64>,
    /// The disk under the data directory, as its queue describes it: None where there
    /// is no block device (tmpfs, overlay) or its queue cannot be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_disk: Option<DiskFacts>,
}

/// A disk as the kernel's block queue describes it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct DiskFacts {
    /// Its kernel name (`vda`, `nvme0n1`).
    pub name: String,
    /// Its model (`device/model`); None where the driver gives none (virtio).
    pub model: Option<String>,
    /// The I/O scheduler in force (`queue/scheduler`'s bracketed one: `none`, `mq-deadline`).
    pub scheduler: Option<String>,
    /// Whether the kernel takes it for a spinning disk (`queue/rotational`).
    pub rotational: Option<bool>,
}

impl DiskFacts {
    /// "vda (model unknown, scheduler mq-deadline, not rotational)".
    pub fn label(&self) -> String {
        let unknown = || "unknown".to_string();
        format!(
            "{} (model {}, scheduler {}, {})",
            self.name,
            self.model.clone().unwrap_or_else(unknown),
            self.scheduler.clone().unwrap_or_else(unknown),
            match self.rotational {
                Some(true) => "rotational",
                Some(false) => "not rotational",
                None => "rotational unknown",
            }
        )
    }
}

/// The disk under `data_dir`, read from `sys` (`/sys`).
fn disk_facts(data_dir: &Path, sys: &Path) -> Option<DiskFacts> {
    let device = block_device(data_dir, sys).ok()?;
    let dir = sys.join("dev/block").join(&device.major_minor);
    let read = |file: &str| {
        fs::read_to_string(dir.join(file))
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    Some(DiskFacts {
        name: device.name,
        model: read("device/model"),
        scheduler: read("queue/scheduler").map(|line| {
            line.split_whitespace()
                .find_map(|s| s.strip_prefix('[')?.strip_suffix(']'))
                .unwrap_or(&line)
                .to_string()
        }),
        rotational: read("queue/rotational").map(|r| r == "1"),
    })
}

impl MachineFacts {
    pub fn collect(data_dir: &Path) -> Self {
        let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split_once(':')))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_else(|| "unknown".into());
        let (data_filesystem, data_device) = filesystem_of(data_dir);
        Self {
            cpu_model,
            logical_cpus: std::thread::available_parallelism().map_or(0, |n| n.get()),
            ram_bytes: mem_total_bytes().unwrap_or(0),
            kernel: read("/proc/sys/kernel/osrelease"),
            hostname: read("/proc/sys/kernel/hostname"),
            data_filesystem,
            data_device,
            data_read_ahead_kb: read_ahead_kb(data_dir),
            data_disk: disk_facts(data_dir, Path::new("/sys")),
        }
    }
}

fn read(path: &str) -> String {
    fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Make sure `dir` exists and is writable, leaving nothing behind but the directory:
/// `Err` says why not.
pub fn check_writable_dir(dir: &Path) -> Result<(), String> {
    fs::create_dir_all(dir).map_err(|e| format!("cannot create it: {e}"))?;
    let probe = dir.join(format!(".blobrace-write-test-{}", std::process::id()));
    fs::write(&probe, b"x").map_err(|e| format!("cannot write in it: {e}"))?;
    fs::remove_file(&probe).map_err(|e| format!("cannot remove a file in it: {e}"))?;
    Ok(())
}

/// MemTotal from /proc/meminfo.
pub fn mem_total_bytes() -> Option<u64> {
    let text = fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// What `path` names, whatever its spelling: absolute, symbolic links and `.` and `..`
/// resolved. A path not made yet is its nearest existing folder's real path with the
/// rest appended (`..` in that rest taken lexically). Resources are compared and locked
/// by this, never by how they were typed: two runs on `data` and on `/work/data`
/// mounted one disk image twice, and both wrote it through their own file system.
pub fn canonical(path: &Path) -> PathBuf {
    use std::path::Component;
    for at in path.ancestors() {
        let existing = if at.as_os_str().is_empty() {
            Path::new(".")
        } else {
            at
        };
        let Ok(mut real) = fs::canonicalize(existing) else {
            continue;
        };
        for part in path.strip_prefix(at).unwrap_or(Path::new("")).components() {
            match part {
                Component::ParentDir => {
                    real.pop();
                }
                Component::Normal(name) => real.push(name),
                _ => {}
            }
        }
        return real;
    }
    path.to_path_buf()
}

/// Every mount point of this process's mount table, as paths (the table escapes a
/// space, a tab, a newline and a backslash in octal: `\040`).
pub fn mount_points() -> Vec<PathBuf> {
    let mountinfo = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    mountinfo
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(|field| PathBuf::from(unescape_mount_field(field)))
        .collect()
}

/// `/a\040b` → `/a b`.
fn unescape_mount_field(field: &str) -> std::ffi::OsString {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match (bytes[i], octal) {
            (b'\\', Some(d)) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    std::ffi::OsString::from_vec(out)
}

/// (fstype, source) of the mount holding `path`: the longest matching mount point.
pub fn filesystem_of(path: &Path) -> (String, String) {
    // A data directory not made yet (or given relative) is on the file system of its
    // nearest existing folder: a relative path matched no mount point ("unknown").
    let target = canonical(path);
    let mountinfo = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut best: Option<(usize, String, String)> = None;
    for line in mountinfo.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let Some(sep) = fields.iter().position(|f| *f == "-") else {
            continue;
        };
        let (Some(mount_point), Some(fstype), Some(source)) =
            (fields.get(4), fields.get(sep + 1), fields.get(sep + 2))
        else {
            continue;
        };
        let mount_point = PathBuf::from(unescape_mount_field(mount_point));
        let depth = mount_point.as_os_str().len();
        if target.starts_with(&mount_point) && best.as_ref().is_none_or(|b| depth >= b.0) {
            best = Some((depth, fstype.to_string(), source.to_string()));
        }
    }
    best.map(|(_, t, s)| (t, s))
        .unwrap_or_else(|| ("unknown".into(), "unknown".into()))
}

/// The file system holding `dir`, as statvfs(3) sees it.
pub fn statvfs(dir: &Path) -> std::io::Result<libc::statvfs> {
    let c = CString::new(dir.as_os_str().as_bytes())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: valid NUL-terminated path and a zeroed out-struct.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st)
}

/// Bytes an unprivileged writer may still use on the filesystem holding `dir`.
pub fn available_bytes(dir: &Path) -> std::io::Result<u64> {
    let st = statvfs(dir)?;
    Ok(st.f_bavail as u64 * st.f_frsize as u64)
}

/// Resident set high-water mark of this process (VmHWM), bytes.
pub fn peak_rss_bytes() -> Option<u64> {
    status_bytes("VmHWM:")
}

/// Resident set of this process now (VmRSS), bytes.
pub fn rss_bytes() -> Option<u64> {
    status_bytes("VmRSS:")
}

/// Hand memory freed by earlier loads back to the kernel. Each load's client threads
/// leave glibc malloc arenas holding their freed blob buffers (a quick run's process
/// sat at 145 MiB RSS after its 512 KiB loads), which the cap counts against every
/// engine after them.
pub fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free heap pages to the kernel; no pointer is touched.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// At most one glibc malloc arena per CPU the process may use. glibc gives each
/// new thread its own arena, up to 8 per core (16 here), and never hands a dead
/// thread's arena back: after a 16-client load of 4 MiB blobs the process kept 50-75 MiB
/// of freed buffers in them, on top of its 20 MiB, which every later step's memory check
/// counted as "now" (the issue saw 134 MiB, and every 16-client 4 MiB load skipped). With
/// one arena per CPU, threads that cannot run at once anyway share arenas, and a step
/// reuses what the last one freed: 17-29 MiB between steps, measured. Call before any
/// thread starts.
pub fn one_malloc_arena_per_cpu(cpus: f64) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes an allocator tunable, before other threads exist.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, cpus.ceil().max(1.0) as libc::c_int);
    }
}

/// A `kB` line of /proc/self/status, in bytes.
fn status_bytes(key: &str) -> Option<u64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// `read_ahead_kb` of the disk holding `data_dir`.
fn read_ahead_kb(data_dir: &Path) -> Option<u64> {
    let device = block_device(data_dir, Path::new("/sys")).ok()?;
    fs::read_to_string(format!(
        "/sys/dev/block/{}/queue/read_ahead_kb",
        device.major_minor
    ))
    .ok()?
    .trim()
    .parse()
    .ok()
}

/// A device as the block throttle names it: "MAJ:MIN", and its name.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockDevice {
    pub major_minor: String,
    pub name: String,
}

/// The whole disk holding `path` (or its nearest existing ancestor): the throttle works
/// on disks, not on partitions, so a partition is taken to its disk.
pub fn block_device(path: &Path, sys: &Path) -> Result<BlockDevice, String> {
    // Absolute first: a relative data dir not made yet ("data", the default) has no
    // existing ancestor of its own, and "/" may be another disk than the working dir's.
    let path =
        std::path::absolute(path).map_err(|e| format!("cannot resolve {}: {e}", path.display()))?;
    let existing = path
        .ancestors()
        .find(|p| p.exists())
        .unwrap_or(Path::new("/"));
    let dev = fs::metadata(existing)
        .map_err(|e| format!("cannot stat {}: {e}", existing.display()))?
        .dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let node = sys.join(format!("dev/block/{major}:{minor}"));
    let Ok(real) = fs::canonicalize(&node) else {
        return Err(format!(
            "{} is on device {major}:{minor}, which is not a block device: tmpfs, overlay and network filesystems have none, and btrfs, ZFS and the like give their files an anonymous device number, so the disk under it is not found",
            existing.display()
        ));
    };
    let disk: PathBuf = if real.join("partition").exists() {
        real.parent().map(Path::to_path_buf).unwrap_or(real)
    } else {
        real
    };
    let major_minor = fs::read_to_string(disk.join("dev"))
        .ok()
        .map(|s| s.trim().to_string())
        .ok_or_else(|| format!("cannot read {}/dev", disk.display()))?;
    let name = disk
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(BlockDevice { major_minor, name })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_place_has_one_canonical_name_however_it_is_spelt() {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(real.join("data")).unwrap();
        std::os::unix::fs::symlink(real.join("data"), real.join("link")).unwrap();
        let want = real.join("data/latency-disk");
        for spelt in [
            "data/latency-disk",
            "data/./latency-disk",
            "link/latency-disk",
            "data/new/../latency-disk",
        ] {
            assert_eq!(canonical(&real.join(spelt)), want, "{spelt}");
        }
        // Relative: from the working directory, as the process resolves it.
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(
            canonical(Path::new("no-such-dir/x")),
            canonical(&cwd).join("no-such-dir/x")
        );
        assert_eq!(
            unescape_mount_field("/a\\040b\\011c"),
            std::ffi::OsString::from("/a b\tc")
        );
        assert!(mount_points().contains(&PathBuf::from("/")));
    }

    #[test]
    fn facts_of_this_machine_are_filled_in() {
        let facts = MachineFacts::collect(Path::new("."));
        assert!(facts.logical_cpus >= 1);
        assert!(facts.ram_bytes > 0);
        assert!(!facts.kernel.is_empty());
        assert_ne!(facts.data_filesystem, "unknown");
        // Relative and not made yet: its nearest folder's file system, not "unknown".
        let (fs_type, device) = filesystem_of(Path::new("not-made-yet/data"));
        assert_eq!((fs_type, device), filesystem_of(Path::new(".")));
        if Path::new("/dev/shm").is_dir() {
            assert_eq!(filesystem_of(Path::new("/dev/shm/not/made")).0, "tmpfs");
        }
        assert!(available_bytes(Path::new(".")).unwrap() > 0);
        assert!(peak_rss_bytes().unwrap() > 0);
    }

    #[test]
    fn the_disks_model_scheduler_and_rotation_are_read_from_its_queue() {
        let sys = tempfile::tempdir().unwrap();
        let dev = fs::metadata(".").unwrap().dev();
        let node = format!("{}:{}", libc::major(dev), libc::minor(dev));
        let disk = sys.path().join("dev/block").join(&node);
        fs::create_dir_all(disk.join("queue")).unwrap();
        fs::create_dir_all(disk.join("device")).unwrap();
        fs::write(disk.join("dev"), format!("{node}\n")).unwrap();
        fs::write(disk.join("queue/scheduler"), "none [mq-deadline] kyber\n").unwrap();
        fs::write(disk.join("queue/rotational"), "1\n").unwrap();
        fs::write(disk.join("device/model"), "WDC WD40EFRX  \n").unwrap();
        let facts = disk_facts(Path::new("not-made-yet/data"), sys.path()).unwrap();
        assert_eq!(facts.model.as_deref(), Some("WDC WD40EFRX"));
        assert_eq!(facts.scheduler.as_deref(), Some("mq-deadline"));
        assert_eq!(facts.rotational, Some(true));
        // A virtio disk names no model: unknown, not an empty string.
        fs::remove_file(disk.join("device/model")).unwrap();
        let facts = disk_facts(Path::new("."), sys.path()).unwrap();
        assert_eq!(facts.model, None);
        assert!(facts.label().contains("model unknown"), "{}", facts.label());
    }
}
