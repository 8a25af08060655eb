//! The disk cap on the servers' containers: found through each one's data volume,
//! written by `cap::container_disk`, and one an earlier run left behind taken off.

use anyhow::{Result, bail};

use crate::cap::disk::DiskCap;
use crate::db::server::Server;

/// A server's container as the disk cap needs it: its id and name, the block device
/// of its data volume, and its main process.
struct VolumeDisk {
    id: String,
    name: String,
    device: crate::cap::disk::BlockDevice,
    pid: u32,
}

async fn volume_disk(server: Server) -> Result<VolumeDisk> {
    let docker = crate::docker::connect().await?;
    let Some((id, name, _)) = crate::docker::find_service(&docker, server.name()).await? else {
        bail!("no running compose container");
    };
    let Some((source, _)) =
        crate::docker::service_data_source(server.name(), server.container_data_dir()).await?
    else {
        bail!(
            "its data directory {} is not a mount",
            server.container_data_dir()
        );
    };
    // Measured from inside a container (the compose runner), the host's paths and
    // cgroups are not this process's to see.
    if !source.exists() {
        bail!(
            "its volume {} is not seen from here (run from inside a container?)",
            source.display()
        );
    }
    let device = crate::cap::disk::block_device(&source, std::path::Path::new("/sys"))
        .map_err(anyhow::Error::msg)?;
    let pid = crate::docker::main_pid(&docker, &id).await?;
    Ok(VolumeDisk {
        id,
        name,
        device,
        pid,
    })
}

pub(super) async fn cap_disk(server: Server, disk: &DiskCap) -> Result<(String, String)> {
    let at = volume_disk(server).await?;
    let in_force = crate::cap::container_disk::throttle(&at.id, at.pid, &at.device, disk)
        .map_err(anyhow::Error::msg)?;
    Ok((
        at.id,
        format!(
            "disk capped at {} on {} ({}), read back from container {}'s cgroup",
            in_force.label(),
            at.device.name,
            at.device.major_minor,
            at.name
        ),
    ))
}

/// A disk throttle an earlier run left on a server's container (it was killed before
/// it took it off) would slow every fetch of a run that asks for none, and its results
/// would say "uncapped": taken off before the run, and said. A server whose volume
/// this process cannot see (inside the compose runner, which caps no server's disk)
/// is not checked.
pub async fn clear_left_disk_caps(servers: &[(Server, String)]) {
    for (server, _) in servers {
        let Ok(at) = volume_disk(*server).await else {
            continue;
        };
        match crate::cap::container_disk::clear_left_over(&at.id, at.pid, &at.device) {
            Ok(None) => {}
            Ok(Some(held)) => say!(
                "note: {}: its container's cgroup held a disk cap ({} on {}) that an earlier run set and did not take off (stopped before its end): taken off",
                server.name(),
                held.label(),
                at.device.name
            ),
            Err(why) => say!(
                "note: {}: cannot check its container for a disk cap left by an earlier run: {why}",
                server.name()
            ),
        }
    }
}
