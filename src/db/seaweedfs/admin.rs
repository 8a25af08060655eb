//! What S3 itself cannot do here, done with SeaweedFS's own shell inside its compose
//! container (`weed shell`, through `docker exec`): make and drop a bucket (the shell
//! drops the bucket's collection, its volumes, at once, and trims the filer's log
//! after it), and count a bucket's bytes on disk (its collection's volume files). A
//! store blobrace does not manage (`Places::remote`) has no container to run it in: its
//! buckets are made and dropped through S3 (s3_admin.rs) and its bytes on disk are
//! unavailable.

use anyhow::{Context, Result, bail};

use super::s3::S3Url;
use super::s3_admin;
use crate::db::server::place::Places;

/// The S3 URL of a store blobrace does not manage; None for the compose store (or
/// where no URL is given, which is the compose store's).
fn remote_s3(places: &Places, service: &str, url: Option<&str>) -> Result<Option<S3Url>> {
    let remote = crate::db::server::Server::named(service).and_then(|s| places.remote(s));
    match (remote, url) {
        (Some(_), Some(url)) => Ok(Some(S3Url::parse(url)?)),
        _ => Ok(None),
    }
}

/// The master inside the container (`weed server`'s default port).
const MASTER: &str = "127.0.0.1:9333";

/// The compose container of the store: (docker, id, name).
async fn container(places: &Places, service: &str) -> Result<(bollard::Docker, String, String)> {
    if let Some(why) = crate::db::server::Server::named(service).and_then(|s| places.remote(s)) {
        bail!(
            "{service} is remote ({why}): its own tools (`weed shell`) and files are in no container blobrace manages"
        );
    }
    let docker = crate::docker::connect().await?;
    let (id, name, _) = crate::docker::find_service(&docker, service)
        .await?
        .with_context(|| {
            format!(
                "no running compose container for {service}: its buckets are made and dropped with `weed shell` inside it ({}): start it with: {}",
                crate::docker::project_hint(),
                crate::db::server::COMPOSE_UP
            )
        })?;
    Ok((docker, id, name))
}

/// How long a shell command waits for the master to be leader: a restarted `weed
/// server` answers on its S3 and master ports seconds before its master elects itself,
/// and until then every shell command fails with "Not current leader".
const LEADER_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// How long a store restarted under its cap again may take to be healthy.
const RESTART_WAIT: std::time::Duration = std::time::Duration::from_secs(120);

/// Run one `weed shell` command (lines joined with `\n`); its output.
async fn shell(places: &Places, service: &str, command: &str) -> Result<String> {
    let (docker, id, name) = container(places, service).await?;
    let script = format!("printf '{command}\\n' | weed shell -master={MASTER} 2>&1");
    let cmd = vec!["sh".to_string(), "-c".to_string(), script];
    let started = std::time::Instant::now();
    loop {
        let (code, out) = crate::docker::exec_output(&docker, &id, cmd.clone()).await?;
        let out = String::from_utf8_lossy(&out).into_owned();
        if code == Some(0) {
            return Ok(out);
        }
        if no_leader_yet(&out) && started.elapsed() < LEADER_WAIT {
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            continue;
        }
        bail!(
            "`weed shell` `{command}` in {name} exited with {code:?}: {}",
            out.trim()
        );
    }
}

/// The master's answer while it has not elected itself yet.
fn no_leader_yet(out: &str) -> bool {
    out.contains("Not current leader") || out.contains("no leader")
}

/// The buckets the store has.
pub async fn buckets(places: &Places, service: &str) -> Result<Vec<String>> {
    let out = shell(places, service, "s3.bucket.list").await?;
    // Lines "  <name>\tsize:… chunk:…" after the shell's banner.
    Ok(out
        .lines()
        .filter(|l| l.contains("\tsize:"))
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect())
}

