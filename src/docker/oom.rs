//! Why a server's container stopped serving: OOM-killed by its cap, not running, or a
//! process inside it OOM-killed while the container went on (a PostgreSQL backend).
//!
//! A kill inside a running container is counted by the kernel's own counter of the
//! container's memory cgroup (`oom_kill` in v1's memory.oom_control, v2's
//! memory.events) where this process can see it, and by Docker's `oom` events where it
//! cannot (the measuring process in the capped runner container). The events alone are
//! not enough: Docker keeps only its last 256 events, and five servers' 2 s health
//! checks (three events each) push an `oom` event out in about half a minute; a full
//! test suite's run lost one that way (2026-12-05).

use std::collections::HashMap;

use anyhow::{Context, Result};
use bollard::Docker;
use bollard::query_parameters::{EventsOptionsBuilder, InspectContainerOptions};
use futures_util::StreamExt;

use crate::cap::cgroupfs::{Hierarchy, Roots, locate_process, oom_kill_count};

/// Where a watch on a container's OOM kills began: the time (for Docker's events) and
/// the kernel's count then (None where this process cannot read the container's cgroup).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OomWatch {
    pub since_secs: i64,
    pub kernel_kills: Option<u64>,
}

impl OomWatch {
    /// From now on. A container that is not running has no count to start from.
    pub async fn start(docker: &Docker, id: &str) -> Self {
        Self {
            since_secs: unix_now_secs(),
            kernel_kills: kernel_oom_kills(docker, id).await,
        }
    }

    /// The kills since the watch began: the kernel's count where both ends were read,
    /// else Docker's events since then (None where neither answers).
    async fn kills(&self, docker: &Docker, id: &str) -> Option<u64> {
        if let Some(before) = self.kernel_kills
            && let Some(now) = kernel_oom_kills(docker, id).await
        {
            return Some(now.saturating_sub(before));
        }
        oom_events_since(docker, id, self.since_secs)
            .await
            .ok()
            .map(|n| n as u64)
    }
}

/// Why a container stopped serving, if it did: OOM-killed by its memory cap, or not
/// running; or, with a watch, a process inside it OOM-killed since the watch began
/// while the container went on. None while it serves. A fetch error alone
/// ("unexpected EOF") hides all three.
pub async fn why_down(docker: &Docker, id: &str, watch: Option<&OomWatch>) -> Option<String> {
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
    // Docker's own flag can lag the kill: a container's exit can be handled before the
    // kernel's OOM event reaches Docker, and until then OOMKilled is false (a 16 MiB
    // `tail /dev/zero` read as "exit code 137" once in CI's run on 2026-11-28). So a
    // container killed by SIGKILL is asked again, its flag and its `oom` events since
    // it started, for up to 3 s.
    let oom_killed = state.oom_killed == Some(true)
        || (state.running != Some(true)
            && state.exit_code == Some(137)
            && oom_flagged_late(docker, id, state.started_at.as_deref()).await);
    if oom_killed {
        return Some(format!(
            "container {name} was OOM-killed by its memory cap ({cap}): the server needs more than the cap holds, what it holds already included (`blobrace env` lists the datasets it holds, `blobrace drop` frees them); raise --cap (BLOBRACE_CAP)"
        ));
    }
    if state.running != Some(true) {
        return Some(format!(
            "container {name} is not running (exit code {}): see `docker logs {name}`",
            state.exit_code.unwrap_or_default()
        ));
    }
    let kills = watch?.kills(docker, id).await?;
    (kills > 0).then(|| {
        format!(
            "the kernel's OOM killer acted {kills} time(s) inside container {name} (memory cap {cap}) and the container went on: a server process (a PostgreSQL backend, say) was killed, taking its connection with it. The clients' fetches in flight need more memory than the cap holds: use fewer --clients or smaller sizes, or raise --cap (BLOBRACE_CAP)"
        )
    })
}

