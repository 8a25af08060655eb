//! The server containers as Docker sees them (bollard): which container runs a
//! compose service, and the cap Docker actually enforces on it. Servers are
//! capped by their containers, so this, not the compose file, is what results report.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use bollard::Docker;
use bollard::query_parameters::{
    EventsOptionsBuilder, InspectContainerOptions, ListContainersOptions,
    ListContainersOptionsBuilder,
};
use futures_util::StreamExt;

use crate::cap::{CapMethod, CapReport, CapRequest, cap_notes};

/// The compose project whose containers are the servers (`BLOBRACE_COMPOSE_PROJECT`);
/// None: whichever project runs the service.
pub fn compose_project() -> Option<String> {
    std::env::var("BLOBRACE_COMPOSE_PROJECT").ok()
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
            eprintln!("waiting for {service}: its container is starting");
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
    })
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
    docker
        .restart_container(
            id,
            Some(RestartContainerOptionsBuilder::new().t(30).build()),
        )
        .await
        .with_context(|| format!("cannot restart container {id}"))?;
    wait_healthy(docker, id, timeout).await
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
fn limits_of(host: &bollard::models::HostConfig) -> (Option<u64>, Option<f64>) {
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
    use bollard::query_parameters::{StartContainerOptions, StopContainerOptionsBuilder};
    docker
        .stop_container(id, Some(StopContainerOptionsBuilder::new().t(30).build()))
        .await
        .with_context(|| format!("cannot stop container {id}"))?;
    update_limits(docker, id, memory_bytes, cpus).await?;
    docker
        .start_container(id, None::<StartContainerOptions>)
        .await
        .with_context(|| format!("cannot start container {id}"))?;
    wait_healthy(docker, id, timeout).await
}