/// Whether the bucket exists: through S3 for a remote store (`url`).
pub async fn bucket_exists(
    places: &Places,
    service: &str,
    url: Option<&str>,
    bucket: &str,
) -> Result<bool> {
    if let Some(s3) = remote_s3(places, service, url)? {
        return s3_admin::bucket_exists(&s3, bucket).await;
    }
    Ok(buckets(places, service).await?.iter().any(|b| b == bucket))
}

pub async fn create_bucket(
    places: &Places,
    service: &str,
    url: Option<&str>,
    bucket: &str,
) -> Result<()> {
    if let Some(s3) = remote_s3(places, service, url)? {
        return s3_admin::create_bucket(&s3, bucket).await;
    }
    let out = shell(places, service, &format!("s3.bucket.create -name {bucket}")).await?;
    if !out.contains("created bucket") && !bucket_exists(places, service, None, bucket).await? {
        bail!("{service}: cannot create bucket {bucket}: {}", out.trim());
    }
    Ok(())
}

/// Memory the container gets while the filer deletes a bucket's entries.
const DELETE_MEMORY: u64 = 4 << 30;

/// Drop a bucket and its collection (every object and volume of it). The collection
/// first: its volumes go at once, and the disk has its bytes back whatever follows.
/// Then the filer's entries, one per object: deleting the 3,145,728 of the 1 KiB bucket
/// took 2 min 56 s and grew the container to 3.4 GiB (0.8 GiB of it the server's own
/// memory, the rest its LevelDB's page cache), and under the run's 1 GiB cap the kernel
/// killed the whole store (2026-11-28), so the container's cap is lifted for it and
/// put back after. A drop is not measured; the next cell restarts the store cold.
pub async fn delete_bucket(
    places: &Places,
    service: &str,
    url: Option<&str>,
    bucket: &str,
) -> Result<()> {
    if let Some(s3) = remote_s3(places, service, url)? {
        return s3_admin::delete_bucket(&s3, bucket).await;
    }
    if !bucket_exists(places, service, None, bucket).await? {
        return Ok(());
    }
    shell(
        places,
        service,
        &format!("lock\ncollection.delete -collection {bucket} -apply\nunlock"),
    )
    .await?;
    let (docker, id, name) = container(places, service).await?;
    let (memory, cpus) = crate::docker::container_limits(&docker, &id).await?;
    let lifted = memory.filter(|&m| m < DELETE_MEMORY);
    if lifted.is_some() {
        crate::docker::update_limits(&docker, &id, DELETE_MEMORY, cpus).await?;
    }
    let out = shell(places, service, &format!("s3.bucket.delete -name {bucket}")).await;
    // The filer logs every entry it makes or deletes under /topics/.system/log, in the
    // default collection's volumes, and never trims it: 4.7 GB after the full profile's
    // 1, 8 and 64 KiB loads (about 1.3 KB an object), more than their 64 KiB blobs,
    // and kept after their buckets went. Nothing here reads it (no filer.sync): trimmed
    // with the bucket, and the volumes vacuumed so the disk gets the bytes back. Under
    // the lifted cap too: `weed shell` holds the log's listing to remove it, and was
    // killed by the OOM killer with 490 MB of its own after 1 GiB of 1 KiB objects
    // under a 512 MiB cap (2026-12-07), leaving the dropped bucket's bytes on disk.
    let trimmed =
        match &out {
            Ok(_) => shell(
                places,
                service,
                "lock\nfs.rm -r /topics/.system/log\nvolume.vacuum -garbageThreshold 0.01\nunlock",
            )
            .await,
            Err(_) => Ok(String::new()),
        };
    if let Some(memory) = lifted {
        // Lowering the cap reclaims the page cache; where the server holds more than
        // the cap, it is restarted under it instead.
        if crate::docker::update_limits(&docker, &id, memory, cpus)
            .await
            .is_err()
        {
            crate::docker::restart_with_limits(&docker, &id, memory, cpus, RESTART_WAIT)
                .await
                .with_context(|| format!("cannot put {name} back under its cap after a drop"))?;
        }
    }
    let out = out?;
    if bucket_exists(places, service, None, bucket).await? {
        bail!(
            "{service}: bucket {bucket} is still there after s3.bucket.delete: {}",
            out.trim()
        );
    }
    trimmed.with_context(|| {
        format!("{service}: bucket {bucket} dropped, but the filer's metadata log was not trimmed")
    })?;
    Ok(())
}

