//! The run sets its servers' caps. A server container keeps the cap it was started
//! with: after `scripts/servers.sh up` (1 GiB) a quick run (256 MiB cap, 768 MiB of
//! data) would measure servers that hold all of their data in memory. So before
//! loading, each server's container gets the run's memory cap and CPUs through
//! Docker's API, and its own cache the size that cap calls for (the descriptor's
//! `cache_bytes_for_cap`); what changed is recorded with the run.

use std::time::Duration;

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

use crate::cap::CapRequest;
use crate::cap::disk::DiskCap;
use crate::db::server::Server;
use crate::db::server::cache::{read_cache, set_cache};
use crate::size::format_bytes;

mod disk;
mod headroom;

use disk::cap_disk;
pub use disk::{DockerHeldCaps, check_docker_held, clear_left_disk_caps, volume_device};

/// A server's limits at one moment: its container's and its own cache's.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct ServerLimits {
    pub memory_bytes: Option<u64>,
    pub cpus: Option<f64>,
    pub cache_bytes: Option<u64>,
}

impl ServerLimits {
    fn label(&self, cache: &str) -> String {
        let or_none = |v: Option<u64>| v.map(format_bytes).unwrap_or_else(|| "none".into());
        let cpus = self
            .cpus
            .map(|c| c.to_string())
            .unwrap_or_else(|| "no limit on".into());
        let memory = or_none(self.memory_bytes);
        // A server with no cache to size (Dolt) has nothing to show after its name.
        match self.cache_bytes {
            None if cache == NO_CACHE_SETTING => format!("memory {memory}, {cpus} CPUs, {cache}"),
            bytes => format!("memory {memory}, {cpus} CPUs, {cache} {}", or_none(bytes)),
        }
    }
}

/// What this run changed on one server so that it runs under the run's cap.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ServerFit {
    pub server: Server,
    pub container: String,
    /// The server's cache setting that was sized for the cap ("shared_buffers").
    pub cache_setting: String,
    pub before: ServerLimits,
    pub after: ServerLimits,
    /// Its own memory after the change, before the run loaded anything (`headroom`):
    /// what it holds already, at rest. None where Docker did not report it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_use_at_rest_bytes: Option<u64>,
}

impl ServerFit {
    pub fn line(&self) -> String {
        let container_changed = (self.before.memory_bytes, self.before.cpus)
            != (self.after.memory_bytes, self.after.cpus);
        let at_rest = self
            .in_use_at_rest_bytes
            .map(|b| format!(", {} in use at rest", format_bytes(b)))
            .unwrap_or_default();
        format!(
            "{}: {}: {} -> {} (container {}{at_rest})",
            self.server.name(),
            if container_changed {
                "set to the run's cap"
            } else {
                "cache sized for its container's cap"
            },
            self.before.label(&self.cache_setting),
            self.after.label(&self.cache_setting),
            self.container
        )
    }
}

const NO_CACHE_SETTING: &str = "no cache setting";

/// What a fit calls the server's cache setting.
fn cache_name(server: Server) -> String {
    server
        .memory()
        .cache()
        .map_or(NO_CACHE_SETTING, |c| c.name)
        .to_string()
}

/// The servers a run changed, put back to their containers' own caps when it ends
/// (dropped), however it ends: a run must not leave a 256 MiB MariaDB behind for the
/// next one, which may not ask for a cap and load 32 MiB blobs into it. A container's
/// own cap is the one its compose service declares (`docker::declared_limits`), so a
/// run killed outright, which left its servers at its cap, is undone by the next run
/// (and by `scripts/servers.sh up`), never taken for their own.
#[derive(Default)]
pub struct ServerCaps {
    /// What the run changed, as recorded with its results.
    changed: Vec<ServerFit>,
    /// Each server to put back when the run ends: its URL and its own limits (declared
    /// by compose, else those it had before the run; no memory limit: none to put back).
    put_back: Vec<(Server, String, Option<u64>, Option<f64>)>,
    /// Servers that stopped when restarted under the run's cap (OOM-killed by it,
    /// say), already put back to their own: none of their engines can be measured.
    unfit: Vec<(Server, String)>,
    largest_blob: u64,
    /// Containers given the run's disk cap (`cap_disks`): taken off when the run ends.
    disk_capped: Vec<String>,
}

