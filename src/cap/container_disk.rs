//! The disk cap on a server's container (`--disk-cap` with server engines): the block
//! throttle the measuring process gets (`disk.rs`), written from Docker's host into the
//! container's own cgroup. `docker update` changes memory and CPUs only, and Docker's
//! `--device-read-iops` is fixed when a container is created, so the run writes the
//! limits itself. A restart (every cold start) gives the container a new cgroup: the
//! limits are written again after each (`docker::restart_and_wait`), and taken off when
//! the run puts its servers back.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use super::disk::{
    BlockDevice, DiskCap, DiskCapReport, DiskLimits, read_io_max, read_v1, write_io_max, write_v1,
};

/// The containers this process throttled, by id: the device and the cap asked, to write
/// again after a restart and to report with each result.
static THROTTLED: Mutex<BTreeMap<String, (BlockDevice, DiskCap)>> = Mutex::new(BTreeMap::new());

/// The containers whose disk cap Docker keeps (created with it: `docker_blkio`), by
/// id: the device path on Docker's host and the cap. Nothing to write after a restart
/// (Docker writes it into each new cgroup) and nothing to take off.
static DOCKER_HELD: Mutex<BTreeMap<String, (String, DiskCap)>> = Mutex::new(BTreeMap::new());

/// `container` was created with `cap` on `device_path` (Docker's `HostConfig`, checked
/// equal by the caller): its results are recorded under it.
pub fn held_by_docker(container: &str, device_path: &str, cap: &DiskCap) {
    DOCKER_HELD
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(
            container.to_string(),
            (device_path.to_string(), cap.clone()),
        );
}

/// Where the limits of the cgroup of process `pid` are written.
enum Place {
    /// cgroup v1: its blkio directory (`blkio.throttle.*_device`).
    V1(PathBuf),
    /// cgroup v2: its directory (`io.max`).
    V2(PathBuf),
}

fn place_of(pid: u32) -> Result<Place, String> {
    let listed = std::fs::read_to_string(format!("/proc/{pid}/cgroup"))
        .map_err(|e| format!("cannot read /proc/{pid}/cgroup: {e}"))?;
    for line in listed.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(rel)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let rel = rel.trim_start_matches('/');
        if controllers.split(',').any(|c| c == "blkio") {
            let dir = ["blkio", controllers]
                .iter()
                .map(|m| PathBuf::from("/sys/fs/cgroup").join(m).join(rel))
                .find(|d| d.join("blkio.throttle.read_iops_device").exists())
                .ok_or_else(|| {
                    format!("the blkio cgroup of process {pid} (/{rel}) is not seen from here")
                })?;
            return Ok(Place::V1(dir));
        }
        if controllers.is_empty() && !listed.contains("blkio") {
            let dir = PathBuf::from("/sys/fs/cgroup").join(rel);
            if dir.join("io.max").exists() {
                return Ok(Place::V2(dir));
            }
            return Err(format!(
                "{} has no io.max (the io controller is not enabled for it)",
                dir.display()
            ));
        }
    }
    Err(format!("process {pid} lists no blkio or unified cgroup"))
}

/// Write `limits` for `device` into the cgroup of the container's main process `pid`,
/// remember them for its restarts, and return what the cgroup holds.
pub fn throttle(
    container: &str,
    pid: u32,
    device: &BlockDevice,
    cap: &DiskCap,
) -> Result<DiskLimits, String> {
    let in_force = write_limits(pid, &device.major_minor, &cap.limits)?;
    THROTTLED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(container.to_string(), (device.clone(), cap.clone()));
    Ok(in_force)
}

/// What `container`'s cgroup holds now, read back, for a result measured on it; None
/// where this process set no disk cap on it.
pub fn report(container: &str, pid: u32) -> Option<DiskCapReport> {
    if let Some((path, cap)) = DOCKER_HELD
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(container)
        .cloned()
    {
        return Some(DiskCapReport {
            in_force: cap.limits,
            asked: cap,
            device: Some(path),
            method: "Docker's blkio_config, set when the container was created (read back from docker inspect; Docker writes it into the cgroup at every start)".into(),
            cgroup: format!("container {container}"),
            notes: Vec::new(),
        });
    }
    let (device, cap) = THROTTLED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(container)
        .cloned()?;
    let (method, cgroup, in_force, mut notes) = match place_of(pid) {
        Ok(Place::V1(dir)) => (
            "container's v1 blkio cgroup",
            dir.display().to_string(),
            read_v1(&dir, &device.major_minor),
            Vec::new(),
        ),
        Ok(Place::V2(dir)) => (
            "container's v2 io.max",
            dir.display().to_string(),
            read_io_max(&dir, &device.major_minor),
            Vec::new(),
        ),
        Err(why) => (
            "not capped",
            String::new(),
            DiskLimits::default(),
            vec![format!("disk not capped: {why}")],
        ),
    };
    if in_force != cap.limits && notes.is_empty() {
        notes.push(format!(
            "the container's cgroup holds {} where {} was asked",
            in_force.label(),
            cap.limits.label()
        ));
    }
    Some(DiskCapReport {
        asked: cap,
        device: Some(format!("{} {}", device.major_minor, device.name)),
        in_force,
        method: method.into(),
        cgroup,
        notes,
    })
}

/// Whether this process set limits on `container` (a restart must write them again).
pub fn throttled(container: &str) -> bool {
    THROTTLED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains_key(container)
}

/// After `container` restarted (its main process now `pid`): its limits written again
/// and read back; None where this process set none on it.
pub fn after_restart(container: &str, pid: u32) -> Option<Result<DiskLimits, String>> {
    let (device, cap) = THROTTLED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(container)
        .cloned()?;
    Some(write_limits(pid, &device.major_minor, &cap.limits))
}

/// The run is over: `container`'s limits taken off (none were there before: Docker
/// sets none unless the container was created with them).
pub fn lift(container: &str, pid: u32) -> Result<(), String> {
    let Some((device, _)) = THROTTLED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(container)
    else {
        return Ok(());
    };
    write_limits(pid, &device.major_minor, &DiskLimits::default()).map(|_| ())
}

/// A throttle on `device` in the cgroup of the container's main process `pid` that
/// this process did not write: one an earlier run wrote and never took off (killed,
/// or its machine stopped, before the end). It is taken off, read back, and what it
/// held returned; None where the cgroup holds none (or this process set it).
pub fn clear_left_over(
    container: &str,
    pid: u32,
    device: &BlockDevice,
) -> Result<Option<DiskLimits>, String> {
    if throttled(container) {
        return Ok(None);
    }
    let held = match place_of(pid)? {
        Place::V1(dir) => read_v1(&dir, &device.major_minor),
        Place::V2(dir) => read_io_max(&dir, &device.major_minor),
    };
    if held.is_empty() {
        return Ok(None);
    }
    let after = write_limits(pid, &device.major_minor, &DiskLimits::default())?;
    if !after.is_empty() {
        return Err(format!(
            "its cgroup holds {} on {} and still {} after it was taken off",
            held.label(),
            device.name,
            after.label()
        ));
    }
    Ok(Some(held))
}

/// Every limit written (an unset one removed: v1's 0, v2's `max`), then read back.
fn write_limits(pid: u32, device: &str, limits: &DiskLimits) -> Result<DiskLimits, String> {
    match place_of(pid)? {
        Place::V1(dir) => {
            write_v1(&dir, device, limits)?;
            Ok(read_v1(&dir, device))
        }
        Place::V2(dir) => {
            write_io_max(&dir, device, limits)?;
            Ok(read_io_max(&dir, device))
        }
    }
}