/// Bytes the bucket's collection takes on disk: its volume files (`<bucket>_<n>.dat`,
/// the objects with their headers, and `.idx`, their index) under `data_dir`. The
/// filer's entries for the bucket (its object names, in the filer's LevelDB) are
/// shared with every bucket and not counted.
pub async fn bucket_disk_bytes(
    places: &Places,
    service: &str,
    url: Option<&str>,
    data_dir: &str,
    bucket: &str,
) -> Result<Option<u64>> {
    // A remote store's files are not seen from here: unavailable, not 0.
    if remote_s3(places, service, url)?.is_some() {
        return Ok(None);
    }
    let (docker, id, name) = container(places, service).await?;
    let script = format!(
        "find {data_dir} -maxdepth 1 -type f -name '{bucket}_*' -exec du -ck {{}} + | tail -1"
    );
    let cmd = vec!["sh".to_string(), "-c".to_string(), script.clone()];
    match crate::docker::exec_output(&docker, &id, cmd).await? {
        (Some(0), out) => {
            let text = String::from_utf8_lossy(&out);
            if text.trim().is_empty() {
                return Ok(Some(0));
            }
            // `du -k`: busybox's du (the official Alpine image) has no byte unit.
            let bytes = text
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<u64>().ok())
                .map(|kib| kib * 1024);
            bytes
                .map(Some)
                .with_context(|| format!("`{script}` in {name} said {text:?}"))
        }
        (code, _) => bail!("`{script}` in {name} exited with {code:?}"),
    }
}

/// Why the store may refuse writes, where it can be told: SeaweedFS answers a PUT it
/// cannot place with a bare "500 InternalError" and says why only in its own log ("No
/// writable volumes"). Two causes are seen here: every volume slot taken (each bucket
/// is a collection of its own volumes; CI's 38th bucket failed when a bucket took seven
/// at once) and the disk under the 1% it keeps free. `None` where neither shows, or the
/// store cannot be asked.
pub async fn why_writes_fail(places: &Places, service: &str, data_dir: &str) -> Option<String> {
    let mut reasons = Vec::new();
    if let Ok(out) = shell(places, service, "volume.list").await
        && let Some(slots) = VolumeSlots::parse(&out)
        && slots.free == 0
    {
        let buckets = buckets(places, service).await.map(|b| b.len()).ok();
        reasons.push(format!(
            "its volume slots are all taken ({} of {}{}; a bucket takes one, and one more per GiB): drop the datasets you no longer need (`blobrace drop --engines {service} --sizes ...`), or start the store over with `scripts/servers.sh purge` then `scripts/servers.sh up`",
            slots.used,
            slots.max,
            buckets.map(|n| format!(", by {n} buckets")).unwrap_or_default()
        ));
    }
    if let Ok((docker, id, _)) = container(places, service).await {
        let cmd = vec!["df".to_string(), "-P".to_string(), data_dir.to_string()];
        if let Ok((Some(0), out)) = crate::docker::exec_output(&docker, &id, cmd).await
            && let Some(free) = disk_free_share(&String::from_utf8_lossy(&out))
            && free < 0.02
        {
            reasons.push(format!(
                "its disk ({data_dir}) has {:.1}% free and SeaweedFS takes no writes under 1%: free space on the Docker host's disk",
                free * 100.0
            ));
        }
    }
    (!reasons.is_empty()).then(|| reasons.join("; and "))
}

/// The volume slots of `weed shell`'s `volume.list`, from its first line:
/// "Topology volumeSizeLimit:1024 MB hdd(volume:2/256 active:2 free:254 remote:0)".
#[derive(Debug, PartialEq)]
struct VolumeSlots {
    used: u64,
    max: u64,
    free: u64,
}

