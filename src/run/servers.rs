//! What a run's servers make of its settings, decided before the run's record is
//! made (`start::Starting::settle`): the servers that answer, where each is (`place`),
//! and those left out, for not answering or for needing a larger cap than the run's,
//! each said and recorded in the settings' `left_out`. `blobrace load` and the
//! clients bench settle their servers with the same functions.

use anyhow::Result;

use crate::config::RunConfig;
use crate::db::registry::{StoreKind, stores_for};
use crate::server_caps::ServerCaps;

/// Drop server engines whose server cannot be reached, with one line each saying
/// why and how to start it; an engine asked for by name must run, so there it is an error.
/// Each server that answers is located (`place`): the compose container or remote.
pub async fn reachable_engines(config: &mut RunConfig) -> Result<()> {
    let mut unreachable: Vec<(StoreKind, String)> = Vec::new();
    // What this machine lacks to run a store at all (a system library): said as for a
    // server that does not answer.
    for store in stores_for(&config.engines) {
        if let Some(why) = store.db().unavailable() {
            if config.engines_explicit {
                anyhow::bail!("{} cannot run here: {why}", store.name());
            }
            unreachable.push((store, why));
        }
    }
    for store in stores_for(&config.engines)
        .into_iter()
        .filter(|s| s.is_server())
    {
        let server = store.server().expect("a server store");
        let at = config.locations();
        let probe = async {
            let url = server.require_url(at.server_url(server))?;
            server.probe(&url).await?;
            anyhow::Ok(url)
        };
        match probe.await {
            // Whether it is the compose container, before anything acts on that
            // (`verify` and `drop` too: SeaweedFS's buckets are dropped inside it).
            Ok(url) => {
                config.places.locate(server, &url).await;
            }
            Err(e) if config.engines_explicit => return Err(e),
            Err(e) => unreachable.push((store, format!("{e:#}"))),
        }
    }
    for (store, why) in unreachable {
        leave_out(config, store, &why);
    }
    Ok(())
}

/// Drop every engine of `store` from the run, with the line saying why.
fn leave_out(config: &mut RunConfig, store: StoreKind, why: &str) {
    let skipped: Vec<&str> = config
        .engines
        .iter()
        .filter(|e| e.store() == store)
        .map(|e| e.name())
        .collect();
    say!("skipping {}: {why}", skipped.join(", "));
    if !skipped.is_empty() {
        config.left_out.push(crate::config::LeftOut {
            engines: skipped.iter().map(|s| s.to_string()).collect(),
            why: why.to_string(),
        });
    }
    config.engines.retain(|e| e.store() != store);
}

/// Leave out the default engines whose server cannot run under the run's memory cap
/// with the run's largest blob (its `min_cap_bytes`, measured: below it the kernel
/// kills it while loading), one line each saying the cap it needs. An engine asked
/// for by name stays, and `server_caps::fit_servers` refuses the run with the same
/// arithmetic; with `--cap none` each container's own cap is checked there. A dry
/// run's plan leaves them out too.
pub fn leave_out_servers_over_cap(config: &mut RunConfig) {
    let Some(memory) = config.cap.memory_bytes else {
        return;
    };
    if config.engines_explicit {
        return;
    }
    let largest_blob = config.largest_blob();
    for store in stores_for(&config.engines) {
        let Some(server) = store.server() else {
            continue;
        };
        if config.places.remote(server).is_some() {
            continue; // The run's cap is not its.
        }
        let min = server.memory().min_cap_bytes(largest_blob);
        if memory >= min {
            continue;
        }
        let why = format!(
            "{} needs a memory cap of at least {} with blobs of {} (measured: below it the kernel kills it while loading), more than the run's {}; run it with --cap {} or more",
            server.name(),
            crate::size::format_bytes(min),
            crate::size::format_bytes(largest_blob),
            crate::size::format_bytes(memory),
            crate::size::format_bytes(min),
        );
        leave_out(config, store, &why);
    }
}

