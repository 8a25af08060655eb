//! The disk cap on the servers' containers: found through each one's data volume,
//! written by `cap::container_disk`, and one an earlier run left behind taken off.

use anyhow::{Context, Result, bail};
use bollard::query_parameters::InspectContainerOptions;

use crate::cap::disk::{DiskCap, DiskLimits};
use crate::db::server::Server;
use crate::error::InputError;

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

/// The block device of a server's data volume, as seen from this process.
pub async fn volume_device(server: Server) -> Result<crate::cap::disk::BlockDevice> {
    Ok(volume_disk(server).await?.device)
}

/// A server's container created with a disk cap Docker keeps (compose's `blkio_config`
/// from a capped `scripts/compose-run.sh`): its id, name, the device path on Docker's
/// host and the limits.
struct DockerHeld {
    server: Server,
    id: String,
    name: String,
    path: String,
    limits: DiskLimits,
}

/// The servers whose containers Docker caps itself, each checked equal to the run's
/// disk cap (`check_docker_held`): inspected once, for the checks after it.
#[derive(Default)]
pub struct DockerHeldCaps(Vec<DockerHeld>);

impl DockerHeldCaps {
    fn of(&self, server: Server) -> Option<&DockerHeld> {
        self.0.iter().find(|h| h.server == server)
    }
}

async fn docker_held(server: Server) -> Result<Option<DockerHeld>> {
    // No Docker here: no container of ours, and none that Docker caps.
    let Ok(docker) = crate::docker::connect().await else {
        return Ok(None);
    };
    let Some((id, name, _)) = crate::docker::find_service(&docker, server.name()).await? else {
        return Ok(None);
    };
    let config = docker
        .inspect_container(&id, None::<InspectContainerOptions>)
        .await
        .with_context(|| format!("cannot inspect container {name}"))?
        .host_config
        .unwrap_or_default();
    let lists = crate::docker::blkio_lists(&config);
    let held = crate::cap::docker_blkio::held(&lists).map_err(anyhow::Error::msg)?;
    Ok(held.map(|(path, limits)| DockerHeld {
        server,
        id,
        name,
        path,
        limits,
    }))
}

/// Refuse a run whose servers' containers were created with a disk cap other than the
/// one it asks for (none included): Docker writes theirs into each new cgroup at every
/// start, so after a cold start's restart the server would read a disk capped otherwise
/// than its results say. The others, Docker's cap being the run's, are returned.
pub async fn check_docker_held(
    servers: &[(Server, String)],
    asked: Option<&DiskCap>,
) -> Result<DockerHeldCaps> {
    let mut held_caps = DockerHeldCaps::default();
    for (server, _) in servers {
        let Some(held) = docker_held(*server).await? else {
            continue;
        };
        let wanted = asked.map(|d| d.limits).unwrap_or_default();
        if held.limits != wanted {
            bail!(InputError::Value {
                what: "disk cap",
                input: asked.map_or_else(|| "none".to_string(), |d| d.asked.clone()),
                why: format!(
                    "{}'s container {} was created with a disk cap of its own ({} on {}: compose's blkio_config, as scripts/compose-run.sh writes it for a capped run), which Docker puts back at every restart, and this run asks for {}. Recreate the servers with the cap this run asks for: `BLOBRACE_DISK_CAP=<cap> scripts/compose-run.sh`, or `scripts/servers.sh up` for none",
                    server.name(),
                    held.name,
                    held.limits.label(),
                    held.path,
                    wanted.label()
                ),
            });
        }
        held_caps.0.push(held);
    }
    Ok(held_caps)
}

pub(super) async fn cap_disk(
    server: Server,
    disk: &DiskCap,
    docker_held: &DockerHeldCaps,
) -> Result<(String, String)> {
    // Created with it (checked equal by `check_docker_held`): Docker keeps it.
    if let Some(held) = docker_held.of(server) {
        crate::cap::container_disk::held_by_docker(&held.id, &held.path, disk);
        return Ok((
            held.id.clone(),
            format!(
                "disk capped at {} on {}, by Docker: its container {} was created with it (compose's blkio_config), read back from docker inspect",
                held.limits.label(),
                held.path,
                held.name
            ),
        ));
    }
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
pub async fn clear_left_disk_caps(servers: &[(Server, String)], docker_held: &DockerHeldCaps) {
    for (server, _) in servers {
        // Docker's own (checked by `check_docker_held`) is not one left over.
        if docker_held.of(*server).is_some() {
            continue;
        }
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
