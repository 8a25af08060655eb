//! A server started cold, the same for every server in a container: a restart
//! empties its own cache, then its data files are flushed and dropped from the page
//! cache inside its container (the page cache survives a restart).

use std::time::Duration;

use anyhow::{Result, bail};

use super::Server;
use crate::evict::EvictionReport;

/// Restart `server`'s compose container and drop its data files' pages; a cache
/// setting lost by the restart is set back first (`url`: where to reach it).
pub async fn restart_cold(server: Server, url: Option<&str>) -> Result<EvictionReport> {
    let started = std::time::Instant::now();
    let docker = crate::docker::connect().await?;
    let Some((id, name, _)) = crate::docker::find_service(&docker, server.name()).await? else {
        bail!(
            "no running compose container for {}: cannot start it cold (set BLOBRACE_COMPOSE_PROJECT if it runs under another project)",
            server.name()
        );
    };
    // 1. A restart empties the server's own cache (shared_buffers / buffer pool;
    //    compose disables MariaDB's buffer-pool dump and reload for this). A cache
    //    setting that does not survive the restart is read before it and set back
    //    before anything reads (see cache::restore_cache).
    let cache_before = match (url, server.memory().cache()) {
        (Some(url), Some(cache)) if !cache.applied_by_restart => {
            super::cache::cache_now(server, url)
                .await?
                .map(|bytes| (url, bytes))
        }
        _ => None,
    };
    crate::docker::restart_and_wait(&docker, &id, Duration::from_secs(180)).await?;
    if let Some((url, bytes)) = cache_before {
        super::cache::restore_cache(server, url, bytes).await?;
    }
    // 2. The page cache survives a restart (its pages move to the parent cgroup):
    //    flush, then DONTNEED every data file from inside the container.
    //    `dd iflag=nocache count=0` is coreutils' posix_fadvise(DONTNEED) of a whole file.
    let data_dir = server.container_data_dir();
    let script = format!(
        "sync && find {data_dir} -type f -exec dd if={{}} iflag=nocache count=0 status=none \\;"
    );
    crate::docker::exec_sh(&docker, &id, &script).await?;
    Ok(EvictionReport {
        method: format!(
            "restart container {name} (empties the server's own cache), then sync + dd iflag=nocache count=0 (posix_fadvise DONTNEED) on every file under {} inside it",
            data_dir.trim_matches('"')
        ),
        seconds: started.elapsed().as_secs_f64(),
        ..Default::default()
    })
}