/// Wait until a (re)started container serves: its own health test (the compose
/// healthcheck, e.g. `pg_isready`) run through `docker exec` every 50 ms until it
/// passes, or Docker's health status turning healthy. Docker runs that test only once
/// per `interval` (2 s here), the first time one interval after the start: waiting for
/// its status alone made a cold start take 3-4 s where the server was ready in 0.3 s.
/// A container without a health test is ready when it runs.
async fn wait_healthy(docker: &Docker, id: &str, timeout: std::time::Duration) -> Result<()> {
    use bollard::models::HealthStatusEnum;
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
                Some(cmd) => exec_status(docker, id, cmd.clone()).await? == Some(0),
            },
            _ => false,
        };
        if healthy {
            return Ok(());
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

/// An exec of `cmd` as root in a running container, its output attached or not: its id.
async fn create_exec(docker: &Docker, id: &str, cmd: Vec<String>, attach: bool) -> Result<String> {
    use bollard::exec::CreateExecOptions;
    let exec = docker
        .create_exec(
            id,
            CreateExecOptions {
                cmd: Some(cmd),
                user: Some("root".to_string()),
                attach_stdout: Some(attach),
                attach_stderr: Some(attach),
                ..Default::default()
            },
        )
        .await
        .with_context(|| format!("cannot exec in container {id}"))?;
    Ok(exec.id)
}

/// Run `cmd` inside a running container and wait for it: its exit code (None when
/// Docker reports none).
async fn exec_status(docker: &Docker, id: &str, cmd: Vec<String>) -> Result<Option<i64>> {
    use bollard::exec::StartExecOptions;
    let exec = create_exec(docker, id, cmd, false).await?;
    docker
        .start_exec(
            &exec,
            Some(StartExecOptions {
                detach: true,
                ..Default::default()
            }),
        )
        .await?;
    loop {
        let info = docker.inspect_exec(&exec).await?;
        if info.running != Some(true) {
            return Ok(info.exit_code);
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// Run `cmd` inside a running container: its exit code and its standard output,
/// byte for byte (standard error is dropped).
pub async fn exec_output(
    docker: &Docker,
    id: &str,
    cmd: Vec<String>,
) -> Result<(Option<i64>, Vec<u8>)> {
    use bollard::container::LogOutput;
    use bollard::exec::StartExecResults;
    let exec = create_exec(docker, id, cmd, true).await?;
    let mut out = Vec::new();
    if let StartExecResults::Attached { mut output, .. } = docker.start_exec(&exec, None).await? {
        while let Some(chunk) = output.next().await {
            if let LogOutput::StdOut { message } = chunk? {
                out.extend_from_slice(&message);
            }
        }
    }
    let info = docker.inspect_exec(&exec).await?;
    Ok((info.exit_code, out))
}

/// `GET path` from `127.0.0.1:port` inside a container (a server's debug endpoint that
/// listens on the container's loopback only), through bash's /dev/tcp: the raw
/// HTTP/1.0 response. Needs bash in the image (Dolt's has it).
pub async fn http_get_inside(docker: &Docker, id: &str, port: u16, path: &str) -> Result<Vec<u8>> {
    let script = format!(
        "exec 3<>/dev/tcp/127.0.0.1/{port} && printf 'GET {path} HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n' >&3 && cat <&3"
    );
    let cmd = vec!["bash".to_string(), "-c".to_string(), script];
    match exec_output(docker, id, cmd).await? {
        (Some(0), out) => Ok(out),
        (code, _) => anyhow::bail!(
            "nothing listens on 127.0.0.1:{port} in container {id} (bash exited with {code:?})"
        ),
    }
}

/// The bytes a directory holds inside a compose service's running container (`du -sb`),
/// or None where the service runs in no container here (a server it does not manage).
pub async fn dir_bytes_in_service(service: &str, dir: &str) -> Result<Option<u64>> {
    let docker = connect().await?;
    let Some((id, name, _)) = find_service(&docker, service).await? else {
        return Ok(None);
    };
    let cmd = vec!["du".to_string(), "-sb".to_string(), dir.to_string()];
    match exec_output(&docker, &id, cmd).await? {
        (Some(0), out) => {
            let text = String::from_utf8_lossy(&out);
            let bytes = text.split_whitespace().next().and_then(|n| n.parse().ok());
            bytes
                .map(Some)
                .with_context(|| format!("`du -sb {dir}` in {name} said {text:?}"))
        }
        (code, _) => anyhow::bail!("`du -sb {dir}` in {name} exited with {code:?}"),
    }
}

/// Run `sh -c script` inside a container and wait for it; error on a non-zero exit.
pub async fn exec_sh(docker: &Docker, id: &str, script: &str) -> Result<()> {
    let cmd = vec!["sh".to_string(), "-c".to_string(), script.to_string()];
    match exec_status(docker, id, cmd).await? {
        Some(0) => Ok(()),
        code => anyhow::bail!("`{script}` in container {id} exited with {code:?}"),
    }
}

/// When this process runs in a Docker container (the compose runner): "image, image id".
/// Docker names a container's host after its short id.
pub async fn own_container_image() -> Option<String> {
    std::fs::metadata("/.dockerenv").ok()?;
    let hostname = std::fs::read_to_string("/etc/hostname").ok()?;
    let docker = connect().await.ok()?;
    let info = docker
        .inspect_container(hostname.trim(), None::<InspectContainerOptions>)
        .await
        .ok()?;
    Some(image_identity(&docker, &info).await)
}

/// Where a container's mount at `destination` comes from on Docker's host (a volume's
/// mount point, a bind's source), and the volume's name for a volume.
async fn mount_source(
    docker: &Docker,
    container: &str,
    destination: &str,
) -> Result<Option<(PathBuf, Option<String>)>> {
    let info = docker
        .inspect_container(container, None::<InspectContainerOptions>)
        .await
        .with_context(|| format!("cannot inspect container {container}"))?;
    let destination = Path::new(destination);
    let mounts = info.mounts.unwrap_or_default();
    // A data directory named by a variable of the container (PostgreSQL's "$PGDATA")
    // matches no destination: a container with one mount keeps its data there.
    let only = (mounts.len() == 1).then(|| mounts[0].clone());
    let found = mounts
        .into_iter()
        .find(|m| m.destination.as_deref().map(Path::new) == Some(destination))
        .or(only);
    Ok(found.map(|m| (PathBuf::from(m.source.unwrap_or_default()), m.name)))
}

/// Where a compose service keeps its data on Docker's host: the source of its mount
/// at `data_dir` (a volume's mount point under Docker's root), and the volume's name.
pub async fn service_data_source(
    service: &str,
    data_dir: &str,
) -> Result<Option<(PathBuf, Option<String>)>> {
    let docker = connect().await?;
    let Some((id, _, _)) = find_service(&docker, service).await? else {
        return Ok(None);
    };
    mount_source(&docker, &id, data_dir).await
}

/// Inside a container (the compose runner): where its own mount at `dir` comes from on
/// Docker's host. None outside a container, or where `dir` is not a mount.
pub async fn own_mount_source(dir: &Path) -> Option<PathBuf> {
    std::fs::metadata("/.dockerenv").ok()?;
    let hostname = std::fs::read_to_string("/etc/hostname").ok()?;
    let docker = connect().await.ok()?;
    let (source, _) = mount_source(&docker, hostname.trim(), &dir.to_string_lossy())
        .await
        .ok()??;
    Some(source)
}

/// "tag, image id" and, for a pulled image, its registry digest ("repo@sha256:…"): the id
/// pins what ran here whatever the tag points at later; the digest is what another
/// machine pulls to get the same image. Images built locally have no digest.
async fn image_identity(
    docker: &Docker,
    info: &bollard::models::ContainerInspectResponse,
) -> String {
    let tag = info
        .config
        .as_ref()
        .and_then(|c| c.image.clone())
        .unwrap_or_default();
    let id = info.image.clone().unwrap_or_default();
    let digests = match docker.inspect_image(&id).await {
        Ok(image) => image.repo_digests.unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    match digests.first() {
        Some(digest) => format!("{tag}, {id}, {digest}"),
        None => format!("{tag}, {id}"),
    }
}

/// Why a container stopped serving, if it did: OOM-killed by its memory cap, or not
/// running; or, with `since` (unix seconds), a process inside it OOM-killed since then
/// while the container went on. None while it serves. A fetch error alone
/// ("unexpected EOF") hides all three.
pub async fn why_down(docker: &Docker, id: &str, since: Option<i64>) -> Option<String> {
    let info = docker
        .inspect_container(id, None::<InspectContainerOptions>)
        .await
        .ok()?;
    let name = info.name.unwrap_or_default();
    let name = name.trim_start_matches('/');
    let cap = info
        .host_config
        .and_then(|h| h.memory)
        .filter(|&m| m > 0)
        .map(|m| crate::size::format_bytes(m as u64));
    let cap = cap.as_deref().unwrap_or("none");
    let state = info.state.unwrap_or_default();
    if state.oom_killed == Some(true) {
        return Some(format!(
            "container {name} was OOM-killed by its memory cap ({cap}): the server needs more than the cap holds; raise --cap (BLOBRACE_CAP)"
        ));
    }
    if state.running != Some(true) {
        return Some(format!(
            "container {name} is not running (exit code {}): see `docker logs {name}`",
            state.exit_code.unwrap_or_default()
        ));
    }
    let kills = oom_events_since(docker, id, since?).await.ok()?;
    (kills > 0).then(|| {
        format!(
            "the kernel's OOM killer acted {kills} time(s) inside container {name} (memory cap {cap}) and the container went on: a server process (a PostgreSQL backend, say) was killed, taking its connection with it. The clients' fetches in flight need more memory than the cap holds: use fewer --clients or smaller sizes, or raise --cap (BLOBRACE_CAP)"
        )
    })
}

/// How many times the OOM killer acted inside a container since `since` (unix
/// seconds). Docker sends an `oom` event each time, also when the process it kills
/// is not the container's first: a PostgreSQL backend dies, the postmaster goes on,
/// and the container's own OOMKilled flag stays false.
pub async fn oom_events_since(docker: &Docker, id: &str, since: i64) -> Result<usize> {
    let until = unix_now_secs() + 1;
    let filters = HashMap::from([
        ("type", vec!["container"]),
        ("event", vec!["oom"]),
        ("container", vec![id]),
    ]);
    let options = EventsOptionsBuilder::default()
        .since(&since.to_string())
        .until(&until.to_string())
        .filters(&filters)
        .build();
    let events: Vec<_> = docker.events(Some(options)).collect().await;
    let mut kills = 0;
    for event in events {
        event.context("reading Docker's events")?;
        kills += 1;
    }
    Ok(kills)
}

/// Seconds since the Unix epoch, as Docker's event filters take them.
pub fn unix_now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
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
