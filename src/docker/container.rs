//! What a server's container did while it was measured, as Docker and the kernel
//! report it: memory and page cache, CPU time, and bytes read from storage.
//!
//! Block-I/O counters (`blkio_stats`) are used when Docker fills them in; on some
//! hosts (this project's VMs among them) the list is empty, so the bytes the
//! container read also come from `/proc/<pid>/io` of its processes (host pids,
//! from Docker's `top`). What cannot be read is `None` ("unavailable"), never 0.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use bollard::Docker;
use bollard::query_parameters::StatsOptionsBuilder;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};

use crate::cap::{CapReport, CapRequest};
use crate::disk::io::DiskReadCounter;

/// One reading of a container.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ContainerSample {
    pub memory_usage_bytes: Option<u64>,
    /// Page cache charged to the container (cgroup v1 `total_cache`/`cache`, v2 `file`).
    pub page_cache_bytes: Option<u64>,
    /// CPU time used since the container started, in nanoseconds.
    pub cpu_time_ns: Option<u64>,
    /// Block-I/O bytes read, None when Docker's list is empty.
    pub blkio_read_bytes: Option<u64>,
    /// `read_bytes` summed over the container's processes, None when not readable from here.
    pub process_read_bytes: Option<u64>,
}

/// A container before and after a measurement (warm-up included).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ContainerStats {
    pub container: String,
    pub before: ContainerSample,
    pub after: ContainerSample,
    /// Environment variables of its main process asked for (`ServerDb::process_env`),
    /// "unset" where it has none; empty when none were asked for or they are unreadable.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub process_env: BTreeMap<String, String>,
}

impl ContainerStats {
    /// Bytes the container read from storage between the samples, from block I/O
    /// if Docker reports it, else from its processes; None if neither is known.
    pub fn disk_read_bytes(&self) -> Option<u64> {
        delta(self.before.blkio_read_bytes, self.after.blkio_read_bytes).or(delta(
            self.before.process_read_bytes,
            self.after.process_read_bytes,
        ))
    }

    pub fn cpu_time_ns(&self) -> Option<u64> {
        delta(self.before.cpu_time_ns, self.after.cpu_time_ns)
    }
}

fn delta(before: Option<u64>, after: Option<u64>) -> Option<u64> {
    before.zip(after).map(|(b, a)| a.saturating_sub(b))
}

/// A server's container being watched through one measurement.
pub struct ContainerWatch {
    pub id: String,
    pub name: String,
    pub before: ContainerSample,
    pub process_env: BTreeMap<String, String>,
    /// When the watch began: OOM kills since then are this measurement's.
    pub oom: crate::docker::OomWatch,
}

impl ContainerWatch {
    pub async fn start(docker: &Docker, id: &str, name: &str, env_names: &[&str]) -> Result<Self> {
        Ok(Self {
            id: id.to_string(),
            name: name.to_string(),
            oom: crate::docker::OomWatch::start(docker, id).await,
            before: sample(docker, id).await?,
            process_env: main_process_env(docker, id, env_names).await,
        })
    }

    pub async fn finish(&self, docker: &Docker) -> Result<ContainerStats> {
        Ok(ContainerStats {
            container: self.name.clone(),
            before: self.before.clone(),
            after: sample(docker, &self.id).await?,
            process_env: self.process_env.clone(),
        })
    }
}

impl ContainerWatch {
    /// The stats after the measurement, or None after saying why they are unavailable.
    pub async fn finish_or_note(&self) -> Option<ContainerStats> {
        let stats = async { self.finish(&crate::docker::connect().await?).await };
        match stats.await {
            Ok(stats) => Some(stats),
            Err(e) => {
                say!("{}: container stats unavailable ({e:#})", self.name);
                None
            }
        }
    }