/// Whether a container that exited with SIGKILL is flagged OOM-killed, or has an `oom`
/// event since it started, within 3 s.
async fn oom_flagged_late(docker: &Docker, id: &str, started_at: Option<&str>) -> bool {
    let started = started_at
        .and_then(|at| chrono::DateTime::parse_from_rfc3339(at).ok())
        .map(|at| at.timestamp());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    loop {
        if let Some(started) = started
            && oom_events_since(docker, id, started)
                .await
                .is_ok_and(|kills| kills > 0)
        {
            return true;
        }
        let flagged = docker
            .inspect_container(id, None::<InspectContainerOptions>)
            .await
            .ok()
            .and_then(|info| info.state?.oom_killed);
        if flagged == Some(true) {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// How many `oom` events Docker still holds for a container since `since` (unix
/// seconds). Docker sends one each time the OOM killer acts inside it, also when the
/// process it kills is not the container's first: a PostgreSQL backend dies, the
/// postmaster goes on, and the container's own OOMKilled flag stays false. Only its
/// last 256 events are kept, of every container.
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

/// The kernel's count of OOM kills in a running container's memory cgroup, where this
/// process sees the container's main process and its cgroup (same pid namespace and
/// /sys/fs/cgroup); None otherwise.
pub async fn kernel_oom_kills(docker: &Docker, id: &str) -> Option<u64> {
    let pid = super::main_pid(docker, id).await.ok()?;
    container_oom_kills(&Roots::system(), &pid.to_string(), id)
}

/// The OOM kills of container `id`'s memory cgroup, found from its process `pid`. A
/// cgroup out of sight resolves to its mount, the whole machine's count: only a
/// directory of the container's own is read.
fn container_oom_kills(roots: &Roots, pid: &str, id: &str) -> Option<u64> {
    let dir = match locate_process(roots, pid)? {
        Hierarchy::V1 { memory, .. } => memory,
        Hierarchy::V2 { dir, .. } => dir,
    };
    dir.to_string_lossy().contains(id).then_some(())?;
    oom_kill_count(&dir)
}

/// Seconds since the Unix epoch, as Docker's event filters take them.
pub fn unix_now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_memory_cgroup_is_found_in_v1_and_v2_listings_and_its_count_read() {
        let root = tempfile::tempdir().unwrap();
        let roots = Roots {
            cgroup: root.path().join("cgroup"),
            proc: root.path().join("proc"),
        };
        std::fs::create_dir_all(roots.proc.join("7")).unwrap();
        let v1 = "12:blkio:/docker/abc\n9:memory:/docker/abc\n0::/\n";
        std::fs::write(roots.proc.join("7/cgroup"), v1).unwrap();
        let dir = roots.cgroup.join("memory/docker/abc");
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(
            container_oom_kills(&roots, "7", "abc"),
            None,
            "no file: not a count of 0"
        );
        std::fs::write(
            dir.join("memory.oom_control"),
            "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n",
        )
        .unwrap();
        assert_eq!(container_oom_kills(&roots, "7", "abc"), Some(3));
        // A kernel before 4.13 has no oom_kill line: unknown, not 0.
        std::fs::write(
            dir.join("memory.oom_control"),
            "oom_kill_disable 0\nunder_oom 0\n",
        )
        .unwrap();
        assert_eq!(container_oom_kills(&roots, "7", "abc"), None);
        // Another container's process, or one whose cgroup is out of sight: not read.
        assert_eq!(container_oom_kills(&roots, "7", "other"), None);

        let v2 = "0::/system.slice/docker-abc.scope\n";
        std::fs::write(roots.proc.join("7/cgroup"), v2).unwrap();
        std::fs::write(roots.cgroup.join("cgroup.controllers"), "memory\n").unwrap();
        let dir = roots.cgroup.join("system.slice/docker-abc.scope");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("memory.events"),
            "low 0\nhigh 0\nmax 4\noom 2\noom_kill 2\noom_group_kill 0\n",
        )
        .unwrap();
        assert_eq!(container_oom_kills(&roots, "7", "abc"), Some(2));
    }
}