/// Set the run's servers to its cap (see `server_caps`): call after `reachable_engines`.
/// Default engines whose server needs a larger cap are left out first.
/// A server whose URL does not reach its compose container is remote (`place`): said
/// here, and neither capped nor checked against the cap.
pub async fn fit_servers(config: &mut RunConfig) -> Result<ServerCaps> {
    // Located by `reachable_engines`: not looked for again.
    for server in stores_for(&config.engines)
        .into_iter()
        .filter_map(|s| s.server())
    {
        if let Some(why) = config.places.remote(server) {
            const FRESH: &str = "cold = a fresh connection (its caches are not emptied)";
            let cap = match config.places.pod_limits(server) {
                None => format!("measured without a cap (not controlled), {FRESH}"),
                Some(Err(e)) => format!(
                    "measured without a cap (not controlled: its pod's limits cannot be read: {e}), {FRESH}"
                ),
                Some(Ok(pod)) => format!(
                    "its cap not set by blobrace but read from its pod {} (memory {}, CPUs {}), cold = the pod restarted through the Kubernetes API, its data dropped from the page cache before the server starts",
                    pod.pod,
                    pod.memory_bytes
                        .map(crate::size::format_bytes)
                        .unwrap_or_else(|| "uncapped".into()),
                    pod.cpus
                        .map(|c| c.to_string())
                        .unwrap_or_else(|| "uncapped".into()),
                ),
            };
            say!(
                "{}: remote, not a container blobrace manages ({why}): {cap}, disk bytes per fetch unavailable, the round trip measured beside each result",
                server.name()
            );
        }
    }
    leave_out_servers_over_cap(config);
    let at = config.locations();
    let servers: Vec<_> = stores_for(&config.engines)
        .into_iter()
        .filter_map(|s| s.server())
        .filter(|server| config.places.remote(*server).is_none())
        .filter_map(|server| Some((server, at.server_url(server)?.to_string())))
        .collect();
    let largest_blob = config.largest_blob();
    // Before anything is changed on a server: a refusal leaves them as they were.
    let docker_held =
        crate::server_caps::check_docker_held(&servers, config.disk_cap.as_ref()).await?;
    let mut caps = crate::server_caps::fit_servers(&servers, config.cap, largest_blob).await?;
    crate::server_caps::clear_left_disk_caps(&servers, &docker_held).await;
    if let Some(disk) = &config.disk_cap {
        caps.cap_disks(&servers, disk, &docker_held).await;
    }
    // A server that stopped under the run's cap serves none of its engines: left out
    // like one that is not up, or the run refused where they were asked for by name.
    for (server, why) in caps.unfit() {
        if config.engines_explicit {
            anyhow::bail!(crate::error::InputError::Value {
                what: "memory cap for the servers",
                input: config
                    .cap
                    .memory_bytes
                    .map(crate::size::format_bytes)
                    .unwrap_or_else(|| "none".into()),
                why: format!(
                    "{why}. Raise --cap, or leave {} out with --engines",
                    server.name()
                ),
            });
        }
        for store in stores_for(&config.engines) {
            if store.server() == Some(*server) {
                leave_out(config, store, why);
            }
        }
    }
    Ok(caps)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fitted(args: &[&str]) -> Vec<&'static str> {
        let mut config = crate::config::resolve_flags(args).unwrap();
        leave_out_servers_over_cap(&mut config);
        config.engines.iter().map(|e| e.name()).collect()
    }

    #[test]
    fn default_engines_whose_server_needs_a_larger_cap_are_left_out_and_named_ones_kept() {
        // The quick profile's cap: SeaweedFS needs 512 MiB, Dolt 192 MiB at 4 MiB.
        let quick = fitted(&["--cap", "256MiB", "--sizes", "1KiB,4MiB"]);
        assert!(!quick.contains(&"seaweedfs"), "{quick:?}");
        for kept in ["floor", "sqlite", "postgres-raw", "mariadb-raw", "dolt-raw"] {
            assert!(quick.contains(&kept), "{kept}: {quick:?}");
        }
        let roomy = fitted(&["--cap", "512MiB", "--sizes", "1KiB"]);
        assert!(roomy.contains(&"seaweedfs"), "{roomy:?}");
        // Asked for by name: kept, for fit_servers to refuse with the arithmetic.
        let named = fitted(&["--cap", "256MiB", "--engines", "seaweedfs,floor"]);
        assert_eq!(named, ["floor", "seaweedfs"]);
        // No cap for the run: each container's own cap is checked by fit_servers.
        let uncapped = fitted(&["--cap", "none", "--sizes", "1KiB"]);
        assert!(uncapped.contains(&"seaweedfs"), "{uncapped:?}");
    }
}