    /// A failed fetch, with the reason when the container went down under it (a
    /// client only sees "unexpected EOF" when its server is OOM-killed). The client
    /// can see its connection drop before Docker has seen the process exit (a
    /// `docker kill` on a busy 2-core machine: "got 0 bytes at EOF" with the container
    /// still "running"), so where nothing is wrong yet it looks again for up to
    /// `SETTLE`: a failed fetch ends the cell anyway, and the reason is what the
    /// user needs.
    pub async fn explain(&self, error: anyhow::Error) -> anyhow::Error {
        const SETTLE: std::time::Duration = std::time::Duration::from_secs(3);
        let Ok(docker) = crate::docker::connect().await else {
            return error;
        };
        let started = std::time::Instant::now();
        loop {
            if let Some(why) = crate::docker::why_down(&docker, &self.id, Some(&self.oom)).await {
                return error.context(why);
            }
            if started.elapsed() >= SETTLE {
                return error;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }
}

/// A compose service about to be measured: the counter that sees its storage
/// reads (or why none does), and a watch on its container's stats.
/// `env_names`: environment variables of its main process to record (Go's GOMEMLIMIT).
pub async fn attach(
    service: &str,
    env_names: &[&str],
) -> Result<(Result<DiskReadCounter, String>, Option<ContainerWatch>)> {
    let docker = crate::docker::connect().await?;
    Ok(match crate::docker::find_service(&docker, service).await? {
        Some((id, name, _)) => (
            process_read_counter(&docker, &id, &name).await,
            Some(ContainerWatch::start(&docker, &id, &name, env_names).await?),
        ),
        None => (
            Err(format!("no running compose container for {service}")),
            None,
        ),
    })
}

/// The cap Docker enforces on a compose service's container, its notes printed;
/// None (said why) when it cannot be known.
pub async fn service_cap_or_note(service: &str, requested: CapRequest) -> Option<CapReport> {
    match crate::docker::service_cap(service, requested).await {
        Ok(Some(cap)) => {
            for note in &cap.notes {
                say!("{service} container: {note}");
            }
            Some(cap)
        }
        Ok(None) => {
            say!("{service}: no running compose container found: its cap is unavailable");
            None
        }
        Err(e) => {
            say!("{service}: cap unavailable ({e:#})");
            None
        }
    }
}

/// `env_names` as the container's main process (its first, pid 1 inside it) has them,
/// read from `/proc/<pid>/environ` here: what the server runs with, whatever the image's
/// entrypoint derived (the Dolt stand-in sets GOMEMLIMIT from its cap). Empty when
/// none are asked for or it cannot be read from this process (said why).
async fn main_process_env(
    docker: &Docker,
    id: &str,
    env_names: &[&str],
) -> BTreeMap<String, String> {
    if env_names.is_empty() {
        return BTreeMap::new();
    }
    let environ = async {
        let pid = *host_pids(docker, id)
            .await?
            .first()
            .context("no processes")?;
        std::fs::read(format!("/proc/{pid}/environ"))
            .with_context(|| format!("cannot read /proc/{pid}/environ"))
    };
    match environ.await {
        Ok(bytes) => env_values(&bytes, env_names),
        Err(e) => {
            say!("note: container {id}: its process environment is unavailable ({e:#})");
            BTreeMap::new()
        }
    }
}

/// The values of `names` in a NUL-separated environment block; "unset" for a name
/// missing or empty (Go reads an empty GOMEMLIMIT as no limit).
fn env_values(environ: &[u8], names: &[&str]) -> BTreeMap<String, String> {
    let vars: BTreeMap<&str, &str> = std::str::from_utf8(environ)
        .unwrap_or("")
        .split('\0')
        .filter_map(|kv| kv.split_once('='))
        .collect();
    names
        .iter()
        .map(|&name| {
            let value = vars.get(name).copied().filter(|v| !v.is_empty());
            (name.to_string(), value.unwrap_or("unset").to_string())
        })
        .collect()
}

/// The host pids of a container's processes, from Docker's `top` (its "PID" column).
pub async fn host_pids(docker: &Docker, id: &str) -> Result<Vec<u32>> {
    let top = docker
        .top_processes(id, None)
        .await
        .with_context(|| format!("cannot list the processes of container {id}"))?;
    let titles = top.titles.unwrap_or_default();
    let column = titles
        .iter()
        .position(|t| t == "PID")
        .context("docker top gave no PID column")?;
    Ok(top
        .processes
        .unwrap_or_default()
        .iter()
        .filter_map(|p| p.get(column)?.parse().ok())
        .collect())
}

/// A per-fetch storage-read counter over a container's processes. Fails (with the
/// reason) when this process cannot see them: another pid namespace (a pid that
/// is not in the container's cgroup here), or no permission to read their counters.
/// A process that ends between Docker's list and our look (a healthcheck's
/// `docker exec`, a helper at a server's start) is not one we cannot see: it is
/// left out, and the list taken again when that leaves nothing to count.
pub async fn process_read_counter(
    docker: &Docker,
    id: &str,
    name: &str,
) -> Result<DiskReadCounter, String> {
    let mut last_error = String::new();
    for _attempt in 0..3 {
        let pids = host_pids(docker, id).await.map_err(|e| format!("{e:#}"))?;
        let mut seen = Vec::new();
        for &pid in &pids {
            match std::fs::read_to_string(format!("/proc/{pid}/cgroup")) {
                Ok(cgroup) if cgroup.contains(id) => seen.push(pid),
                Ok(_) => {
                    return Err(format!(
                        "pid {pid} of container {name} is not visible from this process's pid namespace"
                    ));
                }
                // Ended since Docker listed it (or never here: then none is seen).
                Err(_) => {}
            }
        }
        if seen.is_empty() {
            last_error = format!(
                "none of the pids of container {name} ({pids:?}) is visible from this process's pid namespace"
            );
            continue;
        }
        match DiskReadCounter::open_pids(&seen, &format!("container {name}")) {
            Ok(counter) => return Ok(counter),
            // A process that ended between the two looks: list again.
            Err(e)
                if seen
                    .iter()
                    .any(|pid| !Path::new(&format!("/proc/{pid}")).exists()) =>
            {
                last_error = e;
            }
            Err(e) => return Err(e),
        }
    }
    Err(last_error)
}

/// One reading of a container's stats and its processes' read counters.
pub async fn sample(docker: &Docker, id: &str) -> Result<ContainerSample> {
    let options = StatsOptionsBuilder::new()
        .stream(false)
        .one_shot(true)
        .build();
    let stats = docker
        .stats(id, Some(options))
        .next()
        .await
        .context("Docker returned no stats")?
        .with_context(|| format!("cannot read the stats of container {id}"))?;
    let memory = stats.memory_stats.unwrap_or_default();
    let memory_map = memory.stats.unwrap_or_default();
    let page_cache_bytes = ["total_cache", "cache", "file"]
        .iter()
        .find_map(|k| memory_map.get(*k).copied());
    let cpu_time_ns = stats
        .cpu_stats
        .and_then(|c| c.cpu_usage)
        .and_then(|u| u.total_usage);
    let blkio_read_bytes = stats
        .blkio_stats
        .and_then(|b| b.io_service_bytes_recursive)
        .filter(|entries| !entries.is_empty())
        .map(|entries| {
            entries
                .iter()
                .filter(|e| {
                    e.op.as_deref()
                        .is_some_and(|op| op.eq_ignore_ascii_case("read"))
                })
                .filter_map(|e| e.value)
                .sum()
        });
    let process_read_bytes = match process_read_counter(docker, id, id).await {
        Ok(mut counter) => counter.read_bytes(),
        Err(_) => None,
    };
    Ok(ContainerSample {
        memory_usage_bytes: memory.usage,
        page_cache_bytes,
        cpu_time_ns,
        blkio_read_bytes,
        process_read_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_env_names_what_is_set_and_says_unset_for_the_rest() {
        let environ = b"PATH=/bin\0GOMEMLIMIT=805306368\0GOGC=\0HOME=/root\0";
        let got = env_values(environ, &["GOMEMLIMIT", "GOGC", "GODEBUG"]);
        let want: BTreeMap<String, String> = [
            ("GOMEMLIMIT", "805306368"),
            ("GOGC", "unset"),
            ("GODEBUG", "unset"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn disk_reads_prefer_blkio_and_are_unavailable_when_nothing_is_known() {
        let s = |blkio, procs| ContainerSample {
            blkio_read_bytes: blkio,
            process_read_bytes: procs,
            ..Default::default()
        };
        let stats = |before, after| ContainerStats {
            container: "c".into(),
            before,
            after,
            process_env: BTreeMap::new(),
        };
        assert_eq!(
            stats(s(Some(10), Some(1)), s(Some(110), Some(51))).disk_read_bytes(),
            Some(100)
        );
        assert_eq!(
            stats(s(None, Some(1)), s(None, Some(51))).disk_read_bytes(),
            Some(50)
        );
        assert_eq!(stats(s(None, None), s(None, None)).disk_read_bytes(), None);
        assert_eq!(stats(s(None, None), s(None, None)).cpu_time_ns(), None);
    }
}
