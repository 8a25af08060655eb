//! A server started cold, the same for every server in a container: a restart
//! empties its own cache, then its data files are flushed and dropped from the page
//! cache inside its container (the page cache survives a restart).

use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::Server;
use crate::disk::evict::EvictionReport;

/// Restart `server`'s compose container and drop its data files' pages; a cache
/// setting lost by the restart is set back first (`url`: where to reach it).
pub async fn restart_cold(
    server: Server,
    url: Option<&str>,
    places: &super::place::Places,
) -> Result<EvictionReport> {
    let started = std::time::Instant::now();
    // A server blobrace does not manage is neither restarted nor reached for its
    // files: restarting the compose container would start another server cold.
    if places.remote(server).is_some() {
        let pod = places.pod_limits(server).and_then(Result::ok);
        if let (Some(pod), Some(url)) = (&pod, url)
            && pod.restartable.is_ok()
        {
            return restart_pod_cold(&pod.pod, url, started).await;
        }
        let why = match pod.map(|p| p.restartable) {
            Some(Err(why)) => format!(" ({why})"),
            _ => String::new(),
        };
        return Ok(EvictionReport {
            method: format!(
                "not controlled (remote server{why}): a fresh connection only; its own cache and its host's page cache were not emptied"
            ),
            seconds: started.elapsed().as_secs_f64(),
            ..Default::default()
        });
    }
    let docker = crate::docker::connect().await?;
    let Some((id, name, _)) = crate::docker::find_service(&docker, server.name()).await? else {
        bail!(
            "no running compose container for {}: cannot start it cold ({}): start it with: {}",
            server.name(),
            crate::docker::project_hint(),
            crate::db::server::COMPOSE_UP
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
    //    flush, then DONTNEED every data file.
    let data_dir = server.container_data_dir();
    let how = drop_data_files(&docker, &id, &name, data_dir).await?;
    Ok(EvictionReport {
        method: format!(
            "restart container {name} (empties the server's own cache), then {how} on every file under {}",
            data_dir.trim_matches('"')
        ),
        seconds: started.elapsed().as_secs_f64(),
        ..Default::default()
    })
}

/// A server in a Kubernetes pod started cold: the pod deleted through the API and
/// started again by its StatefulSet (the server's own cache empties with its
/// process), its init container dropping the data volume's files from the node's page
/// cache, which survives the pod, before the server starts. Called only for a pod found
/// restartable (`kube::PodLimits::restartable`: a StatefulSet's, with that init
/// container); a new pod that does not report the drop is an error all the same, never
/// a cold start that was not one.
async fn restart_pod_cold(
    pod: &str,
    url: &str,
    started: std::time::Instant,
) -> Result<EvictionReport> {
    let cluster = crate::kube::in_cluster().context("not in a Kubernetes pod any more")??;
    let (host, port) = super::url_address(url)
        .as_deref()
        .and_then(super::place::split_host_port)
        .context("the server's host and port cannot be read from its URL")?;
    let new = cluster
        .restart_pod(pod, &host, port, Duration::from_secs(300))
        .await?;
    let init = crate::kube::DROP_CONTAINER;
    let Some(said) = crate::kube::init_message(&new, init) else {
        bail!(
            "pod {pod} started again without its {init} init container's report: the node's page cache still holds its data, so it cannot be started cold (install the chart's StatefulSet, which has it)"
        );
    };
    let field = |key: &str| {
        said.split_whitespace()
            .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
            .map(str::to_string)
    };
    let count = |key: &str| field(key).and_then(|v| v.parse::<u64>().ok());
    let (Some(files), Some(bytes)) = (count("files"), count("bytes")) else {
        bail!(
            "pod {pod}'s {init} said {said:?}, not files=N bytes=B: its page cache is not known to be dropped"
        );
    };
    Ok(EvictionReport {
        method: format!(
            "pod {pod} deleted through the Kubernetes API and started again by its StatefulSet (empties the server's own cache); before the server started, its {init} init container dropped every file under {} from the node's page cache (dd iflag=nocache: posix_fadvise DONTNEED)",
            field("dir").unwrap_or_else(|| "its data volume".into())
        ),
        files,
        bytes,
        seconds: started.elapsed().as_secs_f64(),
        ..Default::default()
    })
}

/// One listed file `$f` dropped from the page cache. A file gone since `find` listed it
/// has nothing cached: a server deletes files while it runs (SeaweedFS its dropped
/// buckets' volumes, after `--drop-after`: an 8 KiB cold cell failed so, 2026-12-07).
/// Any other failure of dd fails the eviction.
const DROP_ONE: &str = r#"dd if="$f" iflag=nocache count=0 status=none || [ ! -e "$f" ] || exit 1"#;

/// Flush and drop a container's data files from the page cache; says how it did.
/// Inside the container where its `dd` is coreutils' (`iflag=nocache count=0` is a
/// posix_fadvise(DONTNEED) of the whole file). An Alpine image's busybox dd has no
/// `nocache` (SeaweedFS's official image): there, from this side, through the
/// container's root at /proc/<pid>/root (root on the Docker host, or the compose
/// runner, which shares the host's pids with CAP_SYS_PTRACE). A dd that fails is an
/// error, never a cold start that was not one.
async fn drop_data_files(
    docker: &bollard::Docker,
    id: &str,
    name: &str,
    data_dir: &str,
) -> Result<&'static str> {
    let gnu_dd = "dd if=/dev/null iflag=nocache count=0 status=none 2>/dev/null";
    if crate::docker::exec_succeeds(docker, id, gnu_dd).await? {
        let script =
            format!("sync && find {data_dir} -type f | while IFS= read -r f; do {DROP_ONE}; done");
        crate::docker::exec_sh(docker, id, &script).await?;
        return Ok("sync + dd iflag=nocache count=0 (posix_fadvise DONTNEED) inside it");
    }
    crate::docker::exec_sh(docker, id, "sync").await?;
    let pid = crate::docker::main_pid(docker, id).await?;
    let root = std::path::PathBuf::from(format!("/proc/{pid}/root"));
    if data_dir.contains('$') || std::fs::read_dir(&root).is_err() {
        bail!(
            "cannot drop {name}'s files from the page cache: its image's dd has no iflag=nocache (busybox), and its files are not reachable from here through {}: run blobrace as root on the Docker host or in the compose runner, use an image with coreutils' dd, or leave {name} out of --engines (a steady cell empties its cache too, before its prefill)",
            root.display()
        );
    }
    let dir = root.join(data_dir.trim_start_matches('/'));
    drop_tree(&dir)?;
    Ok(
        "sync inside it + posix_fadvise(DONTNEED) through /proc/<pid>/root from the host (its dd has no iflag=nocache)",
    )
}

/// posix_fadvise(DONTNEED) on every file under `dir` (already flushed).
fn drop_tree(dir: &std::path::Path) -> Result<()> {
    let entries = std::fs::read_dir(dir).with_context(|| {
        format!(
            "cannot list {} to drop it from the page cache",
            dir.display()
        )
    })?;
    for entry in entries {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            drop_tree(&entry.path())?;
        } else if kind.is_file()
            && let Err(e) = crate::disk::evict::evict_flushed_file(&entry.path())
            && entry.path().exists()
        {
            // A file gone since it was listed had nothing cached (see DROP_ONE).
            return Err(e);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{DROP_ONE, drop_tree};

    /// DROP_ONE run by sh over the paths given, as the container's loop runs it.
    fn drop_listed(paths: &[&std::path::Path]) -> bool {
        // Each path on its own line, the last one too, as find prints them.
        let list: String = paths.iter().map(|p| format!("{}\n", p.display())).collect();
        std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("while IFS= read -r f; do {DROP_ONE}; done"))
            .stdin(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write;
                child.stdin.take().unwrap().write_all(list.as_bytes())?;
                child.wait()
            })
            .unwrap()
            .success()
    }

    #[test]
    fn a_file_gone_since_it_was_listed_is_skipped_and_any_other_failure_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let kept = dir.path().join("kept.dat");
        std::fs::write(&kept, [1u8; 4096]).unwrap();
        let gone = dir.path().join("gone.dat");
        assert!(drop_listed(&[&kept, &gone, &kept]));
        // A path that exists but dd cannot open (a socket) still fails it.
        let socket = dir.path().join("sock");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        assert!(!drop_listed(&[&kept, &socket]));
    }

    #[test]
    fn a_tree_reached_through_proc_root_leaves_the_page_cache() {
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("volume/1");
        std::fs::create_dir_all(&nested).unwrap();
        let files = [dir.path().join("a.dat"), nested.join("b.idx")];
        for file in &files {
            std::fs::write(file, vec![7u8; 1 << 20]).unwrap();
            std::fs::File::open(file).unwrap().sync_all().unwrap();
        }
        let resident = || -> u64 {
            files
                .iter()
                .map(|f| crate::disk::evict::resident_bytes(f).unwrap())
                .sum()
        };
        if resident() == 0 {
            say!("skipped: this filesystem keeps no written pages in the page cache");
            return;
        }
        // The same way as a container's files: through this process's /proc/<pid>/root.
        let through = std::path::PathBuf::from(format!("/proc/{}/root", std::process::id()))
            .join(dir.path().strip_prefix("/").unwrap());
        drop_tree(&through).unwrap();
        assert_eq!(resident(), 0);
    }
}