impl VolumeSlots {
    fn parse(out: &str) -> Option<Self> {
        let line = out.lines().find(|l| l.starts_with("Topology"))?;
        let field = |name: &str| {
            let rest = &line[line.find(name)? + name.len()..];
            Some(rest.split([' ', ')']).next()?.to_string())
        };
        let (used, max) = field("(volume:")?
            .split_once('/')
            .map(|(u, m)| (u.to_string(), m.to_string()))?;
        Some(Self {
            used: used.parse().ok()?,
            max: max.parse().ok()?,
            free: field(" free:")?.parse().ok()?,
        })
    }
}

/// The share of the filesystem free, from `df -P`'s second line (1024-blocks, used,
/// available).
fn disk_free_share(df: &str) -> Option<f64> {
    let fields: Vec<&str> = df.lines().nth(1)?.split_whitespace().collect();
    let total: f64 = fields.get(1)?.parse().ok()?;
    let available: f64 = fields.get(3)?.parse().ok()?;
    (total > 0.0).then(|| available / total)
}

/// The store's own version (`weed version` in its container), asked once per process:
/// each of 16 clients opening an engine at once would start a `weed` process in the
/// container, and 16 of them outgrow a 256 MiB cap.
pub async fn version_once(places: &Places, service: &str, url: Option<&str>) -> String {
    static VERSION: std::sync::LazyLock<futures_util::lock::Mutex<Option<String>>> =
        std::sync::LazyLock::new(|| futures_util::lock::Mutex::new(None));
    let mut known = VERSION.lock().await;
    if let Some(version) = known.as_ref() {
        return version.clone();
    }
    let asked = match remote_s3(places, service, url) {
        // Its S3 answers carry no version (no Server header, 4.53).
        Ok(Some(_)) => Err(anyhow::anyhow!(
            "a remote store: `weed version` runs in no container blobrace manages"
        )),
        Ok(None) => version(places, service).await,
        Err(e) => Err(e),
    };
    match asked {
        Ok(version) => {
            *known = Some(version.clone());
            version
        }
        Err(e) => format!("unavailable ({e:#})"),
    }
}

async fn version(places: &Places, service: &str) -> Result<String> {
    let (docker, id, _) = container(places, service).await?;
    let cmd = vec!["weed".to_string(), "version".to_string()];
    let (_, out) = crate::docker::exec_output(&docker, &id, cmd).await?;
    Ok(String::from_utf8_lossy(&out)
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_string())
}

#[cfg(test)]
mod tests {
    use super::{VolumeSlots, disk_free_share, no_leader_yet};

    #[test]
    fn volume_slots_and_free_disk_are_read_from_the_store_s_own_tools() {
        // `volume.list` and busybox `df -P` inside the store's container (2026-11-28).
        let listed = "Topology volumeSizeLimit:1024 MB hdd(volume:256/256 active:256 free:0 remote:0)\n  DataCenter DefaultDataCenter hdd(volume:256/256 active:256 free:0 remote:0)";
        assert_eq!(
            VolumeSlots::parse(listed),
            Some(VolumeSlots {
                used: 256,
                max: 256,
                free: 0
            })
        );
        assert_eq!(VolumeSlots::parse("error: no leader"), None);
        let df = "Filesystem     1024-blocks     Used Available Capacity Mounted on\n/dev/vda         264212084 84649540  10851724      89% /data";
        let free = disk_free_share(df).unwrap();
        assert!((free - 10851724.0 / 264212084.0).abs() < 1e-9, "{free}");
        assert_eq!(disk_free_share("df: /data: No such file"), None);
    }

    #[test]
    fn a_master_not_yet_leader_is_told_from_other_shell_failures() {
        // What `weed shell` printed right after a restart (2026-11-26).
        assert!(no_leader_yet(
            "error: rpc error: code = Unknown desc = raft.Server: Not current leader"
        ));
        assert!(!no_leader_yet("error: bucket blobs-1kib-x9 not found"));
    }
}
