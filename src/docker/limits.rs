//! A container's memory and CPU limits: read back, declared by compose, updated to
//! the run's cap (and restarted where a limit only takes effect on restart).

use anyhow::{Context, Result};
use bollard::Docker;
use bollard::query_parameters::InspectContainerOptions;

use crate::cap::{CapMethod, CapReport, CapRequest, cap_notes};

use super::mounts::image_identity;
use super::*;

/// The cap Docker enforces on a compose service's container; None when it does not run.
pub async fn service_cap(service: &str, requested: CapRequest) -> Result<Option<CapReport>> {
    let docker = connect().await?;
    match find_service(&docker, service).await? {
        Some((id, _, _)) => container_cap(&docker, &id, requested).await.map(Some),
        None => Ok(None),
    }
}

/// The cap Docker enforces on a container, compared with the requested one.
pub async fn container_cap(docker: &Docker, id: &str, requested: CapRequest) -> Result<CapReport> {
    let info = docker
        .inspect_container(id, None::<InspectContainerOptions>)
        .await
        .with_context(|| format!("cannot inspect container {id}"))?;
    let image = image_identity(docker, &info).await;
    let (memory, cpus) = limits_of(&info.host_config.unwrap_or_default());
    let method = if memory.is_some() {
        CapMethod::DockerContainer
    } else {
        CapMethod::None
    };
    let name = info
        .name
        .unwrap_or_default()
        .trim_start_matches('/')
        .to_string();
    Ok(CapReport {
        requested,
        memory_limit_bytes: memory,
        cpu_limit: cpus,
        origin: method.origin(),
        method,
        cgroup_version: "docker".into(),
        cgroup: format!("container {name} ({image})"),
        notes: cap_notes(&requested, memory, cpus),
        housekeeping: Vec::new(),
        // The run's disk cap on this container (`cap::container_disk`), read back now.
        disk: info
            .state
            .and_then(|s| s.pid)
            .filter(|&pid| pid > 0)
            .and_then(|pid| crate::cap::container_disk::report(id, pid as u32))
            .map(Box::new),
    })
}

/// A container's memory cap (bytes) and CPUs as Docker holds them; None = no limit.
pub async fn container_limits(docker: &Docker, id: &str) -> Result<(Option<u64>, Option<f64>)> {
    let info = docker
        .inspect_container(id, None::<InspectContainerOptions>)
        .await
        .with_context(|| format!("cannot inspect container {id}"))?;
    Ok(limits_of(&info.host_config.unwrap_or_default()))
}

/// The caps a compose service declares for its container (its labels
/// `blobrace.memory` and `blobrace.cpus`, written from the same settings as its
/// `mem_limit` and `cpus`). Docker's update changes the limits, never the labels: this
/// is what a server goes back to, whatever a run killed before putting it back left.
/// None for each the container does not declare (created before the labels existed).
pub async fn declared_limits(docker: &Docker, id: &str) -> Result<(Option<u64>, Option<f64>)> {
    let info = docker
        .inspect_container(id, None::<InspectContainerOptions>)
        .await
        .with_context(|| format!("cannot inspect container {id}"))?;
    let labels = info.config.and_then(|c| c.labels).unwrap_or_default();
    let memory = labels
        .get(DECLARED_MEMORY_LABEL)
        .and_then(|m| crate::size::parse_bytes(m).ok());
    let cpus = labels
        .get(DECLARED_CPUS_LABEL)
        .and_then(|c| c.trim().parse::<f64>().ok());
    Ok((memory, cpus))
}

pub const DECLARED_MEMORY_LABEL: &str = "blobrace.memory";

pub const DECLARED_CPUS_LABEL: &str = "blobrace.cpus";

/// Memory cap (bytes) and CPUs (from `--cpus`, NanoCpus, or a CFS quota) of a host
/// config. 0 (or absent) means no limit in Docker's API: None.
pub(super) fn limits_of(host: &bollard::models::HostConfig) -> (Option<u64>, Option<f64>) {
    let memory = host.memory.filter(|&m| m > 0).map(|m| m as u64);
    let cpus = match (
        host.nano_cpus.filter(|&n| n > 0),
        host.cpu_quota.filter(|&q| q > 0),
        host.cpu_period,
    ) {
        (Some(nano), _, _) => Some(nano as f64 / 1e9),
        (None, Some(quota), Some(period)) if period > 0 => Some(quota as f64 / period as f64),
        _ => None,
    };
    (memory, cpus)
}

/// A host config's disk throttles (`HostConfig.BlkioDevice*`), each with its slot of
/// `cap::docker_blkio::LISTS`: `(slot, device path, rate)`.
pub fn blkio_lists(
    host: &bollard::models::HostConfig,
) -> Vec<(crate::cap::disk::LimitSlot, String, i64)> {
    let [read_iops, read_bps, write_iops, write_bps] =
        crate::cap::docker_blkio::LISTS.map(|(_, slot)| slot);
    [
        (read_iops, &host.blkio_device_read_iops),
        (read_bps, &host.blkio_device_read_bps),
        (write_iops, &host.blkio_device_write_iops),
        (write_bps, &host.blkio_device_write_bps),
    ]
    .into_iter()
    .flat_map(|(slot, list)| {
        list.iter()
            .flatten()
            .filter_map(move |d| Some((slot, d.path.clone()?, d.rate?)))
    })
    .collect()
}

/// Set a running container's memory cap (memory+swap the same: no swap stretching it)
/// and, if given, its CPUs, through Docker's container update. Lowering the cap below
/// what the container holds makes the kernel reclaim its page cache first.
pub async fn update_limits(
    docker: &Docker,
    id: &str,
    memory_bytes: u64,
    cpus: Option<f64>,
) -> Result<()> {
    let body = bollard::models::ContainerUpdateBody {
        memory: Some(memory_bytes as i64),
        memory_swap: Some(memory_bytes as i64),
        nano_cpus: cpus.map(|c| (c * 1e9).round() as i64),
        ..Default::default()
    };
    docker
        .update_container(id, body)
        .await
        .with_context(|| format!("cannot update the limits of container {id}"))
}

/// Stop a container, set its limits, start it and wait until healthy: for a server
/// whose own cache only changes on restart (its shared memory is not reclaimable,
/// so it must not be caught over a lowered cap while running).
pub async fn restart_with_limits(
    docker: &Docker,
    id: &str,
    memory_bytes: u64,
    cpus: Option<f64>,
    timeout: std::time::Duration,
) -> Result<()> {
    super::stop(docker, id).await?;
    update_limits(docker, id, memory_bytes, cpus).await?;
    super::start_and_wait(docker, id, timeout).await
}