impl ServerCaps {
    /// What the run changed, for its results.
    pub fn fits(&self) -> Vec<ServerFit> {
        self.changed.clone()
    }

    /// Servers that did not come up under the run's cap, and why (`fit_servers`).
    pub fn unfit(&self) -> &[(Server, String)] {
        &self.unfit
    }

    /// The run's disk cap on every server's container, on the device of its data
    /// volume (`cap::container_disk`; restarts write it again): each said on its line,
    /// what the cgroup holds read back; one that cannot be capped says why, and its
    /// results record it as not capped.
    pub async fn cap_disks(
        &mut self,
        servers: &[(Server, String)],
        disk: &DiskCap,
        docker_held: &DockerHeldCaps,
    ) {
        for (server, _) in servers {
            match cap_disk(*server, disk, docker_held).await {
                Ok((id, line)) => {
                    self.disk_capped.push(id);
                    say!("{}: {line}", server.name());
                }
                Err(why) => say!("note: {}: disk not capped: {why:#}", server.name()),
            }
        }
    }

    /// Put back every server of this run: its container's own limits, its cache sized
    /// for them. Blocking; callable inside or outside a runtime.
    pub fn restore(&mut self) {
        self.lift_disks();
        let put_back = std::mem::take(&mut self.put_back);
        let changed: Vec<Server> = self.changed.iter().map(|f| f.server).collect();
        if put_back.is_empty() {
            return;
        }
        let largest_blob = self.largest_blob;
        let put_back = move || -> Result<()> {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            for (server, url, memory, cpus) in &put_back {
                let server = *server;
                let Some(memory) = *memory else {
                    if changed.contains(&server) {
                        say!(
                            "note: {}: left at the run's cap: its container had no memory limit, and Docker cannot lift one from a running container (recreate it to lift it)",
                            server.name()
                        );
                    }
                    continue;
                };
                let back = rt.block_on(fit_one(server, url, Some(memory), *cpus, largest_blob));
                match back {
                    Ok(Some(back)) => say!(
                        "{}: put back after the run: {} -> {} (container {})",
                        server.name(),
                        back.before.label(&back.cache_setting),
                        back.after.label(&back.cache_setting),
                        back.container
                    ),
                    Ok(None) => {}
                    Err(e) => say!(
                        "note: {}: cannot put its container back to its own cap ({e:#}); `scripts/servers.sh up` puts the compose caps back",
                        server.name()
                    ),
                }
            }
            Ok(())
        };
        // A thread of its own: a runtime cannot be started inside another one.
        match std::thread::spawn(put_back).join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => say!("note: cannot put the servers back to their own caps: {e:#}"),
            Err(_) => say!("note: putting the servers back to their own caps panicked"),
        }
    }
}

impl ServerCaps {
    /// The run's disk cap taken off its servers' containers, before any is put back
    /// (a put back that restarts one would write it again).
    fn lift_disks(&mut self) {
        let ids = std::mem::take(&mut self.disk_capped);
        if ids.is_empty() {
            return;
        }
        let lift = move || -> Result<()> {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            rt.block_on(async {
                let docker = crate::docker::connect().await?;
                for id in &ids {
                    let pid = crate::docker::main_pid(&docker, id).await?;
                    crate::cap::container_disk::lift(id, pid).map_err(anyhow::Error::msg)?;
                }
                Ok(())
            })
        };
        match std::thread::spawn(lift).join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => say!(
                "note: cannot take the disk cap off the servers' containers ({e:#}); a restart of a container takes it off"
            ),
            Err(_) => say!("note: taking the disk cap off the servers' containers panicked"),
        }
    }
}

