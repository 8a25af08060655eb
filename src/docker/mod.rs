//! The server containers as Docker sees them (bollard): which container runs a
//! compose service, and the cap Docker actually enforces on it. Servers are
//! capped by their containers, so this, not the compose file, is what results report.

pub mod container;
mod exec;
mod limits;
mod mounts;
mod oom;

use std::collections::HashMap;

use anyhow::{Context, Result, bail};
use bollard::Docker;
use bollard::query_parameters::{
    InspectContainerOptions, ListContainersOptions, ListContainersOptionsBuilder,
};

use exec::exec_status;
pub use exec::{dir_bytes_in_service, exec_output, exec_sh, exec_succeeds, http_get_inside};
pub use limits::{
    DECLARED_CPUS_LABEL, DECLARED_MEMORY_LABEL, blkio_lists, container_cap, container_limits,
    declared_limits, restart_with_limits, service_cap, update_limits,
};
pub use mounts::{
    RUNNER_IMAGE_VARIABLE, own_container_image, own_mount_source, service_data_source,
};
pub use oom::{OomWatch, kernel_oom_kills, oom_events_since, unix_now_secs, why_down};

/// The compose project whose containers are the servers (`BLOBRACE_COMPOSE_PROJECT`);
/// None: whichever project runs the service.
pub fn compose_project() -> Option<String> {
    std::env::var("BLOBRACE_COMPOSE_PROJECT").ok()
}

/// Which projects were searched for a service, for the line that found none: one that
/// BLOBRACE_COMPOSE_PROJECT names may be the wrong one; unset, every project was.
pub fn project_hint() -> String {
    match compose_project() {
        Some(project) => format!(
            "BLOBRACE_COMPOSE_PROJECT={project} has none: correct it, or unset it to search every project"
        ),
        None => "none in any compose project".into(),
    }
}

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

/// Listing a compose service's containers (of this project, where one is set): the
/// running one, or `all` of them whatever their state.
fn service_containers(service: &str, all: bool) -> ListContainersOptions {
    let mut labels = vec![format!("com.docker.compose.service={service}")];
    if let Some(project) = compose_project() {
        labels.push(format!("com.docker.compose.project={project}"));
    }
    let mut filters = HashMap::from([("label", labels)]);
    if !all {
        filters.insert("status", vec!["running".to_string()]);
    }
    ListContainersOptionsBuilder::default()
        .all(all)
        .filters(&filters)
        .build()
}

/// The running container of a compose service, if any: (id, name, image).
pub async fn find_service(
    docker: &Docker,
    service: &str,
) -> Result<Option<(String, String, String)>> {
    let options = service_containers(service, false);
    let found = docker
        .list_containers(Some(options))
        .await
        .context("cannot list Docker containers")?;
    // Two projects running the same service (a developer's and CI's) cannot be told
    // apart by the service label: picking one would restart, cap and count the reads
    // of a server other than the one the URL reaches.
    let projects: Vec<String> = found
        .iter()
        .filter_map(|c| {
            c.labels
                .as_ref()?
                .get("com.docker.compose.project")
                .cloned()
        })
        .collect();
    if found.len() > 1 {
        anyhow::bail!(
            "{service} runs in several compose projects ({}): set BLOBRACE_COMPOSE_PROJECT to the one whose server the URL reaches",
            projects.join(", ")
        );
    }
    Ok(found.into_iter().next().map(id_name_image))
}

fn id_name_image(c: bollard::models::ContainerSummary) -> (String, String, String) {
    let name = c
        .names
        .and_then(|n| n.into_iter().next())
        .unwrap_or_default()
        .trim_start_matches('/')
        .to_string();
    (c.id.unwrap_or_default(), name, c.image.unwrap_or_default())
}

/// A compose service's container, running or not: the running one where there is
/// one, else the only one there is (a server that stopped while starting under a
/// run's cap still has its limits to put back and its volume on the disk).
pub async fn find_service_any(
    docker: &Docker,
    service: &str,
) -> Result<Option<(String, String, String)>> {
    if let Some(running) = find_service(docker, service).await? {
        return Ok(Some(running));
    }
    let found = docker
        .list_containers(Some(service_containers(service, true)))
        .await
        .context("cannot list Docker containers")?;
    Ok(match <[_; 1]>::try_from(found) {
        Ok([one]) => Some(id_name_image(one)),
        Err(_) => None,
    })
}

