//! The server containers as Docker sees them (bollard): which container runs a
//! compose service, and the cap Docker actually enforces on it. Servers are
//! capped by their containers, so this, not the compose file, is what results report.

use std::collections::HashMap;

use anyhow::{Context, Result};
use bollard::Docker;
use bollard::query_parameters::{InspectContainerOptions, ListContainersOptionsBuilder};

use crate::cap::{CapOrigin, CapReport, CapRequest, cap_notes};

/// The compose project name (`docker compose -p`, default: the compose file's directory).
pub const DEFAULT_PROJECT: &str = "compose";

/// Connect to the local Docker engine and agree on an API version.
pub async fn connect() -> Result<Docker> {
    let docker = Docker::connect_with_local_defaults().context(
        "cannot reach Docker (DOCKER_HOST, else /var/run/docker.sock): start Docker, or run scripts/docker-engine.sh as root",
    )?;
    let docker = docker.negotiate_version().await.context(
        "Docker did not answer: is the engine running, and may this user use its socket (root or the docker group)?",
    )?;
    Ok(docker)
}

/// The running container of a compose service, if any: (id, name, image).
pub async fn find_service(
    docker: &Docker,
    project: Option<&str>,
    service: &str,
) -> Result<Option<(String, String, String)>> {
    let mut labels = vec![format!("com.docker.compose.service={service}")];
    if let Some(project) = project {
        labels.push(format!("com.docker.compose.project={project}"));
    }
    let filters = HashMap::from([("label", labels), ("status", vec!["running".to_string()])]);
    let options = ListContainersOptionsBuilder::default()
        .filters(&filters)
        .build();
    let found = docker
        .list_containers(Some(options))
        .await
        .context("cannot list Docker containers")?;
    Ok(found.into_iter().next().map(|c| {
        let name = c
            .names
            .and_then(|n| n.into_iter().next())
            .unwrap_or_default()
            .trim_start_matches('/')
            .to_string();
        (c.id.unwrap_or_default(), name, c.image.unwrap_or_default())
    }))
}

/// The cap Docker enforces on a container, compared with the requested one.
pub async fn container_cap(docker: &Docker, id: &str, requested: CapRequest) -> Result<CapReport> {
    let info = docker
        .inspect_container(id, None::<InspectContainerOptions>)
        .await
        .with_context(|| format!("cannot inspect container {id}"))?;
    let host = info.host_config.unwrap_or_default();
    // 0 (or absent) means no limit in Docker's API.
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
    let name = info
        .name
        .unwrap_or_default()
        .trim_start_matches('/')
        .to_string();
    let image = info.config.and_then(|c| c.image).unwrap_or_default();
    Ok(CapReport {
        requested,
        memory_limit_bytes: memory,
        cpu_limit: cpus,
        origin: if memory.is_some() {
            CapOrigin::Inherited
        } else {
            CapOrigin::Uncapped
        },
        cgroup_version: "docker".into(),
        cgroup: format!("container {name} ({image})"),
        notes: cap_notes(&requested, memory, cpus),
    })
}