/// One server's container under `disk`: its id and the line saying what it holds.
impl Drop for ServerCaps {
    fn drop(&mut self) {
        self.restore();
    }
}

/// Give every server its run's cap (and the cache that goes with it) where its
/// container has another. With `--cap none` the containers keep their caps, and only
/// a cache that does not fit its container's cap is set for it. Where Docker or the
/// container cannot be reached the server is left alone with a note, and its results
/// carry the cap Docker reports (or "unavailable"). The servers go back to their own
/// caps when the returned value is dropped.
pub async fn fit_servers(
    servers: &[(Server, String)],
    cap: CapRequest,
    largest_blob: u64,
) -> Result<ServerCaps> {
    // Every server is checked before any is changed: no half-fitted set on an error,
    // and every server that does not fit is named in the one error.
    let mut misfits = Vec::new();
    for (server, _) in servers {
        let min = server.memory().min_cap_bytes(largest_blob);
        let (memory, whose) = match cap.memory_bytes {
            Some(memory) => (Some(memory), "the run's memory cap (--cap)"),
            // No cap asked for: the container's own must hold the largest blob.
            None => (
                container_memory(*server).await.ok().flatten(),
                "the memory cap of its container (scripts/servers.sh up sets the compose one)",
            ),
        };
        if let Some(memory) = memory
            && memory < min
        {
            misfits.push((memory, format!(
                "{} needs at least {} with blobs of {} (its own memory besides its cache, measured loading them; below that the kernel kills it while loading), and {whose} is less",
                server.name(),
                format_bytes(min),
                format_bytes(largest_blob),
            ), server.name()));
        }
    }
    if let Some((memory, _, _)) = misfits.first() {
        let names: Vec<&str> = misfits.iter().map(|m| m.2).collect();
        bail!(crate::error::InputError::Value {
            what: "memory cap for the servers",
            input: format_bytes(*memory),
            why: format!(
                "{}: raise --cap, leave out the larger sizes, or leave {} out with --engines",
                misfits
                    .iter()
                    .map(|m| m.1.as_str())
                    .collect::<Vec<_>>()
                    .join("; "),
                names.join(" and ")
            ),
        });
    }
    let mut caps = ServerCaps {
        changed: Vec::new(),
        put_back: Vec::new(),
        unfit: Vec::new(),
        largest_blob,
        disk_capped: Vec::new(),
    };
    for (server, url) in servers {
        // Read before changing anything: what the server goes back to at the end.
        let own = own_limits(*server).await;
        match fit_one(*server, url, cap.memory_bytes, cap.cpus, largest_blob).await {
            Ok(mut fit) => {
                let headroom = headroom::read(*server).await;
                if let Some(fit) = &mut fit {
                    fit.in_use_at_rest_bytes = headroom.as_ref().ok().map(|h| h.in_use_bytes);
                    say!("{}", fit.line());
                    caps.changed.push(fit.clone());
                }
                match headroom {
                    Ok(h) => {
                        if let Some(warning) = h.warning(server.name()) {
                            say!("{warning}");
                        }
                    }
                    Err(e) => say!(
                        "note: {}: its memory in use before loading is unavailable ({e:#})",
                        server.name()
                    ),
                }
                match own {
                    Ok((memory, cpus)) => {
                        caps.put_back.push((*server, url.clone(), memory, cpus));
                    }
                    Err(e) if fit.is_some() => say!(
                        "note: {}: its own cap cannot be read ({e:#}); it is left at the run's when the run ends",
                        server.name()
                    ),
                    Err(_) => {}
                }
            }
            Err(e) => match crate::docker::service_why_down(server.name()).await {
                // It stopped under the run's cap: it cannot serve this run. Put back
                // now, not at the end: left stopped under that cap, `compose up`
                // would start it under it again, and it would stop again.
                Some(down) => {
                    let back = match own {
                        Ok((Some(memory), cpus)) => {
                            // Its cache may have been set for the run's cap before the
                            // restart: the end of the run sizes it for its own again.
                            caps.put_back.push((*server, url.clone(), Some(memory), cpus));
                            put_back_now(*server, memory, cpus).await
                        }
                        Ok((None, _)) => "its container had no memory limit of its own, and Docker cannot lift one: it is left stopped under the run's cap; recreate it (`scripts/servers.sh down`, then `up`)".into(),
                        Err(e) => format!("its own cap cannot be read ({e:#}); `scripts/servers.sh up` sets the compose caps again"),
                    };
                    let memory = cap
                        .memory_bytes
                        .map(format_bytes)
                        .unwrap_or_else(|| "its own cap".into());
                    caps.unfit.push((
                        *server,
                        format!(
                            "{} did not come up under the run's cap of {memory}: {down}. What it holds already may need more (`blobrace env` lists its datasets; `blobrace drop` frees them); {back}",
                            server.name()
                        ),
                    ));
                }
                None => say!(
                    "note: {}: cannot set its container to the run's cap ({e:#}); it runs with the cap it has, recorded with its results",
                    server.name()
                ),
            },
        }
    }
    Ok(caps)
}