/// After a connection failed: whether the compose service's container was on its way
/// back up (restarted by another run's load or cold start, an earlier run killed mid-
/// restart, compose recreating it) and has come up healthy since. Docker's proxy
/// accepts on the published port while the container is down, so a restarting server
/// looks like one that hangs up (and, while it is stopped, like one that is not there);
/// a server shutting down for a restart still shows "running, healthy" for a moment,
/// so a dropped connection looks `grace` long for a restart to begin. Waits up to
/// `timeout` while it starts and 3 s for a stopped container to start again; false
/// where it stays up as it was (the failure is something else) or no container of
/// the service exists here.
pub async fn came_back_up(
    service: &str,
    timeout: std::time::Duration,
    grace: std::time::Duration,
) -> bool {
    use bollard::models::{ContainerStateStatusEnum, HealthStatusEnum};
    let Ok(docker) = connect().await else {
        return false;
    };
    let options = service_containers(service, true);
    let started = std::time::Instant::now();
    let mut first_start: Option<Option<String>> = None;
    let mut said = false;
    loop {
        let Ok(found) = docker.list_containers(Some(options.clone())).await else {
            return false;
        };
        let [container] = found.as_slice() else {
            return false;
        };
        let Some(id) = container.id.as_deref() else {
            return false;
        };
        let Ok(info) = docker
            .inspect_container(id, None::<InspectContainerOptions>)
            .await
        else {
            return false;
        };
        let state = info.state.unwrap_or_default();
        let started_at = state.started_at.clone();
        let first = first_start
            .get_or_insert_with(|| started_at.clone())
            .clone();
        let waited = started.elapsed();
        let up = match (state.status, state.health.and_then(|h| h.status)) {
            (Some(ContainerStateStatusEnum::RUNNING), Some(HealthStatusEnum::STARTING)) => false,
            (Some(ContainerStateStatusEnum::RUNNING), _) => true,
            _ => false,
        };
        let restarted = said || started_at != first;
        if up && restarted {
            return true;
        }
        let give_up = if up {
            // As it was: a restart may be about to show, for `grace`.
            waited > grace
        } else if state.status == Some(ContainerStateStatusEnum::RUNNING)
            || state.status == Some(ContainerStateStatusEnum::RESTARTING)
            || state.status == Some(ContainerStateStatusEnum::CREATED)
        {
            waited > timeout
        } else {
            // `docker restart` starts it again within moments of its exit.
            waited > grace.max(std::time::Duration::from_secs(3))
        };
        if give_up {
            return false;
        }
        if !up && !said {
            say!("waiting for {service}: its container is starting");
            said = true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// Whether a connection error is the server going away (a restart, a crash), not a
/// refusal of what was asked (a wrong password, a missing database).
pub fn dropped_connection(error: &dyn std::fmt::Display) -> bool {
    let text = error.to_string();
    [
        "EOF",
        "Connection reset",
        "Connection refused",
        "Broken pipe",
        "connection closed",
    ]
    .iter()
    .any(|m| text.contains(m))
}

/// `error`, with the reason when the compose service's container went down under it
/// (running, stopped or OOM-killed: whichever container the service has).
pub async fn explain_service_failure(service: &str, error: anyhow::Error) -> anyhow::Error {
    let Ok(docker) = connect().await else {
        return error;
    };
    let options = service_containers(service, true);
    let Ok(found) = docker.list_containers(Some(options)).await else {
        return error;
    };
    for id in found.into_iter().filter_map(|c| c.id) {
        if let Some(why) = why_down(&docker, &id, None).await {
            return error.context(why);
        }
    }
    error
}

/// Restart a container and wait until Docker reports it healthy (or, with no
/// healthcheck, running). Restarting empties a server's own cache (shared_buffers,
/// the InnoDB buffer pool) but not the page cache: its pages move to the parent
/// cgroup and stay cached, so callers evict files too.
pub async fn restart_and_wait(
    docker: &Docker,
    id: &str,
    timeout: std::time::Duration,
) -> Result<()> {
    use bollard::query_parameters::RestartContainerOptionsBuilder;
    let grace = stop_seconds(docker, id).await?;
    docker
        .restart_container(
            id,
            Some(RestartContainerOptionsBuilder::new().t(grace).build()),
        )
        .await
        .with_context(|| format!("cannot restart container {id}"))?;
    wait_healthy(docker, id, timeout).await?;
    disk_cap_again(docker, id).await
}

/// Stop a container, giving it its own grace (`stop_seconds`). One that stopped already
/// (exited while starting under a run's cap) is left as it is: Docker refuses to stop a
/// stopped container.
pub async fn stop(docker: &Docker, id: &str) -> Result<()> {
    use bollard::query_parameters::StopContainerOptionsBuilder;
    let grace = stop_seconds(docker, id).await?;
    let running = docker
        .inspect_container(id, None::<InspectContainerOptions>)
        .await
        .with_context(|| format!("cannot inspect container {id}"))?
        .state
        .and_then(|s| s.running)
        .unwrap_or(false);
    if running {
        docker
            .stop_container(
                id,
                Some(StopContainerOptionsBuilder::new().t(grace).build()),
            )
            .await
            .with_context(|| format!("cannot stop container {id}"))?;
    }
    Ok(())
}

/// Start a stopped container and wait until it serves (`wait_healthy`), its disk cap
/// written again where the run set one.
pub async fn start_and_wait(docker: &Docker, id: &str, timeout: std::time::Duration) -> Result<()> {
    use bollard::query_parameters::StartContainerOptions;
    docker
        .start_container(id, None::<StartContainerOptions>)
        .await
        .with_context(|| format!("cannot start container {id}"))?;
    wait_healthy(docker, id, timeout).await?;
    disk_cap_again(docker, id).await
}

/// A restarted container has a new cgroup: the run's disk cap, where it set one on it
/// (`cap::container_disk`), is written again before anything reads, or the restart
/// fails rather than measure an uncapped disk as capped.
pub async fn disk_cap_again(docker: &Docker, id: &str) -> Result<()> {
    if !crate::cap::container_disk::throttled(id) {
        return Ok(());
    }
    let pid = main_pid(docker, id).await?;
    match crate::cap::container_disk::after_restart(id, pid) {
        Some(Err(why)) => {
            bail!("container {id} restarted, and its disk cap could not be set again: {why}")
        }
        _ => Ok(()),
    }
}

/// How long a stop waits for the container's process to exit before Docker kills it:
/// its own grace period where compose gives one (`stop_grace_period`: SeaweedFS's
/// 3 s, whose last step never ends by itself), else 30 s, time for a database's
/// shutdown checkpoint (Docker's own 10 s can cut one short).
pub async fn stop_seconds(docker: &Docker, id: &str) -> Result<i32> {
    let inspected = docker
        .inspect_container(id, None::<InspectContainerOptions>)
        .await
        .with_context(|| format!("cannot inspect container {id}"))?;
    let own = inspected.config.and_then(|c| c.stop_timeout);
    Ok(own.map_or(30, |s| s.clamp(0, i64::from(i32::MAX)) as i32))
}

/// Wait until a (re)started container serves: its own health test (the compose
/// healthcheck, e.g. `pg_isready`) run through `docker exec` every 50 ms until it
/// passes, or Docker's health status turning healthy. Docker runs that test only once
/// per `interval` (2 s here), the first time one interval after the start: waiting for
/// its status alone made a cold start take 3-4 s where the server was ready in 0.3 s.
/// A container without a health test is ready when it runs.
async fn wait_healthy(docker: &Docker, id: &str, timeout: std::time::Duration) -> Result<()> {
    use bollard::models::{ContainerStateStatusEnum, HealthStatusEnum};
    let started = std::time::Instant::now();
    let test = health_test(docker, id).await?;
    loop {
        let state = docker
            .inspect_container(id, None::<InspectContainerOptions>)
            .await?
            .state
            .unwrap_or_default();
        let running = state.running == Some(true);
        let healthy = match state.health.and_then(|h| h.status) {
            Some(HealthStatusEnum::HEALTHY) => true,
            _ if running => match &test {
                None => true,
                // An exec that fails (the container dying as it starts) is not
                // healthy yet: the loop then sees it stopped, and why.
                Some(cmd) => matches!(exec_status(docker, id, cmd.clone()).await, Ok(Some(0))),
            },
            _ => false,
        };
        if healthy {
            return Ok(());
        }
        // Exited while starting (a server OOM-killed by a cap too small for what it
        // loads at start, Dolt's 12 GiB at 1 KiB under 256 MiB): no health check will
        // pass, so say why now instead of after the whole timeout. Compose gives these
        // containers no restart policy.
        if !running
            && state.restarting != Some(true)
            && state.status.is_some_and(|s| {
                matches!(
                    s,
                    ContainerStateStatusEnum::EXITED | ContainerStateStatusEnum::DEAD
                )
            })
        {
            let why = why_down(docker, id, None)
                .await
                .unwrap_or_else(|| format!("container {id} stopped"));
            anyhow::bail!("it stopped while starting: {why}");
        }
        if started.elapsed() > timeout {
            anyhow::bail!(
                "container {id} was not healthy {}s after a (re)start",
                timeout.as_secs()
            );
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// A container's health test as a command to exec: `CMD a b` is `[a, b]`, `CMD-SHELL s`
/// is `sh -c s`; None where it has none (or `NONE`).
async fn health_test(docker: &Docker, id: &str) -> Result<Option<Vec<String>>> {
    let info = docker
        .inspect_container(id, None::<InspectContainerOptions>)
        .await
        .with_context(|| format!("cannot inspect container {id}"))?;
    let test = info
        .config
        .and_then(|c| c.healthcheck)
        .and_then(|h| h.test)
        .unwrap_or_default();
    Ok(health_command(&test))
}

fn health_command(test: &[String]) -> Option<Vec<String>> {
    match test.split_first() {
        Some((kind, rest)) if kind == "CMD" && !rest.is_empty() => Some(rest.to_vec()),
        Some((kind, rest)) if kind == "CMD-SHELL" && !rest.is_empty() => {
            Some(vec!["sh".into(), "-c".into(), rest.join(" ")])
        }
        _ => None,
    }
}

/// The host pid of a running container's main process.
pub async fn main_pid(docker: &Docker, id: &str) -> Result<u32> {
    let info = docker
        .inspect_container(id, None::<InspectContainerOptions>)
        .await
        .with_context(|| format!("cannot inspect container {id}"))?;
    info.state
        .and_then(|s| s.pid)
        .filter(|&pid| pid > 0)
        .map(|pid| pid as u32)
        .with_context(|| format!("container {id} has no running process"))
}

/// Why a compose service's container stopped serving (see `why_down`), if it did and
/// exactly one container of the service exists here; None otherwise.
pub async fn service_why_down(service: &str) -> Option<String> {
    let docker = connect().await.ok()?;
    let found = docker
        .list_containers(Some(service_containers(service, true)))
        .await
        .ok()?;
    let [container] = found.as_slice() else {
        return None;
    };
    why_down(&docker, container.id.as_deref()?, None).await
}

#[cfg(test)]
mod tests {
    use super::health_command;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn health_tests_become_the_commands_docker_would_run() {
        assert_eq!(
            health_command(&strings(&["CMD", "healthcheck.sh", "--connect"])),
            Some(strings(&["healthcheck.sh", "--connect"]))
        );
        assert_eq!(
            health_command(&strings(&["CMD-SHELL", "pg_isready -U blobrace"])),
            Some(strings(&["sh", "-c", "pg_isready -U blobrace"]))
        );
        assert_eq!(health_command(&strings(&["NONE"])), None);
        assert_eq!(health_command(&strings(&["CMD"])), None);
        assert_eq!(health_command(&[]), None);
    }
}
