//! The run's data directory on a disk that answers in milliseconds (`--disk-latency`,
//! `deploy::slow_disk`): mounted before the cap and before anything is read, the run's
//! data directory moved onto it, taken down when the run ends. Where it cannot be had
//! the run is refused in one line before any work. The local servers' data volumes go
//! onto it once the servers are reached (`hold_servers`), before they are
//! capped and loaded: a database on a network volume is as far from its disk as the
//! application is.

use anyhow::{Context, Result};

use crate::config::RunConfig;
use crate::deploy::slow_disk::SlowDisk;
use crate::error::InputError;

/// How long a server may take to come up on the emulated disk: the first time it makes
/// a new database there (PostgreSQL's initdb, MariaDB's system tables), each of its
/// writes waiting the latency asked.
const SERVER_START: std::time::Duration = std::time::Duration::from_secs(600);

/// Mount the emulated disk and move the run's data directory onto it.
pub fn attach(config: &mut RunConfig) -> Result<Option<SlowDisk>> {
    let Some(latency) = config.disk_latency else {
        return Ok(None);
    };
    let disk = SlowDisk::attach(&config.data_dir, latency, !config.no_wait).map_err(|why| {
        anyhow::Error::from(InputError::Unavailable {
            what: format!("the emulated disk of --disk-latency {latency}"),
            why,
        })
    })?;
    config.data_dir = disk.report.mount.clone();
    say!("{}", disk.report.label());
    Ok(Some(disk))
}

/// Each local server of `config`'s engines onto `disk` (`Starting::settle`;
/// `blobrace load`, `verify`, `drop` and `env` call it too, so that they work on the
/// datasets a run with the same flags reads); one that cannot be is said and noted in
/// the disk's report.
pub async fn hold_servers(disk: &mut SlowDisk, config: &RunConfig) {
    let stores = super::stores_for(&config.engines);
    {
        let docker_cli = std::env::var_os("PATH")
            .is_some_and(|paths| std::env::split_paths(&paths).any(|p| p.join("docker").is_file()));
        for store in stores {
            let Some(server) = store.server() else {
                continue;
            };
            let not_here = if let Some(why) = config.places.remote(server) {
                Some(format!("a server elsewhere ({why})"))
            } else if !docker_cli {
                Some("no docker command for the watchdog that puts it back after a kill (Debian's docker.io)".into())
            } else {
                None
            };
            let held = match not_here {
                Some(why) => Err(anyhow::anyhow!(why)),
                None => onto(disk, server).await,
            };
            if let Err(why) = held {
                let note = format!(
                    "{}'s volume stays on its own disk, its reads not delayed (not controlled): {why:#}",
                    server.name()
                );
                say!("disk latency: {note}");
                disk.report.notes.push(note);
            }
        }
    }
}

/// One server's volume onto the disk.
async fn onto(disk: &mut SlowDisk, server: crate::db::server::Server) -> Result<()> {
    let docker = crate::docker::connect().await?;
    let Some((id, name, _)) = crate::docker::find_service_any(&docker, server.name()).await? else {
        anyhow::bail!("no compose container runs it");
    };
    let Some((volume, _)) =
        crate::docker::service_data_source(server.name(), server.container_data_dir()).await?
    else {
        anyhow::bail!(
            "its data directory {} is not a mount",
            server.container_data_dir()
        );
    };
    // From inside a container (the compose runner) the host's paths are not seen.
    if !volume.exists() {
        anyhow::bail!(
            "its volume {} is not seen from here (run from inside a container?)",
            volume.display()
        );
    }
    let seconds = crate::docker::stop_seconds(&docker, &id).await?;
    let started = std::time::Instant::now();
    crate::docker::stop(&docker, &id).await?;
    disk.hold_volume(server.name(), &name, seconds, &volume)
        .map_err(anyhow::Error::msg)?;
    // Not started: the run ends here, and the watchdog puts its volume back.
    crate::docker::start_and_wait(&docker, &id, SERVER_START)
        .await
        .with_context(|| {
            format!(
                "{} did not come up with its data on the emulated disk",
                server.name()
            )
        })?;
    say!(
        "disk latency: {}'s volume on the emulated disk ({}; up in {:.1} s)",
        server.name(),
        disk.report
            .servers
            .last()
            .map(|s| s.on.display().to_string())
            .unwrap_or_default(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