/// Start a server that stopped under a run's cap again under its own: what was said
/// of it for the run's line.
async fn put_back_now(server: Server, memory: u64, cpus: Option<f64>) -> String {
    let back = async {
        let docker = crate::docker::connect().await?;
        let Some((id, _, _)) = crate::docker::find_service_any(&docker, server.name()).await?
        else {
            bail!("its container is gone");
        };
        crate::docker::restart_with_limits(&docker, &id, memory, cpus, Duration::from_secs(180))
            .await
    };
    match back.await {
        Ok(()) => format!(
            "it was put back to its own cap ({}) and runs",
            format_bytes(memory)
        ),
        Err(e) => format!(
            "putting it back to its own cap ({}) failed too ({e:#}): `scripts/servers.sh up` sets the compose caps again",
            format_bytes(memory)
        ),
    }
}

/// A server's compose container: Docker, its id and name, its limits now and those
/// its compose service declares.
struct Container {
    docker: bollard::Docker,
    id: String,
    name: String,
    memory: Option<u64>,
    cpus: Option<f64>,
    declared_memory: Option<u64>,
    declared_cpus: Option<f64>,
}

async fn container_of(server: Server) -> Result<Container> {
    let docker = crate::docker::connect().await?;
    let Some((id, name, _)) = crate::docker::find_service(&docker, server.name()).await? else {
        bail!("no running compose container for {}", server.name());
    };
    let (memory, cpus) = crate::docker::container_limits(&docker, &id).await?;
    let (declared_memory, declared_cpus) = crate::docker::declared_limits(&docker, &id).await?;
    Ok(Container {
        docker,
        id,
        name,
        memory,
        cpus,
        declared_memory,
        declared_cpus,
    })
}

/// A server's own limits: those its compose service declares, else those it has now.
/// Where they differ from what it has now, a run that did not finish left it so: said
/// here, and undone when this run ends.
async fn own_limits(server: Server) -> Result<(Option<u64>, Option<f64>)> {
    let c = container_of(server).await?;
    let memory = c.declared_memory.or(c.memory);
    let cpus = c.declared_cpus.or(c.cpus);
    let cpus_differ = match (cpus, c.cpus) {
        (Some(a), Some(b)) => (a - b).abs() > 1e-6,
        (a, b) => a.is_some() != b.is_some(),
    };
    if memory != c.memory || cpus_differ {
        let label = |memory: Option<u64>, cpus: Option<f64>| {
            format!(
                "memory {}, {} CPUs",
                memory.map(format_bytes).unwrap_or_else(|| "none".into()),
                cpus.map(|c| c.to_string())
                    .unwrap_or_else(|| "no limit on".into())
            )
        };
        say!(
            "note: {}: its container has {}, not the {} its compose service declares: an earlier run did not put it back; this run puts it back when it ends",
            server.name(),
            label(c.memory, c.cpus),
            label(memory, cpus)
        );
    }
    Ok((memory, cpus))
}

