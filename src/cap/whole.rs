//! A run's whole cap, applied the one way every command applies it (`measure`, `load`,
//! `env`, the benches): the memory and CPU cap first (a systemd scope it re-runs under
//! is told the disk cap), then the disk's rate on the data directory's disk.

use std::path::Path;

use super::disk::{DiskCap, ScopeDisk};
use super::{CapGuard, CapReport, CapRequest, CapUnavailable, apply, apply_disk};

/// Call before touching any data and before spawning threads, as `apply`. A memory cap
/// that cannot be had is the error, with what is in force instead.
pub fn apply_whole(
    req: CapRequest,
    disk: Option<&DiskCap>,
    data_dir: &Path,
) -> Result<(CapReport, CapGuard), CapUnavailable> {
    let scope_disk = disk.and_then(|d| ScopeDisk::of(d, data_dir));
    let (mut report, mut guard) = apply(req, scope_disk.as_ref())?;
    // The servers' containers get theirs when they are fitted to the run's cap
    // (`ServerCaps::cap_disks`), each result recording what its container held.
    if let Some(disk) = disk {
        apply_disk(&mut report, &mut guard, disk, data_dir);
    }
    Ok((report, guard))
}