/// The memory limit Docker holds for a server's container (None: no limit).
async fn container_memory(server: Server) -> Result<Option<u64>> {
    let c = container_of(server).await?;
    Ok(c.declared_memory.or(c.memory))
}

/// Close an SQL connection where one was opened.
async fn close(db: Option<sea_orm::DatabaseConnection>) -> Result<()> {
    if let Some(db) = db {
        db.close().await?;
    }
    Ok(())
}

/// Set one server's container to `requested_memory` and `cpus` (None: keep its own)
/// and its cache to the size they call for; None when it already is.
async fn fit_one(
    server: Server,
    url: &str,
    requested_memory: Option<u64>,
    cpus: Option<f64>,
    largest_blob: u64,
) -> Result<Option<ServerFit>> {
    let Container {
        docker,
        id,
        name,
        memory: memory_now,
        cpus: cpus_now,
        declared_memory,
        declared_cpus,
    } = container_of(server).await?;
    // No cap asked for: the container gets its own (declared by compose, else the one
    // it has), the cache is sized for that.
    let Some(memory) = requested_memory.or(declared_memory).or(memory_now) else {
        return Ok(None);
    };
    let cpus = cpus.or(declared_cpus);
    // The cache is read and set over an SQL connection; a server without a cache
    // setting (Dolt, the object store) is only capped, and restarted.
    let db = match server.memory().cache() {
        Some(_) => Some(server.connect(url, None).await?),
        None => None,
    };
    let cache_now = match &db {
        Some(db) => read_cache(db, server).await?,
        None => None,
    };
    let target = server.memory().cache_bytes_for_cap(memory, largest_blob);
    let cpus_differ =
        cpus.is_some_and(|want| cpus_now.is_none_or(|have| (have - want).abs() > 1e-6));
    let cache_differs = cache_now.is_some_and(|now| now != target);
    if memory_now == Some(memory) && !cpus_differ && !cache_differs {
        close(db).await?;
        return Ok(None);
    }
    let before = ServerLimits {
        memory_bytes: memory_now,
        cpus: cpus_now,
        cache_bytes: cache_now,
    };
    let timeout = Duration::from_secs(180);
    match (server.memory().cache(), db) {
        // Written now, in force after the restart that also applies the new limits.
        // A server without a cache setting (Dolt) restarts too: what it derives from
        // its cap at start (Go's GOMEMLIMIT) must follow the new one.
        (Some(cache), Some(db)) if !cache.applied_by_restart => {
            if memory_now.is_none_or(|now| memory < now) {
                // Shrinking: the cache first, so the container's memory fits under the new cap.
                set_cache(&db, server, target).await?;
                crate::docker::update_limits(&docker, &id, memory, cpus).await?;
            } else {
                crate::docker::update_limits(&docker, &id, memory, cpus).await?;
                set_cache(&db, server, target).await?;
            }
            db.close().await?;
        }
        (_, db) => {
            if let Some(db) = &db {
                set_cache(db, server, target).await?;
            }
            close(db).await?;
            crate::docker::restart_with_limits(&docker, &id, memory, cpus, timeout).await?;
        }
    }
    let (memory_after, cpus_after) = crate::docker::container_limits(&docker, &id).await?;
    let cache_after = match server.memory().cache() {
        Some(_) => {
            let db = server.connect(url, None).await?;
            let bytes = read_cache(&db, server).await?;
            db.close().await?;
            bytes
        }
        None => None,
    };
    Ok(Some(ServerFit {
        server,
        container: name,
        cache_setting: cache_name(server),
        before,
        after: ServerLimits {
            memory_bytes: memory_after,
            cpus: cpus_after,
            cache_bytes: cache_after,
        },
        in_use_at_rest_bytes: None,
    }))
}
